import assert from "node:assert/strict";
import { decideAccount, OidcClient } from "../../packages/oidc/mod.ts";
import { SessionManager } from "../../mod.ts";
import { startOp, type TestOp } from "../support/oidc_op.ts";
import { purposeSigner, TEST_SECRET } from "./_signers.ts";

const REDIRECT = "http://localhost:9/login/oidc/local/callback";
const SECRET = "client-secret-0123456789-abcdefghijklmnopqrstuvwxyz";

let op: TestOp | undefined;
async function provider(): Promise<TestOp> {
  op ??= await startOp({
    client_id: "portcullis-test",
    client_secret: SECRET,
    redirect_uris: [REDIRECT],
  });
  return op;
}

function client(issuer: string, now?: () => number): OidcClient {
  return new OidcClient({
    provider: {
      id: "local",
      issuer,
      clientId: "portcullis-test",
      clientSecret: SECRET,
      allowInsecureHttp: true,
    },
    redirectUri: REDIRECT,
    signer: purposeSigner("oidc-state"),
    now,
  });
}

Deno.test("OidcClient: a sign-in at the real provider ends in the asserted identity", async () => {
  const { issuer, signIn } = await provider();
  const c = client(issuer);
  const start = await c.start("/account");
  const auth = new URL(start.authorizationUrl);
  assert.equal(auth.searchParams.get("code_challenge_method"), "S256");
  assert.ok(auth.searchParams.get("nonce"));
  assert.ok(auth.searchParams.get("state"));
  const callback = await signIn(
    start.authorizationUrl,
    "alice;alice@example.com;true",
  );
  assert.ok(new URL(callback).searchParams.get("iss"), "RFC 9207 iss");
  const outcome = await c.finish(callback, start.state);
  assert.deepEqual(outcome, {
    kind: "ok",
    identity: {
      provider: "local",
      subject: "alice;alice@example.com;true",
      email: "alice@example.com",
      emailVerified: true,
    },
    next: "/account",
    reauthenticated: false,
  });
});

Deno.test("OidcClient: a replayed code is refused by the provider (code_rejected)", async () => {
  const { issuer, signIn } = await provider();
  const c = client(issuer);
  const start = await c.start();
  const callback = await signIn(
    start.authorizationUrl,
    "bob;bob@example.com;false",
  );
  assert.equal((await c.finish(callback, start.state)).kind, "ok");
  assert.deepEqual(await c.finish(callback, start.state), {
    kind: "refused",
    reason: "code_rejected",
  });
});

Deno.test("OidcClient: a missing, tampered, expired or foreign-purpose state value is refused", async () => {
  const { issuer, signIn } = await provider();
  let t = Date.now();
  const c = client(issuer, () => t);
  const start = await c.start();
  const callback = await signIn(
    start.authorizationUrl,
    "carol;carol@example.com;true",
  );
  const parts = start.state.split(".");
  const tampered = [parts[0], parts[1], "e30", parts[3]].join(".");
  assert.deepEqual(await c.finish(callback, null), {
    kind: "refused",
    reason: "state_missing",
  });
  assert.deepEqual(await c.finish(callback, tampered), {
    kind: "refused",
    reason: "state_invalid",
  });
  const session = await new SessionManager({ secret: TEST_SECRET, store: null })
    .issue("user_1");
  assert.deepEqual(await c.finish(callback, session), {
    kind: "refused",
    reason: "state_invalid",
  });
  t += 601_000;
  assert.deepEqual(await c.finish(callback, start.state), {
    kind: "refused",
    reason: "state_invalid",
  });
});

Deno.test("OidcClient: a callback whose state is not the browser's is refused (state_mismatch)", async () => {
  const { issuer, signIn } = await provider();
  const c = client(issuer);
  const mine = await c.start();
  const theirs = await c.start();
  // The attacker's code and state, delivered to the victim's browser.
  const callback = await signIn(
    theirs.authorizationUrl,
    "mallory;m@example.com;true",
  );
  assert.deepEqual(await c.finish(callback, mine.state), {
    kind: "refused",
    reason: "state_mismatch",
  });
});

Deno.test("OidcClient: an ID token whose nonce is not the browser's is refused (nonce_mismatch)", async () => {
  const { issuer, signIn } = await provider();
  const c = client(issuer);
  const start = await c.start();
  const callback = await signIn(
    start.authorizationUrl,
    "dave;dave@example.com;true",
  );
  // Same state and verifier, another nonce, signed with the right key.
  const payload = JSON.parse(
    atob(start.state.split(".")[2].replace(/-/g, "+").replace(/_/g, "/")),
  );
  payload.n = "another-nonce-0123456789";
  const forged = await purposeSigner("oidc-state").sign(
    new TextEncoder().encode(JSON.stringify(payload)),
  );
  assert.deepEqual(await c.finish(callback, forged), {
    kind: "refused",
    reason: "nonce_mismatch",
  });
});

Deno.test("OidcClient: an iss parameter that is not the provider's is refused (issuer_mismatch, RFC 9207)", async () => {
  const { issuer, signIn } = await provider();
  const c = client(issuer);
  const start = await c.start();
  const callback = new URL(
    await signIn(start.authorizationUrl, "erin;erin@example.com;true"),
  );
  callback.searchParams.set("iss", "https://evil.example.com");
  assert.deepEqual(await c.finish(callback, start.state), {
    kind: "refused",
    reason: "issuer_mismatch",
  });
  callback.searchParams.delete("iss");
  assert.deepEqual(await c.finish(callback, start.state), {
    kind: "refused",
    reason: "issuer_mismatch",
  });
});

Deno.test("OidcClient: a provider error response (the user cancelled) is refused (provider_error)", async () => {
  const { issuer, abort } = await provider();
  const c = client(issuer);
  const start = await c.start();
  const callback = await abort(start.authorizationUrl);
  assert.equal(new URL(callback).searchParams.get("error"), "access_denied");
  assert.deepEqual(await c.finish(callback, start.state), {
    kind: "refused",
    reason: "provider_error",
  });
});

Deno.test("OidcClient: the constructor refuses a plain-http issuer unless allowed, and a bad id", () => {
  const base = {
    redirectUri: REDIRECT,
    signer: purposeSigner("oidc-state"),
  };
  assert.throws(
    () =>
      new OidcClient({
        ...base,
        provider: {
          id: "x",
          issuer: "http://op.example.com",
          clientId: "a",
          clientSecret: "b",
        },
      }),
    /issuer must be an https URL/,
  );
  assert.throws(
    () =>
      new OidcClient({
        ...base,
        provider: {
          id: "Bad Id",
          issuer: "https://op.example.com",
          clientId: "a",
          clientSecret: "b",
        },
      }),
    /provider id/,
  );
});

Deno.test("decideAccount() never links to an existing account by email alone", () => {
  const identity = (
    emailVerified: boolean,
    email: string | null = "a@example.com",
  ) => ({
    provider: "op",
    subject: "s1",
    email,
    emailVerified,
  });
  const facts = {
    linkedSubject: null,
    currentSubject: null,
    userWithEmail: null,
  };
  assert.deepEqual(
    decideAccount({ ...facts, identity: identity(true), linkedSubject: "u1" }),
    { kind: "signIn", subject: "u1" },
  );
  assert.deepEqual(
    decideAccount({
      ...facts,
      identity: identity(true),
      linkedSubject: "u1",
      currentSubject: "u2",
    }),
    { kind: "refuse", reason: "linked_elsewhere" },
  );
  assert.deepEqual(
    decideAccount({
      ...facts,
      identity: identity(false),
      currentSubject: "u2",
      currentVerified: true,
      userWithEmail: "u3",
    }),
    { kind: "link", subject: "u2" },
  );
  // Issue 16, finding 1 (b): an unverified account gains no provider.
  assert.deepEqual(
    decideAccount({
      ...facts,
      identity: identity(true),
      currentSubject: "u2",
      currentVerified: false,
    }),
    { kind: "refuse", reason: "account_unverified" },
  );
  assert.deepEqual(
    decideAccount({
      ...facts,
      identity: identity(true),
      userWithEmail: "u3",
      userWithEmailVerified: true,
    }),
    { kind: "confirmLink", subject: "u3" },
  );
  assert.deepEqual(
    decideAccount({ ...facts, identity: identity(true), userWithEmail: "u3" }),
    { kind: "refuse", reason: "account_unverified" },
  );
  assert.deepEqual(
    decideAccount({ ...facts, identity: identity(false), userWithEmail: "u3" }),
    { kind: "refuse", reason: "email_unverified" },
  );
  assert.deepEqual(
    decideAccount({ ...facts, identity: identity(true, null) }),
    { kind: "refuse", reason: "email_missing" },
  );
  // Issue 16, finding 1 (a): an unverified provider email creates nothing.
  assert.deepEqual(decideAccount({ ...facts, identity: identity(false) }), {
    kind: "refuse",
    reason: "email_unverified",
  });
  assert.deepEqual(decideAccount({ ...facts, identity: identity(true) }), {
    kind: "create",
    email: "a@example.com",
  });
});

Deno.test("OidcClient: a re-authentication asks for a fresh login (prompt=login, max_age=0) and says so; a sign-in does not", async () => {
  const { issuer, signIn } = await provider();
  const c = client(issuer);
  const start = await c.start("/account", { reauthenticate: true });
  const auth = new URL(start.authorizationUrl);
  assert.equal(auth.searchParams.get("prompt"), "login");
  assert.equal(auth.searchParams.get("max_age"), "0");
  const outcome = await c.finish(
    await signIn(start.authorizationUrl, "carol;carol@example.com;true"),
    start.state,
  );
  assert.equal(outcome.kind, "ok");
  assert.equal(outcome.kind === "ok" && outcome.reauthenticated, true);
  const plain = await c.start("/");
  assert.equal(
    new URL(plain.authorizationUrl).searchParams.get("prompt"),
    null,
  );
  const signedIn = await c.finish(
    await signIn(plain.authorizationUrl, "carol;carol@example.com;true"),
    plain.state,
  );
  assert.equal(signedIn.kind === "ok" && signedIn.reauthenticated, false);
});

Deno.test("OidcClient: stop the provider", async () => {
  await op?.close();
});
