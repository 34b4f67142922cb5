// docs/architecture.md in practice: the authentication layer knows nothing of
// sessions, so one PasswordAuthenticator serves two SessionManagers over
// different stores, and a subject string is all that crosses between them.
import assert from "node:assert/strict";
import {
  DenoKV,
  KVSessionStore,
  MemoryCredentialStore,
  MemoryKV,
  PasswordAuthenticator,
  Pbkdf2Hasher,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";

Deno.test("one PasswordAuthenticator with two SessionManagers (memory and Deno KV)", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: new Pbkdf2Hasher({ iterations: 1000, minIterations: 1000 }),
  });
  const dir = await Deno.makeTempDir();
  const denoKv = await DenoKV.open(`${dir}/kv.sqlite3`);
  try {
    const web = new SessionManager({
      secret: SecretProvider.fromValue(
        "zve8pDXq59Z87632bEPW4z1M+WM8oDFobzLdWAj5CUc=",
      ),
      store: new KVSessionStore(new MemoryKV()),
    });
    const api = new SessionManager({
      secret: SecretProvider.fromValue(
        "RlISsP5Ko+7B6h5pRYIW8tE+5wirKIKSuTU70sL7s+U=",
      ),
      store: new KVSessionStore(denoKv),
      lifetimeSeconds: 3600,
    });
    const created = await auth.register(
      "Ada@Example.com ",
      "correct horse battery",
    );
    assert.equal(created.kind, "created");
    const subject = await auth.authenticate(
      "ada@example.com",
      "correct horse battery",
    );
    assert.ok(
      subject !== null && created.kind === "created" &&
        subject === created.subject,
    );

    const webToken = await web.issue(subject);
    const apiToken = await api.issue(subject);
    assert.equal((await web.resolve(webToken))?.subject, subject);
    assert.equal((await api.resolve(apiToken))?.subject, subject);
    // Each manager's tokens are its own: different secrets, different stores.
    assert.equal(await web.resolve(apiToken), null);
    assert.equal(await api.resolve(webToken), null);
    // Revoking in one store leaves the other untouched.
    await api.revokeAll(subject);
    assert.equal(await api.resolve(apiToken), null);
    assert.equal((await web.resolve(webToken))?.subject, subject);
    // A wrong password issues nothing anywhere.
    assert.equal(
      await auth.authenticate("ada@example.com", "wrong horse battery"),
      null,
    );
  } finally {
    denoKv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
