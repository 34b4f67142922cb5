// The cost of key-bound sessions, per request through identityMiddleware
// (in-memory store, one handler that reads the identity):
//
//   deno bench -A --import-map=bench/import_map.json --lock=bench/deno.lock bench/bound_sessions_bench.ts
//
// - "cookie": a device-bound cookie (DBSC) against an unbound one, both
//   warm (seen before), both with `deviceBound` on. Goal: within 1.05×.
// - "bearer": a DPoP request (a fresh proof each time: the ES256 verify,
//   the RFC 7638 thumbprint, `ath`, the proof-jti record), without and with
//   server nonces, against a plain Bearer request, with one raw ES256 verify
//   beside it as the floor.
// - "refresh": one DBSC refresh (challenge checked, stored key read, ES256
//   verify, denylist, fresh cookie). Proofs are made before the timing
//   starts: their signing is the client's cost.
import {
  compose,
  currentUser,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  SecretProvider,
  SessionManager,
  signIn,
} from "../mod.ts";

const SECRET = "ITZ7i8KGtM5W0AmMoNBXRJsiYZxFlnf8eQM7tGGAQG4=";
const ORIGIN = "https://app.example";
const N = 3000; // iterations of the benches that use up a proof each
const enc = new TextEncoder();
const b64u = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
const b64json = (v: unknown) => b64u(enc.encode(JSON.stringify(v)));

const kv = new MemoryKV();
const sessions = new SessionManager({
  secret: SecretProvider.fromValue(SECRET),
  store: new KVSessionStore(kv),
});
const handler = compose(
  [identityMiddleware(sessions, {
    deviceBound: { store: kv },
    dpop: { store: kv },
    onEvent: () => {},
  })],
  async (req) => {
    if (new URL(req.url).pathname === "/login") {
      const s = await signIn(req, "alice");
      return Response.json({ token: s.token }, {
        headers: s.setCookie ? { "set-cookie": s.setCookie } : {},
      });
    }
    return new Response(currentUser(req) ?? "anonymous");
  },
);

const pair = await crypto.subtle.generateKey(
  { name: "ECDSA", namedCurve: "P-256" },
  true,
  ["sign", "verify"],
);
const pub = await crypto.subtle.exportKey("jwk", pair.publicKey);
const jwk = { kty: "EC", crv: "P-256", x: pub.x, y: pub.y };
async function jws(header: unknown, payload: unknown): Promise<string> {
  const input = `${b64json(header)}.${b64json(payload)}`;
  const sig = new Uint8Array(
    await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      pair.privateKey,
      enc.encode(input),
    ),
  );
  return `${input}.${b64u(sig)}`;
}
const cookieOf = (res: Response, name: string) =>
  res.headers.getSetCookie().map((c) => c.split(";")[0])
    .find((p) => p.startsWith(`${name}=`))!.slice(name.length + 1);

// --- cookies: sign in twice; bind the second session.
const login = () => handler(new Request(`${ORIGIN}/login`, { method: "POST" }));
const plainRes = await login();
const unbound = cookieOf(plainRes, "__Host-session");
const toBind = await login();
const challenge = /challenge="([^"]+)"/.exec(
  toBind.headers.get("secure-session-registration")!,
)![1];
const registered = await handler(
  new Request(`${ORIGIN}/auth/dbsc/start`, {
    method: "POST",
    headers: {
      cookie: `__Host-session=${cookieOf(toBind, "__Host-session")}`,
      "secure-session-response": await jws(
        { alg: "ES256", jwk, typ: "dbsc+jwt" },
        { jti: challenge },
      ),
    },
  }),
);
const sessionId = (await registered.json()).session_identifier as string;
const bound = cookieOf(registered, "__Host-session-bound");
const unboundReq = () =>
  new Request(`${ORIGIN}/me`, {
    headers: { cookie: `__Host-session=${unbound}` },
  });
const boundReq = () =>
  new Request(`${ORIGIN}/me`, {
    headers: { cookie: `__Host-session-bound=${bound}` },
  });
for (const make of [unboundReq, boundReq]) {
  const text = await (await handler(make())).text();
  if (text !== "alice") throw new Error(`bench setup: ${text}`);
}

// --- DPoP: a bound token, and N fresh proofs for it.
const now = () => Math.floor(Date.now() / 1000);
const dpopLogin = await handler(
  new Request(`${ORIGIN}/login`, {
    method: "POST",
    headers: {
      dpop: await jws({ typ: "dpop+jwt", alg: "ES256", jwk }, {
        jti: crypto.randomUUID(),
        htm: "POST",
        htu: `${ORIGIN}/login`,
        iat: now(),
      }),
    },
  }),
);
const dpopToken = (await dpopLogin.json()).token as string;
const ath = b64u(
  new Uint8Array(
    await crypto.subtle.digest("SHA-256", enc.encode(dpopToken)),
  ),
);
const plainToken = await sessions.issue("bob");
/**
 * Requests to `/me` with the bound token, each with a proof of its own
 * (signed here, before any timing: the signing is the client's cost).
 */
async function dpopRequests(
  count: number,
  extra: Record<string, unknown> = {},
): Promise<() => Request> {
  const proofs: string[] = [];
  for (let i = 0; i < count; i++) {
    proofs.push(
      await jws({ typ: "dpop+jwt", alg: "ES256", jwk }, {
        jti: crypto.randomUUID(),
        htm: "GET",
        htu: `${ORIGIN}/me`,
        iat: now(),
        ath,
        ...extra,
      }),
    );
  }
  let next = 0;
  return () =>
    new Request(`${ORIGIN}/me`, {
      headers: { authorization: `DPoP ${dpopToken}`, dpop: proofs[next++] },
    });
}
const dpopReq = await dpopRequests(N + 600);
const bearerReq = () =>
  new Request(`${ORIGIN}/me`, {
    headers: { authorization: `Bearer ${plainToken}` },
  });
if (await (await handler(dpopReq())).text() !== "alice") {
  throw new Error("bench setup: DPoP");
}
// The same requests with server nonces on (a window of an hour, so that the
// nonce fetched here holds for the whole run): the nonce's HMAC check is
// what they add.
const nonceHandler = compose(
  [identityMiddleware(sessions, {
    dpop: { store: kv, nonce: { lifetimeSeconds: 3600 } },
    onEvent: () => {},
  })],
  (req) => new Response(currentUser(req) ?? "anonymous"),
);
const asked = await nonceHandler((await dpopRequests(1))());
const nonce = asked.headers.get("dpop-nonce");
if (asked.status !== 401 || nonce === null) {
  throw new Error(`bench setup: the nonce answer was ${asked.status}`);
}
const nonceReq = await dpopRequests(N + 600, { nonce });
if (await (await nonceHandler(nonceReq())).text() !== "alice") {
  throw new Error("bench setup: DPoP with a nonce");
}

// The floor: one raw ES256 verify of a proof's size.
const floorKey = await crypto.subtle.importKey(
  "jwk",
  jwk,
  { name: "ECDSA", namedCurve: "P-256" },
  false,
  ["verify"],
);
const [fh, fp, fs] = (await dpopRequests(1))().headers.get("dpop")!.split(
  ".",
);
const floorInput = enc.encode(`${fh}.${fp}`);
const floorSig = Uint8Array.from(
  atob(fs.replace(/-/g, "+").replace(/_/g, "/")),
  (c) => c.charCodeAt(0),
);

// --- refresh: N challenges answered ahead of time.
const refreshProofs: string[] = [];
for (let i = 0; i < N + 600; i++) {
  const res = await handler(
    new Request(`${ORIGIN}/auth/dbsc/refresh`, {
      method: "POST",
      headers: { "sec-secure-session-id": sessionId },
    }),
  );
  const c = /^"([^"]+)"/.exec(res.headers.get("secure-session-challenge")!)![1];
  refreshProofs.push(await jws({ alg: "ES256", typ: "dbsc+jwt" }, { jti: c }));
}
let nextRefresh = 0;

Deno.bench({
  name: "unbound cookie request",
  group: "cookie",
  baseline: true,
  async fn() {
    await (await handler(unboundReq())).text();
  },
});
Deno.bench({
  name: "device-bound cookie request",
  group: "cookie",
  async fn() {
    await (await handler(boundReq())).text();
  },
});
Deno.bench({
  name: "plain Bearer request",
  group: "bearer",
  baseline: true,
  async fn() {
    await (await handler(bearerReq())).text();
  },
});
Deno.bench({
  name: "DPoP request (fresh proof)",
  group: "bearer",
  n: N,
  warmup: 100,
  async fn() {
    const res = await handler(dpopReq());
    if (res.status !== 200) throw new Error(`DPoP answered ${res.status}`);
    await res.text();
  },
});
Deno.bench({
  name: "DPoP request with server nonces (fresh proof, nonce checked)",
  group: "bearer",
  n: N,
  warmup: 100,
  async fn() {
    const res = await nonceHandler(nonceReq());
    if (res.status !== 200) throw new Error(`DPoP answered ${res.status}`);
    await res.text();
  },
});
Deno.bench({
  name: "one raw ES256 verify (the floor)",
  group: "bearer",
  async fn() {
    await crypto.subtle.verify(
      { name: "ECDSA", hash: "SHA-256" },
      floorKey,
      floorSig,
      floorInput,
    );
  },
});
Deno.bench({
  name: "DBSC refresh (proof, key read, denylist, fresh cookie)",
  group: "refresh",
  n: N,
  warmup: 100,
  async fn() {
    const res = await handler(
      new Request(`${ORIGIN}/auth/dbsc/refresh`, {
        method: "POST",
        headers: {
          "sec-secure-session-id": sessionId,
          "secure-session-response": refreshProofs[nextRefresh++],
        },
      }),
    );
    // A refresh refused for good is a 200 too (`{"continue": false}`), but
    // without a cookie.
    if (res.status !== 200 || res.headers.getSetCookie().length === 0) {
      throw new Error(`refresh answered ${res.status} ${await res.text()}`);
    }
    await res.text();
  },
});
