/**
 * Where the warm route's time goes, over HTTP on Deno and Bun: the same
 * handler body behind one more piece at a time, from the bare handler to the
 * whole `identityMiddleware` + `requireAuthenticated` route.
 *
 * Usage (prints a markdown table; needs wrk):
 *
 * ```sh
 * deno run -A bench/warm_route_bench.ts     # ROUNDS=3 SECONDS=3 ONLY=deno|bun
 * SET=targets deno run -A bench/warm_route_bench.ts   # the issue 19 targets only
 * SET=verdicts ROUNDS=16 deno run -A bench/warm_route_bench.ts  # what they read
 * ```
 *
 * Either way it ends with issue 19's two targets and their verdicts, per
 * runtime, from the same run:
 *
 * - warm: the whole cookie route's requests per second ≥ 0.85× the bare
 *   handler's (`/mw-cookie` against `/bare`), beside the floor any cookie or
 *   Bearer middleware starts from (`/floor-warm`: both headers read, nothing
 *   else);
 * - cold: the whole cookie route with the verified-token cache off
 *   (`/mw-cookie-cold`, the MAC checked on every request) costs at most the
 *   bare handler's server CPU per request + 1.3 × one raw WebCrypto HMAC
 *   verify, the verify timed in the server process itself after each round
 *   (`/calibrate`: batches of sequential calls over fixed buffers, the
 *   median batch's wall time per call, as `cold_floor_bench.ts` step 1),
 *   beside the bare handler + one raw verify over HTTP (`/raw-verify`).
 *
 * Each route's run follows a run of the bare handler, and each comparison is
 * made within that pair, then the median over the rounds is taken: on a
 * shared machine the same request's cost drifts by a third within seconds.
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
import { verifyToken } from "../lib/tokens/signed_token.ts";
import { decodeBase64Url } from "../lib/_common/base64url.ts";

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
  // The verified-token cache off: the MAC is checked on every request.
  const cold = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
    cacheSize: 0,
  });
  const token = await exact.issue(subject);
  for (const m of [exact, awaited, stateless, stale]) await m.resolve(token);
  // One raw verify over fixed buffers: what the cold target is counted in.
  const key = await crypto.subtle.importKey(
    "raw",
    Uint8Array.from(atob(SECRET), (c) => c.charCodeAt(0)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
  const message = new TextEncoder().encode(`session:${token}`);
  const tag = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, message),
  );
  const rawVerify = async () => {
    if (!(await crypto.subtle.verify("HMAC", key, tag, message))) {
      throw new Error("the raw verify failed");
    }
  };
  const keys = await secret.keys("session");
  const sessionPrefix = new TextEncoder().encode("session:");
  // Any check of a token presented as a string: its bytes, then verify.
  const floorVerify = async (t: string) => {
    const dot = t.lastIndexOf(".");
    const input = new Uint8Array(sessionPrefix.length + dot);
    input.set(sessionPrefix);
    for (let k = 0; k < dot; k++) input[8 + k] = t.charCodeAt(k);
    const mac = decodeBase64Url(t.slice(dot + 1)) as Uint8Array<ArrayBuffer>;
    if (!(await crypto.subtle.verify("HMAC", keys.current.key, mac, input))) {
      throw new Error("the floor verify failed");
    }
  };
  const calibrate = async (): Promise<Response> => {
    const perCall: number[] = [];
    for (let r = -3; r < 30; r++) {
      const t0 = performance.now();
      for (let k = 0; k < 500; k++) await rawVerify();
      if (r >= 0) perCall.push(((performance.now() - t0) * 1000) / 500);
    }
    perCall.sort((a, b) => a - b);
    return Response.json({
      median: perCall[perCall.length >> 1],
      fastest: perCall[0],
      calls: 33 * 500,
    });
  };
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
  const mwCold = guarded(cold);
  // BEFORE=<path of another checkout's mod.ts>: the same two routes built
  // from that version of the library, in this process, so that a change is
  // compared within one run.
  let mwBefore = mwExact, mwColdBefore = mwCold;
  if (env.BEFORE) {
    const old = await import(env.BEFORE);
    const oldKv = new old.MemoryKV();
    const oldSecret = old.SecretProvider.fromValue(SECRET);
    const oldExact = new old.SessionManager({
      secret: oldSecret,
      store: new old.KVSessionStore(oldKv),
    });
    const oldCold = new old.SessionManager({
      secret: oldSecret,
      store: new old.KVSessionStore(oldKv),
      cacheSize: 0,
    });
    if ((await oldExact.resolve(token))?.subject !== subject) {
      throw new Error("the BEFORE library does not take this token");
    }
    const oldGuarded = (m: unknown) =>
      old.compose(
        [old.identityMiddleware(m, { onEvent: () => {} })],
        (req: Request) =>
          old.requireAuthenticated(req) ?? me(old.currentUser(req)!),
      );
    mwBefore = oldGuarded(oldExact);
    mwColdBefore = oldGuarded(oldCold);
  }
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
    // What any middleware that takes a cookie or a Bearer token must do
    // before it can decide anything: read both headers.
    "/floor-warm": (req) => {
      req.headers.get("authorization");
      return me(req.headers.get("cookie") === null ? "" : subject);
    },
    // Issue 30's warm floor: a handler that only reads the Cookie header.
    "/cookie-header": (req) => {
      return me(req.headers.get("cookie") === null ? "" : subject);
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
    "/mw-cookie-cold": (req) => Promise.resolve(mwCold(req)),
    "/mw-cookie-before": (req) => Promise.resolve(mwBefore(req)),
    "/mw-cookie-cold-before": (req) => Promise.resolve(mwColdBefore(req)),
    "/raw-verify": async () => {
      await rawVerify();
      return me(subject);
    },
    "/calibrate": calibrate,
    // The cold route, one step at a time (cookie, cache off). The floor
    // (issue 30): read the cookie by hand, take its signed part, one raw
    // WebCrypto verify with the key imported once.
    "/cold-floor": async (req) => {
      const header = req.headers.get("cookie")!;
      const at = header.indexOf("__Host-session=") + 15;
      const end = header.indexOf(";", at);
      await floorVerify(header.slice(at, end < 0 ? undefined : end));
      return me(subject);
    },
    "/cold-verify-token": async (req) => {
      if ((await verifyToken(keys, "session", cookie.read(req)!)) === null) {
        throw new Error("verifyToken refused");
      }
      return me(subject);
    },
    "/cold-resolve": async (req) => {
      const id = await cold.resolve(cookie.read(req)!);
      return me(id!.subject);
    },
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
  [
    "/floor-warm",
    "read the Authorization and Cookie headers (the warm floor)",
    "cookie",
  ],
  [
    "/cookie-header",
    "read the Cookie header only (issue 30's warm floor)",
    "cookie",
  ],
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
  ["/raw-verify", "bare handler + one raw WebCrypto verify", null],
  [
    "/cold-floor",
    "the cookie read by hand + one raw verify of its signed part (the cold floor)",
    "cookie",
  ],
  ["/cold-verify-token", "cookie + verifyToken (shape, base64url)", "cookie"],
  [
    "/cold-resolve",
    "cookie + cold resolve (payload, expiry, denylist read)",
    "cookie",
  ],
  [
    "/mw-cookie-cold",
    "the whole route, cookie, verified-token cache off (cold)",
    "cookie",
  ],
];
// SET=targets: only what the two targets need, beside the header read.
const TARGET_PATHS = [
  "/bare",
  "/floor-warm",
  "/parse-cookie",
  "/mw-cookie",
  "/mw-cookie-cold",
  "/raw-verify",
  "/cold-floor",
  "/cold-verify-token",
  "/cold-resolve",
];
const BEFORE_VARIANTS: typeof VARIANTS = env.BEFORE
  ? [
    [
      "/mw-cookie-before",
      "the whole route, cookie: BEFORE's library",
      "cookie",
    ],
    [
      "/mw-cookie-cold-before",
      "the whole route, cookie, cold: BEFORE's library",
      "cookie",
    ],
  ]
  : [];
// SET=issue30: only the routes issue 30's two targets read.
const ISSUE30_PATHS = [
  "/bare",
  "/cookie-header",
  "/mw-cookie",
  "/cold-floor",
  "/mw-cookie-cold",
];
// SET=verdicts: only the routes the verdicts read (for many rounds).
const VERDICT_PATHS = [
  "/bare",
  "/floor-warm",
  "/mw-cookie",
  "/raw-verify",
  "/mw-cookie-cold",
];
const RUN =
  (env.SET === "targets"
    ? VARIANTS.filter(([p]) => TARGET_PATHS.includes(p))
    : env.SET === "issue30"
    ? VARIANTS.filter(([p]) => ISSUE30_PATHS.includes(p))
    : env.SET === "verdicts"
    ? VARIANTS.filter(([p]) => VERDICT_PATHS.includes(p))
    : VARIANTS).concat(BEFORE_VARIANTS);

async function orchestrate(): Promise<void> {
  const { freePort, spawnServer, waitForHttp } = await import(
    "../tests/conformance/_runner.ts"
  );
  const { median, runMetered, runWrk } = await import("./_load.ts");
  const rounds = Number(env.ROUNDS ?? 3);
  const seconds = Number(env.SECONDS ?? 3);
  const pin = navigator.hardwareConcurrency >= 2;
  const localBun = "node_modules/.bin/bun";
  const bunPath = (await Deno.stat(localBun).then(() => true, () => false))
    ? localBun
    : new TextDecoder().decode(
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
  const verdicts: string[] = [];
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
    for (const [path, , kind] of RUN) {
      await runWrk({
        url: base + path,
        connections: 50,
        seconds: 1,
        headers: headers(kind),
        core,
      });
    }
    // Paired rounds: each route's run follows a run of the bare handler,
    // and every comparison is within its pair. On a shared machine the
    // cost of the same request drifts by a third over seconds; two runs
    // back to back drift together, so their ratio holds still where two
    // lowest-of-rounds figures taken minutes apart do not.
    const bareAt = RUN.findIndex(([path]) => path === "/bare");
    const rps = RUN.map(() => [] as number[]); // × bare, per pair
    const over = RUN.map(() => [] as number[]); // µs over bare, per pair
    const cpu = RUN.map(() => [] as number[]); // µs per request
    const verifies: number[] = []; // one raw verify, after each round
    const metered = async (i: number) => {
      const [path, , kind] = RUN[i];
      const res = await runMetered(server.child.pid, {
        url: base + path,
        connections: 50,
        seconds,
        headers: headers(kind),
        core,
      });
      cpu[i].push(res.cpuUs);
      return res;
    };
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < RUN.length; k++) {
        const i = (k + r) % RUN.length;
        if (i === bareAt) continue;
        const bare = await metered(bareAt);
        const route = await metered(i);
        rps[i].push(route.rps / bare.rps);
        over[i].push(route.cpuUs - bare.cpuUs);
      }
      // One raw verify, in this server process, timed in this round.
      const calibrated = await (await fetch(base + "/calibrate")).json() as {
        median: number;
      };
      verifies.push(calibrated.median);
    }
    await server.stop();
    const at = (p: string) => RUN.findIndex(([path]) => path === p);
    rps[bareAt] = [1];
    over[bareAt] = [0];
    const r = rps.map(median), o = over.map(median), c = cpu.map(median);
    const verify = median(verifies);
    const bareCpu = c[bareAt];
    const warm = at("/mw-cookie"), floor = at("/floor-warm");
    const coldAt = at("/mw-cookie-cold"), raw = at("/raw-verify");
    const spread = (xs: number[]) =>
      `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
    if (floor >= 0 && raw >= 0) {
      verdicts.push(
        `| ${runtime.name} | warm, cookie: req/s × bare ≥ 0.85 | ${
          r[warm].toFixed(2)
        }× (median of ${rps[warm].length} pairs; ${
          spread(rps[warm])
        }); the floor, both headers read and nothing else: ${
          r[floor].toFixed(2)
        }× (${spread(rps[floor])}) | ${
          r[warm] >= 0.85 ? "met" : "**not met**"
        } |`,
        `| ${runtime.name} | cold, cookie: CPU over bare ≤ 1.3 × raw verify | ${
          o[coldAt].toFixed(2)
        } µs ≤ 1.3 × ${verify.toFixed(2)} = ${(1.3 * verify).toFixed(2)} µs: ${
          (o[coldAt] / verify).toFixed(2)
        } verifies over bare (median of pairs; ${
          (Math.min(...over[coldAt]) / verify).toFixed(2)
        }–${
          (Math.max(...over[coldAt]) / verify).toFixed(2)
        }); the bare handler + one raw verify over HTTP: ${
          (o[raw] / verify).toFixed(2)
        } | ${o[coldAt] <= 1.3 * verify ? "met" : "**not met**"} |`,
      );
    }
    // Issue 30's targets, each against its floor in this run: the warm
    // route's req/s ≥ 0.97 × the Cookie-header-only handler's, and the cold
    // route's server CPU ≤ 1.15 × the cold floor's.
    const header = at("/cookie-header"), coldFloor = at("/cold-floor");
    if (header >= 0 && warm >= 0) {
      const ratio = r[warm] / r[header];
      verdicts.push(
        `| ${runtime.name} | issue 30 warm: req/s × the Cookie-header-only handler ≥ 0.97 | ${
          ratio.toFixed(2)
        }× (${c[warm].toFixed(2)} against ${
          c[header].toFixed(2)
        } µs of server CPU per request) | ${
          ratio >= 0.97 ? "met" : "**not met**"
        } |`,
      );
    }
    if (coldFloor >= 0 && coldAt >= 0) {
      const ratio = c[coldAt] / c[coldFloor];
      verdicts.push(
        `| ${runtime.name} | issue 30 cold: server CPU × the cold floor's ≤ 1.15 | ${
          ratio.toFixed(2)
        }× (${c[coldAt].toFixed(2)} against ${
          c[coldFloor].toFixed(2)
        } µs per request) | ${ratio <= 1.15 ? "met" : "**not met**"} |`,
      );
    }
    const warmBefore = at("/mw-cookie-before");
    const coldBefore = at("/mw-cookie-cold-before");
    if (warmBefore >= 0 && coldBefore >= 0) {
      verdicts.push(
        `| ${runtime.name} | BEFORE's library, warm, cookie | ${
          r[warmBefore].toFixed(2)
        }× (${spread(rps[warmBefore])}) | ${
          r[warmBefore] >= 0.85 ? "met" : "**not met**"
        } |`,
        `| ${runtime.name} | BEFORE's library, cold, cookie | ${
          (o[coldBefore] / verify).toFixed(2)
        } verifies over bare | ${
          o[coldBefore] <= 1.3 * verify ? "met" : "**not met**"
        } |`,
      );
    }
    RUN.forEach(([path, name], i) => {
      rows.push(
        `| ${runtime.name} | ${name} (\`${path}\`) | ${c[i].toFixed(2)} | ${
          o[i].toFixed(2)
        } | ${(o[i] / verify).toFixed(2)} | ${r[i].toFixed(2)}× |`,
      );
      console.log(rows.at(-1));
    });
    console.log(
      `${runtime.name}: bare ${bareCpu.toFixed(2)} µs, verify ${
        verify.toFixed(2)
      } µs (${spread(verifies)})`,
    );
  }
  console.log(`
Load: wrk -t 1 -c 50 -d ${seconds}s${
    pin ? " on core 1, the server on core 0" : ""
  }; ${rounds} rounds, rotated order, each route's run right after one of
the bare handler (a pair); the server's CPU time per request read from
/proc/<pid>/stat (utime + stime, all threads) around each run. Every figure is a median over
the rounds; "over bare" and "× bare" within each pair.

| runtime | route | server CPU µs per request | µs over bare | raw verifies over bare | × bare (req/s) |
|---|---|---|---|---|---|
${rows.join("\n")}

Issue 19 targets (same run; one raw verify timed in the server process after
each round: median of 30 batches of 500 sequential calls, then the median of
the rounds):

| runtime | target | measured | verdict |
|---|---|---|---|
${verdicts.join("\n")}
`);
}

if (g.Bun || Deno.args[0] === "serve") await serve();
else await orchestrate();
