// Hardening finding 10: the session layer and the authenticator share one
// subject rule, so a custom newId can never create a user who cannot sign in.
import assert from "node:assert/strict";
import {
  AuthError,
  MemoryCredentialStore,
  PasswordAuthenticator,
  Pbkdf2Hasher,
} from "../../mod.ts";
import { makeManager } from "../session/_helpers.ts";

const BAD_IDS = [
  "",
  "a|b",
  "tab\there",
  "c1\u0085control",
  "del\u007f",
  "x".repeat(256),
];

Deno.test("finding 10: register refuses every id issue() would refuse (C1 controls included)", async () => {
  const { sessions } = makeManager();
  for (const id of BAD_IDS) {
    await assert.rejects(() => sessions.issue(id), AuthError);
    const credentials = new MemoryCredentialStore();
    const auth = new PasswordAuthenticator({
      credentials,
      hasher: new Pbkdf2Hasher({ iterations: 1000 }),
      newId: () => id,
    });
    await assert.rejects(
      () => auth.register("a@example.com", "correct horse battery"),
      (error) => error instanceof AuthError && error.code === "INVALID_SUBJECT",
      JSON.stringify(id),
    );
    assert.equal(
      await credentials.findByEmail("a@example.com"),
      null,
      "nothing was stored",
    );
  }
});

Deno.test("finding 10: every id register accepts can be signed in", async () => {
  const { sessions } = makeManager();
  for (const id of ["user_1", "ü-ñ-中文", "x".repeat(255), "a b"]) {
    const auth = new PasswordAuthenticator({
      credentials: new MemoryCredentialStore(),
      hasher: new Pbkdf2Hasher({ iterations: 1000 }),
      newId: () => id,
    });
    const result = await auth.register(
      "a@example.com",
      "correct horse battery",
    );
    assert.equal(result.kind, "created");
    const token = await sessions.issue(id);
    assert.equal((await sessions.resolve(token))?.subject, id);
  }
});
