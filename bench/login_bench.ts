/**
 * Login timing and password-hasher cost.
 *
 * Run: `deno bench -A bench/login_bench.ts`
 *
 * - group `login`: a wrong password for a known email against an unknown
 *   email (target ratio 0.95–1.05), full-strength PBKDF2.
 * - group `hasher`: one verification with each hasher at its default cost,
 *   against raw WebCrypto PBKDF2-SHA256 at 600000 iterations (baseline),
 *   plus the pure-JavaScript PBKDF2 route used where WebCrypto refuses.
 *
 * @module
 */
import { PasswordAuthenticator } from "../lib/authn/password_authenticator.ts";
import { Pbkdf2Hasher } from "../lib/authn/pbkdf2_hasher.ts";
import { BcryptHasher } from "../packages/hashers/bcrypt.ts";
import { Pbkdf2WasmHasher } from "../packages/hashers/pbkdf2_wasm.ts";
import { Argon2idHasher } from "../packages/hashers/argon2id.ts";
import { nobleArgon2idEngine } from "../packages/hashers/argon2id_noble.ts";
import { MemoryCredentialStore } from "../lib/authn/memory_credential_store.ts";

const PASSWORD = "correct horse battery staple";

const auth = new PasswordAuthenticator({
  credentials: new MemoryCredentialStore(),
  hasher: new Pbkdf2Hasher(),
});
await auth.register("known@example.com", PASSWORD);
// Mint the dummy hash before measuring.
await auth.authenticate("warm-up@example.com", PASSWORD);

Deno.bench({
  name: "authenticate: wrong password, known email",
  group: "login",
  baseline: true,
  n: 40,
  async fn() {
    await auth.authenticate("known@example.com", "wrong password!");
  },
});

Deno.bench({
  name: "authenticate: unknown email",
  group: "login",
  n: 40,
  async fn() {
    await auth.authenticate("nobody@example.com", "wrong password!");
  },
});

const enc = new TextEncoder();
const rawKey = await crypto.subtle.importKey(
  "raw",
  enc.encode(PASSWORD),
  "PBKDF2",
  false,
  ["deriveBits"],
);
const salt = crypto.getRandomValues(new Uint8Array(16));

Deno.bench({
  name: "raw WebCrypto PBKDF2-SHA256 600k",
  group: "hasher",
  baseline: true,
  n: 30,
  async fn() {
    await crypto.subtle.deriveBits(
      { name: "PBKDF2", hash: "SHA-256", salt, iterations: 600_000 },
      rawKey,
      256,
    );
  },
});

async function verifyBench(
  name: string,
  hasher: {
    hash(p: string): Promise<string>;
    verify(p: string, s: string): Promise<boolean>;
  },
  n: number,
): Promise<void> {
  const stored = await hasher.hash(PASSWORD);
  Deno.bench({
    name,
    group: "hasher",
    n,
    async fn() {
      await hasher.verify(PASSWORD, stored);
    },
  });
}

await verifyBench(
  "Pbkdf2Hasher 600k verify (WebCrypto route)",
  new Pbkdf2Hasher(),
  30,
);
await verifyBench(
  "Pbkdf2WasmHasher 600k verify (JavaScript route, Workers fallback)",
  new Pbkdf2WasmHasher({ route: "javascript" }),
  10,
);
await verifyBench(
  "BcryptHasher cost 10 verify (bcryptjs)",
  new BcryptHasher(),
  10,
);
await verifyBench(
  "BcryptHasher cost 12 verify (bcryptjs)",
  new BcryptHasher({ cost: 12 }),
  5,
);
await verifyBench(
  "Argon2idHasher m=19456 t=2 p=1 verify (hash-wasm)",
  new Argon2idHasher(),
  20,
);
await verifyBench(
  "Argon2idHasher m=19456 t=2 p=1 verify (pure-JS @noble/hashes)",
  new Argon2idHasher({ engine: nobleArgon2idEngine }),
  5,
);

// The WebCrypto-HMAC route (one `sign` per iteration, key imported once),
// measured at 20000 iterations and scaled: 600k would take seconds.
const hmacKey = await crypto.subtle.importKey(
  "raw",
  enc.encode(PASSWORD),
  { name: "HMAC", hash: "SHA-256" },
  false,
  ["sign"],
);
Deno.bench({
  name: "PBKDF2 over WebCrypto HMAC sign, 20000 iterations (×30 for 600k)",
  group: "hasher",
  n: 3,
  async fn() {
    let u = new Uint8Array(32);
    for (let i = 0; i < 20_000; i++) {
      u = new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, u));
    }
  },
});
