// The floor under cold resolution: what any check of a token presented as a
// string must do beyond the baseline's one raw verify over fixed buffers.
//
//   taskset -c 0 deno run -A bench/cold_floor_bench.ts   # ROUNDS=40 BATCH=500
//
// Not `deno bench`: on a shared machine its means move by tens of percent
// from run to run. Here the steps take turns, round after round, each
// timing a batch of BATCH sequential calls, and the table shows each
// step's median and fastest batch as a ratio of step 1's in the same run.
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
import {
  KVSessionStore,
  MemoryKV,
  SecretProvider,
  SessionManager,
} from "../mod.ts";
import { decodeBase64Url } from "../lib/_common/base64url.ts";
import { verifyToken } from "../lib/tokens/signed_token.ts";

const SECRET = "OE4oAG13kLUZp20SYqZR2kcifh/ZW0UNU72ph11FvDw=";
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

type Step = [name: string, call: () => Promise<unknown>];
const STEPS: Step[] = [
  ["1 raw verify, fixed buffers", async () => {
    if (!(await crypto.subtle.verify("HMAC", key, tag0, message0))) {
      throw new Error("bad");
    }
  }],
  ["2 raw verify, fresh copies per call", async () => {
    if (
      !(await crypto.subtle.verify(
        "HMAC",
        key,
        tag0.slice(),
        message0.slice(),
      ))
    ) throw new Error("bad");
  }],
  ["3 verify, input and tag built from the token string", async () => {
    const t = flat[next()];
    const dot = t.lastIndexOf(".");
    const input = new Uint8Array(8 + dot);
    for (let k = 0; k < 8; k++) input[k] = "session:".charCodeAt(k);
    for (let k = 0; k < dot; k++) input[8 + k] = t.charCodeAt(k);
    const tag = decodeBase64Url(t.slice(dot + 1)) as Uint8Array<ArrayBuffer>;
    if (!(await crypto.subtle.verify("HMAC", key, tag, input))) {
      throw new Error("bad");
    }
  }],
  ["4 verifyToken", async () => {
    if ((await verifyToken(keys, "session", flat[next()])) === null) {
      throw new Error("bad");
    }
  }],
  ["5 cold resolve, store: null", async () => {
    if ((await coldNull.resolve(flat[next()])) === null) throw new Error("bad");
  }],
  ["6 cold resolve, in-memory denylist", async () => {
    if ((await coldKV.resolve(flat[next()])) === null) throw new Error("bad");
  }],
  ["7 cold resolve, in-memory denylist, tokens as issued (ropes)", async () => {
    if ((await coldKV.resolve(ropes[next()])) === null) throw new Error("bad");
  }],
];

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 40);
const BATCH = Number(Deno.env.get("BATCH") ?? 500);
const perCall: number[][] = STEPS.map(() => []);
for (let r = -3; r < ROUNDS; r++) { // three rounds of warm-up
  for (let s = 0; s < STEPS.length; s++) {
    const call = STEPS[s][1];
    const t0 = performance.now();
    for (let k = 0; k < BATCH; k++) await call();
    const us = ((performance.now() - t0) * 1000) / BATCH;
    if (r >= 0) perCall[s].push(us);
  }
}
const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
};
const med = perCall.map(median);
const min = perCall.map((xs) => Math.min(...xs));
console.log(
  `Deno ${Deno.version.deno}; ${ROUNDS} rounds of ${BATCH} calls per step, steps in turn.\n`,
);
console.log(
  "| step | µs per call (median batch) | × step 1 | µs (fastest batch) | × step 1 |",
);
console.log("|---|---|---|---|---|");
STEPS.forEach(([name], i) => {
  console.log(
    `| ${name} | ${med[i].toFixed(2)} | ${(med[i] / med[0]).toFixed(2)} | ${
      min[i].toFixed(2)
    } | ${(min[i] / min[0]).toFixed(2)} |`,
  );
});
