import assert from "node:assert/strict";
import {
  AuthError,
  compose,
  currentUser,
  identityMiddleware,
  isAuthenticated,
  KVSessionStore,
  MemoryKV,
  requireAuth,
  requireAuthenticated,
  safeNextPath,
  SecretProvider,
  SessionManager,
  signOut,
} from "../../mod.ts";
import type { KeyValueStore } from "../../mod.ts";
import type { Next } from "../../lib/http/middleware.ts";
import { makeManager, SECRET } from "../session/_helpers.ts";
import { makeApp } from "./_app.ts";

const url = (p: string) => `https://example.com${p}`;

Deno.test("cookie and Bearer resolve the same identity", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions);
  const token = await sessions.issue("alice");
  const viaCookie = await handler(
    new Request(url("/me"), { headers: { cookie: `__Host-session=${token}` } }),
  );
  const viaBearer = await handler(
    new Request(url("/me"), { headers: { authorization: `Bearer ${token}` } }),
  );
  assert.deepEqual(await viaCookie.json(), { subject: "alice" });
  assert.deepEqual(await viaBearer.json(), { subject: "alice" });
});

Deno.test("item 32: with an Authorization header the cookie is ignored, never a fallback", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions);
  const alice = await sessions.issue("alice");
  const bob = await sessions.issue("bob");
  for (
    const auth of [
      "Bearer garbage",
      "Basic dXNlcjpwYXNz",
      "Bearer",
      `Bearer ${bob}x`,
    ]
  ) {
    const res = await handler(
      new Request(url("/me"), {
        headers: { cookie: `__Host-session=${alice}`, authorization: auth },
      }),
    );
    assert.equal(res.status, 401, auth);
    assert.match(
      res.headers.get("www-authenticate") ?? "",
      /^Bearer realm="portcullis"/,
    );
  }
  const res = await handler(
    new Request(url("/me"), {
      headers: {
        cookie: `__Host-session=${alice}`,
        authorization: `Bearer ${bob}`,
      },
    }),
  );
  assert.deepEqual(await res.json(), { subject: "bob" });
});

Deno.test("requireAuthenticated: 401 JSON for API clients, small HTML page for browsers", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions);
  const json = await handler(new Request(url("/me")));
  assert.equal(json.status, 401);
  assert.match(json.headers.get("content-type")!, /application\/json/);
  assert.deepEqual(await json.json(), {
    error: "unauthenticated",
    message: "Sign in to continue",
  });
  assert.equal(
    json.headers.get("www-authenticate"),
    null,
    "no Authorization header sent",
  );
  const html = await handler(
    new Request(url("/me"), {
      headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" },
    }),
  );
  assert.equal(html.status, 401);
  assert.match(html.headers.get("content-type")!, /text\/html/);
  assert.match(await html.text(), /<h1>Sign in to continue<\/h1>/);
});

Deno.test("requireAuth: browser navigation gets 303 to /login?next=<path>", async () => {
  const { sessions } = makeManager();
  const { handler, calls } = makeApp(sessions);
  const nav = await handler(
    new Request(url("/account/settings?tab=2"), {
      headers: { accept: "text/html" },
    }),
  );
  assert.equal(nav.status, 303);
  assert.equal(
    nav.headers.get("location"),
    "/login?next=%2Faccount%2Fsettings%3Ftab%3D2",
  );
  const mode = await handler(
    new Request(url("/account"), { headers: { "sec-fetch-mode": "navigate" } }),
  );
  assert.equal(mode.status, 303);
  assert.deepEqual(calls.filter((c) => c.includes("account")), [
    "GET /account/settings",
    "GET /account",
  ], "the route ran only to reach the gate");
});

Deno.test("requireAuth: an Authorization header gets 401 with WWW-Authenticate (RFC 6750), other requests 401", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions);
  const bearer = await handler(
    new Request(url("/account"), {
      headers: { authorization: "Bearer nope", accept: "text/html" },
    }),
  );
  assert.equal(bearer.status, 401);
  assert.equal(
    bearer.headers.get("www-authenticate"),
    'Bearer realm="portcullis", error="invalid_token"',
  );
  const plain = await handler(
    new Request(url("/account"), { headers: { accept: "application/json" } }),
  );
  assert.equal(plain.status, 401);
  const signedIn = await handler(
    new Request(url("/account"), {
      headers: { authorization: `Bearer ${await sessions.issue("bob")}` },
    }),
  );
  assert.equal(await signedIn.text(), "account of bob");
});

Deno.test("requireAuth({ redirectTo }) and refusal of unsafe redirect targets", async () => {
  assert.throws(
    () => requireAuth({ redirectTo: "https://evil.example/login" }),
    TypeError,
  );
  assert.throws(() => requireAuth({ redirectTo: "//evil.example" }), TypeError);
  const { sessions } = makeManager();
  const handler = compose([
    identityMiddleware(sessions),
    requireAuth({ redirectTo: "/signin?from=app" }),
  ], () => new Response("x"));
  const res = await handler(
    new Request(url("/deep"), { headers: { accept: "text/html" } }),
  );
  assert.equal(res.headers.get("location"), "/signin?from=app&next=%2Fdeep");
});

Deno.test("safeNextPath accepts same-origin paths only", () => {
  assert.equal(safeNextPath("/account?x=1#y"), "/account?x=1#y");
  for (
    const bad of [
      "//evil.example",
      "/\\evil.example",
      "https://evil.example/",
      "http:/evil",
      "javascript:alert(1)",
      "evil",
      "",
      "/a\nb",
      "/a/../..//evil.example",
      "/%2F/evil",
      null,
      undefined,
    ]
  ) {
    const out = safeNextPath(bad as string);
    assert.ok(
      out === "/" || (out.startsWith("/") && !out.startsWith("//")),
      `${bad} -> ${out}`,
    );
    if (bad !== "/%2F/evil") assert.equal(out, "/", String(bad));
  }
});

Deno.test("item 36: a store outage makes every gate answer 503 with Retry-After and never runs the handler", async () => {
  let down = false;
  const inner = new MemoryKV();
  const kv: KeyValueStore = {
    getMany: (k) =>
      down
        ? Promise.reject(new Error("redis: connection refused"))
        : inner.getMany(k),
    put: (k, v, o) =>
      down ? Promise.reject(new Error("down")) : inner.put(k, v, o),
    delete: (k) => inner.delete(k),
  };
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
  });
  const { handler, events } = makeApp(sessions);
  const token = await sessions.issue("alice");
  down = true;
  const protectedHits: string[] = [];
  const guarded = compose([
    identityMiddleware(sessions, { onEvent: () => {} }),
    requireAuth(),
  ], () => {
    protectedHits.push("ran");
    return new Response("secret");
  });
  const variants: Record<string, string>[] = [
    { cookie: `__Host-session=${token}` },
    { authorization: `Bearer ${token}` },
    { cookie: `__Host-session=${token}`, accept: "text/html" },
  ];
  for (const headers of variants) {
    for (const path of ["/me", "/verified", "/notes/n1", "/account"]) {
      const res = await handler(new Request(url(path), { headers }));
      assert.equal(res.status, 503, `${path} ${JSON.stringify(headers)}`);
      assert.equal(res.headers.get("retry-after"), "5");
      assert.ok(
        !(await res.text()).includes("redis"),
        "no internals in the body",
      );
    }
    assert.equal(
      (await guarded(new Request(url("/x"), { headers }))).status,
      503,
    );
  }
  assert.deepEqual(protectedHits, []);
  // Public routes still answer, anonymously.
  assert.equal(
    await (await handler(
      new Request(url("/"), { headers: { cookie: `__Host-session=${token}` } }),
    )).text(),
    "public anonymous",
  );
  assert.ok(events.some((e) => e.type === "store_unavailable"));
  // Anonymous requests make no round trip, so they are unaffected.
  assert.equal((await handler(new Request(url("/me")))).status, 401);
});

Deno.test("a gate on a request that did not pass identityMiddleware fails closed with 500", async () => {
  const req = new Request(url("/x"));
  assert.equal(requireAuthenticated(req)?.status, 500);
  assert.equal(currentUser(req), null);
  assert.equal(isAuthenticated(req), false);
  const res = await compose([requireAuth()], () => new Response("x"))(req);
  assert.equal(res.status, 500);
});

Deno.test("V7/V8 (CVE-2025-61928, CVE-2025-29927): ids in body, query or spoofed headers change nothing", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions);
  const spoof = {
    "x-user-id": "alice",
    "x-middleware-subrequest": "middleware:middleware:middleware",
    "x-forwarded-user": "alice",
    "x-forwarded-for": "127.0.0.1",
    "x-forwarded-host": "example.com",
  };
  const me = await handler(
    new Request(url("/me?userId=alice&sub=alice&subject=alice"), {
      headers: spoof,
    }),
  );
  assert.equal(me.status, 401);
  const edit = await handler(
    new Request(url("/notes/n1?userId=alice"), {
      method: "PUT",
      headers: { ...spoof, "content-type": "application/json" },
      body: JSON.stringify({ userId: "alice", sub: "alice" }),
    }),
  );
  assert.equal(edit.status, 403);
  const account = await handler(
    new Request(url("/account"), { headers: spoof }),
  );
  assert.equal(account.status, 401);
});

Deno.test("item 40: a user cannot modify another subject's object (IDOR), but may view it", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions);
  const bob = await sessions.issue("bob");
  const as = (method: string, path: string) =>
    handler(
      new Request(url(path), {
        method,
        headers: { authorization: `Bearer ${bob}` },
      }),
    );
  assert.equal((await as("GET", "/notes/n1")).status, 200);
  assert.equal((await as("PUT", "/notes/n1")).status, 403);
  assert.equal((await as("PUT", "/notes/n2")).status, 200);
  assert.equal((await as("PUT", "/notes/unknown")).status, 403);
});

Deno.test("requireVerified: 401 anonymous, 403 unverified, pass verified, 503 when the check throws", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions);
  const get = async (subject: string | null) =>
    (await handler(
      new Request(url("/verified"), {
        headers: subject
          ? { authorization: `Bearer ${await sessions.issue(subject)}` }
          : {},
      }),
    )).status;
  assert.equal(await get(null), 401);
  assert.equal(await get("bob"), 403);
  assert.equal(await get("alice"), 200);
  const failing = makeApp(sessions, {
    isVerified: () => Promise.reject(new Error("db down")),
  });
  const res = await failing.handler(
    new Request(url("/verified"), {
      headers: { authorization: `Bearer ${await sessions.issue("alice")}` },
    }),
  );
  assert.equal(res.status, 503);
  const unconfigured = makeApp(sessions, { isVerified: undefined });
  const r2 = await unconfigured.handler(
    new Request(url("/verified"), {
      headers: { authorization: `Bearer ${await sessions.issue("alice")}` },
    }),
  );
  assert.equal(r2.status, 500);
});

Deno.test("item 16 and 28: signIn revokes the presented session and mints a new jti; signOut revokes and clears the cookie", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions);
  const old = await sessions.issue("alice");
  const login = await handler(
    new Request(url("/login"), {
      method: "POST",
      headers: { cookie: `__Host-session=${old}` },
    }),
  );
  const { token, expiresAt } = await login.json();
  assert.notEqual(token, old);
  assert.equal(typeof expiresAt, "number");
  assert.match(
    login.headers.get("set-cookie")!,
    /^__Host-session=v1\..*; Path=\/; Secure; HttpOnly; SameSite=Lax; Max-Age=604800$/,
  );
  assert.equal(
    await sessions.resolve(old),
    null,
    "the presented session was revoked",
  );
  const out = await handler(
    new Request(url("/logout"), {
      method: "POST",
      headers: { cookie: `__Host-session=${token}` },
    }),
  );
  assert.equal(out.status, 204);
  assert.equal(
    out.headers.get("set-cookie"),
    "__Host-session=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0",
  );
  assert.equal(await sessions.resolve(token), null);
  const after = await handler(
    new Request(url("/me"), { headers: { cookie: `__Host-session=${token}` } }),
  );
  assert.equal(after.status, 401);
});

Deno.test("extra handler arguments (Cloudflare env, ctx) pass through middleware untouched", async () => {
  const { sessions } = makeManager();
  const env = { DB: "binding" };
  const ctx = { waitUntil: () => {} };
  const seen: unknown[][] = [];
  const handler = compose<[typeof env, typeof ctx]>(
    [identityMiddleware(sessions), (req, next, e, c) => {
      seen.push(["mw", e, c]);
      return next(req);
    }],
    (_req, e, c) => {
      seen.push(["handler", e, c]);
      return new Response("ok");
    },
  );
  await handler(new Request(url("/")), env, ctx);
  assert.deepEqual(seen, [["mw", env, ctx], ["handler", env, ctx]]);
  assert.equal(seen[1][1], env);
});

Deno.test("compose passes exactly the extra arguments it was given, for any count", async () => {
  const seen: string[] = [];
  // Plain functions, so that `arguments.length` counts what was passed: no
  // `undefined` padding, nothing dropped.
  function mw(this: unknown, req: Request, next: Next) {
    seen.push(`mw ${arguments.length - 2} ${[...arguments].slice(2)}`);
    return next(req);
  }
  function handler(this: unknown, _req: Request) {
    seen.push(`handler ${arguments.length - 1} ${[...arguments].slice(1)}`);
    return new Response("ok");
  }
  const composed = compose<unknown[]>([mw, mw], handler);
  for (let n = 0; n <= 4; n++) {
    seen.length = 0;
    const extra = Array.from({ length: n }, (_, i) => `a${i}`);
    const res = await composed(new Request(url("/")), ...extra);
    assert.equal(res.status, 200);
    assert.deepEqual(seen, [
      `mw ${n} ${extra}`,
      `mw ${n} ${extra}`,
      `handler ${n} ${extra}`,
    ]);
  }
});

Deno.test("a policy that throws or rejects denies (403) and is reported", async () => {
  const { sessions } = makeManager();
  const { authorize, definePolicy, allows } = await import("../../mod.ts");
  const events: string[] = [];
  const throwing = definePolicy<"x">({
    can: () => {
      throw new Error("bug");
    },
  });
  const rejecting = definePolicy<"x">({
    can: () => Promise.reject(new Error("db")),
  });
  const truthy = definePolicy<"x">({ can: () => 1 as unknown as boolean });
  const handler = compose([
    identityMiddleware(sessions, { onEvent: (e) => events.push(e.type) }),
  ], async (req) => {
    const results = [];
    for (const p of [throwing, rejecting, truthy]) {
      results.push(
        (await authorize(req, p, "x", "1"))?.status ?? 200,
        await allows(req, p, "x", "1"),
      );
    }
    return Response.json(results);
  });
  const res = await handler(
    new Request(url("/"), {
      headers: { authorization: `Bearer ${await sessions.issue("u")}` },
    }),
  );
  assert.deepEqual(await res.json(), [403, false, 403, false, 403, false]);
  assert.deepEqual(events, [
    "policy_error",
    "policy_error",
    "policy_error",
    "policy_error",
  ]);
});

Deno.test("sliding renewal through the middleware sets a fresh cookie once due, not on every request", async () => {
  const { sessions, clock } = makeManager({
    lifetimeSeconds: 7200,
    sliding: { absoluteLifetimeSeconds: 86400 },
  });
  const { handler } = makeApp(sessions);
  const token = await sessions.issue("alice");
  const get = () =>
    handler(
      new Request(url("/me"), {
        headers: { cookie: `__Host-session=${token}` },
      }),
    );
  assert.equal((await get()).headers.get("set-cookie"), null);
  clock.advance(3600);
  const renewed = await get();
  assert.equal(renewed.status, 200);
  assert.match(
    renewed.headers.get("set-cookie")!,
    /^__Host-session=v1\..*Max-Age=7200$/,
  );
  // Bearer clients are never handed cookies.
  const bearer = await handler(
    new Request(url("/me"), { headers: { authorization: `Bearer ${token}` } }),
  );
  assert.equal(bearer.headers.get("set-cookie"), null);
});

Deno.test("installable identityMiddleware() reads AUTH_SECRET from Cloudflare-style bindings; memory only by name", async () => {
  const mw = identityMiddleware({ store: "memory" });
  const handler = compose<[Record<string, unknown>]>(
    [mw],
    (req) => new Response(currentUser(req) ?? "anon"),
  );
  const env = { AUTH_SECRET: SECRET, APP_ORIGIN: "https://app.example" };
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: null,
  });
  const token = await sessions.issue("dora");
  const res = await handler(
    new Request(url("/"), { headers: { authorization: `Bearer ${token}` } }),
    env,
  );
  assert.equal(await res.text(), "dora");
  // APP_ORIGIN from the bindings drives the origin check.
  const post = await handler(
    new Request("http://internal/x", {
      method: "POST",
      headers: { origin: "https://app.example" },
    }),
    env,
  );
  assert.equal(post.status, 200);
  const bad = await handler(
    new Request("http://internal/x", {
      method: "POST",
      headers: { origin: "http://internal" },
    }),
    env,
  );
  assert.equal(bad.status, 403);
  // A missing secret answers 500 without leaking anything and never runs the handler.
  const missing = await handler(new Request(url("/")), { OTHER: "x" });
  assert.equal(missing.status, 500);
  assert.deepEqual(await missing.json(), {
    error: "misconfigured",
    message: "Authentication is not configured on this server",
  });
});

Deno.test("installable identityMiddleware({ secretName }) on Deno reads Deno.env and keeps revocations in Deno KV by default", async () => {
  Deno.env.set("PORTCULLIS_GATES_SECRET", SECRET);
  try {
    const handler = compose(
      [identityMiddleware({
        secretName: "PORTCULLIS_GATES_SECRET",
        onEvent: () => {},
      })],
      (req) => new Response(currentUser(req) ?? "anon"),
    );
    const sessions = new SessionManager({
      secret: SecretProvider.fromValue(SECRET),
      store: null,
    });
    const token = await sessions.issue(`kv-user-${crypto.randomUUID()}`);
    const res = await handler(
      new Request(url("/"), { headers: { authorization: `Bearer ${token}` } }),
    );
    assert.match(await res.text(), /^kv-user-/);
  } finally {
    Deno.env.delete("PORTCULLIS_GATES_SECRET");
  }
});

Deno.test("installable identityMiddleware(): a configuration that failed is built again on the next request; one that was built is kept (a revocation through it holds)", async () => {
  const name = "PORTCULLIS_REBUILD_SECRET";
  Deno.env.delete(name);
  const events: string[] = [];
  const handler = compose(
    [identityMiddleware({
      secretName: name,
      store: "memory",
      onEvent: (e) => events.push(e.type),
    })],
    async (req) => {
      if (new URL(req.url).pathname === "/out") {
        await signOut(req);
        return new Response("out");
      }
      return new Response(currentUser(req) ?? "anon");
    },
  );
  const first = await handler(new Request(url("/")));
  assert.equal(first.status, 500);
  Deno.env.set(name, SECRET);
  try {
    const token = await new SessionManager({
      secret: SecretProvider.fromValue(SECRET),
      store: null,
    }).issue("erin");
    const auth = { authorization: `Bearer ${token}` };
    // Two requests while the configuration is being built: both answered.
    const [a, b] = await Promise.all([
      handler(new Request(url("/"), { headers: auth })),
      handler(new Request(url("/"), { headers: auth })),
    ]);
    assert.equal(await a.text(), "erin");
    assert.equal(await b.text(), "erin");
    const out = await handler(
      new Request(url("/out"), { method: "POST", headers: auth }),
    );
    assert.equal(await out.text(), "out");
    // The same built configuration (its in-memory denylist) answers next.
    const after = await handler(new Request(url("/"), { headers: auth }));
    assert.equal(await after.text(), "anon");
  } finally {
    Deno.env.delete(name);
  }
});

Deno.test("signOut and signIn during a store outage throw STORE_UNAVAILABLE instead of pretending (items 16, 28)", async () => {
  let down = false;
  const inner = new MemoryKV();
  const kv: KeyValueStore = {
    getMany: (k) => down ? Promise.reject(new Error("down")) : inner.getMany(k),
    put: (k, v, o) =>
      down ? Promise.reject(new Error("down")) : inner.put(k, v, o),
    delete: (k) => inner.delete(k),
  };
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
  });
  const { handler } = makeApp(sessions);
  const token = await sessions.issue("alice");
  down = true;
  for (const path of ["/logout", "/login"]) {
    await assert.rejects(
      () =>
        Promise.resolve(handler(
          new Request(url(path), {
            method: "POST",
            headers: { cookie: `__Host-session=${token}` },
          }),
        )),
      (e: unknown) => e instanceof AuthError && e.code === "STORE_UNAVAILABLE",
      path,
    );
  }
  down = false;
  assert.equal(
    (await sessions.resolve(token))?.subject,
    "alice",
    "still valid: nothing claimed otherwise",
  );
  // Without a presented session, signing in needs no store round trip.
  down = true;
  const fresh = await handler(
    new Request(url("/login?as=bob"), { method: "POST" }),
  );
  assert.equal(fresh.status, 200);
});

Deno.test("installable identityMiddleware() treats the second argument as bindings only when it holds the secret (Deno passes connection info there)", async () => {
  Deno.env.set("PORTCULLIS_INFO_SECRET", SECRET);
  try {
    const handler = compose<[unknown]>(
      [identityMiddleware({
        secretName: "PORTCULLIS_INFO_SECRET",
        store: "memory",
        onEvent: () => {},
      })],
      (req) => new Response(currentUser(req) ?? "anon"),
    );
    const token = await new SessionManager({
      secret: SecretProvider.fromValue(SECRET),
      store: null,
    }).issue("erin");
    const info = {
      remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 5000 },
      completed: Promise.resolve(),
    };
    const res = await handler(
      new Request(url("/"), { headers: { authorization: `Bearer ${token}` } }),
      info,
    );
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "erin");
  } finally {
    Deno.env.delete("PORTCULLIS_INFO_SECRET");
  }
});
