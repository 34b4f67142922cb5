import assert from "node:assert/strict";
import { commonPasswordCheck } from "../../packages/common_passwords/mod.ts";
import {
  AuthError,
  MemoryCredentialStore,
  PasswordAuthenticator,
  Pbkdf2Hasher,
} from "../../mod.ts";

Deno.test("item 13: common and breached passwords are refused, case and width folded", () => {
  const isCommon = commonPasswordCheck();
  for (
    const p of [
      "password",
      "Password1",
      "PASSWORD1",
      "12345678",
      "qwertyuiop",
      "iloveyou",
      "ｐａｓｓｗｏｒｄ１",
    ]
  ) {
    assert.equal(isCommon(p), true, p);
  }
  for (
    const p of [
      "correct horse battery staple, tuesday",
      "kj3#Lq9!vz@Wm",
      "a long and unusual passphrase",
    ]
  ) {
    assert.equal(isCommon(p), false, p);
  }
});

Deno.test("item 13: the list covers at least the 3000 most common passwords, and extra words can be added", () => {
  const top = commonPasswordCheck({ top: 3000 });
  assert.equal(top("password"), true);
  const withExtra = commonPasswordCheck({ top: 10, extra: ["portcullis-app"] });
  assert.equal(withExtra("Portcullis-App"), true);
  assert.throws(() => commonPasswordCheck({ top: 0 }), RangeError);
});

Deno.test("item 13: with the check, registration and password change refuse a common password and store nothing", async () => {
  const credentials = new MemoryCredentialStore();
  const auth = new PasswordAuthenticator({
    credentials,
    hasher: new Pbkdf2Hasher({ iterations: 1000, minIterations: 1000 }),
    isCompromised: commonPasswordCheck(),
    // Common passwords are short: a lower minimum lets the list decide.
    minPasswordLength: 8,
  });
  assert.deepEqual(await auth.register("a@example.com", "Password1"), {
    kind: "rejected",
    reason: "passwordCommon",
  });
  assert.equal(await credentials.findByEmail("a@example.com"), null);
  const created = await auth.register(
    "a@example.com",
    "an unusual passphrase 7",
  );
  assert.equal(created.kind, "created");
  if (created.kind !== "created") return;
  await assert.rejects(
    () => auth.changePassword(created.subject, "iloveyou"),
    (e: unknown) =>
      e instanceof AuthError && e.code === "INVALID_PASSWORD" &&
      e.reason === "passwordCommon",
  );
  assert.equal(
    await auth.authenticate("a@example.com", "an unusual passphrase 7"),
    created.subject,
  );
});
