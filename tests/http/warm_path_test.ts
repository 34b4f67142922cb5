// The synchronous warm path of identityMiddleware: a token this process
// verified before, whose revocation state memory can tell, reaches the
// handler without a promise of the middleware's own, and every check the
// asynchronous path makes still holds on it.
import assert from "node:assert/strict";
import {
  compose,
  currentUser,
  DenoKV,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import type { SessionStore } from "../../mod.ts";
import { Clock, SECRET } from "../session/_helpers.ts";

const secret = SecretProvider.fromValue(SECRET);

function bearer(token: string): Request {
  return new Request("https://app.example/api/me", {
    headers: { authorization: `Bearer ${token}` },
  });
}

/** Calls the middleware and says whether the handler ran before it returned. */
function callSync(
  sessions: SessionManager,
  req: Request,
): { reachedSync: boolean; result: Response | Promise<Response> } {
  let reached = false;
  const mw = identityMiddleware(sessions, { onEvent: () => {} });
  const result = mw(req, () => {
    reached = true;
    return Promise.resolve(
      requireAuthenticated(req) ??
        new Response(currentUser(req) ?? "", { status: 200 }),
    );
  });
  return { reachedSync: reached, result };
}

Deno.test("warm path: a stateless manager's remembered token reaches the handler synchronously", async () => {
  const sessions = new SessionManager({ secret, store: null });
  const token = await sessions.issue("user_1");
  // Cold: the MAC is checked, so the handler runs later.
  const cold = callSync(sessions, bearer(token));
  assert.equal(cold.reachedSync, false);
  assert.equal((await cold.result).status, 200);
  // Warm: the handler runs before the middleware returns.
  const warm = callSync(sessions, bearer(token));
  assert.equal(warm.reachedSync, true);
  const res = await warm.result;
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "user_1");
});

Deno.test("warm path: expiry is still checked on the synchronous path", async () => {
  const clock = new Clock();
  const sessions = new SessionManager({
    secret,
    store: null,
    now: clock.now,
    lifetimeSeconds: 60,
  });
  const token = await sessions.issue("user_1");
  assert.equal((await callSync(sessions, bearer(token)).result).status, 200);
  clock.advance(61);
  const late = callSync(sessions, bearer(token));
  assert.equal(late.reachedSync, true, "answered from memory");
  assert.equal((await late.result).status, 401);
});

Deno.test("warm path: with revocationStaleness, a revocation through this manager is seen at once", async () => {
  const clock = new Clock();
  const kv = new MemoryKV({ now: clock.now });
  const sessions = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
    revocationStaleness: 30,
    now: clock.now,
  });
  const token = await sessions.issue("user_1");
  assert.equal((await callSync(sessions, bearer(token)).result).status, 200);
  const warm = callSync(sessions, bearer(token));
  assert.equal(warm.reachedSync, true);
  assert.equal((await warm.result).status, 200);
  await sessions.revoke(token);
  const after = callSync(sessions, bearer(token));
  assert.equal((await after.result).status, 401);
  // revokeAll through this manager: at once as well.
  const other = await sessions.issue("user_2");
  assert.equal((await callSync(sessions, bearer(other)).result).status, 200);
  clock.advance(1);
  await sessions.revokeAll("user_2");
  assert.equal((await callSync(sessions, bearer(other)).result).status, 401);
});

Deno.test("warm path: a revocation through another manager is seen within the bound, not answered stale after it", async () => {
  const clock = new Clock();
  const kv = new MemoryKV({ now: clock.now });
  const here = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
    revocationStaleness: 10,
    now: clock.now,
  });
  const there = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
    now: clock.now,
  });
  const token = await here.issue("user_1");
  assert.equal((await callSync(here, bearer(token)).result).status, 200);
  await there.revoke(token);
  clock.advance(5);
  // Inside the bound the remembered answer may still be used.
  const inside = callSync(here, bearer(token));
  assert.equal(inside.reachedSync, true);
  assert.equal((await inside.result).status, 200);
  clock.advance(6);
  // Past it the store is asked: not synchronous, and revoked.
  const past = callSync(here, bearer(token));
  assert.equal(past.reachedSync, false);
  assert.equal((await past.result).status, 401);
});

Deno.test("warm path: exact over an in-memory store answers synchronously and stays exact", async () => {
  const kv = new MemoryKV();
  const here = new SessionManager({ secret, store: new KVSessionStore(kv) });
  const there = new SessionManager({ secret, store: new KVSessionStore(kv) });
  const token = await here.issue("user_1");
  await callSync(here, bearer(token)).result;
  const warm = callSync(here, bearer(token));
  assert.equal(warm.reachedSync, true);
  assert.equal((await warm.result).status, 200);
  // A revocation through another manager is seen on the very next request.
  await there.revoke(token);
  const after = callSync(here, bearer(token));
  assert.equal(after.reachedSync, true);
  assert.equal((await after.result).status, 401);
});

Deno.test("warm path: exact over a store that needs a round trip always asks it (Deno KV)", async () => {
  const denoKv = await Deno.openKv(":memory:");
  try {
    const sessions = new SessionManager({
      secret,
      store: new KVSessionStore(new DenoKV(denoKv)),
    });
    const token = await sessions.issue("user_1");
    await callSync(sessions, bearer(token)).result;
    const warm = callSync(sessions, bearer(token));
    assert.equal(warm.reachedSync, false);
    assert.equal((await warm.result).status, 200);
    await sessions.revoke(token);
    assert.equal((await callSync(sessions, bearer(token)).result).status, 401);
  } finally {
    denoKv.close();
  }
});

Deno.test("warm path: a store whose peek throws falls back to asking, and an outage then fails closed", async () => {
  let down = false;
  const store: SessionStore = {
    peek() {
      throw new Error("peek broke");
    },
    isRevoked() {
      return down
        ? Promise.reject(new Error("store down"))
        : Promise.resolve(false);
    },
    revoke: () => Promise.resolve(),
    revokeAll: () => Promise.resolve(),
  };
  const sessions = new SessionManager({ secret, store });
  const token = await sessions.issue("user_1");
  assert.equal((await callSync(sessions, bearer(token)).result).status, 200);
  const warm = callSync(sessions, bearer(token));
  assert.equal(warm.reachedSync, false);
  assert.equal((await warm.result).status, 200);
  down = true;
  assert.equal((await callSync(sessions, bearer(token)).result).status, 503);
});

Deno.test("warm path: a peek that answers something other than a boolean is ignored", async () => {
  const store: SessionStore = {
    // deno-lint-ignore no-explicit-any
    peek: () => "no" as any,
    isRevoked: () => Promise.resolve(true),
    revoke: () => Promise.resolve(),
    revokeAll: () => Promise.resolve(),
  };
  const sessions = new SessionManager({ secret, store });
  const token = await sessions.issue("user_1");
  await callSync(sessions, bearer(token)).result;
  assert.equal((await callSync(sessions, bearer(token)).result).status, 401);
});

Deno.test("warm path: unsafe cookie requests still meet the cross-origin check on the synchronous path", async () => {
  const sessions = new SessionManager({ secret, store: null });
  const token = await sessions.issue("user_1");
  const app = compose(
    [identityMiddleware(sessions, { onEvent: () => {} })],
    (req) => requireAuthenticated(req) ?? new Response("done"),
  );
  const cookie = `__Host-session=${token}`;
  const warmUp = await app(
    new Request("https://app.example/x", { headers: { cookie } }),
  );
  assert.equal(warmUp.status, 200);
  const forged = await app(
    new Request("https://app.example/x", {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "cross-site" },
    }),
  );
  assert.equal(forged.status, 403);
  const sameOrigin = await app(
    new Request("https://app.example/x", {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "same-origin" },
    }),
  );
  assert.equal(sameOrigin.status, 200);
});

Deno.test("middleware called directly: a next() that throws gives a rejection, as an async middleware would", async () => {
  const sessions = new SessionManager({ secret, store: null });
  const mw = identityMiddleware(sessions, { onEvent: () => {} });
  let result: Response | Promise<Response> | undefined;
  assert.doesNotThrow(() => {
    result = mw(new Request("https://app.example/"), () => {
      throw new Error("handler broke");
    });
  });
  await assert.rejects(Promise.resolve(result), /handler broke/);
});

Deno.test("middleware called directly: with sliding renewal on, a next() that answers a plain Response works", async () => {
  const sessions = new SessionManager({
    secret,
    store: new KVSessionStore(new MemoryKV()),
    lifetimeSeconds: 3600,
    sliding: { renewAfterSeconds: 1, absoluteLifetimeSeconds: 86400 },
  });
  const token = await sessions.issue("user_1");
  const mw = identityMiddleware(sessions, { onEvent: () => {} });
  const req = new Request("https://app.example/", {
    headers: { cookie: `__Host-session=${token}` },
  });
  const res = await mw(
    req,
    (() => new Response("plain")) as unknown as () => Promise<Response>,
  );
  assert.equal(await res.text(), "plain");
});

Deno.test("a store whose isRevoked answers a plain boolean is unavailable (503), not an identity", async () => {
  const store = {
    isRevoked: () => false as unknown as Promise<boolean>,
    revoke: () => Promise.resolve(),
    revokeAll: () => Promise.resolve(),
  };
  const sessions = new SessionManager({ secret, store });
  const token = await sessions.issue("user_1");
  assert.equal((await callSync(sessions, bearer(token)).result).status, 503);
  await assert.rejects(sessions.resolve(token), { code: "STORE_UNAVAILABLE" });
});

Deno.test("an asynchronous peek is ignored, and its failure is not left unhandled", async () => {
  let unhandled = 0;
  const onUnhandled = (e: PromiseRejectionEvent) => {
    unhandled++;
    e.preventDefault();
  };
  globalThis.addEventListener("unhandledrejection", onUnhandled);
  try {
    const store = {
      peek: () => Promise.reject(new Error("async peek")),
      isRevoked: () => Promise.resolve(false),
      revoke: () => Promise.resolve(),
      revokeAll: () => Promise.resolve(),
    } as unknown as SessionStore;
    const sessions = new SessionManager({ secret, store });
    const token = await sessions.issue("user_1");
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await callSync(sessions, bearer(token)).result).status,
        200,
      );
    }
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(unhandled, 0);
  } finally {
    globalThis.removeEventListener("unhandledrejection", onUnhandled);
  }
});

Deno.test("warm path: the middleware takes a cookie exactly when CookieTransport.read does, the verified token remembered or not", async () => {
  const { requestStates } = await import("../../lib/http/_request_state.ts");
  const { CookieTransport } = await import("../../mod.ts");
  const reader = new CookieTransport();
  for (const warm of [true, false]) {
    const sessions = new SessionManager({
      secret,
      store: new KVSessionStore(new MemoryKV()),
      cacheSize: warm ? 1000 : 0,
    });
    const token = await sessions.issue("user_1");
    if (warm) await sessions.resolve(token);
    const mw = identityMiddleware(sessions, { onEvent: () => {} });
    const headers = [
      `__Host-session=${token}`,
      `a=1; __Host-session=${token}; b=2`,
      `__Host-session=${token}   `,
      `__Host-session=${token}!`,
      `__Host-session=${token} x`,
      `__Host-session= ${token}`,
      `__Host-session=${token.replace(".", "%2E")}`,
      `__Host-session=${token.slice(0, 20)}é${token.slice(20)}`,
      `__Host-session=`,
      `__Host-session=${token}; __Host-session=${token}`,
      `__Host-session=${"a".repeat(4096)}`,
      `__Host-session=${"a".repeat(4097)}`,
      `x__Host-session=${token}`,
      `session=${token}`,
    ];
    for (const cookie of headers) {
      const req = new Request("https://app.example/me", {
        headers: { cookie },
      });
      const expected = reader.read(req);
      await mw(req, () => Promise.resolve(new Response("ok")));
      const kind = requestStates.get(req)?.session.kind;
      const label = `${warm ? "warm" : "cold"}: ${cookie.slice(0, 60)}`;
      if (expected === null) assert.equal(kind, "anonymous", label);
      else if (expected === token) assert.equal(kind, "signedIn", label);
      else assert.equal(kind, "invalid", label);
    }
  }
});
