/**
 * Where the warm route's time goes, over HTTP on Deno and Bun: the same
 * handler body behind one more piece at a time, from the bare handler to the
 * whole `identityMiddleware` + `requireAuthenticated` route.
 *
 * Usage (prints a markdown table; needs wrk):
 *
 * ```sh
 * deno run -A bench/warm_route_bench.ts     # ROUNDS=3 SECONDS=3 ONLY=deno|bun
 * ```
 *
 * @module
 */
import {
  BearerTransport,
  compose,
  CookieTransport,
  currentUser,
  identityMiddleware,
  KVSessionStore,
  MemoryCredentialStore,
  MemoryKV,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
} from "../mod.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const env: Record<string, string | undefined> = g.Deno?.env.toObject() ??
  g.process.env;
const SECRET = "OE4oAG13kLUZp20SYqZR2kcifh/ZW0UNU72ph11FvDw=";

async function serve(): Promise<void> {
  const credentials = new MemoryCredentialStore();
  const subject = "user_bench";
  await credentials.create({
    id: subject,
    email: "bench@example.com",
    passwordHash: "$unused$",
    createdAt: Date.now(),
  });
  async function me(subject: string): Promise<Response> {
    const user = await credentials.findById(subject);
    return Response.json({
      subject,
      email: user!.email,
      verified: user!.verifiedAt > 0,
    });
  }
  const secret = SecretProvider.fromValue(SECRET);
  const kv = new MemoryKV();
  const exact = new SessionManager({ secret, store: new KVSessionStore(kv) });
  // The same memory behind getMany only: a store that must be awaited (as
  // every remote one is), at no network cost.
  const awaited = new SessionManager({
    secret,
    store: new KVSessionStore({
      getMany: (keys) => kv.getMany(keys),
      put: (k, v, o) => kv.put(k, v, o),
      delete: (k) => kv.delete(k),
    }),
  });
  const stateless = new SessionManager({ secret, store: null });
  const stale = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
    revocationStaleness: 60,
  });
  const token = await exact.issue(subject);
  for (const m of [exact, awaited, stateless, stale]) await m.resolve(token);
  const bearer = new BearerTransport();
  const cookie = new CookieTransport();
  const STATE = Symbol("state");
  const guarded = (m: SessionManager) =>
    compose(
      [identityMiddleware(m, { onEvent: () => {} })],
      (req) => requireAuthenticated(req) ?? me(currentUser(req)!),
    );
  const mwExact = guarded(exact);
  const mwStateless = guarded(stateless);
  const mwStale = guarded(stale);
  const mwAwaited = guarded(awaited);
  const bare = identityMiddleware(exact, { onEvent: () => {} });
  const inner = (req: Request) =>
    requireAuthenticated(req) ?? me(currentUser(req)!);

  const routes: Record<string, (req: Request) => Promise<Response>> = {
    "/bare": () => me(subject),
    "/hdr": (req) => {
      req.headers.get("authorization");
      return me(subject);
    },
    "/hdr-method": (req) => {
      req.headers.get("authorization");
      if (req.method !== "GET") throw new Error("GET only");
      return me(subject);
    },
    "/parse": (req) => {
      const c = bearer.read(req);
      return me(c.present && c.token ? subject : "");
    },
    "/parse-cookie": (req) => {
      const t = cookie.read(req);
      return me(t ? subject : "");
    },
    "/resolve": async (req) => {
      const c = bearer.read(req);
      const id = await exact.resolve(c.token!);
      return me(id!.subject);
    },
    "/resolve-stateless": async (req) => {
      const c = bearer.read(req);
      const id = await stateless.resolve(c.token!);
      return me(id!.subject);
    },
    "/resolve-state": async (req) => {
      const c = bearer.read(req);
      const id = await exact.resolve(c.token!);
      // deno-lint-ignore no-explicit-any
      (req as any)[STATE] = { identity: id };
      // deno-lint-ignore no-explicit-any
      return me((req as any)[STATE].identity.subject);
    },
    "/mw-direct": (req) =>
      Promise.resolve(bare(req, () => Promise.resolve(inner(req)))),
    "/mw": (req) => Promise.resolve(mwExact(req)),
    "/mw-stateless": (req) => Promise.resolve(mwStateless(req)),
    "/mw-stale": (req) => Promise.resolve(mwStale(req)),
    "/mw-awaited": (req) => Promise.resolve(mwAwaited(req)),
    "/mw-cookie": (req) => Promise.resolve(mwExact(req)),
  };
  const handler = (req: Request): Promise<Response> => {
    const url = req.url;
    const path = url.slice(url.indexOf("/", 8));
    const route = routes[path];
    return route
      ? route(req)
      : Promise.resolve(new Response(null, { status: 404 }));
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
  console.log(JSON.stringify({ token }));
}

const VARIANTS: [string, string, "bearer" | "cookie" | null][] = [
  ["/bare", "bare handler (no header read)", null],
  ["/hdr", "+ read the Authorization header", "bearer"],
  ["/hdr-method", "+ read req.method", "bearer"],
  ["/parse", "BearerTransport.read (header + strict parse)", "bearer"],
  ["/parse-cookie", "CookieTransport.read (header + one-pass parse)", "cookie"],
  ["/resolve", "parse + resolve (warm, in-memory denylist)", "bearer"],
  ["/resolve-stateless", "parse + resolve, store: null", "bearer"],
  ["/resolve-state", "parse + resolve + request state (symbol)", "bearer"],
  [
    "/mw-direct",
    "identityMiddleware + requireAuthenticated, no compose",
    "bearer",
  ],
  [
    "/mw",
    "identityMiddleware + requireAuthenticated (compose), Bearer",
    "bearer",
  ],
  ["/mw-cookie", "the same, cookie", "cookie"],
  [
    "/mw-stateless",
    "the same, Bearer, store: null (synchronous warm path)",
    "bearer",
  ],
  [
    "/mw-stale",
    "the same, Bearer, revocationStaleness: 60 (synchronous warm path)",
    "bearer",
  ],
  [
    "/mw-awaited",
    "the same, Bearer, exact over a store read only by promise (every request awaits it)",
    "bearer",
  ],
];

async function orchestrate(): Promise<void> {
  const { freePort, spawnServer, waitForHttp } = await import(
    "../tests/conformance/_runner.ts"
  );
  const { best, least, runMetered, runWrk } = await import("./_load.ts");
  const rounds = Number(env.ROUNDS ?? 3);
  const seconds = Number(env.SECONDS ?? 3);
  const pin = navigator.hardwareConcurrency >= 2;
  const bunPath = new TextDecoder().decode(
    (await new Deno.Command("npx", {
      args: ["-y", "bun@1.4.5", "-e", "console.log(process.execPath)"],
      stderr: "null",
    }).output()).stdout,
  ).trim().split("\n").at(-1)!;
  const runtimes = [
    {
      name: `Deno ${Deno.version.deno}`,
      cmd: [Deno.execPath(), "run", "-A", "bench/warm_route_bench.ts", "serve"],
    },
    { name: "Bun 1.4.5", cmd: [bunPath, "run", "bench/warm_route_bench.ts"] },
  ].filter((r) =>
    // ONLY=deno or ONLY=bun runs one runtime.
    env.ONLY === undefined || r.name.toLowerCase().startsWith(env.ONLY)
  );
  const rows: string[] = [];
  for (const runtime of runtimes) {
    const port = freePort();
    const server = spawnServer(
      pin ? ["taskset", "-c", "0", ...runtime.cmd] : runtime.cmd,
      { PORT: String(port) },
    );
    const base = `http://127.0.0.1:${port}`;
    if (!(await waitForHttp(base + "/bare", 60_000))) {
      await server.stop();
      throw new Error(`${runtime.name} did not start: ${server.output()}`);
    }
    let line: string | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = server.output().split("\n").find((l) => l.startsWith("{"));
      if (!line) await new Promise((r) => setTimeout(r, 100));
    }
    const { token } = JSON.parse(line!) as { token: string };
    const headers = (kind: "bearer" | "cookie" | null) =>
      kind === "bearer"
        ? [{ authorization: `Bearer ${token}` }]
        : kind === "cookie"
        ? [{ cookie: `__Host-session=${token}` }]
        : [];
    const core = pin ? 1 : undefined;
    for (const [path, , kind] of VARIANTS) {
      await runWrk({
        url: base + path,
        connections: 50,
        seconds: 1,
        headers: headers(kind),
        core,
      });
    }
    const samples = VARIANTS.map(() => [] as number[]);
    const cpu = VARIANTS.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const i = (k + r) % VARIANTS.length;
        const [path, , kind] = VARIANTS[i];
        const res = await runMetered(server.child.pid, {
          url: base + path,
          connections: 50,
          seconds,
          headers: headers(kind),
          core,
        });
        samples[i].push(res.rps);
        cpu[i].push(res.cpuUs);
      }
    }
    await server.stop();
    const b = samples.map(best);
    const c = cpu.map(least);
    VARIANTS.forEach(([path, name], i) => {
      rows.push(
        `| ${runtime.name} | ${name} (\`${path}\`) | ${c[i].toFixed(2)} | ${
          (c[i] - c[0]).toFixed(2)
        } | ${(c[0] / c[i]).toFixed(2)}× | ${Math.round(b[i])} | ${
          (b[i] / b[0]).toFixed(2)
        }× |`,
      );
      console.log(rows.at(-1));
    });
  }
  console.log(`
Load: wrk -t 1 -c 50 -d ${seconds}s${
    pin ? " on core 1, the server on core 0" : ""
  }; ${rounds} rounds, rotated order; the server's CPU time per request
read from /proc/<pid>/task/*/schedstat around each run.

| runtime | route | server CPU µs per request (lowest) | µs over bare | capacity × bare (CPU) | req/s (best) | × bare (req/s) |
|---|---|---|---|---|---|---|
${rows.join("\n")}
`);
}

if (g.Bun || Deno.args[0] === "serve") await serve();
else await orchestrate();
