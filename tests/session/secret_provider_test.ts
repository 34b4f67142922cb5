import assert from "node:assert/strict";
import { SecretProvider } from "../../mod.ts";
import { signToken, verifyToken } from "../../lib/session/signed_token.ts";
import { OLD_SECRET, SECRET } from "./_helpers.ts";

Deno.test("item 18: a secret shorter than 32 bytes, empty or missing throws at construction", () => {
  assert.throws(
    () => SecretProvider.fromValue("short"),
    /at least 32 bytes: received 5/,
  );
  assert.throws(() => SecretProvider.fromValue(""), TypeError);
  assert.throws(
    () => SecretProvider.fromValue(new Uint8Array(31).map((_, i) => i)),
    RangeError,
  );
  assert.throws(() => SecretProvider.fromValue("a".repeat(64)), /not random/);
  assert.throws(
    () => SecretProvider.fromValue(SECRET, ["too-short"]),
    /Previous secret #1 must hold at least 32 bytes/,
  );
  assert.ok(
    SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
  );
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
      /^MY_SECRET must hold at least 32 bytes: received 15$/,
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
