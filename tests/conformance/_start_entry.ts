/**
 * Starts each runtime entry of tests/conformance/entries the way its
 * conformance run does (bundle, stores, process), so the runners and the
 * Chromium test of device-bound sessions (tests/browser/dbsc_browser_test.ts)
 * serve the same thing: `deno` and `hono` in this process, `bun`, `node`
 * and `vercel_edge` as child processes, `cloudflare_workers` in workerd
 * through Miniflare.
 *
 * Every entry listens on plain HTTP at 127.0.0.1; `settings` are the
 * bindings every entry reads (`APP_ORIGIN`, `AUTH_SECRET`, the mail sink's,
 * the sign-in methods', `DBSC_COOKIE_LIFETIME`), and each start adds its
 * own stores.
 *
 * @module
 */
import { startUpstashBridge } from "../support/upstash_bridge.ts";
import { startLibsqlHttpBridge } from "../support/libsql_http_bridge.ts";
import { tcpReachable } from "../support/services.ts";
import {
  bundle,
  linkPackageForBun,
  npmImports,
  ROOT,
  stopBundler,
} from "./_import_map.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "./_hasher.ts";
import { spawnServer, waitForHttp } from "./_runner.ts";

/** The entries, by name. */
export type EntryName =
  | "deno"
  | "hono"
  | "bun"
  | "node"
  | "vercel_edge"
  | "cloudflare_workers";

/** What every start takes. */
export interface EntryOptions {
  /** The port on 127.0.0.1 the entry listens on. */
  port: number;
  /** A scratch directory for its files (databases, bundles). */
  dir: string;
  /**
   * The bindings every entry reads: `APP_ORIGIN` and `AUTH_SECRET` at
   * least; the mail sink's, the sign-in methods', `DBSC_COOKIE_LIFETIME`.
   */
  settings: Record<string, string>;
}

/** A running entry. */
export interface RunningEntry {
  /** The runtime, for example `Bun 1.4.5`. */
  label: string;
  /** What was started, and its stores. */
  about: string[];
  /** The PBKDF2 route full-strength hashing must take; default `webcrypto`. */
  expectRoute?: "webcrypto" | "wasm";
  /** Where it listens: `http://127.0.0.1:<port>`. */
  url: string;
  /** What it printed (or, in this process, logged) so far. */
  output: () => string;
  /** Stops it and its stores; answers lines worth printing after. */
  stop: () => Promise<string[]>;
}

/** An entry that cannot start here: a runtime or service is missing. */
export class EntryUnavailable extends Error {
  /** What the entry printed before it gave up. */
  readonly output: string;

  /**
   * @param why Why it cannot start.
   * @param output What it printed.
   */
  constructor(why: string, output = "") {
    super(why);
    this.name = "EntryUnavailable";
    this.output = output;
  }
}

/**
 * Starts one entry and waits until it answers.
 *
 * @param name The entry.
 * @param options Port, directory, bindings.
 * @returns The running entry.
 * @throws {EntryUnavailable} When its runtime or a service it needs is
 * missing, or it did not answer within 20 s.
 */
export function startEntry(
  name: EntryName,
  options: EntryOptions,
): Promise<RunningEntry> {
  return STARTS[name](options);
}

const STARTS: Record<EntryName, (o: EntryOptions) => Promise<RunningEntry>> = {
  deno: startDeno,
  hono: startHono,
  bun: startBun,
  node: startNode,
  vercel_edge: startVercelEdge,
  cloudflare_workers: startCloudflareWorkers,
};

async function startDeno(o: EntryOptions): Promise<RunningEntry> {
  const { createDenoApp } = await import("./entries/deno.ts");
  const hasher = conformanceHasher();
  const logs: string[] = [];
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    const app = withHasherReport(
      (await createDenoApp({
        ...o.settings,
        DATABASE_URL: `file:${o.dir}/app.db`,
        KV_PATH: `${o.dir}/kv.sqlite3`,
      }, { hasher, limits: CONFORMANCE_LIMITS, log: (l) => logs.push(l) }))
        .fetch,
      hasher,
    );
    server = Deno.serve(
      { hostname: "127.0.0.1", port: o.port, onListen: () => {} },
      app,
    );
  } catch (error) {
    throw new EntryUnavailable(
      `the Deno entry could not start: ${(error as Error).message}`,
    );
  }
  return {
    label: `Deno ${Deno.version.deno}`,
    about: [
      "entry tests/conformance/entries/deno.ts (createDenoApp: the reference app) in-process, Deno.serve",
      "stores: Deno KV (file) for sessions, limits and notes; libSQL file (drizzle-orm/libsql) for users, tokens and the sign-in methods' tables",
    ],
    url: `http://127.0.0.1:${o.port}`,
    output: () => logs.join("\n"),
    stop: async () => {
      await server.shutdown();
      return [];
    },
  };
}

async function startHono(o: EntryOptions): Promise<RunningEntry> {
  const { createHonoApp } = await import("./entries/hono.ts");
  const hasher = conformanceHasher();
  const logs: string[] = [];
  const hono = await createHonoApp({
    ...o.settings,
    DATABASE_URL: `file:${o.dir}/app.db`,
    KV_PATH: `${o.dir}/kv.sqlite3`,
  }, { hasher, limits: CONFORMANCE_LIMITS, log: (l) => logs.push(l) });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: o.port, onListen: () => {} },
    withHasherReport(
      (req, info) => Promise.resolve(hono.fetch(req, info)),
      hasher,
    ),
  );
  return {
    label: `Hono ${
      npmImports.hono.split("@").pop()!.replace(/^\^/, "")
    } on Deno`,
    about: [
      "entry tests/conformance/entries/hono.ts: the reference app as Hono's catch-all route",
      "stores: as the Deno run (Deno KV, libSQL file)",
    ],
    url: `http://127.0.0.1:${o.port}`,
    output: () => logs.join("\n"),
    stop: async () => {
      await server.shutdown();
      return [];
    },
  };
}

async function startBun(o: EntryOptions): Promise<RunningEntry> {
  const bun = `${ROOT}/node_modules/.bin/bun`;
  let version = "";
  try {
    const out = await new Deno.Command(bun, { args: ["--version"] }).output();
    version = new TextDecoder().decode(out.stdout).trim();
    if (!out.success) throw new Error("bun --version failed");
  } catch (error) {
    throw new EntryUnavailable(
      `Bun is not installed (run npm install): ${(error as Error).message}`,
    );
  }
  await linkPackageForBun();
  const redis = await tcpReachable(6379);
  const bridge = redis ? startUpstashBridge() : null;
  const env: Record<string, string> = {
    ...o.settings,
    PORT: String(o.port),
    DATABASE_URL: `file:${o.dir}/app.db`,
  };
  if (bridge) {
    env.UPSTASH_REDIS_REST_URL = bridge.url;
    env.UPSTASH_REDIS_REST_TOKEN = bridge.token;
    env.KV_PREFIX = `conformance:${crypto.randomUUID()}:`;
  }
  const server = spawnServer(
    [bun, "run", "--no-install", "tests/conformance/entries/bun.ts"],
    env,
  );
  return await running(server, `Bun ${version}`, o.port, [
    "entry tests/conformance/entries/bun.ts (the reference app) under `bun run`, Bun.serve",
    bridge
      ? "stores: Upstash (@upstash/redis through the REST bridge to the local Redis) for sessions, limits and notes; libSQL file for users and tokens"
      : "stores: LibsqlKV and libSQL file (Redis is not reachable on 127.0.0.1:6379, so Upstash is not exercised)",
  ], async () => {
    await bridge?.close();
    return [];
  });
}

async function startNode(o: EntryOptions): Promise<RunningEntry> {
  let version = "";
  try {
    const out = await new Deno.Command("node", { args: ["--version"] })
      .output();
    version = new TextDecoder().decode(out.stdout).trim();
  } catch (error) {
    throw new EntryUnavailable(
      `node is not on PATH: ${(error as Error).message}`,
    );
  }
  if (Number(version.replace(/^v/, "").split(".")[0]) < 20) {
    throw new EntryUnavailable(`Node ${version} is older than 20`);
  }
  const outfile = `${o.dir}/server.mjs`;
  const t0 = performance.now();
  const bytes = await bundleAlone({
    entry: "tests/conformance/entries/node.ts",
    outfile,
    format: "esm",
    platform: "node",
    externalPackages: true,
  });
  const bundleMs = Math.round(performance.now() - t0);
  const server = spawnServer(["node", outfile], {
    ...o.settings,
    PORT: String(o.port),
    DATABASE_URL: `file:${o.dir}/app.db`,
  });
  return await running(server, `Node ${version}`, o.port, [
    `entry tests/conformance/entries/node.ts (the reference app) behind @portcullis/auth/adapters/node; esbuild bundle ${bytes} bytes in ${bundleMs} ms (npm packages external, from node_modules)`,
    "stores: LibsqlKV for sessions, limits and notes; libSQL file for users, tokens and the sign-in methods' tables (@libsql/client, native)",
  ], () => Promise.resolve([]));
}

async function startVercelEdge(o: EntryOptions): Promise<RunningEntry> {
  let version = "";
  try {
    const pkg = JSON.parse(
      await Deno.readTextFile(`${ROOT}/node_modules/edge-runtime/package.json`),
    );
    version = pkg.version;
  } catch {
    throw new EntryUnavailable(
      "npm edge-runtime is not installed (run npm install)",
    );
  }
  if (!(await tcpReachable(6379))) {
    throw new EntryUnavailable(
      "Redis is not reachable on 127.0.0.1:6379 (the Edge Function's store is Upstash)",
    );
  }
  const outfile = `${o.dir}/edge.js`;
  const t0 = performance.now();
  const bytes = await bundleAlone({
    entry: "tests/conformance/entries/vercel_edge.ts",
    outfile,
    format: "iife",
    platform: "browser",
    conditions: ["edge-light", "worker", "browser"],
  });
  const bundleMs = Math.round(performance.now() - t0);
  const bridge = startUpstashBridge();
  const turso = await startLibsqlHttpBridge();
  const server = spawnServer(
    ["node", "tests/conformance/edge_host.mjs", outfile],
    {
      PORT: String(o.port),
      EDGE_ENV: JSON.stringify({
        ...o.settings,
        UPSTASH_REDIS_REST_URL: bridge.url,
        UPSTASH_REDIS_REST_TOKEN: bridge.token,
        DATABASE_URL: turso.url,
        DATABASE_AUTH_TOKEN: turso.token,
        KV_PREFIX: `conformance:${crypto.randomUUID()}:`,
      }),
    },
  );
  return await running(server, `Vercel edge-runtime ${version}`, o.port, [
    `entry tests/conformance/entries/vercel_edge.ts (the reference app as an Edge Function) in npm edge-runtime ${version} on Node, string/WASM code generation refused; classic-script bundle ${bytes} bytes in ${bundleMs} ms`,
    "stores: Upstash (REST bridge to the local Redis) for sessions, limits and notes",
    "users and tokens: SQLCredentialStore/SQLVerificationTokenStore over drizzle-orm/libsql/web and @libsql/client/web, Hrana over HTTP to the libSQL bridge (a real local libSQL file; no sqld server here); the sign-in methods' SQL stores likewise",
  ], async () => {
    await bridge.close();
    const sql = turso.stats();
    await turso.close();
    return [
      `libSQL bridge: ${sql.httpRequests} HTTP requests, ${sql.statements} statements`,
    ];
  });
}

async function startCloudflareWorkers(o: EntryOptions): Promise<RunningEntry> {
  const outfile = `${o.dir}/worker.js`;
  const t0 = performance.now();
  const bytes = await bundleAlone({
    entry: "tests/conformance/entries/cloudflare_workers.ts",
    outfile,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    // `.wasm` imports stay modules next to the bundle, as wrangler does.
    loader: { ".wasm": "copy" },
  });
  const bundleMs = Math.round(performance.now() - t0);
  // Loaded here: only this entry needs it.
  const { Miniflare } = await import("miniflare");
  let mf: InstanceType<typeof Miniflare> | undefined;
  try {
    mf = new Miniflare({
      modules: true,
      scriptPath: outfile,
      modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
      compatibilityDate: "2025-09-01",
      host: "127.0.0.1",
      port: o.port,
      kvNamespaces: ["AUTH_KV"],
      d1Databases: ["DB"],
      bindings: { ...o.settings },
    });
    await mf.ready;
  } catch (error) {
    await mf?.dispose().catch(() => {});
    throw new EntryUnavailable(
      `Miniflare (workerd) could not start: ${(error as Error).message}`,
    );
  }
  const url = `http://127.0.0.1:${o.port}`;
  if (!(await waitForHttp(`${url}/`, 20_000))) {
    await mf.dispose();
    throw new EntryUnavailable("workerd did not answer");
  }
  return {
    label: "workerd (Miniflare 4)",
    about: [
      `entry tests/conformance/entries/cloudflare_workers.ts (the reference app) as a module Worker; esbuild bundle ${bytes} bytes in ${bundleMs} ms`,
      "stores: Workers KV binding (CloudflareKV) for sessions, limits and notes; D1 binding through drizzle-orm/d1 (SQLCredentialStore, SQLVerificationTokenStore) for users and tokens",
      "production PBKDF2 cap enforced by a stand-in: WebCrypto PBKDF2 above 100000 iterations throws NotSupportedError",
    ],
    expectRoute: "wasm",
    url,
    output: () => "",
    stop: async () => {
      await mf.dispose();
      return [];
    },
  };
}

/**
 * Bundles one entry and stops esbuild after, one bundle at a time: entries
 * started together (the browser test's lanes) must not stop the service
 * under another's build.
 */
function bundleAlone(options: Parameters<typeof bundle>[0]): Promise<number> {
  const done = bundling.then(async () => {
    try {
      return await bundle(options);
    } finally {
      await stopBundler();
    }
  });
  bundling = done.catch(() => {});
  return done;
}
/** The last bundle started, settled or not. */
let bundling: Promise<unknown> = Promise.resolve();

/** Waits for a spawned entry; stops it and its stores if it never answers. */
async function running(
  server: ReturnType<typeof spawnServer>,
  label: string,
  port: number,
  about: string[],
  closeStores: () => Promise<string[]>,
): Promise<RunningEntry> {
  let exited = false;
  server.child.status.then(() => exited = true);
  const url = `http://127.0.0.1:${port}`;
  if (!(await waitForHttp(`${url}/`, 20_000, () => !exited))) {
    await server.stop();
    await closeStores();
    throw new EntryUnavailable(
      `${label} did not start the app`,
      server.output(),
    );
  }
  return {
    label,
    about,
    url,
    output: server.output,
    stop: async () => {
      await server.stop();
      return await closeStores();
    },
  };
}
