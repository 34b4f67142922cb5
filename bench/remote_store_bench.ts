/**
 * The denylist 2 ms away: the reference app's `GET /api/me` (accounts():
 * router, identityMiddleware, the user lookup) with its session store behind
 * a TCP proxy that delays every chunk 2 ms each way, in front of the Upstash
 * REST bridge (tests/support/upstash_bridge.ts) in front of the local Redis.
 *
 * Usage (prints a markdown table; needs wrk and Redis on 127.0.0.1:6379):
 *
 * ```sh
 * deno run -A bench/remote_store_bench.ts   # ROUNDS=3 SECONDS=4 DELAY_MS=2
 * ```
 *
 * Three server processes (`deno run -A bench/remote_store_bench.ts serve`),
 * one per mode, all on core 0; wrk, the bridge and the proxy on core 1:
 *
 * - `stateless`: `store: null` (no denylist; the floor);
 * - `exact`: the default, one denylist read per request;
 * - `stale`: `revocationStaleness: 5`;
 * - `redis`, `redis-stale`: the same two with the plain Redis store
 *   (`stores/redis`, node-redis over RESP) behind its own delaying proxy in
 *   front of the real Redis.
 *
 * Load: 100 distinct sessions (Bearer), rotated request by request, all
 * verified once before measuring (warm). Round trips are counted at the
 * bridge. Each round measures every mode once per concurrency, in a rotated
 * order; the table takes the best round (highest req/s, lowest p50/p99).
 *
 * @module
 */
import {
  KVSessionStore,
  MemoryCredentialStore,
  MemoryKV,
  Pbkdf2Hasher,
  SecretProvider,
  SessionManager,
} from "../mod.ts";
import { MemoryVerificationTokenStore } from "../lib/verification/mod.ts";
import { UpstashKV } from "../stores/upstash/mod.ts";
import { accounts } from "../packages/accounts/mod.ts";
import { MemorySecurityEventStore } from "../lib/events/mod.ts";
import { modules } from "../examples/app/modules.ts";

const SECRET = "OE4oAG13kLUZp20SYqZR2kcifh/ZW0UNU72ph11FvDw=";
const SESSIONS = 100;
const STALENESS = 5;
type Mode = "stateless" | "exact" | "stale" | "redis" | "redis-stale";

async function serve(): Promise<void> {
  const env = Deno.env.toObject();
  const mode = env.MODE as Mode;
  const secret = SecretProvider.fromValue(SECRET);
  const prefix = `bench:${crypto.randomUUID()}:`;
  let remote: KVSessionStore;
  if (mode.startsWith("redis")) {
    // RedisKV (node-redis) over its own TCP connection, through the proxy.
    const { createClient } = await import("@redis/client");
    const { RedisKV } = await import("../stores/redis/mod.ts");
    const client = await createClient({
      url: `redis://127.0.0.1:${env.REDIS_PROXY_PORT}`,
      disableOfflineQueue: true,
    }).on("error", () => {}).connect();
    remote = new KVSessionStore(new RedisKV(client, { prefix }));
  } else {
    remote = new KVSessionStore(
      new UpstashKV({
        url: env.UPSTASH_URL,
        token: env.UPSTASH_TOKEN,
        prefix,
      }),
    );
  }
  const sessions = new SessionManager({
    secret,
    store: mode === "stateless" ? null : remote,
    revocationStaleness: mode.endsWith("stale") ? STALENESS : undefined,
  });
  const credentials = new MemoryCredentialStore();
  const origin = `http://127.0.0.1:${env.PORT}`;
  const app = accounts({
    // Memory stores: the modules that keep SQL tables stay out.
    modules: modules({ SIGN_IN_METHODS: "off" }),
    events: new MemorySecurityEventStore(),
    sessions,
    secret,
    credentials,
    tokens: new MemoryVerificationTokenStore(),
    // The app's own data (rate limits, notes) stays local: only the
    // denylist is remote here.
    kv: new MemoryKV(),
    mailer: { send: () => Promise.resolve() },
    appOrigin: origin,
    hasher: new Pbkdf2Hasher({ iterations: 1000 }),
    log: () => {},
  });
  const reg = await app.fetch(
    new Request(`${origin}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        email: "bench@example.com",
        password: "correct horse battery staple",
      }),
    }),
  );
  const { subject } = await reg.json();
  const tokens: string[] = [];
  for (let i = 0; i < SESSIONS; i++) tokens.push(await sessions.issue(subject));
  Deno.serve(
    { hostname: "127.0.0.1", port: Number(env.PORT), onListen() {} },
    app.fetch,
  );
  console.log(JSON.stringify({ tokens }));
}

async function orchestrate(): Promise<void> {
  const { freePort, spawnServer, waitForHttp } = await import(
    "../tests/conformance/_runner.ts"
  );
  const { startUpstashBridge } = await import(
    "../tests/support/upstash_bridge.ts"
  );
  const { best, hasWrk, least, runWrk, startDelayProxy } = await import(
    "./_load.ts"
  );
  if (!hasWrk) throw new Error("wrk is needed: apt-get install wrk");
  const rounds = Number(Deno.env.get("ROUNDS") ?? 3);
  const seconds = Number(Deno.env.get("SECONDS") ?? 4);
  const delay = Number(Deno.env.get("DELAY_MS") ?? 2);
  const concurrencies = (Deno.env.get("CONNECTIONS") ?? "1,50").split(",")
    .map(Number);
  const pin = navigator.hardwareConcurrency >= 2;

  const bridge = startUpstashBridge();
  const bridgePort = Number(new URL(bridge.url).port);
  const proxy = startDelayProxy(bridgePort, delay);
  const remoteUrl = `http://127.0.0.1:${proxy.port}`;
  // The plain Redis store (stores/redis, RESP over TCP) through its own
  // delaying proxy in front of the real Redis.
  const redisProxy = startDelayProxy(6379, delay);

  // One round trip as the server pays it: UpstashKV.getMany of two keys
  // through the proxy, sequentially (and without the proxy, for the delay).
  async function roundTrip(url: string): Promise<number> {
    const kv = new UpstashKV({ url, token: bridge.token, prefix: "rt:" });
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await kv.getMany(["a", "b"]);
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b)[100];
  }
  async function redisRoundTrip(port: number): Promise<number> {
    const { createClient } = await import("@redis/client");
    const client = await createClient({ url: `redis://127.0.0.1:${port}` })
      .on("error", () => {}).connect();
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await client.sendCommand(["MGET", "a", "b"]);
      times.push(performance.now() - t);
    }
    await client.close();
    return times.sort((a, b) => a - b)[100];
  }
  const rtDirect = await roundTrip(bridge.url);
  const rtProxied = await roundTrip(remoteUrl);
  const rtRedis = await redisRoundTrip(redisProxy.port);
  console.log(
    `one denylist read (UpstashKV.getMany, p50 of 200): direct ${
      rtDirect.toFixed(2)
    } ms, through the ${delay} ms proxy ${rtProxied.toFixed(2)} ms`,
  );

  const modes: Mode[] = ["stateless", "exact", "stale", "redis", "redis-stale"];
  const servers = await Promise.all(modes.map(async (mode) => {
    const port = freePort();
    const server = spawnServer(
      [
        ...(pin ? ["taskset", "-c", "0"] : []),
        Deno.execPath(),
        "run",
        "-A",
        "--import-map=bench/import_map.json",
        "--lock=bench/deno.lock",
        "bench/remote_store_bench.ts",
        "serve",
      ],
      {
        MODE: mode,
        PORT: String(port),
        UPSTASH_URL: remoteUrl,
        UPSTASH_TOKEN: bridge.token,
        REDIS_PROXY_PORT: String(redisProxy.port),
      },
    );
    const base = `http://127.0.0.1:${port}`;
    if (!(await waitForHttp(base + "/login", 30_000))) {
      await server.stop();
      throw new Error(`${mode} server did not start: ${server.output()}`);
    }
    let line: string | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = server.output().split("\n").find((l) => l.startsWith("{"));
      if (!line) await new Promise((r) => setTimeout(r, 100));
    }
    const { tokens } = JSON.parse(line!) as { tokens: string[] };
    return { mode, server, base, tokens };
  }));

  const wrkCore = pin ? 1 : undefined;
  for (const s of servers) {
    // Warm-up: every session verified once (verified-token cache), JIT.
    await runWrk({
      url: s.base + "/api/me",
      connections: 50,
      seconds: 2,
      headers: s.tokens.map((t) => ({ authorization: `Bearer ${t}` })),
      core: wrkCore,
    });
  }

  type Sample = { rps: number; p50: number; p99: number; trips: number };
  const samples = new Map<string, Sample[]>();
  for (let r = 0; r < rounds; r++) {
    for (const c of concurrencies) {
      for (let k = 0; k < servers.length; k++) {
        const s = servers[(k + r) % servers.length];
        bridge.resetStats();
        const res = await runWrk({
          url: s.base + "/api/me",
          connections: c,
          seconds,
          headers: s.tokens.map((t) => ({ authorization: `Bearer ${t}` })),
          core: wrkCore,
        });
        const trips = bridge.stats().httpRequests / res.requests;
        const key = `${s.mode}@${c}`;
        if (!samples.has(key)) samples.set(key, []);
        samples.get(key)!.push({ ...res, trips });
        console.log(
          `round ${r + 1} c=${c} ${s.mode}: ${Math.round(res.rps)} req/s, p50 ${
            res.p50.toFixed(2)
          } ms, p99 ${res.p99.toFixed(2)} ms, ${trips.toFixed(3)} trips/req`,
        );
      }
    }
  }
  for (const s of servers) await s.server.stop();
  proxy.close();
  redisProxy.close();
  await bridge.close();

  const rows: string[] = [];
  for (const c of concurrencies) {
    const base = samples.get(`stateless@${c}`)!;
    const baseP50 = least(base.map((x) => x.p50));
    const baseRps = best(base.map((x) => x.rps));
    for (const mode of modes) {
      const xs = samples.get(`${mode}@${c}`)!;
      const p50 = least(xs.map((x) => x.p50));
      const p99 = least(xs.map((x) => x.p99));
      const rps = best(xs.map((x) => x.rps));
      const trips = xs.map((x) => x.trips);
      rows.push(
        `| ${c} | ${mode} | ${p50.toFixed(2)} | ${
          (p50 / baseP50).toFixed(2)
        }× | ${p99.toFixed(2)} | ${Math.round(rps)} | ${
          (rps / baseRps).toFixed(2)
        }× | ${Math.min(...trips).toFixed(3)}–${
          Math.max(...trips).toFixed(3)
        } |`,
      );
    }
  }
  console.log(`
One denylist read (UpstashKV.getMany, p50 of 200 sequential): direct ${
    rtDirect.toFixed(2)
  } ms, through the proxy ${rtProxied.toFixed(2)} ms; Redis MGET (node-redis)
through its proxy ${rtRedis.toFixed(2)} ms.

| connections | mode | p50 ms (best) | p50 × stateless | p99 ms (best) | req/s (best) | req/s × stateless | store round trips per request |
|---|---|---|---|---|---|---|---|
${rows.join("\n")}
`);
}

if (Deno.args[0] === "serve") await serve();
else await orchestrate();
