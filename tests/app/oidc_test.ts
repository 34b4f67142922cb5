/**
 * OpenID Connect in the reference app, against a real OpenID Provider
 * (`oidc-provider`) started as its own process on 127.0.0.1: a first login
 * creates the user, later ones sign the same user in, an existing password
 * account is linked only after its password (verified email) or not at all
 * (unverified), a signed-in user links from the account page, and tampered
 * or replayed callbacks fail closed.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import {
  api,
  Browser,
  registerJson,
  startApp,
  verifyDirectly,
} from "./_harness.ts";
import {
  me,
  reauthThroughOp,
  setupOidcApp as setup,
  throughOp,
} from "./_oidc_app.ts";

Deno.test("OIDC: a first login at the provider creates the user; the next one signs the same user in; revokeAll ends it", async () => {
  const { app, op, close } = await setup();
  try {
    const login = await new Browser(app.origin).page("/login");
    assert.match(login.body, /href="\/login\/oidc\/local\?next=%2F">Local OP</);
    const b = new Browser(app.origin);
    const path = await throughOp(b, op, "new1;New1@Example.com;true");
    const res = await b.fetch(path);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/account");
    assert.ok(!b.cookies.has("__Host-oidc"), "state cookie cleared");
    const first = await me(b);
    assert.equal(first.status, 200);
    assert.equal(first.body.email, "new1@example.com");
    assert.equal(first.body.verified, true);
    assert.ok(app.logs.some((l) => l.includes('"type":"user_created"')));
    // A password login for this account is impossible: it has none.
    const pw = await api(app.origin, "POST", "/login", {
      email: "new1@example.com",
      password: "!oidc-only",
    });
    assert.equal(pw.status, 401);
    const again = new Browser(app.origin);
    assert.equal(
      (await again.fetch(
        await throughOp(again, op, "new1;New1@Example.com;true"),
      )).status,
      303,
    );
    const second = await me(again);
    assert.equal(second.body.subject, first.body.subject);
    await app.sessions.revokeAll(first.body.subject);
    app.advance(1000);
    assert.equal((await me(again)).status, 401);
    assert.equal((await me(b)).status, 401);
  } finally {
    await close();
  }
});

Deno.test("OIDC: an existing password account is linked only after its password, when the provider verified the email", async () => {
  const { app, op, close } = await setup();
  try {
    const { subject } = await registerJson(app.origin, "owner@example.com");
    await verifyDirectly(app, "owner@example.com");
    const b = new Browser(app.origin);
    const res = await b.fetch(
      await throughOp(b, op, "owner-at-op;owner@example.com;true"),
    );
    assert.equal(res.status, 200);
    assert.match(await res.text(), /Enter its\s+password once/);
    assert.ok(
      !b.cookies.has("__Host-session"),
      "no session before the password",
    );
    assert.equal((await me(b)).status, 401);
    const wrong = await b.post("/login/oidc/link", {
      password: "not the password",
    });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const right = await b.post("/login/oidc/link", {
      password: "correct horse battery",
    });
    assert.equal(right.status, 303);
    assert.equal((await me(b)).body.subject, subject);
    // From now on the provider signs the owner in directly.
    const later = new Browser(app.origin);
    assert.equal(
      (await later.fetch(
        await throughOp(later, op, "owner-at-op;owner@example.com;true"),
      )).status,
      303,
    );
    assert.equal((await me(later)).body.subject, subject);
  } finally {
    await close();
  }
});

Deno.test("OIDC: an unverified email that matches an account is refused, nothing linked", async () => {
  const { app, op, close } = await setup();
  try {
    await registerJson(app.origin, "victim@example.com");
    const b = new Browser(app.origin);
    const res = await b.fetch(
      await throughOp(b, op, "attacker;victim@example.com;false"),
    );
    assert.equal(res.status, 403);
    assert.match(await res.text(), /has not verified the address/);
    assert.equal((await me(b)).status, 401);
    // Trying again with the link form changes nothing: there is no link value.
    const forced = await b.post("/login/oidc/link", {
      password: "correct horse battery",
    });
    assert.equal(forced.status, 400);
    await forced.body?.cancel();
    assert.equal((await me(b)).status, 401);
  } finally {
    await close();
  }
});

Deno.test("OIDC: a signed-in user links the provider from the account page", async () => {
  const { app, op, close } = await setup();
  try {
    const b = new Browser(app.origin);
    await (await b.post("/register", {
      email: "linker@example.com",
      password: "correct horse battery",
    })).body?.cancel();
    await verifyDirectly(app, "linker@example.com");
    const { body } = await me(b);
    const account = await b.page("/account");
    assert.match(account.body, /Link Local OP/);
    const res = await b.fetch(
      await throughOp(b, op, "linker-op;other-address@example.com;false"),
    );
    // Nothing is linked until the user confirms on this site.
    assert.equal(res.status, 200);
    assert.match(await res.text(), /id="confirm-link"/);
    assert.doesNotMatch((await b.page("/account")).body, /<li>Local OP/);
    // Another signed-in user cannot use this browser's link value.
    const other = new Browser(app.origin);
    await (await other.post("/register", {
      email: "other@example.com",
      password: "correct horse battery",
    })).body?.cancel();
    other.cookies.set("__Host-oidc-link", b.cookies.get("__Host-oidc-link")!);
    const stolen = await other.post("/login/oidc/link", {
      password: "correct horse battery",
    });
    assert.equal(stolen.status, 400);
    await stolen.body?.cancel();
    // The session alone links nothing: the current password is re-checked.
    const bare = await b.post("/login/oidc/link", {});
    assert.equal(bare.status, 401);
    assert.match(await bare.text(), /id="link-password"/);
    assert.doesNotMatch((await b.page("/account")).body, /<li>Local OP/);
    const confirmed = await b.post("/login/oidc/link", {
      password: "correct horse battery",
    });
    assert.equal(confirmed.status, 303);
    assert.equal(confirmed.headers.get("location"), "/account");
    const after = await b.page("/account");
    assert.match(
      after.body,
      /<li>Local OP \(other-address@example\.com\)<\/li>/,
    );
    const fresh = new Browser(app.origin);
    await (await fresh.fetch(
      await throughOp(fresh, op, "linker-op;other-address@example.com;false"),
    )).body?.cancel();
    assert.equal((await me(fresh)).body.subject, body.subject);
  } finally {
    await close();
  }
});

Deno.test("OIDC: a tampered state cookie, a missing one, a replayed callback and a foreign iss each fail closed", async () => {
  const { app, op, close } = await setup();
  try {
    const refusedWith = async (b: Browser, path: string) => {
      const res = await b.fetch(path);
      assert.equal(res.status, 400, path);
      assert.match(await res.text(), /could not be completed/);
      assert.equal((await me(b)).status, 401);
    };
    let b = new Browser(app.origin);
    let path = await throughOp(b, op, "t1;t1@example.com;true");
    const value = b.cookies.get("__Host-oidc")!;
    b.cookies.set("__Host-oidc", value.slice(0, -4) + "AAAA");
    await refusedWith(b, path);

    b = new Browser(app.origin);
    path = await throughOp(b, op, "t2;t2@example.com;true");
    b.cookies.delete("__Host-oidc");
    await refusedWith(b, path);

    b = new Browser(app.origin);
    path = await throughOp(b, op, "t3;t3@example.com;true");
    const kept = b.cookies.get("__Host-oidc")!;
    const ok = await b.fetch(path);
    assert.equal(ok.status, 303);
    const replay = new Browser(app.origin);
    replay.cookies.set("__Host-oidc", kept);
    await refusedWith(replay, path);

    b = new Browser(app.origin);
    path = await throughOp(b, op, "t4;t4@example.com;true");
    const foreign = new URL(path, app.origin);
    foreign.searchParams.set("iss", "https://evil.example.com");
    await refusedWith(b, foreign.pathname + foreign.search);
    assert.ok(app.logs.some((l) => l.includes('"reason":"issuer_mismatch"')));
    assert.ok(app.logs.some((l) => l.includes('"reason":"code_rejected"')));
  } finally {
    await close();
  }
});

Deno.test("OIDC: a user with TOTP on gives a code after the provider too", async () => {
  const { app, op, close } = await setup();
  try {
    const b = new Browser(app.origin);
    assert.equal(
      (await b.fetch(await throughOp(b, op, "otp;otp@example.com;true")))
        .status,
      303,
    );
    // No password: TOTP goes on after a fresh login at the provider.
    const refused = await b.post("/account/totp", {});
    assert.equal(refused.status, 403);
    await refused.body?.cancel();
    const confirmedIt = await reauthThroughOp(
      b,
      op,
      "otp;otp@example.com;true",
    );
    assert.equal(confirmedIt.status, 303);
    const enrol = await b.post("/account/totp", {});
    const secret =
      (await enrol.text()).match(/id="totp-secret">([A-Z2-7]+)</)![1];
    const totp = new TOTP({ secret: Secret.fromBase32(secret) });
    const confirmed = await b.post("/account/totp/confirm", {
      code: totp.generate({ timestamp: app.now() }),
    });
    assert.equal(confirmed.status, 200);
    await confirmed.body?.cancel();
    app.advance(30_000);
    const fresh = new Browser(app.origin);
    const res = await fresh.fetch(
      await throughOp(fresh, op, "otp;otp@example.com;true"),
    );
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/login/totp");
    assert.ok(!fresh.cookies.has("__Host-session"));
    assert.equal((await me(fresh)).status, 401);
    const done = await fresh.post("/login/totp", {
      code: totp.generate({ timestamp: app.now() }),
    });
    assert.equal(done.status, 303);
    assert.equal((await me(fresh)).body.email, "otp@example.com");
  } finally {
    await close();
  }
});

Deno.test("OIDC: routes answer 404 when OIDC is off or the provider is unknown", async () => {
  await using app = await startApp();
  const res = await new Browser(app.origin).fetch("/login/oidc/local");
  assert.equal(res.status, 404);
  await res.body?.cancel();
  const page = await new Browser(app.origin).page("/login");
  assert.doesNotMatch(page.body, /login\/oidc/);
});
