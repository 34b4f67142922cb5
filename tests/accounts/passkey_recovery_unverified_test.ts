/**
 * Passkey recovery of an account whose address was never proven (an
 * outside tester asked whether such an account should get a recovery
 * link at all). It does, as a password account never proven gets a reset
 * link: the mail reaches only the address's owner, so redeeming it is the
 * first proof of the address. Asking for it and opening its page change
 * nothing; redeeming it disowns the account first, in any browser (every
 * session ends, every passkey and password set up before goes, the
 * address is stamped), and only then may the recovery add a passkey or
 * set a password (docs/security.md, "Passkey-only accounts, recovery and
 * the automatic upgrade"; docs/http_contract.md, `/passkeys/recover`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { Browser, startApp, type TestApp } from "../app/_harness.ts";
import { SoftAuthenticator } from "../support/soft_authenticator.ts";

const RECOVERY = "__Host-recovery";

async function post(
  b: Browser,
  path: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await b.fetch(path, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? {} : JSON.parse(text) };
}

async function meStatus(b: Browser): Promise<number> {
  const res = await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  await res.body?.cancel();
  return res.status;
}

/** Signs up in `b` with a new software passkey (the address unproven). */
async function signUp(
  app: TestApp,
  b: Browser,
  email: string,
): Promise<{ key: SoftAuthenticator; subject: string }> {
  const started = await post(b, "/passkeys/signup/options", { email });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const key = new SoftAuthenticator(app.origin);
  const done = await post(b, "/passkeys/signup", {
    pending: started.body.pending,
    response: await key.create(
      started.body.options as { challenge: string; user: { id: string } },
    ),
    name: "Laptop",
    next: "/account",
  });
  assert.equal(done.status, 201, JSON.stringify(done.body));
  return { key, subject: (await app.credentials.findByEmail(email))!.id };
}

async function passkeyCount(app: TestApp, subject: string): Promise<number> {
  return (await app.query(
    `SELECT credential_id FROM passkeys WHERE user_id = '${subject}'`,
  )).length;
}

async function passkeySignIn(
  app: TestApp,
  key: SoftAuthenticator,
): Promise<number> {
  const b = new Browser(app.origin);
  const options = await post(b, "/passkeys/login/options", {});
  return (await post(b, "/passkeys/login", {
    response: await key.get(options.body as { challenge: string }),
  })).status;
}

/** The latest recovery link mailed to `email` (the `count`th mail to it). */
async function recoveryLink(
  app: TestApp,
  email: string,
  count: number,
): Promise<URL> {
  const link = new URL(
    (await app.awaitLink(email, count)).replace(/&amp;/g, "&"),
  );
  assert.equal(link.pathname, "/passkeys/recover/callback");
  return link;
}

Deno.test("passkey recovery of an account never proven: the link goes to its address, asking and opening change nothing, redeeming disowns before anything is added", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  // Someone signs up with an address that is not theirs.
  const registrant = new Browser(app.origin);
  const { key, subject } = await signUp(app, registrant, "mine@example.com");
  await app.awaitLink("mine@example.com"); // the verification mail

  // Anyone may ask: the same answer as for an address nobody registered.
  const asked = await new Browser(app.origin).post("/passkeys/recover", {
    email: "Mine@Example.com",
  });
  const nobody = await new Browser(app.origin).post("/passkeys/recover", {
    email: "nobody@example.com",
  });
  assert.equal(asked.status, 303);
  assert.equal(nobody.status, 303);
  assert.equal(
    asked.headers.get("location"),
    nobody.headers.get("location"),
  );
  // The link goes to the stored address only: its owner's mailbox.
  const link = await recoveryLink(app, "mine@example.com", 2);
  assert.ok(app.mail.every((l) => !l.includes("to=nobody@example.com")));

  // Asking changed nothing: still unproven, the passkey and session stand.
  assert.equal((await app.credentials.findById(subject))!.verifiedAt, 0);
  assert.equal(await passkeyCount(app, subject), 1);
  assert.equal(await meStatus(registrant), 200);

  // Opening the link consumes nothing and says what redeeming does.
  const owner = new Browser(app.origin);
  const page = await owner.page(link.pathname + link.search);
  assert.equal(page.status, 200);
  assert.match(page.body, /never confirmed/);
  assert.equal(owner.cookies.has(RECOVERY), false);
  assert.equal((await app.credentials.findById(subject))!.verifiedAt, 0);
  assert.equal(await passkeyCount(app, subject), 1);

  // Redeeming proves the address by disowning: nothing of before stays.
  const redeemed = await owner.post("/passkeys/recover/callback", {
    token: link.searchParams.get("token")!,
  });
  assert.equal(redeemed.status, 303);
  assert.ok(owner.cookies.has(RECOVERY));
  assert.ok((await app.credentials.findById(subject))!.verifiedAt > 0);
  assert.equal(await passkeyCount(app, subject), 0);
  assert.equal(
    await meStatus(registrant),
    401,
    "the registrant's session ends",
  );
  assert.equal(await passkeySignIn(app, key), 401);

  // Only now does the account gain a method: the owner's password.
  const set = await owner.post("/passkeys/recover/password", {
    password: "the owner's own long password",
  });
  assert.equal(set.status, 303);
  assert.equal(set.headers.get("location"), "/account");
  assert.equal(await meStatus(owner), 200);
  const login = await post(new Browser(app.origin), "/login", {
    email: "mine@example.com",
    password: "the owner's own long password",
  });
  assert.equal(login.status, 200);
  assert.equal(await passkeySignIn(app, key), 401);
});

Deno.test("passkey recovery of an account never proven disowns in the browser that signed up too, as a password reset does", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const b = new Browser(app.origin);
  const { key, subject } = await signUp(app, b, "self@example.com");
  await app.awaitLink("self@example.com");
  const asked = await b.post("/passkeys/recover", {
    email: "self@example.com",
  });
  assert.equal(asked.status, 303);
  const link = await recoveryLink(app, "self@example.com", 2);
  const redeemed = await b.post("/passkeys/recover/callback", {
    token: link.searchParams.get("token")!,
  });
  assert.equal(redeemed.status, 303);
  assert.ok((await app.credentials.findById(subject))!.verifiedAt > 0);
  assert.equal(await passkeyCount(app, subject), 0);
  assert.equal(await passkeySignIn(app, key), 401);
  // The recovery adds the new passkey (or a password) after the proof.
  const options = await post(b, "/passkeys/recover/options", {});
  assert.equal(options.status, 200);
  const fresh = new SoftAuthenticator(app.origin);
  const added = await post(b, "/passkeys/recover/register", {
    response: await fresh.create(
      options.body as { challenge: string; user: { id: string } },
    ),
    name: "New laptop",
  });
  assert.equal(added.status, 201, JSON.stringify(added.body));
  assert.equal(await passkeyCount(app, subject), 1);
  assert.equal(await passkeySignIn(app, fresh), 200);
});
