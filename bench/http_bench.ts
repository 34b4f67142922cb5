/**
 * HTTP benchmark of the reference app's `GET /api/me` on Deno and on Bun,
 * with `autocannon` (npm, pinned in package.json), and a count of key-value
 * round trips per request through the Upstash REST bridge.
 *
 * Usage (writes bench/RESULTS_http.md):
 *
 * ```sh
 * npm install
 * deno run -A bench/http_bench.ts            # ROUNDS=3 SECONDS=5 CONNECTIONS=50
 * ```
 *
 * One server process per runtime (`<runtime> bench/http_bench.ts serve`)
 * answers four routes that end in the same handler body (look the user up,
 * answer `{subject, email, verified}`):
 *
 * - `/bare/me`: the handler alone, no authentication (the baseline);
 * - `/guarded/me`: the handler behind `identityMiddleware` and
 *   `requireAuthenticated`, nothing else;
 * - `/api/me`: the whole reference app (`createApp`: router, identity,
 *   security headers), with Bearer or with the session cookie.
 *
 * Stores: in memory for throughput (the ratio DESIGN.md §13 targets); the
 * Upstash bridge in front of the local Redis for the round-trip count.
 * Runs alternate: each round measures every variant once, in a rotated
 * order, and the table reports the median of the rounds.
 *
 * @module
 */
import {
  compose,
  currentUser,
  identityMiddleware,
  type KeyValueStore,
  KVSessionStore,
  MemoryCredentialStore,
  MemoryKV,
  MemoryVerificationTokenStore,
  Pbkdf2Hasher,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
} from "../mod.ts";
import { UpstashKV } from "../stores/upstash.ts";
import { createApp } from "../examples/app/app.ts";
import type { Mailer } from "../examples/app/mailer.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const env: Record<string, string | undefined> = g.Deno?.env.toObject() ??
  g.process.env;
const isServe = g.Deno ? Deno.args[0] === "serve" : true;

/** Server mode: builds the app and the baselines, prints `{token, subject}`. */
async function serve(): Promise<void> {
  const secret = SecretProvider.fromValue(
    "bench-secret-bench-secret-bench-secret-0123",
  );
  const kv: KeyValueStore = env.BENCH_UPSTASH_URL
    ? new UpstashKV({
      url: env.BENCH_UPSTASH_URL,
      token: env.BENCH_UPSTASH_TOKEN ?? "",
      prefix: `bench:${crypto.randomUUID()}:`,
    })
    : new MemoryKV();
  const sessions = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
  });
  const credentials = new MemoryCredentialStore();
  const mailer: Mailer = { send: () => Promise.resolve() };
  const origin = `http://127.0.0.1:${env.PORT}`;
  const app = createApp({
    sessions,
    secret,
    credentials,
    tokens: new MemoryVerificationTokenStore(),
    kv,
    mailer,
    appOrigin: origin,
    hasher: new Pbkdf2Hasher({ iterations: 1000 }),
    log: () => {},
  });
  const reg = await app(
    new Request(`${origin}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        email: "bench@example.com",
        password: "correct horse battery staple",
      }),
    }),
  );
  const { token, subject } = await reg.json();

  async function me(subject: string): Promise<Response> {
    const user = await credentials.findById(subject);
    return Response.json({
      subject,
      email: user!.email,
      verified: user!.verifiedAt > 0,
    });
  }
  const guarded = compose(
    [identityMiddleware(sessions, { onEvent: () => {} })],
    (req) => requireAuthenticated(req) ?? me(currentUser(req)!),
  );
  const handler = (req: Request, ...rest: unknown[]): Promise<Response> => {
    const path = new URL(req.url).pathname;
    if (path === "/bare/me") return me(subject);
    if (path === "/guarded/me") return Promise.resolve(guarded(req));
    return app(req, ...rest);
  };
  if (g.Bun) {
    g.Bun.serve({
      hostname: "127.0.0.1",
      port: Number(env.PORT),
      fetch: handler,
    });
  } else {
    Deno.serve(
      { hostname: "127.0.0.1", port: Number(env.PORT), onListen() {} },
      handler,
    );
  }
  console.log(JSON.stringify({ token, subject }));
}

interface Variant {
  name: string;
  path: string;
  header?: (token: string) => string;
}

const VARIANTS: Variant[] = [
  { name: "unprotected handler (`/bare/me`)", path: "/bare/me" },
  {
    name: "identityMiddleware + requireAuthenticated, Bearer (`/guarded/me`)",
    path: "/guarded/me",
    header: (t) => `authorization=Bearer ${t}`,
  },
  {
    name: "reference app `/api/me`, Bearer",
    path: "/api/me",
    header: (t) => `authorization=Bearer ${t}`,
  },
  {
    name: "reference app `/api/me`, cookie",
    path: "/api/me",
    header: (t) => `cookie=__Host-session=${t}`,
  },
];

/** Orchestrator mode (Deno): runs both runtimes and writes the results. */
async function orchestrate(): Promise<void> {
  const { ROOT, linkPackageForBun } = await import(
    "../tests/conformance/_import_map.ts"
  );
  const { freePort, spawnServer, waitForHttp } = await import(
    "../tests/conformance/_runner.ts"
  );
  const { startUpstashBridge } = await import(
    "../tests/support/upstash_bridge.ts"
  );
  const rounds = Number(env.ROUNDS ?? 3);
  const seconds = Number(env.SECONDS ?? 5);
  const connections = Number(env.CONNECTIONS ?? 50);
  const autocannon = `${ROOT}/node_modules/.bin/autocannon`;
  await linkPackageForBun();
  const runtimes = [
    {
      name: `Deno ${Deno.version.deno}`,
      cmd: [Deno.execPath(), "run", "-A", "bench/http_bench.ts", "serve"],
    },
    {
      name: "Bun",
      cmd: [`${ROOT}/node_modules/.bin/bun`, "run", "bench/http_bench.ts"],
    },
  ];
  const version = async (cmd: string) =>
    new TextDecoder().decode(
      (await new Deno.Command(cmd, { args: ["--version"] }).output()).stdout,
    ).trim();
  runtimes[1].name = `Bun ${await version(runtimes[1].cmd[0])}`;

  async function start(cmd: string[], extra: Record<string, string> = {}) {
    const port = freePort();
    const server = spawnServer(cmd, { PORT: String(port), ...extra });
    const base = `http://127.0.0.1:${port}`;
    if (!(await waitForHttp(base + "/bare/me", 20_000))) {
      await server.stop();
      throw new Error(`server did not start: ${server.output()}`);
    }
    const first = server.output().split("\n").find((l) => l.startsWith("{"))!;
    return {
      server,
      base,
      ...JSON.parse(first) as { token: string; subject: string },
    };
  }

  async function load(
    url: string,
    header?: string,
    duration = seconds,
  ): Promise<number> {
    const args = ["-c", String(connections), "-d", String(duration), "-j"];
    if (header) args.push("-H", header);
    args.push(url);
    const out = await new Deno.Command(autocannon, { args, stderr: "null" })
      .output();
    const report = JSON.parse(new TextDecoder().decode(out.stdout));
    if (report.non2xx > 0) {
      throw new Error(`${url}: ${report.non2xx} non-2xx answers`);
    }
    return report.requests.average;
  }

  const table: string[] = [];
  for (const runtime of runtimes) {
    const { server, base, token } = await start(runtime.cmd);
    // Warm-up: one short discarded run per variant, so the JIT has seen
    // every route before the first measured round.
    for (const v of VARIANTS) await load(base + v.path, v.header?.(token), 2);
    const samples = VARIANTS.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const i = (k + r) % VARIANTS.length; // rotate the order per round
        const v = VARIANTS[i];
        samples[i].push(await load(base + v.path, v.header?.(token)));
      }
    }
    await server.stop();
    const median = (xs: number[]) =>
      [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const baseline = median(samples[0]);
    VARIANTS.forEach((v, i) => {
      const m = median(samples[i]);
      table.push(
        `| ${runtime.name} | ${v.name} | ${Math.round(m)} | ${
          (m / baseline).toFixed(2)
        }× | ${samples[i].map(Math.round).join(", ")} |`,
      );
      console.log(table.at(-1));
    });
  }

  // Key-value round trips per request, counted at the Upstash bridge.
  const trips: string[] = [];
  const bridge = startUpstashBridge();
  for (const runtime of runtimes) {
    const { server, base, token } = await start(runtime.cmd, {
      BENCH_UPSTASH_URL: bridge.url,
      BENCH_UPSTASH_TOKEN: bridge.token,
    });
    const n = 100;
    const cases: [string, Record<string, string>][] = [
      ["authenticated (Bearer)", { authorization: `Bearer ${token}` }],
      ["authenticated (cookie)", { cookie: `__Host-session=${token}` }],
      ["anonymous", {}],
    ];
    for (const [name, headers] of cases) {
      bridge.resetStats();
      for (let i = 0; i < n; i++) {
        const res = await fetch(base + "/api/me", { headers });
        await res.body?.cancel();
        const expected = name === "anonymous" ? 401 : 200;
        if (res.status !== expected) {
          throw new Error(`${name}: /api/me answered ${res.status}`);
        }
      }
      const s = bridge.stats();
      trips.push(
        `| ${runtime.name} | ${name} | ${(s.httpRequests / n).toFixed(2)} | ${
          Object.entries(s.byName).map(([k, c]) => `${k} ${c}`).join(", ") ||
          "none"
        } |`,
      );
      console.log(trips.at(-1));
    }
    await server.stop();
  }
  await bridge.close();

  const cpu = (await Deno.readTextFile("/proc/cpuinfo").catch(() => ""))
    .match(/model name\s*:\s*(.*)/)?.[1] ?? "unknown CPU";
  const md = `# HTTP benchmark: \`/api/me\` protected vs unprotected

Written by \`deno run -A bench/http_bench.ts\` on ${
    new Date().toISOString().slice(0, 10)
  }
(${cpu}, ${navigator.hardwareConcurrency} cores shared with the load generator
and other work: read the ratios, not the absolute numbers).

Load: \`node_modules/.bin/autocannon -c ${connections} -d ${seconds} -j [-H <header>] <url>\`,
${rounds} rounds after a discarded 2-second warm-up per variant, each
measuring every variant once in a rotated order; the
table gives the median requests/s and the ratio to the unprotected handler of
the same runtime in the same run. The server is \`deno run -A
bench/http_bench.ts serve\` or \`bun run bench/http_bench.ts\` (in-memory
stores, one warm token, the same handler body on every route).

| runtime | variant | req/s (median) | ratio | rounds |
|---|---|---|---|---|
${table.join("\n")}

Reading the table: \`/guarded/me\` against \`/bare/me\` is the cost of the
auth stack itself (cold MAC verify once, then the verified-token cache,
expiry and the in-memory denylist read on every request). The reference
app's \`/api/me\` costs more for reasons outside authentication: its router,
the security headers (a second \`Response\` per request) and the
client-address bookkeeping. The machine is shared: where the per-round
values spread widely, or a protected variant measures above 1.00×, the noise
exceeds the effect; rerun on a quiet machine for figures to quote.

## Key-value round trips per request

${100} sequential \`GET /api/me\` per case against the same app with
\`UpstashKV\` through the REST bridge (tests/support/upstash_bridge.ts) in
front of the local Redis; HTTP requests and Redis commands counted at the
bridge. Target (DESIGN.md §13): one per authenticated request, none per
anonymous one.

| runtime | request | bridge requests per request | Redis commands (total) |
|---|---|---|---|
${trips.join("\n")}
`;
  await Deno.writeTextFile(`${ROOT}/bench/RESULTS_http.md`, md);
  console.log("wrote bench/RESULTS_http.md");
}

if (isServe) await serve();
else await orchestrate();
