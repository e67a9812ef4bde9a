// Loaded into wrangler's Node process (NODE_OPTIONS=--require ...) by scripts/dev and the test
// harness. Local dev only: nothing here reaches a deployed Worker.
//
// Why: miniflare (pinned wrangler 4.86, the last that runs on Node 20) serves its loopback
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
