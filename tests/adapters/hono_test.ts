/**
 * The Hono adapter with a real Hono app: portcullis middleware as Hono
 * middleware, identity read from `c.req.raw`, answers of the middleware
 * kept, renewed cookies not lost to Hono's header merge.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  currentUser,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  requireAuth,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import {
  honoMiddleware,
  type Identity,
  type PortcullisVariables,
} from "../../lib/http/adapters/hono.ts";

function setup(options: { sliding?: boolean; now?: () => number } = {}) {
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(
      crypto.getRandomValues(new Uint8Array(32)),
    ),
    store: new KVSessionStore(new MemoryKV()),
    sliding: options.sliding
      ? { renewAfterSeconds: 60, absoluteLifetimeSeconds: 30 * 86400 }
      : undefined,
    now: options.now,
  });
  const app = new Hono();
  app.use(
    "*",
    honoMiddleware(identityMiddleware(sessions, { onEvent: () => {} })),
  );
  app.get("/open", (c) => c.json({ user: currentUser(c.req.raw) }));
  app.get(
    "/closed",
    honoMiddleware(requireAuth()),
    (c) => {
      c.header("set-cookie", "route=1; Path=/");
      return c.json({ user: currentUser(c.req.raw) });
    },
  );
  app.post("/write", (c) => c.text("written"));
  return { app, sessions };
}

Deno.test("hono adapter: identity from a Bearer token is visible through c.req.raw", async () => {
  const { app, sessions } = setup();
  const token = await sessions.issue("user_1");
  const res = await app.request("/closed", {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { user: "user_1" });
});

Deno.test("hono adapter: requireAuth()'s own answer stops the route", async () => {
  const { app } = setup();
  const api = await app.request("/closed");
  assert.equal(api.status, 401);
  const browser = await app.request("/closed", {
    headers: { accept: "text/html", "sec-fetch-mode": "navigate" },
  });
  assert.equal(browser.status, 303);
  assert.equal(browser.headers.get("location"), "/login?next=%2Fclosed");
  const anon = await app.request("/open");
  assert.deepEqual(await anon.json(), { user: null });
});

Deno.test("hono adapter: a cross-site POST with a cookie is refused before the route", async () => {
  const { app, sessions } = setup();
  const token = await sessions.issue("user_1");
  const res = await app.request("https://app.example/write", {
    method: "POST",
    headers: {
      cookie: `__Host-session=${token}`,
      "sec-fetch-site": "cross-site",
    },
  });
  assert.equal(res.status, 403);
});

Deno.test("hono adapter: a renewed session cookie survives next to the route's own Set-Cookie", async () => {
  let now = 1_700_000_000_000;
  const { app, sessions } = setup({ sliding: true, now: () => now });
  const token = await sessions.issue("user_1");
  now += 2 * 3600 * 1000; // past the renewal threshold
  const res = await app.request("/closed", {
    headers: { cookie: `__Host-session=${token}` },
  });
  assert.equal(res.status, 200);
  const cookies = res.headers.getSetCookie();
  assert.ok(cookies.some((c) => c.startsWith("route=1")), cookies.join(" | "));
  assert.ok(
    cookies.some((c) => c.startsWith("__Host-session=") && !c.includes(token)),
    cookies.join(" | "),
  );
});

Deno.test("hono adapter: a middleware that passes next() another Request is refused", async () => {
  const app = new Hono();
  app.use("*", honoMiddleware((req, next) => next(new Request(req))));
  app.get("/", (c) => c.text("never"));
  app.onError((error, c) => c.text(error.message, 500));
  const res = await app.request("/");
  assert.equal(res.status, 500);
  assert.match(await res.text(), /same Request/);
});

Deno.test('hono adapter: typed variables c.get("identity") and c.get("user") hold what the middleware resolved', async () => {
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(
      crypto.getRandomValues(new Uint8Array(32)),
    ),
    store: new KVSessionStore(new MemoryKV()),
  });
  const app = new Hono<{ Variables: PortcullisVariables }>();
  app.use(
    "*",
    honoMiddleware(identityMiddleware(sessions, { onEvent: () => {} })),
  );
  app.get("/who", (c) => {
    // Typed: a wrong type here would not compile.
    const identity: Identity | null = c.get("identity");
    const user: string | null = c.get("user");
    return c.json({
      user,
      subject: identity?.subject ?? null,
      raw: currentUser(c.req.raw),
    });
  });
  app.get(
    "/closed",
    honoMiddleware(requireAuth()),
    (c) => c.json({ user: c.get("user") }),
  );
  const token = await sessions.issue("user_1");
  const bearer = { authorization: `Bearer ${token}` };
  assert.deepEqual(
    await (await app.request("/who", { headers: bearer })).json(),
    {
      user: "user_1",
      subject: "user_1",
      raw: "user_1",
    },
  );
  assert.deepEqual(await (await app.request("/who")).json(), {
    user: null,
    subject: null,
    raw: null,
  });
  const closed = await app.request("/closed", { headers: bearer });
  assert.deepEqual(await closed.json(), { user: "user_1" });
  await sessions.revoke(token);
  assert.deepEqual(
    await (await app.request("/who", { headers: bearer })).json(),
    {
      user: null,
      subject: null,
      raw: null,
    },
  );
  assert.equal((await app.request("/closed", { headers: bearer })).status, 401);
});
