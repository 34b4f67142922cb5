// DPoP server nonces (RFC 9449 §8, §9): real WebCrypto keys, real proofs,
// a real client nobody here wrote (oauth4webapi), and the nonce's windows
// on a clock the test moves.
import assert from "node:assert/strict";
import fc from "fast-check";
import * as oauth from "oauth4webapi";
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
} from "../../mod.ts";
import type { AuthEvent } from "../../mod.ts";
import { DpopVerifier } from "../../lib/session/mod.ts";
import { SecurityEvents } from "../../lib/events/mod.ts";
import type { DpopOptions } from "../../lib/session/mod.ts";
import { signToken } from "../../lib/tokens/signed_token.ts";
import { DpopNonces } from "../../lib/binding/_dpop_nonce.ts";
import { Clock, OLD_SECRET, SECRET } from "./_helpers.ts";
import {
  ath,
  b64u,
  es256Key,
  makeProof,
  type ProofKey,
} from "./_dpop_proofs.ts";

const enc = new TextEncoder();
const LIFETIME = 60;
const TOKEN_URL = "https://api.example/token";
const ME_URL = "https://api.example/me";

/** An app with DPoP on, its clock, and the events it emitted. */
function makeApp(
  dpop: DpopOptions = { nonce: { lifetimeSeconds: LIFETIME } },
  secret = SECRET,
  clock = new Clock(Date.now()),
) {
  const kv = new MemoryKV();
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(secret),
    store: new KVSessionStore(kv),
  });
  const events: AuthEvent[] = [];
  const security: string[] = [];
  const handler = compose(
    [identityMiddleware(sessions, {
      dpop: { store: kv, now: clock.now, ...dpop },
      onEvent: (e) => events.push(e),
      securityEvents: new SecurityEvents({
        hook: (e) => {
          security.push(e.type);
        },
      }),
    })],
    async (req) => {
      if (new URL(req.url).pathname === "/token") {
        const s = await signIn(req, "alice");
        return Response.json({
          access_token: s.token,
          token_type: "DPoP",
          expires_in: 3600,
        });
      }
      const denied = requireAuthenticated(req);
      if (denied) return denied;
      // An answer no one can copy (as a 101 upgrade).
      if (new URL(req.url).pathname === "/uncopyable") return Response.error();
      const id = currentIdentity(req)!;
      return Response.json({ subject: id.subject, binding: id.binding });
    },
  );
  return { handler, sessions, clock, events, security };
}

type App = ReturnType<typeof makeApp>;

/** Claims of a good proof at the app's clock. */
function claims(app: App, over: Record<string, unknown> = {}) {
  return {
    jti: crypto.randomUUID(),
    htm: "GET",
    htu: ME_URL,
    iat: Math.floor(app.clock.now() / 1000),
    ...over,
  };
}

function signInRequest(proof: string) {
  return new Request(TOKEN_URL, {
    method: "POST",
    headers: { dpop: proof, accept: "application/json" },
  });
}

function resourceRequest(token: string, proof: string) {
  return new Request(ME_URL, {
    headers: { authorization: `DPoP ${token}`, dpop: proof },
  });
}

/** Asserts the use_dpop_nonce answer; returns its nonce (or null). */
async function assertUseNonce(res: Response, what: string) {
  assert.equal(res.status, 401, what);
  const challenge = res.headers.get("www-authenticate") ?? "";
  assert.match(
    challenge,
    /^DPoP error="use_dpop_nonce", error_description="[^"]+", algs="ES256 RS256 EdDSA Ed25519"$/,
    what,
  );
  assert.equal(res.headers.get("cache-control"), "no-store", what);
  assert.equal((await res.json()).error, "use_dpop_nonce", what);
  return res.headers.get("dpop-nonce");
}

/** Signs in with a nonce obtained from the first refusal. */
async function boundToken(app: App, key: ProofKey) {
  const first = await app.handler(
    signInRequest(
      await makeProof(key, claims(app, { htm: "POST", htu: TOKEN_URL })),
    ),
  );
  const nonce = await assertUseNonce(first, "sign-in without a nonce");
  assert.ok(nonce !== null);
  const res = await app.handler(
    signInRequest(
      await makeProof(
        key,
        claims(app, { htm: "POST", htu: TOKEN_URL, nonce }),
      ),
    ),
  );
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("dpop-nonce"), null, "a current nonce");
  return { token: (await res.json()).access_token as string, nonce };
}

Deno.test("nonces on: a proof without a nonce answers 401 use_dpop_nonce with a DPoP-Nonce; the retry with it passes", async () => {
  const app = makeApp();
  const key = await es256Key();
  const { token } = await boundToken(app, key);
  const base = { ath: await ath(token) };
  const first = await app.handler(
    resourceRequest(token, await makeProof(key, claims(app, base))),
  );
  const nonce = await assertUseNonce(first, "resource without a nonce");
  assert.ok(nonce !== null);
  // Short, URL-safe, and the same token-shaped value every instance makes.
  assert.match(nonce, /^[A-Za-z0-9_.-]{40,100}$/);
  const retry = await app.handler(
    resourceRequest(
      token,
      await makeProof(key, claims(app, { ...base, nonce })),
    ),
  );
  assert.equal(retry.status, 200);
  assert.deepEqual(await retry.json(), { subject: "alice", binding: "dpop" });
  assert.equal(retry.headers.get("dpop-nonce"), null);
  // The refusals were told to the event hook, with the reason only.
  const refused = app.events.filter((e) => e.type === "dpop_proof_refused");
  assert.deepEqual(refused.map((e) => (e as { reason: string }).reason), [
    "nonce",
    "nonce",
  ]);
});

Deno.test("the sign-in (token-issuing) request answers use_dpop_nonce as other DPoP refusals, and issues nothing", async () => {
  const app = makeApp();
  const key = await es256Key();
  const res = await app.handler(
    signInRequest(
      await makeProof(key, claims(app, { htm: "POST", htu: TOKEN_URL })),
    ),
  );
  const nonce = await assertUseNonce(res, "sign-in");
  assert.ok(nonce !== null);
  // The handler never ran: no token was minted, no cookie set.
  assert.equal(res.headers.get("set-cookie"), null);
  // An HTML client gets the same status and headers.
  const html = await app.handler(
    new Request(TOKEN_URL, {
      method: "POST",
      headers: {
        dpop: await makeProof(
          key,
          claims(app, { htm: "POST", htu: TOKEN_URL }),
        ),
        accept: "text/html",
      },
    }),
  );
  assert.equal(html.status, 401);
  assert.match(html.headers.get("www-authenticate")!, /use_dpop_nonce/);
  assert.equal(html.headers.get("dpop-nonce"), nonce);
  await html.body?.cancel();
});

Deno.test("old, tampered, foreign and other-purpose nonces are refused with use_dpop_nonce", async () => {
  const app = makeApp();
  const key = await es256Key();
  const { token, nonce } = await boundToken(app, key);
  const base = { ath: await ath(token) };
  const window = Math.floor(app.clock.now() / (LIFETIME * 1000));
  const provider = SecretProvider.fromValue(SECRET);
  const payload = (w: number, lifetime = LIFETIME) =>
    enc.encode(`${lifetime}:${w}`);
  const nonceKeys = await provider.keys("dpop.nonce");
  const flashKeys = await provider.keys("flash");
  const otherSecret = await SecretProvider.fromValue(OLD_SECRET).keys(
    "dpop.nonce",
  );
  const flip = (s: string, i: number) =>
    s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
  const cases: [string, unknown][] = [
    [
      "two windows ago",
      await signToken(nonceKeys.current, "dpop.nonce", payload(window - 2)),
    ],
    [
      "the next window",
      await signToken(nonceKeys.current, "dpop.nonce", payload(window + 1)),
    ],
    ["tampered tag", flip(nonce, nonce.length - 5)],
    ["tampered kid", flip(nonce, 5)],
    ["tampered payload", flip(nonce, 13)],
    ["truncated", nonce.slice(0, -1)],
    [
      "another secret",
      await signToken(otherSecret.current, "dpop.nonce", payload(window)),
    ],
    [
      "the flash key and purpose",
      await signToken(flashKeys.current, "flash", payload(window)),
    ],
    [
      "the flash key, the nonce purpose",
      await signToken(flashKeys.current, "dpop.nonce", payload(window)),
    ],
    [
      "the nonce key, another purpose",
      await signToken(nonceKeys.current, "flash", payload(window)),
    ],
    [
      "another lifetime, this window's number",
      await signToken(
        nonceKeys.current,
        "dpop.nonce",
        payload(window, LIFETIME + 1),
      ),
    ],
    [
      "the window's number alone",
      await signToken(nonceKeys.current, "dpop.nonce", enc.encode(`${window}`)),
    ],
    ["a session token", await app.sessions.issue("alice")],
    ["the access token", token],
    ["empty", ""],
    ["a number", window],
    ["an object", { nonce }],
    ["null", null],
  ];
  for (const [what, value] of cases) {
    const res = await app.handler(
      resourceRequest(
        token,
        await makeProof(key, claims(app, { ...base, nonce: value })),
      ),
    );
    const fresh = await assertUseNonce(res, what);
    assert.equal(fresh, nonce, `${what}: the current nonce is handed out`);
  }
  // The control: the genuine current nonce passes.
  const ok = await app.handler(
    resourceRequest(
      token,
      await makeProof(key, claims(app, { ...base, nonce })),
    ),
  );
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
});

Deno.test("windows: the previous window's nonce passes and its answer carries the next; two windows on it is refused", async () => {
  const app = makeApp();
  const key = await es256Key();
  const { token, nonce } = await boundToken(app, key);
  const base = { ath: await ath(token) };
  const call = async (n: string) =>
    await app.handler(
      resourceRequest(
        token,
        await makeProof(key, claims(app, { ...base, nonce: n })),
      ),
    );
  app.clock.advance(LIFETIME);
  const rolled = await call(nonce);
  assert.equal(rolled.status, 200);
  const next = rolled.headers.get("dpop-nonce");
  assert.ok(next !== null && next !== nonce, "a new nonce on the answer");
  assert.equal((await rolled.json()).subject, "alice");
  // The new one is current: its answers carry no header.
  const current = await call(next);
  assert.equal(current.status, 200);
  assert.equal(current.headers.get("dpop-nonce"), null);
  await current.body?.cancel();
  // One more window: the first nonce is two windows old.
  app.clock.advance(LIFETIME);
  const stale = await call(nonce);
  assert.equal(
    await assertUseNonce(stale, "two windows old"),
    await (async () => {
      // The refusal hands out this window's nonce, which is not `next`.
      const r = await call(next);
      assert.equal(r.status, 200);
      const n = r.headers.get("dpop-nonce");
      assert.ok(n !== null && n !== next);
      return n;
    })(),
  );
});

Deno.test("an answer that cannot be copied goes out as it is, without the next nonce", async () => {
  const app = makeApp();
  const key = await es256Key();
  const { token, nonce } = await boundToken(app, key);
  app.clock.advance(LIFETIME);
  const url = "https://api.example/uncopyable";
  const res = await app.handler(
    new Request(url, {
      headers: {
        authorization: `DPoP ${token}`,
        dpop: await makeProof(
          key,
          claims(app, { htu: url, ath: await ath(token), nonce }),
        ),
      },
    }),
  );
  assert.equal(res.type, "error");
});

Deno.test("what nonces protect against: a proof signed ahead of time with a future iat", async () => {
  // Signed at T with iat T+600, used at T+600: passes without nonces.
  const off = makeApp({});
  const key = await es256Key();
  const signedIn = await off.handler(
    signInRequest(
      await makeProof(key, claims(off, { htm: "POST", htu: TOKEN_URL })),
    ),
  );
  const { access_token: token } = await signedIn.json();
  const early = await makeProof(key, {
    jti: crypto.randomUUID(),
    htm: "GET",
    htu: ME_URL,
    iat: Math.floor(off.clock.now() / 1000) + 600,
    ath: await ath(token),
  });
  off.clock.advance(600);
  const late = await off.handler(resourceRequest(token, early));
  assert.equal(late.status, 200, "the pre-signed proof passes without nonces");
  await late.body?.cancel();
  // With nonces, the proof can only carry a nonce of T: refused at T+600.
  const on = makeApp();
  const { token: bound, nonce } = await boundToken(on, key);
  const proof = await makeProof(key, {
    jti: crypto.randomUUID(),
    htm: "GET",
    htu: ME_URL,
    iat: Math.floor(on.clock.now() / 1000) + 600,
    ath: await ath(bound),
    nonce,
  });
  on.clock.advance(600);
  await assertUseNonce(
    await on.handler(resourceRequest(bound, proof)),
    "pre-signed with an old nonce",
  );
});

Deno.test("a nonce refusal is told to onEvent but is no binding_proof_refused security event; a bad proof still is", async () => {
  const app = makeApp();
  const key = await es256Key();
  const { token } = await boundToken(app, key);
  const noNonce = await app.handler(
    resourceRequest(
      token,
      await makeProof(key, claims(app, { ath: await ath(token) })),
    ),
  );
  await assertUseNonce(noNonce, "no nonce");
  await Promise.resolve();
  assert.deepEqual(app.security.filter((t) => t !== "session_bound"), []);
  assert.equal(
    app.events.filter((e) => e.type === "dpop_proof_refused").length,
    2,
  );
  const forged = await app.handler(
    resourceRequest(
      token,
      await makeProof(key, claims(app, { ath: await ath(token) }), {
        corrupt: true,
      }),
    ),
  );
  assert.equal(forged.status, 401);
  await forged.body?.cancel();
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(app.security.filter((t) => t !== "session_bound"), [
    "binding_proof_refused",
  ]);
});

Deno.test("a replayed proof (same jti) with a valid nonce is still refused as replayed", async () => {
  const app = makeApp();
  const key = await es256Key();
  const { token, nonce } = await boundToken(app, key);
  const proof = await makeProof(
    key,
    claims(app, { ath: await ath(token), nonce }),
  );
  const first = await app.handler(resourceRequest(token, proof));
  assert.equal(first.status, 200);
  await first.body?.cancel();
  const again = await app.handler(resourceRequest(token, proof));
  assert.equal(again.status, 401);
  assert.match(
    again.headers.get("www-authenticate")!,
    /^DPoP error="invalid_dpop_proof"/,
  );
  assert.equal(again.headers.get("dpop-nonce"), null);
  await again.body?.cancel();
  assert.equal(
    (app.events.at(-1) as { reason: string }).reason,
    "replayed",
  );
});

Deno.test("order: a proof with a bad signature or claim gets invalid_dpop_proof, not use_dpop_nonce; a nonce refusal uses up no jti", async () => {
  const app = makeApp();
  const key = await es256Key();
  const { token, nonce } = await boundToken(app, key);
  const base = { ath: await ath(token) };
  const cases: [string, string][] = [
    [
      "bad signature",
      await makeProof(key, claims(app, base), { corrupt: true }),
    ],
    ["wrong htm", await makeProof(key, claims(app, { ...base, htm: "POST" }))],
    ["wrong ath", await makeProof(key, claims(app, { ath: await ath("x") }))],
    [
      "stale iat",
      await makeProof(
        key,
        claims(app, { ...base, iat: Math.floor(app.clock.now() / 1000) - 600 }),
      ),
    ],
  ];
  for (const [what, proof] of cases) {
    const res = await app.handler(resourceRequest(token, proof));
    assert.equal(res.status, 401, what);
    assert.match(
      res.headers.get("www-authenticate")!,
      /^DPoP error="invalid_dpop_proof"/,
      what,
    );
    assert.equal(res.headers.get("dpop-nonce"), null, what);
    await res.body?.cancel();
  }
  // The nonce is checked before the replay store: a proof refused for it
  // records nothing, and the client's retry may keep its jti.
  const jti = crypto.randomUUID();
  const without = await app.handler(
    resourceRequest(token, await makeProof(key, claims(app, { ...base, jti }))),
  );
  await assertUseNonce(without, "no nonce");
  const withNonce = await app.handler(
    resourceRequest(
      token,
      await makeProof(key, claims(app, { ...base, jti, nonce })),
    ),
  );
  assert.equal(withNonce.status, 200);
  await withNonce.body?.cancel();
});

Deno.test("two instances built from the same secret accept each other's nonces; another secret's are refused", async () => {
  const clock = new Clock(Date.now());
  const a = makeApp(undefined, SECRET, clock);
  const b = makeApp(undefined, SECRET, clock);
  const c = makeApp(undefined, OLD_SECRET, clock);
  const key = await es256Key();
  // Sign in on A with A's nonce; the token is bound on every instance.
  const { token, nonce } = await boundToken(a, key);
  const base = { ath: await ath(token) };
  const onB = await b.handler(
    resourceRequest(token, await makeProof(key, claims(b, { ...base, nonce }))),
  );
  assert.equal(onB.status, 200);
  assert.equal((await onB.json()).subject, "alice");
  // B's nonce (from its own refusal) is A's.
  const refusal = await b.handler(
    resourceRequest(token, await makeProof(key, claims(b, base))),
  );
  assert.equal(await assertUseNonce(refusal, "B without nonce"), nonce);
  // An instance of another secret refuses it (and hands out its own).
  const key2 = await es256Key();
  const onC = await c.handler(
    signInRequest(
      await makeProof(key2, claims(c, { htm: "POST", htu: TOKEN_URL, nonce })),
    ),
  );
  const own = await assertUseNonce(onC, "C with A's nonce");
  assert.ok(own !== null && own !== nonce);
});

Deno.test("the installable form derives the nonces from AUTH_SECRET: its nonce passes on a manager-built instance of that secret", async () => {
  const installable = identityMiddleware({
    store: "memory",
    dpop: { nonce: true },
  });
  const env = { AUTH_SECRET: SECRET };
  const key = await es256Key();
  const app = makeApp({ nonce: true });
  const refused = await installable(
    signInRequest(
      await makeProof(key, claims(app, { htm: "POST", htu: TOKEN_URL })),
    ),
    () => Promise.resolve(new Response("handler")),
    env,
  );
  const nonce = await assertUseNonce(refused, "installable");
  assert.ok(nonce !== null);
  const passed = await app.handler(
    signInRequest(
      await makeProof(key, claims(app, { htm: "POST", htu: TOKEN_URL, nonce })),
    ),
  );
  assert.equal(passed.status, 200);
  await passed.body?.cancel();
});

Deno.test("nonces off (the default): no nonce asked, a nonce claim is ignored, no DPoP-Nonce header", async () => {
  const app = makeApp({});
  const key = await es256Key();
  const signedIn = await app.handler(
    signInRequest(
      await makeProof(
        key,
        claims(app, { htm: "POST", htu: TOKEN_URL, nonce: "anything" }),
      ),
    ),
  );
  assert.equal(signedIn.status, 200);
  assert.equal(signedIn.headers.get("dpop-nonce"), null);
  const { access_token: token } = await signedIn.json();
  const res = await app.handler(
    resourceRequest(
      token,
      await makeProof(key, claims(app, { ath: await ath(token) })),
    ),
  );
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("dpop-nonce"), null);
  await res.body?.cancel();
  const verifier = new DpopVerifier();
  assert.equal(verifier.requiresNonce, false);
  assert.equal(await verifier.nonce(), null);
});

Deno.test("fail closed: when the nonce key cannot be had, every proof is refused (401, no identity, no header)", async () => {
  class BrokenSecret extends SecretProvider {
    override keys(purpose: string) {
      return purpose === "dpop.nonce"
        ? Promise.reject(new Error("HKDF failed"))
        : super.keys(purpose);
    }
  }
  const secret = new BrokenSecret(SECRET);
  const good = makeApp();
  const key = await es256Key();
  const { token, nonce } = await boundToken(good, key);
  const app = makeApp({ nonce: { secret } });
  let reached = false;
  const guarded = compose([], (req) => {
    reached = true;
    return app.handler(req);
  });
  for (const n of [undefined, nonce]) {
    const res = await guarded(
      resourceRequest(
        token,
        await makeProof(key, claims(app, { ath: await ath(token), nonce: n })),
      ),
    );
    assert.equal(await assertUseNonce(res, `nonce ${n}`), null);
  }
  assert.ok(reached);
  // The standalone verifier: a refusal, not an exception and not a pass.
  const verifier = new DpopVerifier({ nonce: { secret } });
  const result = await verifier.verify(
    await makeProof(key, {
      jti: crypto.randomUUID(),
      htm: "GET",
      htu: ME_URL,
      iat: Math.floor(Date.now() / 1000),
      nonce,
    }),
    new Request(ME_URL),
    null,
  );
  assert.deepEqual(result, { ok: false, reason: "nonce", nonce: undefined });
});

Deno.test("nothing in the answers, the nonce or the events shows the secret or the key", async () => {
  const logged: string[] = [];
  const original = {
    log: console.log,
    error: console.error,
    warn: console.warn,
  };
  for (const name of ["log", "error", "warn"] as const) {
    console[name] = (...args: unknown[]) =>
      logged.push(args.map(String).join(" "));
  }
  try {
    const app = makeApp();
    const key = await es256Key();
    const { token, nonce } = await boundToken(app, key);
    const res = await app.handler(
      resourceRequest(
        token,
        await makeProof(key, claims(app, { ath: await ath(token) })),
      ),
    );
    const text = [
      nonce,
      ...[...res.headers].map(([k, v]) => `${k}: ${v}`),
      await res.text(),
      JSON.stringify(app.events),
      ...logged,
    ].join("\n");
    const secretBytes = Uint8Array.from(SECRET, (c) => c.charCodeAt(0));
    const needles = [
      SECRET,
      b64u(secretBytes),
      SECRET.slice(0, 16),
      token,
    ];
    for (const needle of needles) {
      assert.ok(!text.includes(needle), `found ${needle.slice(0, 8)}…`);
    }
    // The nonce's parts: a version, the public key id, the window, a MAC.
    const [v, kid, window, tag] = nonce.split(".");
    assert.equal(v, "v1");
    assert.equal(
      kid,
      (await SecretProvider.fromValue(SECRET).keys("dpop.nonce")).current.kid,
    );
    assert.equal(
      new TextDecoder().decode(
        Uint8Array.from(
          atob(window.replace(/-/g, "+").replace(/_/g, "/")),
          (c) => c.charCodeAt(0),
        ),
      ),
      `${LIFETIME}:${Math.floor(app.clock.now() / (LIFETIME * 1000))}`,
    );
    assert.equal(tag.length, 43);
  } finally {
    Object.assign(console, original);
  }
});

Deno.test("red-team review: a nonce of one lifetime is never taken for the same-numbered window of another (3599 s now, 3600 s days later)", async () => {
  const secret = SecretProvider.fromValue(SECRET);
  const t = Date.UTC(2026, 10, 26);
  const issued = await new DpopNonces(secret, 3599, () => t).issue();
  const window = Math.floor(t / 3_599_000);
  // The moment the 3600 s window of the same number begins: days later.
  const later = window * 3_600_000 + 1;
  assert.ok(later - t > 5 * 86_400_000);
  assert.equal(
    await new DpopNonces(secret, 3600, () => later).check(issued),
    null,
  );
  // The control: the 3599 s verifier itself takes it now, not then.
  assert.equal(
    await new DpopNonces(secret, 3599, () => t).check(issued),
    "current",
  );
  assert.equal(
    await new DpopNonces(secret, 3599, () => later).check(issued),
    null,
  );
});

Deno.test("DpopVerifier: nonce options are checked at construction", () => {
  const secret = SecretProvider.fromValue(SECRET);
  assert.throws(() => new DpopVerifier({ nonce: true }), TypeError);
  assert.throws(() => new DpopVerifier({ nonce: {} }), TypeError);
  for (const lifetimeSeconds of [0, -1, 0.5, 60.25, 3601, NaN, Infinity]) {
    assert.throws(
      () => new DpopVerifier({ nonce: { secret, lifetimeSeconds } }),
      RangeError,
      `${lifetimeSeconds}`,
    );
  }
  // Not a boolean nor options: a word from a config file turns nothing on.
  for (const nonce of [null, "false", "off", 0, 1, [] as unknown[]]) {
    assert.throws(
      () =>
        new DpopVerifier({ nonce: nonce as unknown as DpopOptions["nonce"] }),
      /^TypeError: DPoP nonce must be true, false or \{ secret, lifetimeSeconds \}/,
      JSON.stringify(nonce),
    );
    assert.throws(
      () => makeApp({ nonce: nonce as unknown as DpopOptions["nonce"] }),
      TypeError,
      JSON.stringify(nonce),
    );
  }
  assert.equal(
    new DpopVerifier({ nonce: { secret, lifetimeSeconds: 1 } }).requiresNonce,
    true,
  );
  // identityMiddleware's nonces take its sessions' secret.
  assert.doesNotThrow(() => makeApp({ nonce: true }));
});

Deno.test("property: no string but an issued nonce passes, however close to one", async () => {
  const clock = new Clock(Date.now());
  const verifier = new DpopVerifier({
    nonce: { secret: SecretProvider.fromValue(SECRET) },
    now: clock.now,
  });
  const key = await es256Key();
  const nonce = (await verifier.nonce())!;
  const verify = async (n: unknown) =>
    await verifier.verify(
      await makeProof(key, {
        jti: crypto.randomUUID(),
        htm: "GET",
        htu: ME_URL,
        iat: Math.floor(clock.now() / 1000),
        nonce: n,
      }),
      new Request(ME_URL),
      null,
    );
  assert.equal((await verify(nonce)).ok, true);
  const alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.string(),
        fc.tuple(
          fc.nat({ max: nonce.length - 1 }),
          fc.constantFrom(...alphabet),
        ).map(([i, ch]) => nonce.slice(0, i) + ch + nonce.slice(i + 1)),
        fc.nat({ max: nonce.length - 1 }).map((i) => nonce.slice(0, i)),
      ),
      async (candidate) => {
        const result = await verify(candidate);
        if (candidate === nonce) return;
        assert.deepEqual(result, { ok: false, reason: "nonce", nonce });
      },
    ),
    { numRuns: 300 },
  );
});

// ---- a real client ----

Deno.test("oauth4webapi: the client retries on use_dpop_nonce, keeps the nonce, and rolls to the next one", async () => {
  // Real time (the client signs its own iat): windows of two seconds, and
  // each request made just after a window begins, so that a slow machine
  // still has more than two seconds for each step.
  const { handler } = makeApp({
    nonce: { lifetimeSeconds: 2 },
    now: Date.now,
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => handler(req),
  );
  const origin = `http://127.0.0.1:${server.addr.port}`;
  const nextWindow = () =>
    new Promise((r) => setTimeout(r, 2000 - (Date.now() % 2000) + 50));
  try {
    const client: oauth.Client = { client_id: "native-app" };
    const as: oauth.AuthorizationServer = {
      issuer: origin,
      token_endpoint: `${origin}/token`,
    };
    const handle = oauth.DPoP(client, await oauth.generateKeyPair("ES256"));
    const options = { DPoP: handle, [oauth.allowInsecureRequests]: true };
    const grant = async () =>
      await oauth.processClientCredentialsResponse(
        as,
        client,
        await oauth.clientCredentialsGrantRequest(
          as,
          client,
          oauth.None(),
          {},
          options,
        ),
      );
    await nextWindow();
    let retried = 0;
    let body;
    try {
      body = await grant();
    } catch (err) {
      assert.ok(oauth.isDPoPNonceError(err), String(err));
      retried++;
      body = await grant();
    }
    assert.equal(retried, 1);
    const get = async () =>
      await oauth.protectedResourceRequest(
        body.access_token,
        "GET",
        new URL(`${origin}/me`),
        new Headers(),
        null,
        options,
      );
    const first = await get();
    assert.equal(first.status, 200);
    assert.equal((await first.json()).binding, "dpop");
    // Each window on, the answer hands the next nonce, which the client
    // keeps: no refusal while it keeps asking.
    for (let i = 0; i < 2; i++) {
      await nextWindow();
      const res = await get();
      assert.equal(res.status, 200);
      assert.ok(res.headers.get("dpop-nonce") !== null, `window ${i}`);
      await res.body?.cancel();
    }
  } finally {
    await server.shutdown();
  }
});
