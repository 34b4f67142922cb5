// Session resolution, cold and warm, next to one raw WebCrypto HMAC-SHA256
// verify (the baseline), jose's HS256 jwtVerify and Hono's signed cookie.
//
//   deno bench -A bench/resolve_bench.ts
//
// "Cold" resolves tokens this manager has never seen (a fresh token each
// call, verified-token cache off); "warm" resolves a token seen before. Both
// use the in-memory store, so the denylist is checked on every call. The two
// "identityMiddleware" rows run the whole per-request path (compose, the
// middleware, requireAuthenticated) over the same Request objects, answering
// one shared Response: the path's own cost, without a server's.
import { jwtVerify, SignJWT } from "jose";
import { parseSigned } from "hono/utils/cookie";
import { serializeSigned } from "hono/utils/cookie";
import {
  BearerTransport,
  compose,
  CookieTransport,
  currentUser,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
} from "../mod.ts";

const SECRET = "ITZ7i8KGtM5W0AmMoNBXRJsiYZxFlnf8eQM7tGGAQG4=";
const N = 20_000;

const secret = SecretProvider.fromValue(SECRET);
const store = new KVSessionStore(new MemoryKV());
const cold = new SessionManager({ secret, store, cacheSize: 0 });
const warm = new SessionManager({ secret, store });
const cookies = new CookieTransport();
const bearer = new BearerTransport();

const tokens: string[] = [];
for (let i = 0; i < N; i++) tokens.push(await cold.issue(`user_${i}`));
const cookieRequests = tokens.map((t) =>
  new Request("https://example.com/api/me", {
    headers: { cookie: `__Host-session=${t}` },
  })
);
const bearerRequests = tokens.map((t) =>
  new Request("https://example.com/api/me", {
    headers: { authorization: `Bearer ${t}` },
  })
);
const warmToken = tokens[0];
const warmCookie = cookieRequests[0];
const warmBearer = bearerRequests[0];
await warm.resolve(warmToken);

// Baseline: one raw WebCrypto verify over a message of a session payload's size.
const rawKey = await crypto.subtle.importKey(
  "raw",
  new TextEncoder().encode(SECRET),
  { name: "HMAC", hash: "SHA-256" },
  false,
  ["sign", "verify"],
);
const message = new TextEncoder().encode(
  tokens[0].slice(0, tokens[0].lastIndexOf(".")),
);
const tag = new Uint8Array(await crypto.subtle.sign("HMAC", rawKey, message));

// jose: HS256 with a pre-imported key, and as usually called (raw bytes).
const joseKeyBytes = new TextEncoder().encode(SECRET);
const jwts: string[] = [];
for (let i = 0; i < 2000; i++) {
  jwts.push(
    await new SignJWT({ sub: `user_${i}` }).setProtectedHeader({ alg: "HS256" })
      .setIssuedAt()
      .setExpirationTime("7d").setJti(crypto.randomUUID()).sign(joseKeyBytes),
  );
}

// Hono: a signed cookie of the same token, checked by parseSigned.
const honoCookies: string[] = [];
for (let i = 0; i < 2000; i++) {
  honoCookies.push(await serializeSigned("session", `user_${i}`, SECRET));
}

let i = 0;
const next = () => (i = (i + 1) % N);
let j = 0;
const nextSmall = () => (j = (j + 1) % 2000);

Deno.bench({
  name: "raw WebCrypto HMAC-SHA256 verify",
  group: "resolve",
  baseline: true,
}, async () => {
  if (!(await crypto.subtle.verify("HMAC", rawKey, tag, message))) {
    throw new Error("bad");
  }
});

Deno.bench({ name: "portcullis cookie, cold", group: "resolve" }, async () => {
  const req = cookieRequests[next()];
  if ((await cold.resolve(cookies.read(req)!)) === null) throw new Error("bad");
});

Deno.bench({ name: "portcullis Bearer, cold", group: "resolve" }, async () => {
  const req = bearerRequests[next()];
  if ((await cold.resolve(bearer.read(req).token!)) === null) {
    throw new Error("bad");
  }
});

Deno.bench({ name: "portcullis cookie, warm", group: "resolve" }, async () => {
  if ((await warm.resolve(cookies.read(warmCookie)!)) === null) {
    throw new Error("bad");
  }
});

Deno.bench({ name: "portcullis Bearer, warm", group: "resolve" }, async () => {
  if ((await warm.resolve(bearer.read(warmBearer).token!)) === null) {
    throw new Error("bad");
  }
});

const OK = new Response(null);
const guarded = (m: SessionManager) =>
  compose(
    [identityMiddleware(m, { onEvent: () => {} })],
    (req) => requireAuthenticated(req) ?? (currentUser(req) ? OK : OK),
  );
const mwWarm = guarded(warm);
const mwCold = guarded(cold);

Deno.bench(
  { name: "identityMiddleware + compose, cookie, warm", group: "resolve" },
  async () => {
    if ((await mwWarm(warmCookie)) !== OK) throw new Error("bad");
  },
);

Deno.bench(
  { name: "identityMiddleware + compose, cookie, cold", group: "resolve" },
  async () => {
    if ((await mwCold(cookieRequests[next()])) !== OK) throw new Error("bad");
  },
);

Deno.bench(
  { name: "portcullis token only, warm", group: "resolve" },
  async () => {
    if ((await warm.resolve(warmToken)) === null) throw new Error("bad");
  },
);

Deno.bench({
  name: "jose jwtVerify HS256 (key bytes, as usually called)",
  group: "resolve",
}, async () => {
  await jwtVerify(jwts[nextSmall()], joseKeyBytes);
});

const joseKey = await crypto.subtle.importKey(
  "raw",
  joseKeyBytes,
  { name: "HMAC", hash: "SHA-256" },
  false,
  ["verify"],
);
Deno.bench({
  name: "jose jwtVerify HS256 (pre-imported key)",
  group: "resolve",
}, async () => {
  await jwtVerify(jwts[nextSmall()], joseKey);
});

Deno.bench({ name: "Hono parseSigned", group: "resolve" }, async () => {
  const parsed = await parseSigned(honoCookies[nextSmall()], SECRET, "session");
  if (parsed.session === false) throw new Error("bad");
});
