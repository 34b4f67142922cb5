/**
 * Accounts without a password (made by signing in with OpenID Connect), in
 * the reference app over HTTP against a real OpenID Provider: the account
 * page offers a mailed link to set a password instead of the change form;
 * each action that re-checks the password works after a fresh login at
 * the provider; and a stolen session cookie alone still changes nothing.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import { api, Browser } from "./_harness.ts";
import { me, reauthThroughOp, setupOidcApp, throughOp } from "./_oidc_app.ts";

const SESSION = "__Host-session";
const REAUTH = "__Host-reauth";

/** Signs up through the provider; answers the browser and the subject. */
async function signUp(
  app: { origin: string },
  op: Parameters<typeof throughOp>[1],
  login: string,
): Promise<{ b: Browser; subject: string }> {
  const b = new Browser(app.origin);
  const res = await b.fetch(await throughOp(b, op, login));
  assert.equal(res.status, 303);
  const { status, body } = await me(b);
  assert.equal(status, 200);
  return { b, subject: body.subject };
}

/** Another browser holding only a copy of `b`'s session cookie. */
function thief(origin: string, b: Browser): Browser {
  const t = new Browser(origin);
  t.cookies.set(SESSION, b.cookies.get(SESSION)!);
  return t;
}

Deno.test("password-less: /account offers a mailed link to set a password, not the change form; the link sets one and signs out everywhere", async () => {
  const { app, op, close } = await setupOidcApp();
  try {
    const { b, subject } = await signUp(app, op, "np1;np1@example.com;true");
    const page = await b.page("/account");
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.body, /name="currentPassword"/);
    assert.match(page.body, /id="no-password"/);
    assert.match(page.body, /action="\/account\/password\/link"/);
    assert.match(page.body, /id="reauth-needed"/);
    assert.match(
      page.body,
      /id="reauth-local" href="\/login\/oidc\/local\/reauth\?next=\/account"/,
    );
    // The change form's route says what to do instead of "wrong password".
    const change = await api(app.origin, "POST", "/account/password", {
      currentPassword: "",
      newPassword: "a brand new passphrase",
    }, { cookie: `${SESSION}=${b.cookies.get(SESSION)}` });
    assert.equal(change.status, 409);
    assert.equal(change.body.error, "no_password");

    const asked = await b.post("/account/password/link", {});
    assert.equal(asked.status, 303);
    assert.equal(asked.headers.get("location"), "/account");
    const link = await app.awaitLink("np1@example.com");
    assert.match(link, /\/password\/reset\?token=/);
    assert.ok(app.mail.some((l) => l.includes('subject="Set a password"')));
    const token = new URL(link).searchParams.get("token")!;
    const form = await new Browser(app.origin).page(
      `/password/reset?token=${encodeURIComponent(token)}`,
    );
    assert.equal(form.status, 200);
    const set = await new Browser(app.origin).post("/password/reset", {
      token,
      password: "a brand new passphrase",
    });
    assert.equal(set.status, 303);
    // Every session is signed out; the password now signs in.
    assert.equal((await me(b)).status, 401);
    const login = await api(app.origin, "POST", "/login", {
      email: "np1@example.com",
      password: "a brand new passphrase",
    });
    assert.equal(login.status, 200);
    const withPassword = new Browser(app.origin);
    await (await withPassword.post("/login", {
      email: "np1@example.com",
      password: "a brand new passphrase",
    })).body?.cancel();
    assert.match(
      (await withPassword.page("/account")).body,
      /name="currentPassword"/,
    );
    const again = await withPassword.post("/account/password/link", {});
    assert.equal(again.status, 409);
    await again.body?.cancel();
    assert.equal(
      (await app.credentials.findById(subject))?.email,
      "np1@example.com",
    );
  } finally {
    await close();
  }
});

Deno.test("password-less: a stolen session cookie alone cannot change the email, delete the account, turn TOTP on or link a provider; its own provider login does not confirm", async () => {
  const { app, op, close } = await setupOidcApp("on");
  try {
    const { b, subject } = await signUp(app, op, "np2;np2@example.com;true");
    const t = thief(app.origin, b);
    const email = await t.post("/account/email", {
      email: "thief@example.com",
    });
    assert.equal(email.status, 403);
    assert.match(await email.text(), /confirm it&#39;s you|confirm it's you/);
    const del = await t.post("/account/delete", {});
    assert.equal(del.status, 403);
    await del.body?.cancel();
    const totp = await t.post("/account/totp", {});
    assert.equal(totp.status, 403);
    await totp.body?.cancel();
    const passkey = await t.fetch("/passkeys/register/options", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        "sec-fetch-site": "same-origin",
      },
      body: "{}",
    });
    assert.equal(passkey.status, 403);
    assert.equal((await passkey.json()).error, "reauthentication_required");
    // The thief's own provider account neither confirms nor links.
    const confirm = await reauthThroughOp(
      t,
      op,
      "thief;thief@example.com;true",
    );
    assert.equal(confirm.status, 403);
    await confirm.body?.cancel();
    assert.ok(!t.cookies.has(REAUTH));
    const linkPage = await t.fetch(
      await throughOp(t, op, "thief;thief@example.com;true"),
    );
    assert.equal(linkPage.status, 200);
    await linkPage.body?.cancel();
    const link = await t.post("/login/oidc/link", {});
    assert.equal(link.status, 403);
    await link.body?.cancel();
    // A forged or foreign re-authentication cookie does not pass either.
    t.cookies.set(REAUTH, "v1.AAAAAAAA.e30.AAAA");
    const forged = await t.post("/account/delete", {});
    assert.equal(forged.status, 403);
    await forged.body?.cancel();
    // Nothing changed.
    const user = await app.credentials.findById(subject);
    assert.equal(user?.email, "np2@example.com");
    assert.equal(
      app.mail.filter((l) => l.includes("thief@example.com")).length,
      0,
    );
    const rows = await app.query(
      `SELECT provider_subject FROM identities WHERE user_id = '${subject}'`,
    );
    assert.deepEqual(rows.map((r) => r.provider_subject), [
      "np2;np2@example.com;true",
    ]);
    assert.equal((await me(b)).status, 200);
  } finally {
    await close();
  }
});

Deno.test("password-less: after a fresh login at its provider the owner changes the email, turns TOTP on and off, and deletes the account; the proof is bound to the session and lasts five minutes", async () => {
  const { app, op, close } = await setupOidcApp();
  try {
    const { b, subject } = await signUp(app, op, "np3;np3@example.com;true");
    const confirmed = await reauthThroughOp(b, op, "np3;np3@example.com;true");
    assert.equal(confirmed.status, 303);
    assert.equal(confirmed.headers.get("location"), "/account");
    assert.ok(b.cookies.has(REAUTH));
    assert.match((await b.page("/account")).body, /id="reauth-fresh"/);
    assert.ok(app.logs.some((l) => l.includes('"type":"reauthenticated"')));

    // Bound to this session: another session of the same user, even with
    // the proof cookie copied over, is refused.
    const other = new Browser(app.origin);
    await (await other.fetch(
      await throughOp(other, op, "np3;np3@example.com;true"),
    )).body?.cancel();
    other.cookies.set(REAUTH, b.cookies.get(REAUTH)!);
    const foreign = await other.post("/account/delete", {});
    assert.equal(foreign.status, 403);
    await foreign.body?.cancel();

    const change = await b.post("/account/email", {
      email: "np3-new@example.com",
    });
    assert.equal(change.status, 303);
    const confirmLink = await app.awaitLink("np3-new@example.com");
    const done = await b.fetch(
      new URL(confirmLink).pathname + new URL(confirmLink).search,
    );
    assert.equal(done.status, 303);
    assert.equal(
      (await app.credentials.findById(subject))?.email,
      "np3-new@example.com",
    );

    const enrol = await b.post("/account/totp", {});
    assert.equal(enrol.status, 200);
    const secret =
      (await enrol.text()).match(/id="totp-secret">([A-Z2-7]+)</)![1];
    const totp = new TOTP({ secret: Secret.fromBase32(secret) });
    const on = await b.post("/account/totp/confirm", {
      code: totp.generate({ timestamp: app.now() }),
    });
    assert.equal(on.status, 200);
    await on.body?.cancel();
    app.advance(30_000);
    const off = await b.post("/account/totp/disable", {
      code: totp.generate({ timestamp: app.now() }),
    });
    assert.equal(off.status, 303);

    // Five minutes on, the proof has expired.
    app.advance(5 * 60_000);
    const late = await b.post("/account/delete", {});
    assert.equal(late.status, 403);
    await late.body?.cancel();
    assert.notEqual(await app.credentials.findById(subject), null);
    assert.equal(
      (await reauthThroughOp(b, op, "np3;np3@example.com;true")).status,
      303,
    );
    const deleted = await b.post("/account/delete", {});
    assert.equal(deleted.status, 303);
    assert.equal(await app.credentials.findById(subject), null);
    assert.equal((await me(b)).status, 401);
  } finally {
    await close();
  }
});

Deno.test("password-less: a second provider account with the same verified email is not offered a password it cannot give", async () => {
  const { app, op, close } = await setupOidcApp();
  try {
    await signUp(app, op, "first;shared@example.com;true");
    const b = new Browser(app.origin);
    const res = await b.fetch(
      await throughOp(b, op, "second;shared@example.com;true"),
    );
    assert.equal(res.status, 403);
    const text = await res.text();
    assert.match(text, /has no password/);
    assert.doesNotMatch(text, /name="password"/);
    assert.equal((await me(b)).status, 401);
  } finally {
    await close();
  }
});
