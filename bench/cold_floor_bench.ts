// The floor under cold resolution: what any check of a token presented as a
// string must do beyond the baseline's one raw verify over fixed buffers.
//
//   deno bench -A bench/cold_floor_bench.ts
//
// Steps, each adding one unavoidable piece to the raw verify:
// 1. the baseline: verify over the same two buffers every call;
// 2. the same bytes, fresh buffers per call (what a per-request verify
//    hands WebCrypto: the runtime copies and crosses them into Rust);
// 3. the MAC input and tag built from the token string per call (the
//    minimum: bytes depend on the token);
// 4. portcullis' verifyToken (shape, kid, strict base64url of tag and
//    payload, verify);
// 5. cold resolve, store: null (+ payload parse, lifetime bound);
// 6. cold resolve with the in-memory denylist (+ one denylist read);
// 7. the same on tokens as issued (ropes of their base64url pieces; a
//    header value is flat, so 6 is the figure that counts).
import { KVSessionStore, MemoryKV, SecretProvider, SessionManager } from "../mod.ts";
import { decodeBase64Url } from "../lib/_common/base64url.ts";
import { verifyToken } from "../lib/session/signed_token.ts";

const SECRET = "bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz";
const N = 20_000;
const secret = SecretProvider.fromValue(SECRET);
const coldNull = new SessionManager({ secret, store: null, cacheSize: 0 });
const coldKV = new SessionManager({
  secret,
  store: new KVSessionStore(new MemoryKV()),
  cacheSize: 0,
});
const keys = await secret.keys("session");
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const ropes: string[] = [];
for (let i = 0; i < N; i++) ropes.push(await coldKV.issue(`user_${i}`));
// As a request brings them: flat strings decoded from bytes.
const flat = ropes.map((t) => decoder.decode(encoder.encode(t)));

const key = keys.current.key;
const message0 = encoder.encode(
  `session:${flat[0].slice(0, flat[0].lastIndexOf("."))}`,
);
const tag0 = decodeBase64Url(
  flat[0].slice(flat[0].lastIndexOf(".") + 1),
) as Uint8Array<ArrayBuffer>;
if (!(await crypto.subtle.verify("HMAC", key, tag0, message0))) {
  throw new Error("the baseline does not verify");
}

let i = 0;
const next = () => (i = (i + 1) % N);

Deno.bench({
  name: "1 raw verify, fixed buffers",
  group: "cold floor",
  baseline: true,
}, async () => {
  if (!(await crypto.subtle.verify("HMAC", key, tag0, message0))) {
    throw new Error("bad");
  }
});

Deno.bench({
  name: "2 raw verify, fresh copies per call",
  group: "cold floor",
}, async () => {
  if (
    !(await crypto.subtle.verify("HMAC", key, tag0.slice(), message0.slice()))
  ) throw new Error("bad");
});

Deno.bench({
  name: "3 verify, input and tag built from the token string",
  group: "cold floor",
}, async () => {
  const t = flat[next()];
  const dot = t.lastIndexOf(".");
  const input = new Uint8Array(8 + dot);
  for (let k = 0; k < 8; k++) input[k] = "session:".charCodeAt(k);
  for (let k = 0; k < dot; k++) input[8 + k] = t.charCodeAt(k);
  const tag = decodeBase64Url(t.slice(dot + 1)) as Uint8Array<ArrayBuffer>;
  if (!(await crypto.subtle.verify("HMAC", key, tag, input))) {
    throw new Error("bad");
  }
});

Deno.bench({ name: "4 verifyToken", group: "cold floor" }, async () => {
  if ((await verifyToken(keys, "session", flat[next()])) === null) {
    throw new Error("bad");
  }
});

Deno.bench({
  name: "5 cold resolve, store: null",
  group: "cold floor",
}, async () => {
  if ((await coldNull.resolve(flat[next()])) === null) throw new Error("bad");
});

Deno.bench({
  name: "6 cold resolve, in-memory denylist",
  group: "cold floor",
}, async () => {
  if ((await coldKV.resolve(flat[next()])) === null) throw new Error("bad");
});

Deno.bench({
  name: "7 cold resolve, in-memory denylist, tokens as issued (ropes)",
  group: "cold floor",
}, async () => {
  if ((await coldKV.resolve(ropes[next()])) === null) throw new Error("bad");
});
