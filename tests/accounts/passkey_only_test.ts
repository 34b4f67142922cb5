/**
 * Passkey-only accounts (issue 29 item 1) over HTTP, with a software
 * passkey (`tests/support/soft_authenticator.ts`): sign-up with an email and
 * a passkey, sign-in with it alone, the address proven by the mailed link
 * (the owner's own browser keeps the passkey; any other browser disowns,
 * so an attacker's passkey on an unverified account goes), recovery by a
 * mailed link into a session that can add a passkey or set a password and
 * nothing else, and the lies a hostile client tells at sign-in.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Browser, startApp, type TestApp } from "../app/_harness.ts";
import { FLAGS, SoftAuthenticator } from "../support/soft_authenticator.ts";

const SESSION = "__Host-session";
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

async function me(b: Browser): Promise<{ status: number; email?: string }> {
  const res = await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  const body = res.ok ? await res.json() : (await res.body?.cancel(), null);
  return { status: res.status, email: body?.email };
}

/** Signs up in `b` with a new software passkey; answers it and the subject. */
async function signUp(
  app: TestApp,
  b: Browser,
  email: string,
): Promise<{ key: SoftAuthenticator; subject: string }> {
  const started = await post(b, "/passkeys/signup/options", { email });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const key = new SoftAuthenticator(app.origin);
  const options = started.body.options as {
    challenge: string;
    user: { id: string };
  };
  const done = await post(b, "/passkeys/signup", {
    pending: started.body.pending,
    response: await key.create(options),
    name: "Laptop",
    next: "/account",
  });
  assert.equal(done.status, 201, JSON.stringify(done.body));
  assert.equal(done.body.next, "/account");
  const user = (await app.credentials.findByEmail(email))!;
  return { key, subject: user.id };
}

async function signIn(
  b: Browser,
  key: SoftAuthenticator,
  lies = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const options = await post(b, "/passkeys/login/options", {});
  return await post(b, "/passkeys/login", {
    response: await key.get(options.body as { challenge: string }, lies),
  });
}

async function passkeyCount(app: TestApp, subject: string): Promise<number> {
  return (await app.query(
    `SELECT credential_id FROM passkeys WHERE user_id = '${subject}'`,
  )).length;
}

Deno.test("passkey-only: sign up with an email and a passkey (no password), sign out, sign in with the passkey alone", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const b = new Browser(app.origin);
  const page = await b.page("/passkeys/signup");
  assert.equal(page.status, 200);
  assert.match(page.body, /id="passkey-signup"/);
  assert.match(page.body, /<noscript>.*href="\/register"/s);
  const { key, subject } = await signUp(app, b, "solo@example.com");
  assert.deepEqual(await me(b), { status: 200, email: "solo@example.com" });
  const user = (await app.credentials.findById(subject))!;
  assert.match(user.passwordHash, /^!/, "no password");
  assert.equal(user.verifiedAt, 0);
  assert.match(await app.awaitLink("solo@example.com"), /\/verify\?token=/);
  // No password signs in: the account has none.
  const guess = await post(new Browser(app.origin), "/login", {
    email: "solo@example.com",
    password: "",
  });
  assert.notEqual(guess.status, 200);

  // Sign out, then the passkey alone signs in.
  const out = await b.post("/logout", {});
  assert.equal(out.status, 303);
  assert.equal((await me(b)).status, 401);
  const back = await signIn(b, key);
  assert.equal(back.status, 200);
  assert.deepEqual(await me(b), { status: 200, email: "solo@example.com" });
});

Deno.test("passkey-only: sign-up refusals change nothing: a taken or invalid address, a forged or expired pending sign-up, a refused passkey", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const b = new Browser(app.origin);
  await signUp(app, b, "taken@example.com");
  const taken = await post(
    new Browser(app.origin),
    "/passkeys/signup/options",
    {
      email: "taken@example.com",
    },
  );
  assert.equal(taken.status, 409);
  assert.equal(taken.body.error, "email_taken");
  const invalid = await post(b, "/passkeys/signup/options", {
    email: "not an address",
  });
  assert.equal(invalid.status, 422);
  assert.equal(invalid.body.error, "invalid_email");
  const notJson = await b.post("/passkeys/signup/options", { email: "x" });
  assert.equal(notJson.status, 400);

  const c = new Browser(app.origin);
  const started = await post(c, "/passkeys/signup/options", {
    email: "new@example.com",
  });
  const options = started.body.options as {
    challenge: string;
    user: { id: string };
  };
  const key = new SoftAuthenticator(app.origin);
  const response = await key.create(options);
  // A pending value edited by the client: refused, no account.
  const forged = await post(c, "/passkeys/signup", {
    pending: String(started.body.pending).slice(0, -2) + "AA",
    response,
  });
  assert.equal(forged.status, 400);
  assert.equal(forged.body.error, "invalid_signup");
  // A passkey without user verification: refused, and no account stays.
  const noUv = await post(c, "/passkeys/signup", {
    pending: started.body.pending,
    response: await key.create(options, { flags: FLAGS.UP }),
  });
  assert.equal(noUv.status, 400);
  assert.equal(noUv.body.error, "passkey_refused");
  assert.equal(await app.credentials.findByEmail("new@example.com"), null);
  // Expired: five minutes later the pending sign-up is no more.
  const late = await post(c, "/passkeys/signup/options", {
    email: "late@example.com",
  });
  app.advance(301_000);
  const expired = await post(c, "/passkeys/signup", {
    pending: late.body.pending,
    response: await new SoftAuthenticator(app.origin).create(
      late.body.options as { challenge: string; user: { id: string } },
    ),
  });
  assert.equal(expired.status, 400);
  assert.equal(await app.credentials.findByEmail("late@example.com"), null);
  assert.equal((await me(c)).status, 401);
});

Deno.test("passkey-only: an unverified account gains no second passkey; the owner's own browser verifies and keeps its sign-up passkey", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const b = new Browser(app.origin);
  const { key, subject } = await signUp(app, b, "own@example.com");
  const second = await post(b, "/passkeys/register/options", {});
  assert.equal(second.status, 403);
  assert.equal(second.body.error, "unverified");
  // The owner opens the mailed link in the browser that signed up.
  const link = new URL(await app.awaitLink("own@example.com"));
  const opened = await b.fetch(link.pathname + link.search);
  assert.equal(opened.status, 303);
  assert.ok((await app.credentials.findById(subject))!.verifiedAt > 0);
  assert.equal(await passkeyCount(app, subject), 1);
  await b.post("/logout", {});
  assert.equal((await signIn(b, key)).status, 200);
});

Deno.test("passkey-only: an attacker's passkey on an unverified account is removed by the owner's proof; the attacker's session ends and its passkey signs in to nothing (the page is told it is unknown)", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const attacker = new Browser(app.origin);
  const { key, subject } = await signUp(app, attacker, "victim@example.com");
  assert.equal(await passkeyCount(app, subject), 1);
  // The owner opens the link in their own browser (no session there).
  const link = new URL(await app.awaitLink("victim@example.com"));
  const owner = new Browser(app.origin);
  const page = await owner.page(link.pathname + link.search);
  assert.equal(page.status, 200, "a form: the link is not used by a GET");
  assert.equal(await passkeyCount(app, subject), 1);
  const proved = await owner.post("/verify", {
    token: link.searchParams.get("token")!,
  });
  assert.equal(proved.status, 303);
  assert.equal(await passkeyCount(app, subject), 0);
  assert.ok((await app.credentials.findById(subject))!.verifiedAt > 0);
  assert.equal((await me(attacker)).status, 401, "the attacker's session ends");
  const refused = await signIn(new Browser(app.origin), key);
  assert.equal(refused.status, 401);
  assert.equal(refused.body.unknownCredential, true);
  assert.ok(app.logs.some((l) => l.includes('"reason":"unknown_credential"')));
});

/** Asks for a recovery link and redeems it in `b`; answers the response. */
async function recover(
  app: TestApp,
  b: Browser,
  email: string,
  count = 1,
): Promise<Response> {
  const asked = await b.post("/passkeys/recover", { email });
  assert.equal(asked.status, 303);
  const link = new URL(
    (await app.awaitLink(email, count)).replace(/&amp;/g, "&"),
  );
  assert.equal(link.pathname, "/passkeys/recover/callback");
  const page = await b.page(link.pathname + link.search);
  assert.equal(page.status, 200);
  assert.equal(b.cookies.has(RECOVERY), false, "a GET starts nothing");
  return await b.post("/passkeys/recover/callback", {
    token: link.searchParams.get("token")!,
  });
}

Deno.test("passkey-only: recovery by a mailed link starts a session that can add a passkey and nothing else (403 elsewhere); adding one signs in and signs out everywhere", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const first = new Browser(app.origin);
  const { subject } = await signUp(app, first, "lost@example.com");
  await app.credentials.markVerified(subject, "lost@example.com", app.now());
  // The same answer for an address nobody registered, and no mail.
  const nobody = await new Browser(app.origin).post("/passkeys/recover", {
    email: "nobody@example.com",
  });
  assert.equal(nobody.status, 303);

  const b = new Browser(app.origin);
  await app.awaitLink("lost@example.com");
  const started = await recover(app, b, "lost@example.com", 2);
  assert.equal(started.status, 303);
  assert.equal(started.headers.get("location"), "/passkeys/recover/session");
  assert.ok(b.cookies.has(RECOVERY));
  assert.equal(b.cookies.has(SESSION), false, "no session yet");
  const session = await b.page("/passkeys/recover/session");
  assert.equal(session.status, 200);
  assert.match(session.body, /id="passkey-recover-add"/);
  assert.match(session.body, /action="\/passkeys\/recover\/password"/);

  // Everything else: 403 recovery_only, nothing changes.
  for (
    const [method, path] of [
      ["GET", "/account"],
      ["GET", "/api/me"],
      ["GET", "/"],
      ["POST", "/account/delete"],
      ["POST", "/passkeys/register/options"],
      ["POST", "/account/email"],
    ]
  ) {
    const res = await b.fetch(path, {
      method,
      headers: {
        accept: "application/json",
        "content-type": "application/json",
      },
      body: method === "POST" ? "{}" : undefined,
    });
    assert.equal(res.status, 403, `${method} ${path}`);
    assert.equal(
      (await res.json()).error,
      "recovery_only",
      `${method} ${path}`,
    );
  }
  const html = await b.page("/account");
  assert.equal(html.status, 403);
  assert.match(html.body, /can only add a passkey or set a password/);
  assert.notEqual(await app.credentials.findById(subject), null);

  // The one thing it does: add a passkey, which signs in.
  const copy = b.cookies.get(RECOVERY)!;
  const options = await post(b, "/passkeys/recover/options", {});
  assert.equal(options.status, 200);
  const key = new SoftAuthenticator(app.origin);
  const added = await post(b, "/passkeys/recover/register", {
    response: await key.create(
      options.body as { challenge: string; user: { id: string } },
    ),
    name: "New phone",
  });
  assert.equal(added.status, 201, JSON.stringify(added.body));
  assert.equal(added.body.next, "/account");
  assert.equal(b.cookies.has(RECOVERY), false, "the recovery ends");
  assert.deepEqual(await me(b), { status: 200, email: "lost@example.com" });
  assert.equal((await me(first)).status, 401, "every other session ends");
  assert.equal(await passkeyCount(app, subject), 2);
  const activity = await app.query(
    `SELECT type FROM auth_events WHERE subject = '${subject}' ORDER BY at`,
  );
  assert.ok(activity.some((e) => e.type === "passkey_added"));
  await b.post("/logout", {});
  assert.equal((await signIn(b, key)).status, 200);

  // A copy of the spent recovery cookie adds nothing.
  const thief = new Browser(app.origin);
  thief.cookies.set(RECOVERY, copy);
  // (Not even options: a spent recovery is no recovery.)
  const again = await post(thief, "/passkeys/recover/options", {});
  assert.equal(again.status, 403);
  assert.equal(again.body.error, "recovery_required");
  const stolen = await post(thief, "/passkeys/recover/register", {
    response: {},
  });
  assert.equal(stolen.status, 403);
  assert.equal(stolen.body.error, "recovery_required");
  assert.equal(await passkeyCount(app, subject), 2);
  assert.equal(thief.cookies.has(SESSION), false);
});

Deno.test("passkey-only: recovery can set a password instead (a refused one changes nothing); without a recovery session the routes answer 403", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const { subject } = await signUp(
    app,
    new Browser(app.origin),
    "pw@example.com",
  );
  await app.credentials.markVerified(subject, "pw@example.com", app.now());
  const stranger = new Browser(app.origin);
  assert.equal(
    (await post(stranger, "/passkeys/recover/options", {})).status,
    403,
  );
  assert.equal(
    (await stranger.post("/passkeys/recover/password", { password: "x" }))
      .status,
    403,
  );
  const b = new Browser(app.origin);
  await app.awaitLink("pw@example.com");
  assert.equal((await recover(app, b, "pw@example.com", 2)).status, 303);
  const weak = await b.post("/passkeys/recover/password", {
    password: "password",
  });
  assert.equal(weak.status, 422);
  assert.match((await app.credentials.findById(subject))!.passwordHash, /^!/);
  assert.ok(b.cookies.has(RECOVERY), "the recovery goes on");
  const set = await b.post("/passkeys/recover/password", {
    password: "a long and unusual passphrase",
  });
  assert.equal(set.status, 303);
  assert.equal(set.headers.get("location"), "/account");
  assert.equal(b.cookies.has(RECOVERY), false);
  assert.equal((await me(b)).status, 200);
  const login = await post(new Browser(app.origin), "/login", {
    email: "pw@example.com",
    password: "a long and unusual passphrase",
  });
  assert.equal(login.status, 200);
  // Ending a recovery drops its cookie.
  const c = new Browser(app.origin);
  await recover(app, c, "pw@example.com", 3);
  assert.ok(c.cookies.has(RECOVERY));
  const ended = await c.post("/passkeys/recover/end", {});
  assert.equal(ended.status, 303);
  assert.equal(c.cookies.has(RECOVERY), false);
  assert.equal((await c.page("/login")).status, 200);
});

Deno.test("passkey-only: recovery of an account never proven disowns it first (the passkey someone set up goes, every session ends)", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const attacker = new Browser(app.origin);
  const { key, subject } = await signUp(app, attacker, "owner@example.com");
  const b = new Browser(app.origin);
  // The verification mail is the first; the recovery mail the second.
  await app.awaitLink("owner@example.com");
  assert.equal((await recover(app, b, "owner@example.com", 2)).status, 303);
  assert.equal(await passkeyCount(app, subject), 0);
  assert.ok((await app.credentials.findById(subject))!.verifiedAt > 0);
  assert.equal((await me(attacker)).status, 401);
  assert.equal((await signIn(new Browser(app.origin), key)).status, 401);
});

Deno.test("passkey-only: my sessions, an email change and deletion work for an account without a password: a fresh passkey assertion stands for the password, the session alone does not", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const b = new Browser(app.origin);
  const { key, subject } = await signUp(app, b, "live@example.com");
  await app.credentials.markVerified(subject, "live@example.com", app.now());
  const sessions = await b.fetch("/api/sessions", {
    headers: { accept: "application/json" },
  });
  assert.equal(sessions.status, 200);
  assert.equal((await sessions.json()).sessions.length, 1);

  // The session alone changes nothing.
  const noProof = await post(b, "/account/email", {
    email: "moved@example.com",
  });
  assert.equal(noProof.status, 403);
  assert.equal(noProof.body.error, "reauthentication_required");
  // A passkey assertion of the account's own: then the change is mailed.
  const options = await post(b, "/passkeys/reauth/options", {});
  const confirmed = await post(b, "/passkeys/reauth", {
    response: await key.get(options.body as { challenge: string }),
    next: "/account",
  });
  assert.equal(confirmed.status, 200);
  const change = await post(b, "/account/email", {
    email: "moved@example.com",
  });
  assert.equal(change.status, 202);
  const link = new URL(await app.awaitLink("moved@example.com"));
  const moved = await b.post("/account/email/confirm", {
    token: link.searchParams.get("token")!,
  });
  assert.equal(moved.status, 303);
  assert.equal(
    (await app.credentials.findById(subject))!.email,
    "moved@example.com",
  );
  // The passkey still signs in after the change.
  const other = new Browser(app.origin);
  assert.equal((await signIn(other, key)).status, 200);
  assert.equal((await me(other)).email, "moved@example.com");

  // Deletion: refused without the assertion (a new session), done with it.
  const refused = await post(other, "/account/delete", {});
  assert.equal(refused.status, 403);
  const again = await post(other, "/passkeys/reauth/options", {});
  assert.equal(
    (await post(other, "/passkeys/reauth", {
      response: await key.get(again.body as { challenge: string }),
    })).status,
    200,
  );
  const deleted = await post(other, "/account/delete", {});
  assert.equal(deleted.status, 204);
  assert.equal(await app.credentials.findById(subject), null);
  assert.equal(await passkeyCount(app, subject), 0);
  assert.equal((await signIn(new Browser(app.origin), key)).status, 401);
});

Deno.test("outside review F1: an open recovery session ends when the owner signs out everywhere, changes the password or the address", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const owner = new Browser(app.origin);
  const { subject } = await signUp(app, owner, "held@example.com");
  await app.credentials.markVerified(subject, "held@example.com", app.now());
  await app.awaitLink("held@example.com");
  // Someone who opened the mailbox redeems a recovery link.
  const thief = new Browser(app.origin);
  assert.equal(
    (await recover(app, thief, "held@example.com", 2)).status,
    303,
  );
  assert.ok(thief.cookies.has(RECOVERY));
  // The owner, still signed in, signs out everywhere else.
  const out = await owner.post("/account/sessions/revoke-others", {});
  assert.equal(out.status, 303, await out.text());
  // The thief's recovery session can set nothing now.
  const set = await thief.post("/passkeys/recover/password", {
    password: "the thief's own long passphrase",
  }, { accept: "application/json" });
  assert.equal(set.status, 403, await set.text());
  const options = await post(thief, "/passkeys/recover/options", {});
  assert.notEqual(options.status, 200);
  assert.equal((await me(owner)).status, 200, "the owner stays signed in");
});

Deno.test("outside review F2: a registration challenge is good only on the route that issued it (an upgrade's or a recovery's challenge adds no passkey through /passkeys/register)", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const b = new Browser(app.origin);
  const { subject } = await signUp(app, b, "route@example.com");
  await app.credentials.markVerified(subject, "route@example.com", app.now());
  await app.awaitLink("route@example.com");
  const before = await passkeyCount(app, subject);
  // A recovery's challenge, spent on the ordinary route by the signed-in
  // browser, adds nothing.
  const r = new Browser(app.origin);
  await recover(app, r, "route@example.com", 2);
  const recovery = await post(r, "/passkeys/recover/options", {});
  assert.equal(recovery.status, 200);
  for (const k of [SESSION]) r.cookies.delete(k);
  const key = new SoftAuthenticator(app.origin);
  const response = await key.create(
    recovery.body as { challenge: string; user: { id: string } },
  );
  const wrongRoute = await post(b, "/passkeys/register", {
    response,
    name: "Sneaky",
  });
  assert.equal(wrongRoute.status, 400, JSON.stringify(wrongRoute.body));
  assert.equal(await passkeyCount(app, subject), before);
});

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

// An outside tester asked whether an account never proven should get a
// recovery link at all. It does, as a password account never proven gets
// a reset link: the mail reaches only the address's owner, so redeeming it
// is the first proof of the address, and it disowns before anything is
// added.
Deno.test("outside review F3: recovery of an account never proven: the link goes to its address, asking and opening change nothing, redeeming disowns before anything is added", async () => {
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
  assert.equal(asked.headers.get("location"), nobody.headers.get("location"));
  // The link goes to the stored address only: its owner's mailbox.
  const link = await recoveryLink(app, "mine@example.com", 2);
  assert.ok(app.mail.every((l) => !l.includes("to=nobody@example.com")));

  // Asking changed nothing: still unproven, the passkey and session stand.
  assert.equal((await app.credentials.findById(subject))!.verifiedAt, 0);
  assert.equal(await passkeyCount(app, subject), 1);
  assert.equal((await me(registrant)).status, 200);

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
  assert.equal((await me(registrant)).status, 401, "the registrant's ends");
  assert.equal((await signIn(new Browser(app.origin), key)).status, 401);

  // Only now does the account gain a method: the owner's password.
  const set = await owner.post("/passkeys/recover/password", {
    password: "the owner's own long password",
  });
  assert.equal(set.status, 303);
  assert.equal(set.headers.get("location"), "/account");
  assert.equal((await me(owner)).status, 200);
  const login = await post(new Browser(app.origin), "/login", {
    email: "mine@example.com",
    password: "the owner's own long password",
  });
  assert.equal(login.status, 200);
  assert.equal((await signIn(new Browser(app.origin), key)).status, 401);
});

Deno.test("outside review F3: recovery of an account never proven disowns in the browser that signed up too, as a password reset does", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  const b = new Browser(app.origin);
  const { key, subject } = await signUp(app, b, "self@example.com");
  await app.awaitLink("self@example.com");
  assert.equal(
    (await b.post("/passkeys/recover", { email: "self@example.com" })).status,
    303,
  );
  const link = await recoveryLink(app, "self@example.com", 2);
  const redeemed = await b.post("/passkeys/recover/callback", {
    token: link.searchParams.get("token")!,
  });
  assert.equal(redeemed.status, 303);
  assert.ok((await app.credentials.findById(subject))!.verifiedAt > 0);
  assert.equal(await passkeyCount(app, subject), 0);
  assert.equal((await signIn(new Browser(app.origin), key)).status, 401);
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
  assert.equal((await signIn(new Browser(app.origin), fresh)).status, 200);
});
