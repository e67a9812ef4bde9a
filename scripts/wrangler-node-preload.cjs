// Loaded into wrangler's Node process (NODE_OPTIONS=--require ...) by scripts/dev and the test
// harness (which loads it into scripts/serve-direct.mjs too: the first fix applies there, the
// second has no ProxyWorker to patch). Local dev only: nothing here reaches a deployed Worker.
// Two fixes of the pinned local tooling, each for requests it loses.
//
// First: miniflare (pinned wrangler 4.86, the last that runs on Node 20) serves its loopback
// (workerd -> Node: logs, dev hooks) from a node:http server with Node's default 5 s
// keepAliveTimeout. workerd pools those connections, so a request sent on a pooled socket just
// as Node closes it fails with "Network connection lost" (workers-sdk issue #14848, fixed
// upstream by disabling the timeout in a wrangler that needs Node 22). The local queue broker
// logs every batch over the loopback and clears its "flush in progress" mark only after that
// log call, so one lost log call stops the local queue for good: no batch is ever delivered
// again (seen as a suite run whose outbox never drained, with no QUEUE lines after a point).
// Idle connections to a local dev server cost nothing, so every server this process creates
// keeps them open until the client closes them.
"use strict";

const http = require("node:http");
const { syncBuiltinESMExports } = require("node:module");

const createServer = http.createServer;
http.createServer = function createServerWithoutIdleTimeout(...args) {
  const server = createServer.apply(this, args);
  server.keepAliveTimeout = 0;
  return server;
};
syncBuiltinESMExports();

// Second: wrangler dev's ProxyWorker (the workerd worker on the public port that forwards each
// request to the runtime running edgefeed) loses requests. It forwards over a pooled
// connection, and kj closes idle pooled connections after 5 s on both ends (the client pool's
// idleTimeout, the runtime's pipelineTimeout), so under load a request written into a
// connection the runtime is closing fails with "Network connection lost." before it reaches
// the Worker (workers-sdk issues #14641, #15317: the Worker never sees it). Wrangler 4.86 then
// answers a write 503 "Your worker restarted mid-request" (its restart check compares the
// request's full URL with the runtime's origin, so every failure looks like a restart), and
// parks a GET until a reload that never comes (the client times out). Measured here: 15 such
// 503s in 90 s of 32 clients on 4 databases, every one "Network connection lost." with no
// restart. The fix: forward a copy of the request again (up to 8 attempts) when an attempt failed
// on the connection, before any response. It is the request the Worker never received, so sending
// it again is not a duplicate; the last failure is answered as before. Each resend is logged
// ("edgefeed dev proxy: resent ...") so the log counts them.
const fs = require("node:fs");

const PROXY_WORKER = /wrangler-dist[\\/]ProxyWorker\.js$/;
const FORWARD = "void fetch(userWorkerUrl, new Request(request, { headers })).then(";
// Up to 8 attempts: after a burst several pooled connections can go stale at once, and each
// stale one fails at once. Every attempt keeps a copy of the request for the next (a copy
// tees the body).
const FORWARD_AGAIN = "void edgefeedForward(userWorkerUrl, request, headers).then(";
const FORWARD_HELPER = `
async function edgefeedForward(url, request, headers) {
  let next = request;
  for (let attempt = 1; ; attempt += 1) {
    const spare = next.clone();
    try {
      return await fetch(url, new Request(next, { headers }));
    } catch (error) {
      const lost = String(error && error.message).includes("Network connection lost");
      if (!lost || attempt >= 8) throw error;
      console.log("edgefeed dev proxy: resent " + request.method + " " + new URL(request.url).pathname + " after: " + error.message);
      next = spare;
    }
  }
}
`;

const readFileSync = fs.readFileSync;
// Miniflare reads the module as a Buffer (no encoding), so both forms are patched.
fs.readFileSync = function readFileSyncWithProxyRetry(file, ...rest) {
  const content = readFileSync.call(this, file, ...rest);
  if (typeof file !== "string" || !PROXY_WORKER.test(file)) {
    return content;
  }
  const text = typeof content === "string" ? content : content.toString("utf8");
  if (!text.includes(FORWARD)) {
    process.emitWarning("edgefeed preload: wrangler's ProxyWorker changed; requests lost on a pooled connection are not resent");
    return content;
  }
  const patched = FORWARD_HELPER + text.replace(FORWARD, FORWARD_AGAIN);
  return typeof content === "string" ? patched : Buffer.from(patched, "utf8");
};
syncBuiltinESMExports();
