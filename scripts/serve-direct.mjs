// The bench's "direct" stack: the same Worker (build/index.js and its wasm, built by
// scripts/build), the same wrangler config (bindings, Durable Objects, Queues, rate limits,
// assets, vars) and the same persisted local D1 / Durable Object files as `wrangler dev
// --persist-to DIR`, served by Miniflare's own API on workerd, without wrangler dev's layers:
// no ProxyWorker in front of the Worker, no inspector proxy subscribing to the runtime's
// network events (wrangler logs every subrequest through it), no esbuild bundle with dev
// middleware. What is left is what production has too: one workerd running the Worker.
//
//   node scripts/serve-direct.mjs --port P --persist-to DIR [--config FILE] [--var NAME:VALUE]...
//
// Used by the test harness (tests/common, EDGEFEED_STACK=direct) and so by `./scripts/bench
// --direct`. Development keeps `./scripts/dev` (wrangler dev: live reload, inspector, logs).
// Differences a caller may notice: `/__scheduled` (wrangler's --test-scheduled middleware) is
// `/cdn-cgi/handler/scheduled` here; console output of the Worker goes to this process's stdout.
import path from "node:path";
import process from "node:process";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";

function parseArgs(argv) {
  const args = { port: 8787, host: "127.0.0.1", persistTo: ".wrangler/state", config: "wrangler.toml", vars: {} };
  for (let i = 0; i < argv.length; i += 1) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case "--port": args.port = Number(value); i += 1; break;
      case "--ip": args.host = value; i += 1; break;
      case "--persist-to": args.persistTo = value; i += 1; break;
      case "--config": args.config = value; i += 1; break;
      case "--var": {
        const at = value.indexOf(":");
        if (at < 1) throw new Error(`--var ${value}: expected NAME:VALUE`);
        args.vars[value.slice(0, at)] = value.slice(at + 1);
        i += 1;
        break;
      }
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!Number.isInteger(args.port) || args.port < 1 || args.port > 65535) throw new Error("--port: 1 .. 65535");
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const configPath = path.resolve(args.config);
  const configDir = path.dirname(configPath);
  const config = unstable_readConfig({ config: configPath });
  const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
  const persistRoot = path.join(path.resolve(args.persistTo), "v3");

  const mf = new Miniflare({
    host: args.host,
    port: args.port,
    log: new Log(LogLevel.WARN),
    // No request.cf from the network (the machine may have none): Miniflare's placeholder.
    cf: false,
    logRequests: false,
    // /cdn-cgi/handler/scheduled fires the cron pass by hand, as /__scheduled does in wrangler dev.
    unsafeTriggerHandlers: true,
    defaultPersistRoot: persistRoot,
    workers: [
      {
        ...workerOptions,
        name: config.name,
        modules: true,
        scriptPath: path.resolve(configDir, config.main),
        // The config's [vars] and .dev.vars are in workerOptions.bindings already; --var wins,
        // as in wrangler dev.
        bindings: { ...(workerOptions.bindings ?? {}), ...args.vars },
      },
    ],
  });
  const url = await mf.ready;
  console.log(`edgefeed (direct stack) ready on ${url}`);

  const stop = async () => {
    await mf.dispose().catch(() => {});
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
