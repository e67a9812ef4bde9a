// Loaded into wrangler's Node process (NODE_OPTIONS=--require ...) by scripts/dev and the test
// harness (which loads it into scripts/serve-direct.mjs too: the first fix applies there, the
// second has no ProxyWorker to patch). Local dev only: nothing here reaches a deployed Worker.
// Three fixes of the pinned local tooling: two for requests it loses, one for a leak that stops it.
// And one opt-in measurement (EDGEFEED_DEV_LAGLOG, at the end) that changes nothing it serves.
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

// Third: wrangler dev's InspectorProxyWorker (in the same workerd as the ProxyWorker, serving the
// public port) leaked a connection and memory per subrequest, which stopped the stack after
// about 10,000 requests (issue 38: 20,000 descriptors, the workerd's limit, and 16,400
// established connections to wrangler's Node loopback). It subscribes to the runtime's
// inspector (Runtime and Network domains), so every subrequest the Worker makes (each D1
// statement batch, object call, queue send) arrives as three or four inspector events, and
//  - for each event it calls `sendDebugLog`, an un-awaited POST to wrangler's Node process over
//    the loopback that Node only prints under WRANGLER_LOG=debug. Nothing bounds how many are in
//    flight: under load thousands are, each on its own pooled connection, and the first fix
//    keeps every one of them open once idle. Measured: 32 clients for 60 s left 470 connections
//    open and climbing, with Node's event loop busy parsing the events (45 of its 60 CPU seconds).
//    Now the POST is sent only when WRANGLER_LOG=debug (when someone reads it);
//  - it buffers every event until a DevTools window attaches, and none ever does in a test or a
//    bench run: the workerd grew 360 MB in 90 s. Now, with no DevTools attached, the Network
//    events (which only a DevTools Network tab shows, and one attached later needs no history
//    of old subrequests) are not buffered, and the rest is capped at the newest 10,000;
//  - and it asks the runtime for those Network events on every (re)connection, DevTools or not,
//    so the runtime serialized them and the proxy's isolate parsed them all the same (its heap
//    still grew 200 MB in 3 minutes). Now it asks only when DevTools is attached at that moment;
//    DevTools asks for them itself when it attaches (its Network.enable passes through).
const DEBUG_LOG = /^debug$/i.test(process.env.WRANGLER_LOG || "");
const INSPECTOR_BUFFER_CAP = 10000;

// Each patch: the module file it applies to, the helper code put in front of the module, and
// the exact source texts it replaces. When wrangler's text changes the module is served
// unpatched with a warning (the pinned wrangler is 4.86; tests/keeps_serving.rs would show a leak).
const PATCHES = [
  {
    file: /wrangler-dist[\\/]ProxyWorker\.js$/,
    // Up to 8 attempts: after a burst several pooled connections can go stale at once, and each
    // stale one fails at once. Every attempt keeps a copy of the request for the next (a copy
    // tees the body).
    helper: `
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
`,
    replace: [
      [
        "void fetch(userWorkerUrl, new Request(request, { headers })).then(",
        "void edgefeedForward(userWorkerUrl, request, headers).then(",
      ],
    ],
    warning: "requests lost on a pooled connection are not resent",
  },
  {
    file: /wrangler-dist[\\/]InspectorProxyWorker\.js$/,
    helper: `
const EDGEFEED_DEBUG_LOG = ${DEBUG_LOG};
function edgefeedBufferRuntimeMessage(proxy, msg) {
  const method = msg && typeof msg.method === "string" ? msg.method : "";
  if (proxy.websockets.devtools === undefined && method.startsWith("Network.")) return;
  const buffer = proxy.runtimeMessageBuffer;
  buffer.push(msg);
  if (buffer.length > ${INSPECTOR_BUFFER_CAP}) buffer.splice(0, buffer.length - ${INSPECTOR_BUFFER_CAP});
}
`,
    replace: [
      [
        'this.sendProxyControllerRequest({ type: "debug-log", args });',
        'if (EDGEFEED_DEBUG_LOG) this.sendProxyControllerRequest({ type: "debug-log", args });',
      ],
      ["this.runtimeMessageBuffer.push(msg);", "edgefeedBufferRuntimeMessage(this, msg);"],
      [
        'this.sendRuntimeMessage(\n      { method: "Network.enable"',
        'if (this.websockets.devtools !== undefined) this.sendRuntimeMessage(\n      { method: "Network.enable"',
      ],
    ],
    warning: "its debug log calls and buffered inspector events grow without bound under load",
  },
];

function patched(patch, text) {
  if (!patch.replace.every(([from]) => text.includes(from))) {
    process.emitWarning(`edgefeed preload: wrangler's ${patch.file.source} changed; ${patch.warning}`);
    return null;
  }
  return patch.helper + patch.replace.reduce((out, [from, to]) => out.replace(from, to), text);
}

const readFileSync = fs.readFileSync;
// Miniflare reads the modules as Buffers (no encoding), so both forms are patched.
fs.readFileSync = function readFileSyncPatched(file, ...rest) {
  const content = readFileSync.call(this, file, ...rest);
  const patch = typeof file === "string" && PATCHES.find((p) => p.file.test(file));
  if (!patch) {
    return content;
  }
  const text = typeof content === "string" ? content : content.toString("utf8");
  const result = patched(patch, text);
  if (result === null) {
    return content;
  }
  return typeof content === "string" ? result : Buffer.from(result, "utf8");
};
syncBuiltinESMExports();

// Opt-in measurement (EDGEFEED_DEV_LAGLOG=path): once this process creates an http server, one
// JSON line a second appended to path: this Node process's event-loop delay (max, mean, p99 over
// the second, and a 1 s interval timer's drift), its CPU ms, the requests its servers received
// by path (the loopback: /core/log, custom services...), those still unanswered and the oldest's
// age, and from what it printed: the request log lines (and their slowest duration), the QUEUE
// batches (count, slowest), the proxy's resends. The lines other than request logs (and request
// logs of 2 s or more) are copied with a timestamp to path.lines. Off by default: it costs a
// timer and a counter per request. What it showed for issue 38's stalls: Node was never the
// blocked one (event-loop delay at most 0.3 s, every loopback request answered within 0.25 s,
// no QUEUE batch over 1.7 s, while the runtime's requests waited 5-23 s); the runtime's thread
// was waiting on the disk (docs/operations.md, EDGEFEED_PERSIST_ROOT).
const LAGLOG = process.env.EDGEFEED_DEV_LAGLOG;
if (LAGLOG) {
  const { monitorEventLoopDelay } = require("node:perf_hooks");
  let started = false;
  const inflight = new Set();
  let stats = null;
  const fresh = () => ({ byPath: {}, slowestAnswerMs: 0, logLines: 0, slowestLogMs: 0, queueBatches: 0, slowestQueueMs: 0, queueMsgs: 0, resends: 0 });
  stats = fresh();
  const linesPath = `${LAGLOG}.lines`;
  const bucket = (url) => {
    const path = String(url || "").split("?")[0];
    return path.startsWith("/core/") || path.length < 40 ? path : path.slice(0, 40);
  };
  const note = (text) => {
    for (const line of String(text).split("\n")) {
      // eslint-disable-next-line no-control-regex
      const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
      if (!plain.trim()) continue;
      const req = /^\[wrangler:info\] (GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS) \S+ \d+ .*\((\d+)ms\)/.exec(plain);
      if (req) {
        stats.logLines += 1;
        stats.slowestLogMs = Math.max(stats.slowestLogMs, Number(req[2]));
        if (Number(req[2]) < 2000) continue;
      }
      const queue = /QUEUE \S+ (\d+)\/(\d+) \((\d+)ms\)/.exec(plain);
      if (queue) {
        stats.queueBatches += 1;
        stats.queueMsgs += Number(queue[2]);
        stats.slowestQueueMs = Math.max(stats.slowestQueueMs, Number(queue[3]));
      }
      if (plain.includes("edgefeed dev proxy: resent")) stats.resends += 1;
      fs.appendFileSync(linesPath, `${Date.now()} ${process.pid} ${plain}\n`);
    }
  };
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write;
    stream.write = function writeNoted(chunk, ...rest) {
      try {
        note(chunk);
      } catch {}
      return write.call(this, chunk, ...rest);
    };
  }
  const start = () => {
    if (started) return;
    started = true;
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let last = Date.now();
    let cpu = process.cpuUsage();
    const timer = setInterval(() => {
      const now = Date.now();
      const used = process.cpuUsage(cpu);
      cpu = process.cpuUsage();
      let oldest = 0;
      for (const token of inflight) oldest = Math.max(oldest, now - token.t);
      const record = {
        t: now,
        pid: process.pid,
        driftMs: now - last - 1000,
        lagMaxMs: delay.max / 1e6,
        lagMeanMs: Math.round(delay.mean / 1e4) / 100,
        lagP99Ms: delay.percentile(99) / 1e6,
        cpuMs: Math.round((used.user + used.system) / 1000),
        inflight: inflight.size,
        oldestInflightMs: oldest,
        ...stats,
      };
      last = now;
      delay.reset();
      stats = fresh();
      fs.appendFileSync(LAGLOG, JSON.stringify(record) + "\n");
    }, 1000);
    timer.unref();
  };
  const patchedCreate = http.createServer;
  http.createServer = function createServerMeasured(...args) {
    const server = patchedCreate.apply(this, args);
    start();
    server.on("request", (req, res) => {
      const t = Date.now();
      const key = bucket(req.url);
      stats.byPath[key] = (stats.byPath[key] || 0) + 1;
      const token = { t };
      inflight.add(token);
      res.on("close", () => {
        inflight.delete(token);
        stats.slowestAnswerMs = Math.max(stats.slowestAnswerMs, Date.now() - t);
      });
    });
    return server;
  };
  syncBuiltinESMExports();
}
