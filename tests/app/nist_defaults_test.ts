/**
 * NIST SP 800-63B-4 defaults on the reference app (issue 29 item 7): 15
 * characters for a password that is the account's only factor, 8 with a
 * second factor (TOTP here; a passkey answers the same question through its
 * lifecycle part, tests/authn/account_lifecycle_test.ts); the last second
 * factor is not removed while the password is shorter than 15; an older,
 * shorter password keeps signing in and its owner is asked to lengthen it;
 * the signed-in password checks stop after 100 wrong passwords in a row.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import { Pbkdf2Hasher } from "../../lib/authn/pbkdf2_hasher.ts";
import {
  api,
  bearer,
  Browser,
  registerJson,
  startApp,
  type TestApp,
  verifyDirectly,
} from "./_harness.ts";

const LONG = "correct horse battery";

function code(secret: string, at: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({
    timestamp: at,
  });
}

/** Turns TOTP on for a signed-in Bearer client; answers the key. */
async function turnTotpOn(
  app: TestApp,
  token: string,
  password: string,
): Promise<string> {
  const start = await api(
    app.origin,
    "POST",
    "/account/totp",
    { password },
    bearer(token),
  );
  assert.equal(start.status, 200, JSON.stringify(start.body));
  const secret = (start.body as { secret: string }).secret;
  const confirmed = await api(
    app.origin,
    "POST",
    "/account/totp/confirm",
    { code: code(secret, app.now()) },
    bearer(token),
  );
  assert.equal(confirmed.status, 200);
  return secret;
}

/** An account made before the rule: a 9-character password, verified. */
async function olderAccount(app: TestApp, email: string): Promise<string> {
  const id = crypto.randomUUID();
  const created = await app.credentials.create({
    id,
    email,
    passwordHash: await new Pbkdf2Hasher({ iterations: 1000 }).hash(
      "nine char",
    ),
    createdAt: app.now(),
  });
  assert.equal(created.kind, "created");
  await verifyDirectly(app, email);
  return id;
}

Deno.test("NIST SP 800-63B-4: registration with a password alone asks 15 characters; the form says so", async () => {
  await using app = await startApp();
  const short = await api(app.origin, "POST", "/register", {
    email: "r@example.com",
    password: "fourteen chars",
  });
  assert.equal(short.status, 422);
  assert.deepEqual(short.body, {
    error: "invalid_password",
    message: "Passwords need at least 15 characters",
  });
  assert.equal(await app.credentials.findByEmail("r@example.com"), null);
  const ok = await api(app.origin, "POST", "/register", {
    email: "r@example.com",
    password: "fifteen chars!!",
  });
  assert.equal(ok.status, 201);
  const page = await (await fetch(`${app.origin}/register`)).text();
  assert.match(page, /minlength="15"/);
  assert.match(page, /at least 15 characters/);
});

Deno.test("NIST SP 800-63B-4: a password change asks 15 without a second factor and 8 with TOTP on, and the form says which", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { token } = await registerJson(app.origin, "c@example.com", LONG);
  await verifyDirectly(app, "c@example.com");
  const tooShort = await api(app.origin, "POST", "/account/password", {
    currentPassword: LONG,
    newPassword: "eight ch",
  }, bearer(token));
  assert.equal(tooShort.status, 422);
  assert.equal(
    (tooShort.body as { message: string }).message,
    "Passwords need at least 15 characters",
  );
  const browser = new Browser(app.origin);
  await browser.post("/login", { email: "c@example.com", password: LONG });
  assert.match((await browser.page("/account")).body, /minlength="15"/);

  await turnTotpOn(app, token, LONG);
  assert.match((await browser.page("/account")).body, /minlength="8"/);
  const seven = await api(app.origin, "POST", "/account/password", {
    currentPassword: LONG,
    newPassword: "seven c",
  }, bearer(token));
  assert.equal(seven.status, 422);
  assert.equal(
    (seven.body as { message: string }).message,
    "Passwords need at least 8 characters",
  );
  const eight = await api(app.origin, "POST", "/account/password", {
    currentPassword: LONG,
    newPassword: "eight ch",
  }, bearer(token));
  assert.equal(eight.status, 200, JSON.stringify(eight.body));
});

Deno.test("NIST SP 800-63B-4: a reset asks 15 without a second factor, 8 for a verified account with TOTP on", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { token } = await registerJson(app.origin, "z@example.com", LONG);
  await verifyDirectly(app, "z@example.com");
  const resetWith = async (password: string) => {
    const sent = app.mail.filter((l) => l.includes("to=z@example.com ")).length;
    const asked = await api(app.origin, "POST", "/password/forgot", {
      email: "z@example.com",
    });
    assert.equal(asked.status, 202);
    const link = await app.awaitLink("z@example.com", sent + 1);
    const tokenValue = new URL(link).searchParams.get("token")!;
    return await api(app.origin, "POST", "/password/reset", {
      token: tokenValue,
      password,
    });
  };
  const refused = await resetWith("eight ch");
  assert.equal(refused.status, 422);
  assert.equal(
    (refused.body as { message: string }).message,
    "Passwords need at least 15 characters",
  );
  await turnTotpOn(app, token, LONG);
  app.advance(3600_000); // a fresh reset link (3 an hour per address)
  const accepted = await resetWith("eight ch");
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
});

Deno.test("NIST SP 800-63B-4: TOTP is not turned off while the password, which would be the only factor, is shorter than 15", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { token } = await registerJson(app.origin, "t@example.com", LONG);
  await verifyDirectly(app, "t@example.com");
  const secret = await turnTotpOn(app, token, LONG);
  const changed = await api(app.origin, "POST", "/account/password", {
    currentPassword: LONG,
    newPassword: "eight ch",
  }, bearer(token));
  assert.equal(changed.status, 200);
  const fresh = (changed.body as { token: string }).token;
  app.advance(30_000);
  const off = await api(app.origin, "POST", "/account/totp/disable", {
    password: "eight ch",
    code: code(secret, app.now()),
  }, bearer(fresh));
  assert.equal(off.status, 409, JSON.stringify(off.body));
  assert.equal((off.body as { error: string }).error, "password_too_short");
  assert.match(
    (off.body as { message: string }).message,
    /at least 15 characters: change your password to a longer one first/,
  );
  // Still on: the password alone opens no session.
  const login = await api(app.origin, "POST", "/login", {
    email: "t@example.com",
    password: "eight ch",
  });
  assert.equal(login.status, 202);
  // A longer password first, then TOTP goes.
  const longer = await api(app.origin, "POST", "/account/password", {
    currentPassword: "eight ch",
    newPassword: LONG,
  }, bearer(fresh));
  assert.equal(longer.status, 200);
  app.advance(30_000);
  const offNow = await api(app.origin, "POST", "/account/totp/disable", {
    password: LONG,
    code: code(secret, app.now()),
  }, bearer((longer.body as { token: string }).token));
  assert.equal(offNow.status, 204, JSON.stringify(offNow.body));
});

Deno.test("NIST SP 800-63B-4: an older, shorter password keeps signing in, and the sign-in asks its owner to lengthen it", async () => {
  await using app = await startApp();
  await olderAccount(app, "old@example.com");
  const json = await api(app.origin, "POST", "/login", {
    email: "old@example.com",
    password: "nine char",
  });
  assert.equal(json.status, 200);
  assert.match(
    (json.body as { notice: string }).notice,
    /shorter than 15 characters.*account page/,
  );
  const browser = new Browser(app.origin);
  const form = await browser.post("/login", {
    email: "old@example.com",
    password: "nine char",
  });
  assert.equal(form.status, 303);
  await form.body?.cancel();
  assert.match(
    (await browser.page("/")).body,
    /Your password is shorter than 15 characters/,
  );
  // A long password gets no notice.
  await registerJson(app.origin, "new@example.com", LONG);
  const fine = await api(app.origin, "POST", "/login", {
    email: "new@example.com",
    password: LONG,
  });
  assert.equal((fine.body as { notice?: string }).notice, undefined);
});

Deno.test("NIST SP 800-63B-4 §3.2.2: the signed-in password checks stop after the cap of wrong passwords in a row; a right one starts over", async () => {
  await using app = await startApp({
    limits: {
      recheckConsecutiveFailures: { max: 3, windowSeconds: 3600 },
    },
  });
  const { token } = await registerJson(app.origin, "k@example.com", LONG);
  const tryDelete = (password: string) =>
    api(app.origin, "POST", "/account/delete", { password }, bearer(token));
  const tryChange = (currentPassword: string) =>
    api(app.origin, "POST", "/account/password", {
      currentPassword,
      newPassword: "a brand new passphrase",
    }, bearer(token));
  assert.equal((await tryDelete("wrong one")).status, 401);
  assert.equal((await tryChange("wrong two")).status, 401);
  // A right password resets the count.
  const right = await api(app.origin, "POST", "/account/email", {
    email: "k2@example.com",
    password: LONG,
  }, bearer(token));
  assert.equal(right.status, 202);
  for (let i = 0; i < 3; i++) {
    assert.equal((await tryDelete(`wrong ${i}`)).status, 401);
  }
  const stopped = await tryDelete(LONG);
  assert.equal(stopped.status, 429, "even the right password waits");
  assert.ok(Number(stopped.headers.get("retry-after")) > 0);
  assert.equal((await tryChange(LONG)).status, 429);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).status,
    200,
    "the account and its session stand",
  );
  await assert.rejects(
    () =>
      startApp({
        limits: {
          recheckConsecutiveFailures: { max: 101, windowSeconds: 60 },
        },
      }),
    RangeError,
  );
});
