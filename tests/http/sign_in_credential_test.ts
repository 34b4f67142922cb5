/**
 * `signIn` given a checked credential (hardening finding 2): it re-checks
 * the credential after the session's issue time is fixed.
 */
import assert from "node:assert/strict";
import {
  compose,
  identityMiddleware,
  MemoryCredentialStore,
  PasswordAuthenticator,
  Pbkdf2Hasher,
  signIn,
} from "../../mod.ts";
import type { CheckedCredential } from "../../lib/http/mod.ts";
import { makeManager } from "../session/_helpers.ts";

function app(
  sessions: ReturnType<typeof makeManager>["sessions"],
  who: () => CheckedCredential,
) {
  return compose([identityMiddleware(sessions)], async (req) => {
    const session = await signIn(req, who());
    return Response.json(session === null ? null : { token: session.token });
  });
}

Deno.test("hardening finding 2: signIn with a credential that changed meanwhile answers null, sets no cookie, and puts the session it minted on the denylist", async () => {
  const { sessions, kv } = makeManager();
  const before = kv.size;
  let checkedAfterIssue = false;
  const res = await app(sessions, () => ({
    subject: "alice",
    stillCurrent: () => {
      checkedAfterIssue = true;
      return Promise.resolve(false);
    },
  }))(new Request("https://app.example/login", { method: "POST" }));
  assert.equal(await res.json(), null);
  assert.equal(res.headers.get("set-cookie"), null, "no cookie is set");
  assert.ok(checkedAfterIssue);
  assert.equal(kv.size, before + 1, "one denylist entry: the minted jti");
});

Deno.test("hardening finding 2: PasswordAuthenticator.login's ok result signs in while the password holds, and not after it changed", async () => {
  const { sessions } = makeManager();
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: new Pbkdf2Hasher({ iterations: 1000 }),
  });
  const created = await auth.register("a@example.com", "correct horse battery");
  assert.equal(created.kind, "created");
  const login = await auth.login("a@example.com", "correct horse battery");
  assert.equal(login.kind, "ok");
  if (login.kind !== "ok" || created.kind !== "created") return;
  const fresh = await app(sessions, () => login)(
    new Request("https://app.example/login", { method: "POST" }),
  );
  const { token } = await fresh.json();
  assert.equal((await sessions.resolve(token))?.subject, created.subject);

  // The password changes after the check and before signIn.
  await auth.changePassword(created.subject, "another horse entirely");
  const stale = await app(sessions, () => login)(
    new Request("https://app.example/login", { method: "POST" }),
  );
  assert.equal(await stale.json(), null);
});
