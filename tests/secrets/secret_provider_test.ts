import assert from "node:assert/strict";
import fc from "fast-check";
import { SecretProvider } from "../../mod.ts";
import { signToken, verifyToken } from "../../lib/tokens/signed_token.ts";
import { OLD_SECRET, SECRET } from "../session/_helpers.ts";

Deno.test("item 18: a secret shorter than 32 bytes, empty or missing throws at construction", () => {
  assert.throws(
    () => SecretProvider.fromValue("short"),
    /at least 32 random bytes: received base64 of 3/,
  );
  assert.throws(() => SecretProvider.fromValue(""), TypeError);
  assert.throws(
    () => SecretProvider.fromValue(new Uint8Array(31).map((_, i) => i)),
    RangeError,
  );
  assert.throws(() => SecretProvider.fromValue("a".repeat(64)), /not random/);
  assert.throws(
    () => SecretProvider.fromValue(SECRET, ["too-short"]),
    /Previous secret #1 must hold at least 32 random bytes/,
  );
  assert.ok(
    SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
  );
});

Deno.test("hardening finding 6 (low-entropy secrets): a text secret must be 32 random bytes as hex or base64, or the error shows openssl rand -base64 32", () => {
  const refused = [
    "correct-horse-battery-staple-123", // the secret the review started the app with
    "correct-horse-battery-staple-and-a-few-more-words", // long, but a passphrase
    "ab".repeat(20), // hex of 20 bytes
    "x".repeat(43), // base64 alphabet, one symbol
    "The quick brown fox jumps over the lazy dog!!", // spaces and punctuation
    "Zm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFy", // base64 of 24 bytes
  ];
  for (const secret of refused) {
    assert.throws(
      () => SecretProvider.fromValue(secret),
      (e: unknown) =>
        e instanceof RangeError &&
        e.message.includes("openssl rand -base64 32") &&
        !e.message.includes(secret),
      secret,
    );
  }
  // The same rule for previous secrets.
  assert.throws(
    () =>
      SecretProvider.fromValue(SECRET, ["correct-horse-battery-staple-123"]),
    /^RangeError: Previous secret #1 .*openssl rand -base64 32/,
  );
  assert.throws(
    () =>
      SecretProvider.fromEnv("AUTH_SECRET", {
        env: { AUTH_SECRET: "correct-horse-battery-staple-123" },
      }),
    /^RangeError: AUTH_SECRET /,
  );
  // What the recognisable encodings of 32 random bytes look like.
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const base64 = btoa(String.fromCharCode(...bytes));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
  for (
    const ok of [
      base64, // openssl rand -base64 32: 44 characters with one "="
      base64.replace(/=+$/, ""), // unpadded: 43
      base64.replaceAll("+", "-").replaceAll("/", "_"), // base64url
      hex, // openssl rand -hex 32: 64
      hex.toUpperCase(),
    ]
  ) {
    assert.ok(SecretProvider.fromValue(ok), ok);
  }
});

Deno.test("fromEnv() names the variable in its errors and never echoes the value", () => {
  assert.throws(
    () => SecretProvider.fromEnv("AUTH_SECRET", { env: {} }),
    /AUTH_SECRET is not set/,
  );
  try {
    SecretProvider.fromEnv("MY_SECRET", {
      env: { MY_SECRET: "hunter2-hunter2" },
    });
    assert.fail("should throw");
  } catch (e) {
    assert.match(
      (e as Error).message,
      /^MY_SECRET must hold at least 32 random bytes: received base64 of 11; generate one with `openssl rand -base64 32`$/,
    );
    assert.ok(!(e as Error).message.includes("hunter2"));
  }
});

Deno.test("fromEnv() reads AUTH_PREVIOUS_SECRETS, comma-separated, from an env object or function", async () => {
  const env = {
    AUTH_SECRET: SECRET,
    AUTH_PREVIOUS_SECRETS: ` ${OLD_SECRET} , `,
  };
  const provider = SecretProvider.fromEnv("AUTH_SECRET", { env });
  assert.equal(provider.size, 2);
  const viaFunction = SecretProvider.fromEnv("AUTH_SECRET", {
    env: (n) => (env as Record<string, string>)[n],
  });
  assert.equal(viaFunction.size, 2);
  const oldKeys = await SecretProvider.fromValue(OLD_SECRET).keys("session");
  const token = await signToken(
    oldKeys.current,
    "session",
    new Uint8Array([1, 2]),
  );
  assert.deepEqual(
    await verifyToken(await provider.keys("session"), "session", token),
    new Uint8Array([1, 2]),
  );
});

Deno.test("fromEnv() reads Deno.env by default", () => {
  Deno.env.set("PORTCULLIS_TEST_SECRET", SECRET);
  try {
    assert.equal(SecretProvider.fromEnv("PORTCULLIS_TEST_SECRET").size, 1);
  } finally {
    Deno.env.delete("PORTCULLIS_TEST_SECRET");
  }
});

Deno.test("HKDF separates purposes: one purpose's key never verifies another's tokens", async () => {
  const provider = SecretProvider.fromValue(SECRET);
  const session = await provider.keys("session");
  const flash = await provider.keys("flash");
  assert.equal(
    session.current.kid,
    flash.current.kid,
    "the kid names the secret, not the purpose",
  );
  const token = await signToken(flash.current, "flash", new Uint8Array([7]));
  assert.equal(await verifyToken(session, "flash", token), null);
  assert.deepEqual(
    await verifyToken(flash, "flash", token),
    new Uint8Array([7]),
  );
  assert.equal(
    await provider.keys("session"),
    session,
    "derived once and kept",
  );
});

Deno.test("derived keys are not extractable and the kid does not reveal the secret", async () => {
  const keys = await SecretProvider.fromValue(SECRET).keys("session");
  assert.equal(keys.current.key.extractable, false);
  await assert.rejects(() => crypto.subtle.exportKey("raw", keys.current.key));
  assert.match(keys.current.kid, /^[A-Za-z0-9_-]{8}$/);
  const other = await SecretProvider.fromValue(OLD_SECRET).keys("session");
  assert.notEqual(other.current.kid, keys.current.kid);
});

/** The encodings a random secret is commonly written in. */
function encodings(bytes: Uint8Array): string[] {
  const base64 = btoa(String.fromCharCode(...bytes));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
  return [
    base64,
    base64.replace(/=+$/, ""),
    base64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""),
    hex,
    hex.toUpperCase(),
  ];
}

Deno.test("issue 16 finding 9d: SecretProvider refuses plainly non-random secrets: patterns, counters, repeated bytes, phrases; the error says how to make one", () => {
  const ascending = Uint8Array.from({ length: 32 }, (_, i) => i);
  const lowEntropy = new Uint8Array(32);
  lowEntropy.set(crypto.getRandomValues(new Uint8Array(12)), 20);
  const refused: [string, string | Uint8Array][] = [
    ["the review's hex", "0123456789abcdef".repeat(4)],
    ["the review's phrase", "YourSecretKeyGoesHereAndItIsLongEnough12345"],
    ["a phrase", "YourSecretKeyGoesHereChangeMeInProduction1234"],
    ["a phrase", "ThisIsMySuperSecretKeyForSigningSessions2024"],
    ["a phrase", "SuperSecretJwtSigningKeyThatNobodyWillGuess"],
    ["a phrase", "ChangeThisToSomethingRandomBeforeDeploying42"],
    ["a phrase", "DefaultPortcullisSessionSecretKeyPleaseChange"],
    ["a phrase", "Your_Secret_Key_Goes_Here_And_Keep_It_Safe_1"],
    ["a phrase", "CorrectHorseBatteryStapleCorrectHorseBattery"],
    ["a short hex period", "a1b2c3d4".repeat(8)],
    ["a hex period of 31", "0123456789abcdef0123456789abcde".repeat(3)],
    ["a base64 period", "Zm9vYmFy".repeat(6)],
    ["base64 of repeated bytes", btoa("abc".repeat(11))],
    ["base64 of a 5-byte pattern", btoa("k3#Q!".repeat(7))],
    ["hex of a counter", encodings(ascending)[3]],
    ["base64 of a counter", encodings(ascending)[0]],
    ["raw counter", ascending],
    ["raw descending", ascending.map((b) => 255 - 3 * b)],
    ["raw 2-byte pattern", new Uint8Array(32).map((_, i) => i % 2 ? 7 : 200)],
    ["raw period 16", new Uint8Array(32).map((_, i) => (i % 16) * 13 + 1)],
    ["20 zero bytes then 12 random, raw", lowEntropy],
    ["the same in hex", encodings(lowEntropy)[3]],
    ["the same in base64", encodings(lowEntropy)[0]],
    ["raw bytes of text", new TextEncoder().encode(SECRET)],
  ];
  for (const [what, secret] of refused) {
    assert.throws(
      () => SecretProvider.fromValue(secret),
      (e: unknown) =>
        e instanceof RangeError &&
        /^The secret (is not random|does not look random)/.test(e.message) &&
        e.message.includes("openssl rand -base64 32") &&
        (typeof secret !== "string" || !e.message.includes(secret)),
      what,
    );
  }
  assert.throws(
    () =>
      SecretProvider.fromEnv("AUTH_SECRET", {
        env: { AUTH_SECRET: "0123456789abcdef".repeat(4) },
      }),
    /^RangeError: AUTH_SECRET is not random: it repeats a pattern of 16 characters; generate one with `openssl rand -base64 32`$/,
  );
});

Deno.test("issue 16 finding 9d (property): 32 or more random bytes are never refused, as hex, base64, base64url or raw bytes", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 64 }).noBias(),
      (bytes) => {
        SecretProvider.fromValue(bytes);
        for (const text of encodings(bytes)) SecretProvider.fromValue(text);
      },
    ),
    { numRuns: 5000 },
  );
  // And what the tools print, fresh each run.
  for (let i = 0; i < 2000; i++) {
    for (const text of encodings(crypto.getRandomValues(new Uint8Array(32)))) {
      SecretProvider.fromValue(text);
    }
  }
});

Deno.test("fourth outside review: a phrase passed through base64 or hex is refused like the phrase itself (its decoded bytes are printable text)", () => {
  const encoder = new TextEncoder();
  for (
    const phrase of [
      "a-32-byte-or-longer-random-secret-value!",
      "test-secret-with-enough-entropy-0123456789abcdef",
      "correct horse battery staple, and a bit more",
    ]
  ) {
    const bytes = encoder.encode(phrase);
    const base64 = btoa(String.fromCharCode(...bytes));
    const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    for (const value of [base64, base64.replace(/=+$/, ""), hex]) {
      assert.throws(
        () => SecretProvider.fromValue(value),
        /decoded bytes are printable text/,
        value,
      );
    }
  }
  // Random keys in both encodings still pass.
  for (let i = 0; i < 200; i++) {
    const key = crypto.getRandomValues(new Uint8Array(32));
    SecretProvider.fromValue(btoa(String.fromCharCode(...key)));
    SecretProvider.fromValue(
      [...key].map((b) => b.toString(16).padStart(2, "0")).join(""),
    );
  }
});
