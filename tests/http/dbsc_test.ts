// Device-bound browser sessions (DBSC) through identityMiddleware: the
// registration offer, registration, the bound cookie, refresh, and every
// refusal, with proofs shaped as Chromium sends them (docs in
// docs/security.md). The Chromium end-to-end run is
// tests/browser/dbsc_browser_test.ts.
import assert from "node:assert/strict";
import {
  compose,
  currentIdentity,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
  signIn,
  signOut,
} from "../../mod.ts";
import type { KeyValueStore } from "../../mod.ts";
import { requireBoundSession } from "../../lib/http/mod.ts";
import { SecurityEvents } from "../../lib/events/mod.ts";
import { Clock, SECRET } from "../session/_helpers.ts";
import { SessionRegistry } from "../../lib/session/session_registry.ts";

const enc = new TextEncoder();
const b64u = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
const b64json = (v: unknown) => b64u(enc.encode(JSON.stringify(v)));
const ORIGIN = "https://app.example";
const START = "/auth/dbsc/start";
const REFRESH = "/auth/dbsc/refresh";

/** A KeyValueStore that counts what it is asked. */
class CountingKV implements KeyValueStore {
  reads: string[][] = [];
  writes: string[] = [];
  constructor(private inner: MemoryKV) {}
  getMany(keys: readonly string[]) {
    this.reads.push([...keys]);
    return this.inner.getMany(keys);
  }
  put(key: string, value: string, o?: { ttlSeconds?: number }) {
    this.writes.push(key);
    return this.inner.put(key, value, o);
  }
  delete(key: string) {
    return this.inner.delete(key);
  }
  increment(key: string, ttl: number) {
    this.writes.push(key);
    return this.inner.increment(key, ttl);
  }
}

function makeDbscApp(
  opts: { algorithms?: ("ES256" | "RS256")[] } = {},
  /** Runs inside "sign out everywhere else", between its two halves. */
  between: { revoked?: () => Promise<void> } = {},
) {
  const clock = new Clock(Math.floor(Date.now() / 1000) * 1000);
  const kv = new CountingKV(new MemoryKV({ now: clock.now }));
  const revocations = new KVSessionStore(kv);
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: revocations,
    now: clock.now,
    lifetimeSeconds: 24 * 3600,
  });
  const registry = new SessionRegistry({
    kv,
    manager: sessions,
    revocations,
    now: clock.now,
  });
  const seen: string[] = [];
  const handler = compose(
    [identityMiddleware(sessions, {
      deviceBound: { store: kv, now: clock.now, registry, ...opts },
      securityEvents: new SecurityEvents({
        hook: (e) => void seen.push(`${e.type}:${e.subject}`),
      }),
      onEvent: () => {},
    })],
    async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/login" && req.method === "POST") {
        const s = await signIn(req, "alice");
        await registry.add(s.identity, req.headers.get("user-agent"));
        return new Response(null, {
          status: 303,
          headers: { location: "/", "set-cookie": s.setCookie! },
        });
      }
      if (path === "/login-json" && req.method === "POST") {
        const s = await signIn(req, "alice");
        return Response.json({ token: s.token });
      }
      if (path === "/revoke-others" && req.method === "POST") {
        // "Sign out everywhere else", as the reference app does it.
        const denied = requireAuthenticated(req);
        if (denied) return denied;
        await sessions.revokeAll("alice");
        await between.revoked?.();
        await registry.clear("alice");
        const s = await signIn(req, "alice");
        await registry.add(s.identity, req.headers.get("user-agent"));
        return new Response(null, {
          status: 303,
          headers: { location: "/", "set-cookie": s.setCookie! },
        });
      }
      if (path === "/logout" && req.method === "POST") {
        const out = await signOut(req);
        return new Response(null, {
          status: 204,
          headers: { "set-cookie": out.clearCookie! },
        });
      }
      if (path === "/sensitive") {
        const denied = await requireBoundSession(req);
        if (denied) return denied;
        return new Response("sensitive");
      }
      const denied = requireAuthenticated(req);
      if (denied) return denied;
      const id = currentIdentity(req)!;
      return Response.json({
        subject: id.subject,
        binding: id.binding ?? null,
      });
    },
  );
  return { clock, kv, sessions, handler, seen, registry };
}

type App = ReturnType<typeof makeDbscApp>;

function cookieOf(res: Response, name: string): string | null {
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(";");
    const at = pair.indexOf("=");
    if (pair.slice(0, at) === name) return pair.slice(at + 1);
  }
  return null;
}

function challengeOf(header: string | null): string {
  const m = /challenge="([^"]+)"/.exec(header ?? "");
  assert.ok(m, `no challenge in ${header}`);
  return m[1];
}

async function ecKey() {
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const j = await crypto.subtle.exportKey("jwk", pair.publicKey);
  return {
    alg: "ES256",
    pair,
    jwk: { kty: "EC", crv: "P-256", x: j.x, y: j.y } as Record<string, unknown>,
    sign: async (input: Uint8Array<ArrayBuffer>) =>
      new Uint8Array(
        await crypto.subtle.sign(
          { name: "ECDSA", hash: "SHA-256" },
          pair.privateKey,
          input,
        ),
      ),
  };
}

async function rsaKey() {
  const pair = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  const j = await crypto.subtle.exportKey("jwk", pair.publicKey);
  return {
    alg: "RS256",
    pair,
    jwk: { kty: "RSA", n: j.n, e: j.e } as Record<string, unknown>,
    sign: async (input: Uint8Array<ArrayBuffer>) =>
      new Uint8Array(
        await crypto.subtle.sign("RSASSA-PKCS1-v1_5", pair.privateKey, input),
      ),
  };
}

type Key = Awaited<ReturnType<typeof ecKey>>;

/** A `Secure-Session-Response` JWT as Chromium makes it. */
async function proof(
  key: Key,
  payload: Record<string, unknown>,
  header: Record<string, unknown> = {
    alg: key.alg,
    jwk: key.jwk,
    typ: "dbsc+jwt",
  },
): Promise<string> {
  const input = `${b64json(header)}.${b64json(payload)}`;
  return `${input}.${b64u(await key.sign(enc.encode(input)))}`;
}

async function signInBrowser(app: App) {
  const res = await app.handler(
    new Request(`${ORIGIN}/login`, {
      method: "POST",
      headers: { "sec-fetch-site": "same-origin" },
    }),
  );
  assert.equal(res.status, 303);
  const unbound = cookieOf(res, "__Host-session")!;
  const offer = res.headers.get("secure-session-registration");
  assert.match(
    offer ?? "",
    /^\(ES256( RS256)?\);path="\/auth\/dbsc\/start";challenge="[^"]+"$/,
  );
  return { unbound, challenge: challengeOf(offer) };
}

function register(app: App, unbound: string, jwt: string | null) {
  const headers = new Headers({ cookie: `__Host-session=${unbound}` });
  if (jwt !== null) headers.set("secure-session-response", jwt);
  return app.handler(
    new Request(`${ORIGIN}${START}`, { method: "POST", headers }),
  );
}

/** Whether an answer sets an ordinary (unbound) session cookie. */
function setsOrdinaryCookie(res: Response): boolean {
  return res.headers.getSetCookie().some((c) => /^__Host-session=[^;]/.test(c));
}

/** "Sign out everywhere else" with only a bound cookie. */
function revokeOthers(app: App, bound: string) {
  return app.handler(
    new Request(`${ORIGIN}/revoke-others`, {
      method: "POST",
      headers: {
        cookie: `__Host-session-bound=${bound}`,
        "sec-fetch-site": "same-origin",
      },
    }),
  );
}

function me(app: App, cookie: string) {
  return app.handler(new Request(`${ORIGIN}/me`, { headers: { cookie } }));
}

async function bind(app: App, key?: Key) {
  const { unbound, challenge } = await signInBrowser(app);
  key ??= await ecKey();
  const res = await register(
    app,
    unbound,
    await proof(key, { jti: challenge }),
  );
  assert.equal(res.status, 200);
  const body = await res.json();
  const bound = cookieOf(res, "__Host-session-bound")!;
  return {
    unbound,
    bound,
    key,
    id: body.session_identifier as string,
    body,
    res,
  };
}

function refresh(app: App, id: string, jwt?: string) {
  const headers = new Headers({ "sec-secure-session-id": id });
  if (jwt !== undefined) headers.set("secure-session-response", jwt);
  return app.handler(
    new Request(`${ORIGIN}${REFRESH}`, { method: "POST", headers }),
  );
}

async function refreshWith(app: App, id: string, key: Key) {
  const c = await refresh(app, id);
  assert.equal(c.status, 403);
  const m = /^"([^"]+)";id="([^"]+)"$/.exec(
    c.headers.get("secure-session-challenge") ?? "",
  );
  assert.ok(m);
  assert.equal(m[2], id);
  return refresh(
    app,
    id,
    await proof(key, { jti: m[1] }, { alg: key.alg, typ: "dbsc+jwt" }),
  );
}

/**
 * A refresh refused for good: the draft's instructions to end the session
 * (`{"continue": false}`, which makes the browser stop trying), no cookie.
 */
async function assertEnded(res: Response, id: string) {
  assert.equal(res.status, 200);
  assert.equal(res.headers.getSetCookie().length, 0);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.deepEqual(await res.json(), {
    session_identifier: id,
    continue: false,
  });
}

Deno.test("registration binds the session: JSON, a short bound cookie, and the unbound token dies", async () => {
  const app = makeDbscApp();
  const { unbound, bound, id, body, res } = await bind(app);
  assert.deepEqual(body, {
    session_identifier: id,
    refresh_url: REFRESH,
    scope: { origin: ORIGIN, include_site: false, scope_specification: [] },
    credentials: [{
      type: "cookie",
      name: "__Host-session-bound",
      attributes: "Path=/; Secure; HttpOnly; SameSite=Lax",
    }],
  });
  const setCookies = res.headers.getSetCookie();
  assert.ok(
    setCookies.some((c) =>
      c.startsWith("__Host-session-bound=") && c.endsWith("Max-Age=600")
    ),
    setCookies.join(" | "),
  );
  assert.ok(
    setCookies.includes(
      "__Host-session=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0",
    ),
  );
  const ok = await me(app, `__Host-session-bound=${bound}`);
  assert.deepEqual(await ok.json(), { subject: "alice", binding: "device" });
  // The unbound token captured before registration is dead now.
  const old = await me(app, `__Host-session=${unbound}`);
  assert.equal(old.status, 401);
  await old.body?.cancel();
  // A bound session's responses carry no new registration offer.
  const page = await app.handler(
    new Request(`${ORIGIN}/me`, {
      headers: {
        cookie: `__Host-session-bound=${bound}`,
        "sec-fetch-dest": "document",
      },
    }),
  );
  assert.equal(page.headers.get("secure-session-registration"), null);
  await page.body?.cancel();
  assert.ok(app.seen.includes("session_bound:alice"));
});

Deno.test("RS256 registration and refresh work too", async () => {
  const app = makeDbscApp();
  const key = await rsaKey();
  const { id } = await bind(app, key);
  const res = await refreshWith(app, id, key);
  assert.equal(res.status, 200);
  assert.ok(cookieOf(res, "__Host-session-bound"));
});

Deno.test("registration refusals: clear 4xx, nothing stored, the unbound session untouched", async () => {
  const app = makeDbscApp({ algorithms: ["ES256"] });
  const { unbound, challenge } = await signInBrowser(app);
  const key = await ecKey();
  const rsa = await rsaKey();
  const other = await ecKey();
  const otherSession = await signInBrowser(app);
  const hmac = await crypto.subtle.importKey(
    "raw",
    enc.encode("k".repeat(32)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const expired = await (async () => {
    // A challenge minted two minutes and more ago.
    app.clock.advance(-200);
    const c = (await signInBrowser(app)).challenge;
    app.clock.advance(200);
    return c;
  })();
  const swapped = await (async () => {
    const input = `${
      b64json({ alg: "ES256", jwk: other.jwk, typ: "dbsc+jwt" })
    }.${b64json({ jti: challenge })}`;
    return `${input}.${b64u(await key.sign(enc.encode(input)))}`;
  })();
  const hs256 = await (async () => {
    const input = `${
      b64json({ alg: "HS256", typ: "dbsc+jwt", jwk: { kty: "oct", k: "a2s" } })
    }.${b64json({ jti: challenge })}`;
    const sig = new Uint8Array(
      await crypto.subtle.sign("HMAC", hmac, enc.encode(input)),
    );
    return `${input}.${b64u(sig)}`;
  })();
  const cases: [string, string | null, number][] = [
    ["no proof", null, 400],
    ["garbage", "x.y.z", 400],
    [
      "alg none",
      `${b64json({ alg: "none", jwk: key.jwk, typ: "dbsc+jwt" })}.${
        b64json({ jti: challenge })
      }.`,
      400,
    ],
    ["HS256", hs256, 400],
    ["RS256 not offered", await proof(rsa, { jti: challenge }), 400],
    [
      "missing jwk",
      await proof(key, { jti: challenge }, { alg: "ES256", typ: "dbsc+jwt" }),
      400,
    ],
    [
      "private key as jwk",
      await proof(key, { jti: challenge }, {
        alg: "ES256",
        typ: "dbsc+jwt",
        jwk: await crypto.subtle.exportKey("jwk", key.pair.privateKey),
      }),
      400,
    ],
    [
      "wrong typ",
      await proof(key, { jti: challenge }, {
        alg: "ES256",
        typ: "JWT",
        jwk: key.jwk,
      }),
      400,
    ],
    ["bad signature (swapped key)", swapped, 400],
    ["wrong challenge", await proof(key, { jti: "not-a-challenge" }), 400],
    ["expired challenge", await proof(key, { jti: expired }), 400],
    [
      "refresh challenge used to register",
      await proof(key, {
        jti: (/"([^"]+)"/.exec(
          (await refresh(app, "A".repeat(30))).headers.get(
            "secure-session-challenge",
          )!,
        )!)[1],
      }),
      400,
    ],
    [
      "another session's challenge",
      await proof(key, { jti: otherSession.challenge }),
      403,
    ],
  ];
  const writesBefore =
    app.kv.writes.filter((k) => k.includes("dbsc:") && !k.includes("once:"))
      .length;
  for (const [what, jwt, status] of cases) {
    const res = await register(app, unbound, jwt);
    assert.equal(res.status, status, what);
    const body = await res.json();
    assert.equal(body.error, "invalid_session_proof", what);
    assert.equal(res.headers.getSetCookie().length, 0, what);
  }
  // Without a session: 401.
  const anon = await app.handler(
    new Request(`${ORIGIN}${START}`, {
      method: "POST",
      headers: {
        "secure-session-response": await proof(key, { jti: challenge }),
      },
    }),
  );
  assert.equal(anon.status, 401);
  await anon.body?.cancel();
  assert.equal(
    app.kv.writes.filter((k) => k.includes("dbsc:") && !k.includes("once:"))
      .length,
    writesBefore,
    "no key stored",
  );
  // The unbound session still works; the right proof still registers.
  const still = await me(app, `__Host-session=${unbound}`);
  assert.equal(still.status, 200);
  await still.body?.cancel();
  const ok = await register(app, unbound, await proof(key, { jti: challenge }));
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  // The same challenge again (replay): refused.
  const again = await register(
    app,
    unbound,
    await proof(key, { jti: challenge }),
  );
  assert.ok(again.status >= 400 && again.status < 500);
  await again.body?.cancel();
  assert.ok(app.seen.some((s) => s.startsWith("binding_proof_refused:")));
});

Deno.test("red-team review: a registration proof over another session's challenge is 403 as the contract says, whether that session used it or not, and spends nothing", async () => {
  const app = makeDbscApp();
  const attacker = await signInBrowser(app);
  const key = await ecKey();
  // A challenge the other session has not used: 403, and the other
  // session still registers with it afterwards.
  const fresh = await signInBrowser(app);
  const early = await register(
    app,
    attacker.unbound,
    await proof(key, { jti: fresh.challenge }),
  );
  assert.equal(early.status, 403);
  assert.equal((await early.json()).error, "invalid_session_proof");
  const own = await register(
    app,
    fresh.unbound,
    await proof(await ecKey(), { jti: fresh.challenge }),
  );
  assert.equal(own.status, 200, "the refused proof spent nothing");
  await own.body?.cancel();
  // A challenge the other session has used already: 403 too (was 400).
  const late = await register(
    app,
    attacker.unbound,
    await proof(key, { jti: fresh.challenge }),
  );
  assert.equal(late.status, 403);
  assert.equal((await late.json()).error, "invalid_session_proof");
  assert.equal(late.headers.getSetCookie().length, 0);
  // The attacker's own session is untouched and registers with its own.
  const mine = await register(
    app,
    attacker.unbound,
    await proof(key, { jti: attacker.challenge }),
  );
  assert.equal(mine.status, 200);
  await mine.body?.cancel();
});

Deno.test("refresh: a challenge, then a proof by the stored key gives a fresh short cookie", async () => {
  const app = makeDbscApp();
  const { id, key, bound } = await bind(app);
  app.clock.advance(601);
  const expired = await me(app, `__Host-session-bound=${bound}`);
  assert.equal(
    expired.status,
    401,
    "the bound cookie dies with its short life",
  );
  await expired.body?.cancel();
  const res = await refreshWith(app, id, key);
  assert.equal(res.status, 200);
  assert.equal((await res.json()).session_identifier, id);
  const fresh = cookieOf(res, "__Host-session-bound")!;
  const ok = await me(app, `__Host-session-bound=${fresh}`);
  assert.deepEqual(await ok.json(), { subject: "alice", binding: "device" });
  assert.ok(app.seen.includes("session_refreshed:alice"));
});

Deno.test("refresh refusals: another key, a replayed proof, a forged id, a challenge of another session", async () => {
  const app = makeDbscApp();
  const { id, key } = await bind(app);
  const second = await bind(app);
  const thief = await ecKey();
  const challenge = async (sid: string) =>
    (/^"([^"]+)"/.exec(
      (await refresh(app, sid)).headers.get("secure-session-challenge")!,
    ))![1];
  // Another key signs.
  let res = await refresh(
    app,
    id,
    await proof(thief, { jti: await challenge(id) }, {
      alg: "ES256",
      typ: "dbsc+jwt",
    }),
  );
  assert.equal(res.status, 400);
  await res.body?.cancel();
  // Another key sent along in the header.
  res = await refresh(
    app,
    id,
    await proof(thief, { jti: await challenge(id) }),
  );
  assert.equal(res.status, 400);
  await res.body?.cancel();
  // A challenge issued for another session id, signed by the right key:
  // no cookie, a fresh challenge for this session instead.
  res = await refresh(
    app,
    id,
    await proof(key, { jti: await challenge(second.id) }, {
      alg: "ES256",
      typ: "dbsc+jwt",
    }),
  );
  assertRechallenged(res, id);
  // Replay of one good proof: the same.
  const good = await proof(key, { jti: await challenge(id) }, {
    alg: "ES256",
    typ: "dbsc+jwt",
  });
  res = await refresh(app, id, good);
  assert.equal(res.status, 200);
  await res.body?.cancel();
  res = await refresh(app, id, good);
  assertRechallenged(res, id);
  // A malformed or unknown id.
  res = await refresh(app, "../etc");
  assert.equal(res.status, 400);
  await res.body?.cancel();
  res = await refresh(
    app,
    "B".repeat(30),
    await proof(key, { jti: await challenge("B".repeat(30)) }, {
      alg: "ES256",
      typ: "dbsc+jwt",
    }),
  );
  await assertEnded(res, "B".repeat(30));
  assert.ok(app.seen.includes("binding_proof_refused:null"));
});

/**
 * Asserts a 403 that carries a fresh refresh challenge for `id` and no
 * cookie: the proof was the session's own key over a stale challenge.
 */
function assertRechallenged(res: Response, id: string): void {
  assert.equal(res.status, 403);
  assert.match(
    res.headers.get("secure-session-challenge") ?? "",
    new RegExp(`^"[^"]+";id="${id}"$`),
  );
  assert.equal(res.headers.getSetCookie().length, 0);
}

Deno.test("a proof by the session's key over an expired challenge gets a new challenge, and signing that one renews", async () => {
  const app = makeDbscApp();
  const { id, key, bound } = await bind(app);
  const first = await refresh(app, id);
  const stale = /^"([^"]+)"/.exec(
    first.headers.get("secure-session-challenge")!,
  )![1];
  app.clock.advance(121); // the challenge lives 120 s
  const res = await refresh(
    app,
    id,
    await proof(key, { jti: stale }, { alg: "ES256", typ: "dbsc+jwt" }),
  );
  assertRechallenged(res, id);
  const again = /^"([^"]+)"/.exec(
    res.headers.get("secure-session-challenge")!,
  )![1];
  assert.notEqual(again, stale);
  assert.ok(app.seen.includes("binding_proof_refused:alice"));
  // The session stands: the old bound cookie still works inside its life,
  // and a proof over the new challenge renews.
  const still = await me(app, `__Host-session-bound=${bound}`);
  assert.equal(still.status, 200);
  await still.body?.cancel();
  const ok = await refresh(
    app,
    id,
    await proof(key, { jti: again }, { alg: "ES256", typ: "dbsc+jwt" }),
  );
  assert.equal(ok.status, 200);
  assert.ok(cookieOf(ok, "__Host-session-bound"));
  await ok.body?.cancel();
});

Deno.test("a revoked session never refreshes: logout, revokeAll, absolute lifetime", async () => {
  const app = makeDbscApp();
  // Logout with the bound cookie.
  const a = await bind(app);
  const out = await app.handler(
    new Request(`${ORIGIN}/logout`, {
      method: "POST",
      headers: {
        cookie: `__Host-session-bound=${a.bound}`,
        "sec-fetch-site": "same-origin",
      },
    }),
  );
  assert.equal(out.status, 204);
  assert.ok(
    out.headers.getSetCookie().some((c) =>
      c.startsWith("__Host-session-bound=;") && c.endsWith("Max-Age=0")
    ),
  );
  app.clock.advance(3600); // far past the denylist's shortest life
  let res = await refreshWith(app, a.id, a.key);
  await assertEnded(res, a.id);
  // Sign out everywhere.
  const b = await bind(app);
  await app.sessions.revokeAll("alice");
  res = await refreshWith(app, b.id, b.key);
  await assertEnded(res, b.id);
  // The absolute lifetime (the sign-in token's expiry) passes.
  const c = await bind(app);
  app.clock.advance(24 * 3600 + 1);
  res = await refreshWith(app, c.id, c.key);
  await assertEnded(res, c.id);
  // Every one is a refused proof among the security events (the last one
  // of an unknown session: its key left with the session), none a refresh.
  assert.equal(
    app.seen.filter((e) => e.startsWith("binding_proof_refused:")).length,
    3,
  );
  assert.ok(!app.seen.includes("session_refreshed:alice"));
});

Deno.test("a refresh that is only refused (a bad proof) is an error, not the end of the session", async () => {
  const app = makeDbscApp();
  const { id, key } = await bind(app);
  const thief = await ecKey();
  const c = await refresh(app, id);
  const challenge = /^"([^"]+)"/.exec(
    c.headers.get("secure-session-challenge")!,
  )![1];
  const res = await refresh(
    app,
    id,
    await proof(thief, { jti: challenge }, { alg: "ES256", typ: "dbsc+jwt" }),
  );
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.error, "invalid_session_proof");
  assert.equal(body.continue, undefined);
  // The session is untouched: its own key still renews it.
  const ok = await refreshWith(app, id, key);
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).session_identifier, id);
});

Deno.test("a bound cookie request costs what an unbound one costs: one denylist read, no key read", async () => {
  const app = makeDbscApp();
  const { unbound } = await signInBrowser(app);
  const other = await signInBrowser(app); // stays unbound
  const { bound } = await bind(app);
  void unbound;
  const count = async (cookie: string) => {
    await (await me(app, cookie)).body?.cancel(); // first request: cold
    const before = app.kv.reads.length;
    const writes = app.kv.writes.length;
    for (let i = 0; i < 5; i++) {
      const res = await me(app, cookie);
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
    const reads = app.kv.reads.slice(before);
    assert.equal(app.kv.writes.length, writes, "no writes");
    assert.ok(reads.every((keys) => keys.every((k) => !k.includes("dbsc:"))));
    return reads.length;
  };
  const unboundReads = await count(`__Host-session=${other.unbound}`);
  const boundReads = await count(`__Host-session-bound=${bound}`);
  assert.equal(boundReads, unboundReads);
});

Deno.test("requireBoundSession: 401 anonymous, 403 without a registration offer when unbound (issue 27 finding 4), passes when bound", async () => {
  const app = makeDbscApp();
  const anon = await app.handler(new Request(`${ORIGIN}/sensitive`));
  assert.equal(anon.status, 401);
  await anon.body?.cancel();
  const { unbound } = await signInBrowser(app);
  const denied = await app.handler(
    new Request(`${ORIGIN}/sensitive`, {
      headers: {
        cookie: `__Host-session=${unbound}`,
        accept: "application/json",
      },
    }),
  );
  assert.equal(denied.status, 403);
  assert.equal((await denied.json()).error, "session_not_bound");
  assert.equal(denied.headers.get("secure-session-registration"), null);
  const { bound } = await bind(app);
  const ok = await app.handler(
    new Request(`${ORIGIN}/sensitive`, {
      headers: { cookie: `__Host-session-bound=${bound}` },
    }),
  );
  assert.equal(ok.status, 200);
  assert.equal(await ok.text(), "sensitive");
});

Deno.test("a bound cookie copied into the unbound cookie's place, and the reverse, are refused", async () => {
  const app = makeDbscApp();
  const { bound } = await bind(app);
  const swapped = await me(app, `__Host-session=${bound}`);
  assert.equal(swapped.status, 401);
  await swapped.body?.cancel();
  const { unbound } = await signInBrowser(app);
  const reverse = await me(app, `__Host-session-bound=${unbound}`);
  assert.equal(reverse.status, 401);
  await reverse.body?.cancel();
});

Deno.test("browsers that never register keep an ordinary session; no answer but a fresh sign-in's carries the offer (issue 27 finding 4 and docs item 4)", async () => {
  const app = makeDbscApp();
  const { unbound } = await signInBrowser(app);
  const api = await me(app, `__Host-session=${unbound}`);
  assert.equal(api.status, 200);
  assert.equal(api.headers.get("secure-session-registration"), null);
  await api.body?.cancel();
  const nav = await app.handler(
    new Request(`${ORIGIN}/me`, {
      headers: {
        cookie: `__Host-session=${unbound}`,
        "sec-fetch-dest": "document",
        accept: "text/html",
      },
    }),
  );
  assert.equal(nav.status, 200);
  assert.equal(nav.headers.get("secure-session-registration"), null);
  await nav.body?.cancel();
});

Deno.test("issue 27 finding 4: a thief with only a copied ordinary cookie cannot bind it: a re-mint's answer carries no offer, and the owner's ticket is refused", async () => {
  const app = makeDbscApp();
  const { unbound, challenge } = await signInBrowser(app);
  // The thief's "sign out everywhere else" with the copy: a new session,
  // and no offer on its answer.
  const res = await app.handler(
    new Request(`${ORIGIN}/revoke-others`, {
      method: "POST",
      headers: {
        cookie: `__Host-session=${unbound}`,
        "sec-fetch-site": "same-origin",
      },
    }),
  );
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("secure-session-registration"), null);
  const stolen = cookieOf(res, "__Host-session")!;
  // The owner's ticket names the owner's session: refused, nothing bound.
  const key = await ecKey();
  const refused = await register(
    app,
    stolen,
    await proof(key, { jti: challenge }),
  );
  assert.equal(refused.status, 403);
  await refused.body?.cancel();
  const still = await me(app, `__Host-session=${stolen}`);
  assert.deepEqual(await still.json(), { subject: "alice", binding: null });
});

Deno.test("docs item 4: a JSON sign-in that answers its token in the body (no session cookie) gets no registration offer", async () => {
  const app = makeDbscApp();
  const res = await app.handler(
    new Request(`${ORIGIN}/login-json`, {
      method: "POST",
      headers: { accept: "application/json" },
    }),
  );
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("secure-session-registration"), null);
  assert.ok((await res.json()).token);
});

Deno.test("one registration per session: two proofs of one ticket sent at once bind it once", async () => {
  const app = makeDbscApp();
  const { unbound, challenge } = await signInBrowser(app);
  const [one, two] = [await ecKey(), await ecKey()];
  // Both proofs are made before either is sent, so the two registrations
  // are in flight together. (Only a fresh sign-in's answer carries a
  // ticket, so one session never holds two.)
  const proofs = [
    await proof(one, { jti: challenge }),
    await proof(two, { jti: challenge }),
  ];
  const answers = await Promise.all(
    proofs.map((jwt) => register(app, unbound, jwt)),
  );
  const statuses = answers.map((r) => r.status).sort();
  // The loser finds the ticket used (400), the session claimed (403), or,
  // when the winner got as far as revoking the unbound token first, no
  // session at all (401).
  assert.equal(statuses[0], 200, statuses.join());
  assert.ok([400, 401, 403].includes(statuses[1]), statuses.join());
  assert.equal(app.seen.filter((e) => e === "session_bound:alice").length, 1);
  for (const r of answers) await r.body?.cancel();
});

Deno.test("my sessions: a registration moves the entry to the bound id, shown as device-bound, revocable", async () => {
  const app = makeDbscApp();
  const plain = await signInBrowser(app);
  void plain;
  const { id, key, unbound } = await bind(app);
  app.clock.advance(700); // past the bound cookie's life: the entry stays
  const list = await app.registry.list("alice");
  assert.equal(list.length, 2);
  const entry = list.find((s) => s.id === id)!;
  assert.equal(entry.binding, "device");
  assert.ok(entry.expiresAt > Math.floor(app.clock.now() / 1000) + 3600);
  assert.ok(!list.some((s) => s.binding === null && s.id === unbound));
  assert.equal(list.filter((s) => s.binding === null).length, 1);
  // Revoked from the list: never refreshes again, even an hour later.
  assert.equal(await app.registry.revoke("alice", id), true);
  app.clock.advance(3600);
  const res = await refreshWith(app, id, key);
  await assertEnded(res, id);
});

Deno.test("red-team review: a device-bound session that signs in again stays bound to its key; a copied bound cookie buys no ordinary session", async () => {
  const app = makeDbscApp();
  const { bound, id, key } = await bind(app);
  // The thief holds the bound cookie only: "sign out everywhere else".
  const res = await revokeOthers(app, bound);
  assert.equal(res.status, 303);
  const cookies = res.headers.getSetCookie();
  assert.ok(
    !setsOrdinaryCookie(res),
    "no ordinary session cookie",
  );
  assert.ok(
    !cookies.some((c) => c.startsWith("__Host-session-bound=;")),
    "the bound cookie is replaced, not cleared",
  );
  const next = cookieOf(res, "__Host-session-bound")!;
  assert.ok(
    next && next !== bound,
    JSON.stringify(cookies.map((c) => c.slice(0, 40))),
  );
  assert.match(
    cookies.find((c) => c.startsWith("__Host-session-bound="))!,
    /Max-Age=(\d+)/,
  );
  const maxAge = Number(
    /Max-Age=(\d+)/.exec(
      cookies.find((c) => c.startsWith("__Host-session-bound="))!,
    )![1],
  );
  assert.ok(maxAge > 0 && maxAge <= 600, `a short cookie: ${maxAge} s`);
  const meNext = await me(app, `__Host-session-bound=${next}`);
  assert.equal(meNext.status, 200);
  assert.deepEqual(await meNext.json(), {
    subject: "alice",
    binding: "device",
  });
  // The cookie presented is over (the sign-out everywhere came first).
  const old = await me(app, `__Host-session-bound=${bound}`);
  assert.equal(old.status, 401);
  await old.body?.cancel();
  // Its short life over, the new cookie dies, and only the key renews it:
  // the browser goes on under the same session id.
  app.clock.advance(601);
  const late = await me(app, `__Host-session-bound=${next}`);
  assert.equal(late.status, 401);
  await late.body?.cancel();
  const thief = await refresh(app, id);
  assert.equal(thief.status, 403, "a challenge the thief cannot sign");
  await thief.body?.cancel();
  const renewed = await refreshWith(app, id, key);
  assert.equal(renewed.status, 200);
  assert.equal((await renewed.json()).session_identifier, id);
  const after = cookieOf(renewed, "__Host-session-bound")!;
  const meAfter = await me(app, `__Host-session-bound=${after}`);
  assert.equal(meAfter.status, 200);
  await meAfter.body?.cancel();
  // "My sessions" lists it once, bound, past its cookie's life.
  const list = await app.registry.list("alice");
  assert.deepEqual(list.map((s) => s.binding), ["device"]);
  assert.notEqual(list[0].id, id, "the new session's jti");
  // Again from the renewed cookie, then a sign-out: the browser's session
  // id follows each new session, and ends with the last.
  const again = await revokeOthers(app, after);
  assert.equal(again.status, 303);
  const third = cookieOf(again, "__Host-session-bound")!;
  assert.equal((await me(app, `__Host-session-bound=${third}`)).status, 200);
  app.clock.advance(601);
  const refreshed = await refreshWith(app, id, key);
  assert.equal(refreshed.status, 200);
  const fourth = cookieOf(refreshed, "__Host-session-bound")!;
  const out = await app.handler(
    new Request(`${ORIGIN}/logout`, {
      method: "POST",
      headers: {
        cookie: `__Host-session-bound=${fourth}`,
        "sec-fetch-site": "same-origin",
      },
    }),
  );
  assert.equal(out.status, 204);
  await assertEnded(await refreshWith(app, id, key), id);
  assert.ok(list[0].expiresAt > Math.floor(app.clock.now() / 1000) + 3600);
});

/** A token's `subject|jti|expiry` payload (not secret). */
function payloadOf(token: string): { jti: string; expiry: number } {
  const [, jti, expiry] = atob(
    token.split(".")[2].replace(/-/g, "+").replace(/_/g, "/"),
  ).split("|");
  return { jti, expiry: Number(expiry) };
}

Deno.test("red-team review: signing in again never makes a bound cookie outlive the one presented, so a copy cannot be kept alive without the key", async () => {
  const app = makeDbscApp();
  const { bound, id, key } = await bind(app);
  const original = payloadOf(bound).expiry;
  let held = bound;
  // The thief signs in again every few minutes with the newest cookie.
  for (let i = 0; i < 3; i++) {
    app.clock.advance(150);
    const res = await revokeOthers(app, held);
    assert.equal(res.status, 303);
    assert.ok(
      !setsOrdinaryCookie(res),
    );
    held = cookieOf(res, "__Host-session-bound")!;
    assert.equal(payloadOf(held).expiry, original, "no later than the first");
  }
  app.clock.advance(original * 1000 - app.clock.now() + 1000);
  const late = await me(app, `__Host-session-bound=${held}`);
  assert.equal(late.status, 401, "the copy ends with the first cookie");
  await late.body?.cancel();
  const again = await revokeOthers(app, held);
  assert.equal(again.status, 401);
  await again.body?.cancel();
  // The browser, with its key, goes on.
  const renewed = await refreshWith(app, id, key);
  assert.equal(renewed.status, 200);
  await renewed.body?.cancel();
});

Deno.test("issue 27 finding 4: 'sign out everywhere else' from a device-bound session keeps the browser session's absolute end: the key renews it no later", async () => {
  const app = makeDbscApp();
  const { bound, id, key } = await bind(app);
  // The manager's lifetime is a day; 20 hours on, the session signs in again.
  app.clock.advance(20 * 3600);
  let held = bound;
  const first = await refreshWith(app, id, key);
  assert.equal(first.status, 200);
  held = cookieOf(first, "__Host-session-bound")!;
  const res = await revokeOthers(app, held);
  assert.equal(res.status, 303);
  await res.body?.cancel();
  // Five hours later the day is over: the key renews nothing.
  app.clock.advance(5 * 3600);
  await assertEnded(await refreshWith(app, id, key), id);
});

Deno.test("red-team review: two 'sign out everywhere else' at once from one bound cookie give bound cookies only, one of them live, and the browser renews", async () => {
  const app = makeDbscApp();
  const { bound, id, key } = await bind(app);
  const answers = await Promise.all([
    revokeOthers(app, bound),
    revokeOthers(app, bound),
  ]);
  const cookies: string[] = [];
  for (const res of answers) {
    assert.ok(
      !setsOrdinaryCookie(res),
      "no ordinary session",
    );
    const c = cookieOf(res, "__Host-session-bound");
    if (res.status === 303 && c) cookies.push(c);
    else await res.body?.cancel();
  }
  assert.ok(cookies.length >= 1);
  let live = 0;
  for (const c of cookies) {
    const res = await me(app, `__Host-session-bound=${c}`);
    if (res.status === 200) live++;
    await res.body?.cancel();
  }
  assert.equal(live, 1, "one live jti per browser session");
  app.clock.advance(601);
  const renewed = await refreshWith(app, id, key);
  assert.equal(renewed.status, 200);
  const next = cookieOf(renewed, "__Host-session-bound")!;
  const who = await me(app, `__Host-session-bound=${next}`);
  assert.equal(who.status, 200);
  await who.body?.cancel();
  assert.equal(
    (await app.registry.list("alice")).filter((s) => s.binding === "device")
      .length,
    1,
    "no orphan in my sessions",
  );
});

Deno.test("red-team review: a sign-out with a cookie a thief's sign-in moved on from still ends the browser's session, and such a cookie is cleared so the browser renews at once", async () => {
  const app = makeDbscApp();
  const { bound, id, key } = await bind(app);
  const thief = await revokeOthers(app, bound);
  assert.equal(thief.status, 303);
  const moved = cookieOf(thief, "__Host-session-bound")!;
  // The victim's cookie no longer holds: its answer clears it, so that
  // the browser renews (under the id, now naming the thief's jti).
  const stale = await me(app, `__Host-session-bound=${bound}`);
  assert.equal(stale.status, 401);
  await stale.body?.cancel();
  assert.ok(
    stale.headers.getSetCookie().some((c) =>
      c.startsWith("__Host-session-bound=;") && c.endsWith("Max-Age=0")
    ),
  );
  // The victim signs out with that cookie: the whole session ends.
  const out = await app.handler(
    new Request(`${ORIGIN}/logout`, {
      method: "POST",
      headers: {
        cookie: `__Host-session-bound=${bound}`,
        "sec-fetch-site": "same-origin",
      },
    }),
  );
  assert.equal(out.status, 204);
  const copy = await me(app, `__Host-session-bound=${moved}`);
  assert.equal(copy.status, 401, "the thief's cookie ends too");
  await copy.body?.cancel();
  await assertEnded(await refreshWith(app, id, key), id);
});

Deno.test("a bound session whose key record is gone signs in again to a bound cookie that ends with the one presented", async () => {
  const app = makeDbscApp();
  const { bound, id, key } = await bind(app);
  await app.kv.delete(`portcullis:dbsc:${id}`);
  app.clock.advance(100);
  const res = await revokeOthers(app, bound);
  assert.equal(res.status, 303);
  assert.ok(
    !setsOrdinaryCookie(res),
  );
  const next = cookieOf(res, "__Host-session-bound")!;
  assert.equal(payloadOf(next).expiry, payloadOf(bound).expiry);
  const ended = await refreshWith(app, id, key);
  await assertEnded(ended, id);
});

Deno.test("a refresh that falls between 'sign out everywhere else' revoking the session and moving it on waits for the move, and renews", async () => {
  let release!: () => void;
  let revoked!: () => void;
  const midway = new Promise<void>((r) => revoked = r);
  const app = makeDbscApp({}, {
    revoked: () => {
      revoked();
      return new Promise((r) => release = r);
    },
  });
  const { bound, id, key } = await bind(app);
  const others = revokeOthers(app, bound);
  await midway; // the old session is revoked, the new one not made yet
  const refreshing = refreshWith(app, id, key);
  await new Promise((r) => setTimeout(r, 250));
  release();
  assert.equal((await others).status, 303);
  const res = await refreshing;
  assert.equal(res.status, 200, "renewed, not ended");
  assert.equal((await res.json()).session_identifier, id);
  const cookie = cookieOf(res, "__Host-session-bound")!;
  const who = await me(app, `__Host-session-bound=${cookie}`);
  assert.equal(who.status, 200);
  await who.body?.cancel();
});

Deno.test("the session, session.*, dbsc.* and dpop.* purposes are reserved on /tokens", async () => {
  const { signToken, verifyToken } = await import(
    "../../lib/tokens/tokens.ts"
  );
  // lib/tokens names the session purposes itself (it imports no layer): the
  // ones lib/session uses must be among those it refuses.
  const { SESSION_PURPOSE } = await import(
    "../../lib/session/session_manager.ts"
  );
  const { bindingPurpose } = await import(
    "../../lib/binding/session_binding.ts"
  );
  const { DPOP_NONCE_PURPOSE } = await import(
    "../../lib/binding/_dpop_nonce.ts"
  );
  const keys = await SecretProvider.fromValue(SECRET).keys("session");
  for (
    const purpose of [
      SESSION_PURPOSE,
      bindingPurpose({ kind: "device" }),
      bindingPurpose({ kind: "dpop", thumbprint: "x" }),
      "session.device",
      "session.dpop.x",
      "dbsc.refresh",
      DPOP_NONCE_PURPOSE,
      "dpop.other",
    ]
  ) {
    await assert.rejects(
      async () => await signToken(keys.current, purpose, new Uint8Array()),
      RangeError,
    );
    await assert.rejects(
      async () => await verifyToken(keys, purpose, "v1.x"),
      RangeError,
    );
  }
});

Deno.test("issue 28: a session an operator holds for the user (impersonation) is never bound: its registration is refused before any proof is read", async () => {
  const app = makeDbscApp();
  const held = await app.sessions.issueSession("alice", {
    actor: "operator",
    notAfter: Math.floor(app.clock.now() / 1000) + 900,
  });
  const refused = await register(app, held.token, null);
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.getSetCookie().length, 0);
  // The same request with the user's own session is refused for its
  // missing proof (400), not for who holds it.
  const own = await app.sessions.issue("alice");
  assert.equal((await register(app, own, null)).status, 400);
  // The impersonation session still works, unbound, with its actor.
  const res = await me(app, `__Host-session=${held.token}`);
  assert.deepEqual(await res.json(), { subject: "alice", binding: null });
});
