// DPoP-bound Bearer tokens (RFC 9449): a real client nobody here wrote
// (oauth4webapi) against a Deno.serve server built with the library, and
// hand-made bad proofs.
import assert from "node:assert/strict";
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
import type { KeyValueStore } from "../../mod.ts";
import type { DpopOptions } from "../../lib/session/mod.ts";
import { SECRET } from "./_helpers.ts";
import { ath, b64json, b64u, es256Key, makeProof } from "./_dpop_proofs.ts";

const enc = new TextEncoder();

function makeServer(kv: KeyValueStore, dpop: DpopOptions = {}) {
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
  });
  const handler = compose(
    [identityMiddleware(sessions, { dpop: { store: kv, ...dpop } })],
    async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/token" && req.method === "POST") {
        const form = await req.formData();
        const s = await signIn(req, String(form.get("username")));
        const bound = currentIdentity(req)?.binding === "dpop";
        return Response.json({
          access_token: s.token,
          token_type: bound ? "DPoP" : "Bearer",
          expires_in: 3600,
        }, { headers: { "cache-control": "no-store" } });
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
  return { sessions, handler };
}

function serve(kv: KeyValueStore, dpop: DpopOptions = {}) {
  const { handler, sessions } = makeServer(kv, dpop);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => handler(req),
  );
  const origin = `http://127.0.0.1:${server.addr.port}`;
  return { server, origin, sessions, handler };
}

const client: oauth.Client = { client_id: "native-app" };

async function signInWith(origin: string, handle: oauth.DPoPHandle) {
  const as: oauth.AuthorizationServer = {
    issuer: origin,
    token_endpoint: `${origin}/token`,
  };
  const res = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    oauth.None(),
    { username: "alice" },
    { DPoP: handle, [oauth.allowInsecureRequests]: true },
  );
  const body = await oauth.processClientCredentialsResponse(as, client, res);
  return body;
}

Deno.test("oauth4webapi: a DPoP sign-in gets a bound token that works with its key only", async () => {
  const kv = new MemoryKV();
  const { server, origin } = serve(kv);
  try {
    const keyPair = await oauth.generateKeyPair("ES256");
    const handle = oauth.DPoP(client, keyPair);
    const body = await signInWith(origin, handle);
    assert.equal(body.token_type, "dpop");
    const token = body.access_token;
    // The real client's resource requests: DPoP scheme, a fresh proof each.
    for (let i = 0; i < 3; i++) {
      const res = await oauth.protectedResourceRequest(
        token,
        "GET",
        new URL(`${origin}/me?x=${i}`),
        new Headers(),
        null,
        { DPoP: handle, [oauth.allowInsecureRequests]: true },
      );
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { subject: "alice", binding: "dpop" });
    }
    // Another key pair's proofs with the same token: refused.
    const thief = oauth.DPoP(client, await oauth.generateKeyPair("ES256"));
    await assert.rejects(
      oauth.protectedResourceRequest(
        token,
        "GET",
        new URL(`${origin}/me`),
        new Headers(),
        null,
        { DPoP: thief, [oauth.allowInsecureRequests]: true },
      ),
      (
        err: Error & {
          cause?: { scheme: string; parameters: Record<string, string> }[];
        },
      ) => {
        assert.equal(err.cause?.[0]?.scheme, "dpop");
        assert.equal(err.cause?.[0]?.parameters.error, "invalid_token");
        return true;
      },
    );
    // The bound token as plain Bearer: refused.
    const bearer = await fetch(`${origin}/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(bearer.status, 401);
    await bearer.body?.cancel();
    // Issue 27 docs item 2: two challenges in one header (RFC 9449 §7.2),
    // as a DPoP client library reads them.
    await assert.rejects(
      oauth.protectedResourceRequest(
        token,
        "GET",
        new URL(`${origin}/me`),
        new Headers(),
        null,
        { [oauth.allowInsecureRequests]: true },
      ),
      (
        err: Error & {
          cause?: { scheme: string; parameters: Record<string, string> }[];
        },
      ) => {
        assert.deepEqual(
          err.cause?.map((c) => [c.scheme, c.parameters.error]),
          [["bearer", "invalid_token"], ["dpop", undefined]],
        );
        return true;
      },
    );
    // Without a proof under the DPoP scheme: refused.
    const bare = await fetch(`${origin}/me`, {
      headers: { authorization: `DPoP ${token}` },
    });
    assert.equal(bare.status, 401);
    assert.match(
      bare.headers.get("www-authenticate")!,
      /^DPoP error="invalid_dpop_proof"/,
    );
    await bare.body?.cancel();
  } finally {
    await server.shutdown();
  }
});

for (const alg of ["RS256", "EdDSA"]) {
  Deno.test(`oauth4webapi: ${alg} proofs bind and verify too`, async () => {
    const { server, origin } = serve(new MemoryKV());
    try {
      const handle = oauth.DPoP(client, await oauth.generateKeyPair(alg));
      const body = await signInWith(origin, handle);
      const res = await oauth.protectedResourceRequest(
        body.access_token,
        "POST",
        new URL(`${origin}/me`),
        new Headers(),
        null,
        { DPoP: handle, [oauth.allowInsecureRequests]: true },
      );
      assert.equal(res.status, 200);
      assert.equal((await res.json()).binding, "dpop");
    } finally {
      await server.shutdown();
    }
  });
}

{
  // The Ed25519 points of small order: y = 0, 1, -1 and ±Y8, each with
  // either sign bit, and y = p, p + 1 (non-canonical 0 and 1).
  const p = 2n ** 255n - 19n;
  const y8 =
    2707385501144840649318225287225658788936804267575313519463743609750303402022n;
  const mod = (a: bigint) => ((a % p) + p) % p;
  const pow = (b: bigint, e: bigint) => {
    let r = 1n;
    for (b = mod(b); e > 0n; e >>= 1n, b = b * b % p) if (e & 1n) r = r * b % p;
    return r;
  };
  const encode = (y: bigint, sign: number) => {
    const bytes = new Uint8Array(32);
    for (let i = 0; i < 32; i++, y >>= 8n) bytes[i] = Number(y & 0xffn);
    bytes[31] |= sign << 7;
    return b64u(bytes);
  };
  Deno.test("Ed25519 keys of small order, or encoded past p, cannot sign in: no private key stands behind them", async () => {
    // Y8 is a root of d·y⁴ + 2y² - 1 (the order-8 points), as the library
    // assumes.
    const d = mod(-121665n * pow(121666n, p - 2n));
    const y2 = y8 * y8 % p;
    assert.equal(mod(d * y2 % p * y2 + 2n * y2 - 1n), 0n);
    const weak = [0n, 1n, p - 1n, y8, p - y8].flatMap((y) =>
      [0, 1].map((sign) => encode(y, sign))
    ).concat([encode(p, 0), encode(p + 1n, 0)]);
    const app = makeServer(new MemoryKV());
    const url = "https://api.example/token";
    const claims = () => ({
      jti: crypto.randomUUID(),
      htm: "POST",
      htu: url,
      iat: Math.floor(Date.now() / 1000),
    });
    // The forgery for the identity point needs no key: R = identity, S = 0.
    const forged = new Uint8Array(64);
    forged[0] = 1;
    for (const x of weak) {
      const jwk = { kty: "OKP", crv: "Ed25519", x };
      const header = { typ: "dpop+jwt", alg: "EdDSA", jwk };
      const proof = `${b64json(header)}.${b64json(claims())}.${b64u(forged)}`;
      const res = await app.handler(
        new Request(url, {
          method: "POST",
          headers: { dpop: proof },
          body: new URLSearchParams({ username: "mallory" }),
        }),
      );
      assert.equal(res.status, 401, x);
      assert.match(
        res.headers.get("www-authenticate") ?? "",
        /^DPoP error="invalid_dpop_proof"/,
      );
      await res.body?.cancel();
    }
  });
}

Deno.test("unbound tokens keep working as Bearer beside DPoP", async () => {
  const { handler, sessions } = makeServer(new MemoryKV());
  const token = await sessions.issue("bob");
  const res = await handler(
    new Request("https://api.example/me", {
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { subject: "bob", binding: null });
});

// ---- hand-made proofs ----

async function boundSetup() {
  const kv = new MemoryKV();
  const app = makeServer(kv);
  const key = await es256Key();
  const url = "https://api.example/token";
  const now = Math.floor(Date.now() / 1000);
  const proof = await makeProof(key, {
    jti: crypto.randomUUID(),
    htm: "POST",
    htu: url,
    iat: now,
  });
  const res = await app.handler(
    new Request(url, {
      method: "POST",
      headers: { dpop: proof },
      body: new URLSearchParams({ username: "alice" }),
    }),
  );
  assert.equal(res.status, 200);
  const token = (await res.json()).access_token as string;
  const call = (
    proofValue: string | null,
    init: RequestInit = {},
    u = "https://api.example/me",
  ) => {
    const headers = new Headers(init.headers);
    if (!headers.has("authorization")) {
      headers.set("authorization", `DPoP ${token}`);
    }
    if (proofValue !== null) headers.set("dpop", proofValue);
    return app.handler(new Request(u, { ...init, headers }));
  };
  const good = async (over: Record<string, unknown> = {}) => ({
    jti: crypto.randomUUID(),
    htm: "GET",
    htu: "https://api.example/me",
    iat: Math.floor(Date.now() / 1000),
    ath: await ath(token),
    ...over,
  });
  return { app, key, token, call, good, kv };
}

async function assertRefused(res: Response, what: string) {
  assert.equal(res.status, 401, what);
  assert.match(
    res.headers.get("www-authenticate") ?? "",
    /^DPoP error="invalid_(dpop_proof|token)"/,
    what,
  );
  await res.body?.cancel();
}

Deno.test("a good hand-made proof passes (the baseline of the bad ones)", async () => {
  const { key, call, good } = await boundSetup();
  const res = await call(await makeProof(key, await good()));
  assert.equal(res.status, 200);
  assert.equal((await res.json()).binding, "dpop");
});

Deno.test("bad proofs: wrong htu/htm, stale/future iat, wrong ath, replay → 401 invalid_dpop_proof", async () => {
  const { key, call, good } = await boundSetup();
  const cases: [string, Record<string, unknown>][] = [
    ["htu of another path", { htu: "https://api.example/other" }],
    ["htu of another origin", { htu: "https://evil.example/me" }],
    ["htu http instead of https", { htu: "http://api.example/me" }],
    ["htu with a user name", { htu: "https://u:p@api.example/me" }],
    ["htm POST on a GET", { htm: "POST" }],
    ["htm lower case", { htm: "get" }],
    ["stale iat", { iat: Math.floor(Date.now() / 1000) - 120 }],
    ["future iat", { iat: Math.floor(Date.now() / 1000) + 60 }],
    ["iat as a string", { iat: String(Math.floor(Date.now() / 1000)) }],
    ["wrong ath", { ath: await ath("another token") }],
    ["missing ath", { ath: undefined }],
    ["missing jti", { jti: undefined }],
    ["empty jti", { jti: "" }],
  ];
  for (const [what, over] of cases) {
    const res = await call(await makeProof(key, await good(over)));
    await assertRefused(res, what);
  }
  // The query and fragment are not part of htu; the proof's may differ.
  const withQuery = await call(
    await makeProof(key, await good({ htu: "https://api.example/me?a=1#f" })),
    {},
    "https://api.example/me?b=2",
  );
  assert.equal(withQuery.status, 200);
  await withQuery.body?.cancel();
  // Replay of one proof.
  const proof = await makeProof(key, await good());
  assert.equal((await call(proof)).status, 200);
  await assertRefused(await call(proof), "replayed jti");
});

Deno.test("bad proofs: alg none, HS256, private key in jwk, swapped key, typ, malformed header", async () => {
  const { key, call, good } = await boundSetup();
  const claims = await good();
  const other = await es256Key();
  const hmacKey = await crypto.subtle.importKey(
    "raw",
    enc.encode("k".repeat(32)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const cases: [string, string][] = [
    [
      "alg none",
      `${b64json({ typ: "dpop+jwt", alg: "none", jwk: key.jwk })}.${
        b64json(claims)
      }.`,
    ],
    [
      "alg none with a signature part",
      await makeProof(key, await good(), {
        header: { typ: "dpop+jwt", alg: "none", jwk: key.jwk },
      }),
    ],
    [
      "HS256",
      await makeProof(key, await good(), {
        header: {
          typ: "dpop+jwt",
          alg: "HS256",
          jwk: { kty: "oct", k: b64u(enc.encode("k".repeat(32))) },
        },
        sign: async (i: Uint8Array<ArrayBuffer>) =>
          new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, i)),
      }),
    ],
    [
      "private key in jwk",
      await makeProof(key, await good(), {
        header: { typ: "dpop+jwt", alg: "ES256", jwk: key.priv },
      }),
    ],
    [
      "swapped key (header names another key than the signer)",
      await makeProof(key, await good(), {
        header: { typ: "dpop+jwt", alg: "ES256", jwk: other.jwk },
      }),
    ],
    [
      "another key's valid proof for this token",
      await makeProof(other, await good()),
    ],
    [
      "typ JWT",
      await makeProof(key, await good(), {
        header: { typ: "JWT", alg: "ES256", jwk: key.jwk },
      }),
    ],
    [
      "RS256 named with an EC key",
      await makeProof(key, await good(), {
        header: { typ: "dpop+jwt", alg: "RS256", jwk: key.jwk },
      }),
    ],
    ["two proofs in one header", `${await makeProof(key, await good())}, x`],
    ["garbage", "not a jwt"],
    ["empty", ""],
  ];
  for (const [what, proof] of cases) {
    await assertRefused(await call(proof), what);
  }
  // A DER-encoded ES256 signature (not r‖s) never verifies.
  const der = await makeProof(key, await good(), {
    sign: async (i: Uint8Array<ArrayBuffer>) => {
      const raw = new Uint8Array(
        await crypto.subtle.sign(
          { name: "ECDSA", hash: "SHA-256" },
          key.pair.privateKey,
          i,
        ),
      );
      return new Uint8Array([
        0x30,
        0x44,
        0x02,
        0x20,
        ...raw.slice(0, 32),
        0x02,
        0x20,
        ...raw.slice(32),
      ]);
    },
  });
  await assertRefused(await call(der), "DER signature");
});

Deno.test("a bound token as Bearer, and an unbound token under DPoP, are refused", async () => {
  const { app, key, token, call, good } = await boundSetup();
  // Bound token as Bearer, no proof at all.
  const asBearer = await app.handler(
    new Request("https://api.example/me", {
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  assert.equal(asBearer.status, 401);
  await asBearer.body?.cancel();
  // Bound token as Bearer with a valid proof of its key.
  const asBearerWithProof = await call(await makeProof(key, await good()), {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(asBearerWithProof.status, 401);
  await asBearerWithProof.body?.cancel();
  // An unbound token under the DPoP scheme with a valid proof.
  const unbound = await app.sessions.issue("carol");
  const res = await call(
    await makeProof(key, await good({ ath: await ath(unbound) })),
    { headers: { authorization: `DPoP ${unbound}` } },
  );
  await assertRefused(res, "unbound token under DPoP");
  // A malformed DPoP Authorization header.
  const malformed = await call(await makeProof(key, await good()), {
    headers: { authorization: `DPoP ${token} extra` },
  });
  await assertRefused(malformed, "malformed scheme");
});

Deno.test("a session started under the DPoP scheme is bound to the same key", async () => {
  const { app, key, token, call } = await boundSetup();
  // A sign-in again with the bound token and a proof of its key (what
  // "sign out everywhere else" or a password change does): the new token
  // must keep the binding, not come back as a plain Bearer token.
  const url = "https://api.example/token";
  const res = await call(
    await makeProof(key, {
      jti: crypto.randomUUID(),
      htm: "POST",
      htu: url,
      iat: Math.floor(Date.now() / 1000),
      ath: await ath(token),
    }),
    { method: "POST", body: new URLSearchParams({ username: "alice" }) },
    url,
  );
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.token_type, "DPoP");
  const next = body.access_token as string;
  assert.notEqual(next, token);
  const asBearer = await app.handler(
    new Request("https://api.example/me", {
      headers: { authorization: `Bearer ${next}` },
    }),
  );
  assert.equal(asBearer.status, 401);
  await asBearer.body?.cancel();
  const proof = await makeProof(key, {
    jti: crypto.randomUUID(),
    htm: "GET",
    htu: "https://api.example/me",
    iat: Math.floor(Date.now() / 1000),
    ath: await ath(next),
  });
  const me = await app.handler(
    new Request("https://api.example/me", {
      headers: { authorization: `DPoP ${next}`, dpop: proof },
    }),
  );
  assert.equal(me.status, 200);
  assert.deepEqual(await me.json(), { subject: "alice", binding: "dpop" });
});

Deno.test("beside a live session cookie a valid proof binds nothing: the session started again is a cookie session", async () => {
  const app = makeServer(new MemoryKV());
  const key = await es256Key();
  const url = "https://api.example/token";
  const signInWith = async (cookie: string) =>
    await app.handler(
      new Request(url, {
        method: "POST",
        headers: {
          cookie,
          "sec-fetch-site": "same-origin",
          origin: "https://api.example",
          dpop: await makeProof(key, {
            jti: crypto.randomUUID(),
            htm: "POST",
            htu: url,
            iat: Math.floor(Date.now() / 1000),
          }),
        },
        body: new URLSearchParams({ username: "alice" }),
      }),
    );
  const live = `__Host-session=${await app.sessions.issue("alice")}`;
  const again = await signInWith(live);
  assert.equal(again.status, 200);
  assert.equal((await again.json()).token_type, "Bearer");
  // A cookie that no longer holds is no session: the proof binds.
  const dead = await signInWith("__Host-session=not-a-token");
  assert.equal(dead.status, 200);
  assert.equal((await dead.json()).token_type, "DPoP");
});

Deno.test("proof jti replay is refused across instances sharing the store", async () => {
  const kv = new MemoryKV();
  const one = makeServer(kv);
  const two = makeServer(kv);
  const key = await es256Key();
  const url = "https://api.example/token";
  const proof = await makeProof(key, {
    jti: "shared-jti",
    htm: "POST",
    htu: url,
    iat: Math.floor(Date.now() / 1000),
  });
  const post = () => ({
    method: "POST",
    headers: { dpop: proof },
    body: new URLSearchParams({ username: "alice" }),
  });
  const first = await one.handler(new Request(url, post()));
  assert.equal(first.status, 200);
  await first.body?.cancel();
  const again = await two.handler(new Request(url, post()));
  await assertRefused(again, "replayed on another instance");
});

Deno.test("a store that fails during the replay check answers 503, never passes", async () => {
  const kv = new MemoryKV();
  const broken: KeyValueStore = {
    getMany: (k) => kv.getMany(k),
    put: (k, v, o) => kv.put(k, v, o),
    delete: (k) => kv.delete(k),
    increment: () => Promise.reject(new Error("down")),
  };
  const { handler } = makeServer(new MemoryKV(), { store: broken });
  const key = await es256Key();
  const url = "https://api.example/token";
  const proof = await makeProof(key, {
    jti: "j",
    htm: "POST",
    htu: url,
    iat: Math.floor(Date.now() / 1000),
  });
  const res = await handler(
    new Request(url, {
      method: "POST",
      headers: { dpop: proof },
      body: new URLSearchParams({ username: "alice" }),
    }),
  );
  // No token is minted for a proof whose replay could not be checked.
  assert.equal(res.status, 503);
  await res.body?.cancel();
});

Deno.test("behind a proxy, htu is compared with the app's public origin, not the internal URL", async () => {
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(new MemoryKV()),
  });
  const handler = compose(
    [identityMiddleware(sessions, {
      dpop: true,
      crossOrigin: { appOrigin: "https://api.example" },
    })],
    (req) => new Response(currentIdentity(req)?.binding ?? "none"),
  );
  const key = await es256Key();
  const internal = "http://127.0.0.1:8080/token";
  const send = async (htu: string) =>
    await handler(
      new Request(internal, {
        method: "POST",
        headers: {
          dpop: await makeProof(key, {
            jti: crypto.randomUUID(),
            htm: "POST",
            htu,
            iat: Math.floor(Date.now() / 1000),
          }),
        },
      }),
    );
  const pub = await send("https://api.example/token");
  assert.equal(pub.status, 200);
  await pub.body?.cancel();
  await assertRefused(await send(internal), "internal URL as htu");
});
