/**
 * The stacks users pick instead, same route, same run, on Deno and on Bun:
 * better-auth (`auth.api.getSession`, default and with `session.cookieCache`)
 * and Auth.js (`@auth/core/jwt` `getToken` of its encrypted JWT cookie),
 * beside portcullis warm and cold and the bare handler.
 *
 * Usage (prints a markdown table; needs wrk):
 *
 * ```sh
 * deno run -A bench/peers_bench.ts        # ROUNDS=3 SECONDS=4 CONNECTIONS=50
 * ```
 *
 * The peers are bench-only dependencies, never the package's: Deno imports
 * them as `npm:` specifiers (run with `--no-lock`), Bun from a scratch
 * directory the orchestrator fills with `npm install --no-save`
 * (`.scratch/peers`, ignored by git).
 *
 * Every route ends in the same handler body (look the user up, answer
 * `{subject, email, verified}`), and every client sends its stack's own
 * session cookie:
 *
 * - `/bare/me`: no authentication (the baseline);
 * - `/warm/me`: `identityMiddleware` + `requireAuthenticated`, the
 *   `__Host-session` cookie of a token verified before;
 * - `/cold/me`: the same with the verified-token cache off (MAC on every
 *   request);
 * - `/better-auth/me`: `auth.api.getSession({ headers })` over better-auth's
 *   built-in memory adapter (its in-process database; the same footing as
 *   portcullis' in-memory stores), a session made by `signUpEmail`;
 * - `/better-auth-cc/me`: the same with `session.cookieCache` on (an HMAC'd
 *   `session_data` cookie answers instead of the database);
 * - `/authjs/me`: `getToken({ req, secret })` of an Auth.js session cookie
 *   minted by its `encode` (JWE, `dir` + A256CBC-HS512, HKDF-derived key).
 *
 * @module
 */
import {
  compose,
  currentUser,
  identityMiddleware,
  KVSessionStore,
  MemoryCredentialStore,
  MemoryKV,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
} from "../mod.ts";

const BETTER_AUTH = "1.7.25";
const AUTH_CORE = "0.41.3";
const SECRET = "OE4oAG13kLUZp20SYqZR2kcifh/ZW0UNU72ph11FvDw=";
const AUTHJS_COOKIE = "authjs.session-token";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const env: Record<string, string | undefined> = g.Deno?.env.toObject() ??
  g.process.env;

/** Imports a peer: an npm: specifier on Deno, the scratch install on Bun. */
function peer(name: string, version: string, sub = ""): Promise<
  // deno-lint-ignore no-explicit-any
  any
> {
  if (g.Bun) {
    return import(g.Bun.resolveSync(name + sub, env.PEERS_DIR));
  }
  return import(`npm:${name}@${version}${sub}`);
}

async function serve(): Promise<void> {
  const { betterAuth } = await peer("better-auth", BETTER_AUTH);
  const { memoryAdapter } = await peer(
    "better-auth",
    BETTER_AUTH,
    "/adapters/memory",
  );
  const { encode, getToken } = await peer("@auth/core", AUTH_CORE, "/jwt");

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
  const unauthorized = () =>
    Response.json({ error: "unauthenticated" }, { status: 401 });

  // portcullis, warm and cold (in-memory denylist).
  const secret = SecretProvider.fromValue(SECRET);
  const kv = new MemoryKV();
  const sessions = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
  });
  const cold = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
    cacheSize: 0,
  });
  const token = await sessions.issue(subject);
  const guard = (m: SessionManager) =>
    compose(
      [identityMiddleware(m, { onEvent: () => {} })],
      (req) => requireAuthenticated(req) ?? me(currentUser(req)!),
    );
  const warmRoute = guard(sessions);
  const coldRoute = guard(cold);

  // better-auth, default and with the cookie cache, each over its own
  // memory database.
  const baseURL = `http://127.0.0.1:${env.PORT}`;
  async function makeBetterAuth(cookieCache: boolean) {
    const auth = betterAuth({
      database: memoryAdapter({
        user: [],
        session: [],
        account: [],
        verification: [],
      }),
      secret: SECRET,
      baseURL,
      emailAndPassword: { enabled: true },
      logger: { disabled: true },
      session: cookieCache
        ? { cookieCache: { enabled: true, maxAge: 300 } }
        : undefined,
    });
    const res: Response = await auth.api.signUpEmail({
      body: {
        email: "bench@example.com",
        password: "correct horse battery staple",
        name: "Bench",
      },
      asResponse: true,
    });
    const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0])
      .join("; ");
    return { auth, cookie };
  }
  const ba = await makeBetterAuth(false);
  const bacc = await makeBetterAuth(true);

  const authjsCookie = await encode({
    token: { sub: subject, email: "bench@example.com" },
    secret: SECRET,
    salt: AUTHJS_COOKIE,
  });

  const handler = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    switch (path) {
      case "/bare/me":
        return me(subject);
      case "/warm/me":
        return warmRoute(req);
      case "/cold/me":
        return coldRoute(req);
      case "/better-auth/me":
      case "/better-auth-cc/me": {
        const { auth } = path === "/better-auth/me" ? ba : bacc;
        const s = await auth.api.getSession({ headers: req.headers });
        return s ? me(subject) : unauthorized();
      }
      case "/authjs/me": {
        const t = await getToken({ req, secret: SECRET, secureCookie: false });
        return t?.sub ? me(t.sub) : unauthorized();
      }
    }
    return new Response("not found", { status: 404 });
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
  console.log(JSON.stringify({
    cookies: {
      "/warm/me": `__Host-session=${token}`,
      "/cold/me": `__Host-session=${token}`,
      "/better-auth/me": ba.cookie,
      "/better-auth-cc/me": bacc.cookie,
      "/authjs/me": `${AUTHJS_COOKIE}=${authjsCookie}`,
    },
  }));
}

const VARIANTS: [string, string][] = [
  ["/bare/me", "unprotected handler"],
  ["/warm/me", "portcullis, warm (token verified before)"],
  ["/cold/me", "portcullis, cold (MAC every request)"],
  ["/better-auth/me", `better-auth ${BETTER_AUTH} getSession (memory adapter)`],
  ["/better-auth-cc/me", "better-auth getSession, cookieCache on"],
  ["/authjs/me", `Auth.js (@auth/core ${AUTH_CORE}) getToken (JWE cookie)`],
];

async function orchestrate(): Promise<void> {
  const { freePort, spawnServer, waitForHttp } = await import(
    "../tests/conformance/_runner.ts"
  );
  const { best, hasWrk, least, median, runMetered, runWrk } = await import(
    "./_load.ts"
  );
  if (!hasWrk) throw new Error("wrk is needed: apt-get install wrk");
  const ROOT = new URL("../", import.meta.url).pathname;
  const rounds = Number(env.ROUNDS ?? 3);
  const seconds = Number(env.SECONDS ?? 4);
  const connections = Number(env.CONNECTIONS ?? 50);
  const pin = navigator.hardwareConcurrency >= 2;

  // Bun: the peers in a scratch directory, installed without saving.
  const peersDir = `${ROOT}.scratch/peers`;
  await Deno.mkdir(peersDir, { recursive: true });
  await Deno.writeTextFile(
    `${peersDir}/package.json`,
    JSON.stringify({ name: "peers-scratch", private: true, type: "module" }),
  );
  const installed = await Deno.stat(`${peersDir}/node_modules/better-auth`)
    .then(() => true, () => false);
  if (!installed) {
    const out = await new Deno.Command("npm", {
      args: [
        "install",
        "--no-save",
        `better-auth@${BETTER_AUTH}`,
        `@auth/core@${AUTH_CORE}`,
      ],
      cwd: peersDir,
    }).output();
    if (!out.success) throw new Error("npm install of the peers failed");
  }
  const bunPath = new TextDecoder().decode(
    (await new Deno.Command("npx", {
      args: ["-y", "bun@1.4.5", "-e", "console.log(process.execPath)"],
      stderr: "null",
    }).output()).stdout,
  ).trim().split("\n").at(-1)!;

  const runtimes = [
    {
      name: `Deno ${Deno.version.deno}`,
      cmd: [
        Deno.execPath(),
        "run",
        "-A",
        "--no-lock",
        "bench/peers_bench.ts",
        "serve",
      ],
    },
    { name: "Bun 1.4.5", cmd: [bunPath, "run", "bench/peers_bench.ts"] },
  ];
  const rows: string[] = [];
  const summary: string[] = [];
  for (const runtime of runtimes) {
    const port = freePort();
    const server = spawnServer(
      pin ? ["taskset", "-c", "0", ...runtime.cmd] : runtime.cmd,
      { PORT: String(port), PEERS_DIR: peersDir, SERVE: "1" },
    );
    const base = `http://127.0.0.1:${port}`;
    if (!(await waitForHttp(base + "/bare/me", 120_000))) {
      await server.stop();
      throw new Error(`${runtime.name} did not start: ${server.output()}`);
    }
    let line: string | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = server.output().split("\n").find((l) => l.startsWith("{"));
      if (!line) await new Promise((r) => setTimeout(r, 100));
    }
    const { cookies } = JSON.parse(line!) as {
      cookies: Record<string, string>;
    };
    const headers = (path: string) =>
      cookies[path] ? [{ cookie: cookies[path] }] : [];
    const core = pin ? 1 : undefined;
    for (const [path] of VARIANTS) {
      await runWrk({
        url: base + path,
        connections,
        seconds: 2,
        headers: headers(path),
        core,
      });
    }
    const samples = VARIANTS.map(() => [] as number[]);
    const cpu = VARIANTS.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const i = (k + r) % VARIANTS.length;
        const [path] = VARIANTS[i];
        const res = await runMetered(server.child.pid, {
          url: base + path,
          connections,
          seconds,
          headers: headers(path),
          core,
        });
        samples[i].push(res.rps);
        cpu[i].push(res.cpuUs);
        console.log(
          `${runtime.name} ${path}: ${Math.round(res.rps)} req/s, ${
            res.cpuUs.toFixed(1)
          } µs CPU/req`,
        );
      }
    }
    await server.stop();
    const b = samples.map(best);
    const m = samples.map(median);
    // Capacity from CPU time: the lowest CPU µs per request of the rounds.
    const c = cpu.map(least);
    VARIANTS.forEach(([, name], i) => {
      rows.push(
        `| ${runtime.name} | ${name} | ${c[i].toFixed(1)} | ${
          (c[0] / c[i]).toFixed(2)
        }× | ${Math.round(b[i])} | ${(b[i] / b[0]).toFixed(2)}× | ${
          (m[i] / m[0]).toFixed(2)
        }× |`,
      );
    });
    for (const [pi, label] of [[1, "warm"], [2, "cold"]] as const) {
      summary.push(
        `| ${runtime.name} | portcullis ${label} | ${
          [3, 4, 5].map((j) =>
            `${(c[j] / c[pi]).toFixed(1)}× (${(b[pi] / b[j]).toFixed(1)}×)`
          ).join(" | ")
        } |`,
      );
    }
  }
  console.log(`
Load: wrk -t 1 -c ${connections} -d ${seconds}s${
    pin ? " on core 1, the server on core 0" : ""
  }; ${rounds} rounds after a 2 s warm-up per route; the server's CPU time
per request read from /proc/<pid>/task/*/schedstat around each run.

| runtime | route | server CPU µs per request (lowest) | capacity × bare (CPU) | req/s (best) | × bare (best req/s) | × bare (median req/s) |
|---|---|---|---|---|---|---|
${rows.join("\n")}

portcullis over each peer, capacity from CPU per request (and from the best
rounds' requests/s in brackets); target ≥ 4×:

| runtime | portcullis | ÷ better-auth | ÷ better-auth cookieCache | ÷ Auth.js |
|---|---|---|---|---|
${summary.join("\n")}
`);
}

if (g.Bun || env.SERVE === "1") await serve();
else await orchestrate();
