/**
 * Issue 16: one account owns every credential. Over HTTP against the
 * reference app on its SQLite database, with a real OpenID Provider
 * (`oidc-provider`, its own process) and TOTP:
 *
 * - finding 1 (pre-account hijacking): a provider email that is not
 *   verified creates and links nothing; an unverified account gains no
 *   provider, passkey or TOTP (403, "verify first"); proving the address
 *   (the verification link, a reset) removes every credential and session
 *   someone else set up before it, and the activity says so; a
 *   verification link opened in another browser is confirmed with the
 *   account's password, or with "This wasn't me".
 * - finding 2 (deletion leaves sign-in methods): `POST /account/delete`
 *   removes every method's rows and sessions; afterwards each method fails
 *   as for an unknown account, and the address can register again and
 *   link the same provider.
 *
 * Passkeys with Chromium's virtual authenticator are in
 * tests/browser/account_integrity_browser_test.ts.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import {
  api,
  bearer,
  Browser,
  registerJson,
  startApp,
  type TestApp,
  verifyDirectly,
} from "./_harness.ts";
import type { AccountsModule } from "../../packages/accounts/mod.ts";
import { me, setupOidcApp as setup, throughOp } from "./_oidc_app.ts";

const PASSWORD = "correct horse battery";
const ATTACKER_PASSWORD = "attacker's own passphrase";

function code(secret: string, at: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({
    timestamp: at,
  });
}

async function count(
  app: TestApp,
  table: string,
  subject: string,
): Promise<number> {
  const rows = await app.query(
    `SELECT COUNT(*) AS n FROM ${table} WHERE user_id = '${subject}'`,
  );
  return Number(rows[0].n);
}

/** Rows of every sign-in method of a user, by table. */
async function methodRows(
  app: TestApp,
  subject: string,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (
    const t of ["identities", "passkeys", "totp_credentials", "recovery_codes"]
  ) {
    out[t] = await count(app, t, subject);
  }
  return out;
}

const NONE = {
  identities: 0,
  passkeys: 0,
  totp_credentials: 0,
  recovery_codes: 0,
};

/**
 * Writes rows the way a version without this fix let a party that never
 * proven the address add them (a linked provider, a passkey, TOTP with
 * recovery codes), straight into the app's tables.
 */
async function plantPreFixCredentials(
  app: TestApp,
  subject: string,
  providerSubject: string,
): Promise<void> {
  const at = app.now();
  await app.query(
    `INSERT INTO identities (provider, provider_subject, user_id, email, created_at) VALUES ('local', '${providerSubject}', '${subject}', 'attacker@evil.example', ${at})`,
  );
  await app.query(
    `INSERT INTO passkeys (credential_id, user_id, public_key, counter, transports, name, created_at, last_used_at) VALUES ('planted-${subject}', '${subject}', 'pQECAyYgASFYIA', 0, '[]', 'Attacker', ${at}, 0)`,
  );
  await app.query(
    `INSERT INTO totp_credentials (user_id, secret, enabled_at, last_step, created_at) VALUES ('${subject}', 'sealed', ${at}, 0, ${at})`,
  );
  await app.query(
    `INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES ('${subject}', 'h1', ${at}), ('${subject}', 'h2', ${at})`,
  );
}

async function activity(b: Browser): Promise<string[]> {
  const res = await b.fetch("/api/activity", {
    headers: { accept: "application/json" },
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  return (body.events ?? body).map((e: { type: string }) => e.type);
}

/** The owner resets the password by the mailed link and logs in. */
async function ownerResetsAndLogsIn(
  app: TestApp,
  email: string,
  password: string,
): Promise<Browser> {
  const before = app.mail.filter((l) => l.includes(`to=${email} `)).length;
  const asked = await api(app.origin, "POST", "/password/forgot", { email });
  assert.equal(asked.status, 202);
  const link = new URL(await app.awaitLink(email, before + 1));
  assert.equal(link.pathname, "/password/reset");
  const reset = await api(app.origin, "POST", "/password/reset", {
    token: link.searchParams.get("token"),
    password,
  });
  assert.equal(reset.status, 200, JSON.stringify(reset.body));
  const owner = new Browser(app.origin);
  const login = await owner.post("/login", { email, password });
  assert.equal(login.status, 303);
  await login.body?.cancel();
  return owner;
}

Deno.test("issue 16 finding 1 (a): a provider email with email_verified false creates no account and links none, in any browser", async () => {
  const { app, op, close } = await setup();
  try {
    const b = new Browser(app.origin);
    const res = await b.fetch(
      await throughOp(b, op, "unverified-op;fresh@example.com;false"),
    );
    assert.equal(res.status, 403);
    assert.match(await res.text(), /has not verified the address/);
    assert.equal(await app.credentials.findByEmail("fresh@example.com"), null);
    assert.equal((await me(b)).status, 401);
    assert.deepEqual(
      await app.query("SELECT COUNT(*) AS n FROM identities"),
      [{ n: 0 }],
    );
    // A verified one still creates the account (and it counts as verified).
    const ok = new Browser(app.origin);
    assert.equal(
      (await ok.fetch(
        await throughOp(ok, op, "verified-op;fresh@example.com;true"),
      )).status,
      303,
    );
    assert.equal((await me(ok)).body.verified, true);
  } finally {
    await close();
  }
});

Deno.test("issue 16 finding 1 (b): an unverified account links no provider (403, verify first); after the owner's reset, login and verification the attacker's provider signs in to nothing of the owner's", async () => {
  const { app, op, close } = await setup();
  try {
    // The attacker registers the victim's address and, signed in, links
    // their own provider account from the account page.
    const attacker = new Browser(app.origin);
    const reg = await attacker.post("/register", {
      email: "victim@example.com",
      password: ATTACKER_PASSWORD,
    });
    assert.equal(reg.status, 303);
    await reg.body?.cancel();
    const victim = (await app.credentials.findByEmail("victim@example.com"))!;
    const res = await attacker.fetch(
      await throughOp(attacker, op, "attacker-op;attacker@evil.example;true"),
    );
    assert.equal(res.status, 403);
    assert.match(await res.text(), /Verify your email address first/);
    assert.deepEqual(await methodRows(app, victim.id), NONE);
    // A provider that verified the address cannot join the unverified
    // account by email either (its password holder never proved it).
    const byEmail = new Browser(app.origin);
    const joined = await byEmail.fetch(
      await throughOp(byEmail, op, "victim-op;victim@example.com;true"),
    );
    assert.equal(joined.status, 403);
    assert.match(await joined.text(), /Verify your email address first/);

    // The owner resets the password, logs in and verifies.
    const owner = await ownerResetsAndLogsIn(
      app,
      "victim@example.com",
      PASSWORD,
    );
    const mine = await me(owner);
    assert.equal(mine.body.subject, victim.id);
    assert.equal(mine.body.verified, true, "the reset proved the address");
    assert.equal((await me(attacker)).status, 401, "attacker signed out");

    // The attacker's provider signs in, but never to the owner's account.
    const later = new Browser(app.origin);
    await (await later.fetch(
      await throughOp(later, op, "attacker-op;attacker@evil.example;true"),
    )).body?.cancel();
    const theirs = await me(later);
    assert.notEqual(theirs.body?.subject, victim.id);
    assert.deepEqual(await methodRows(app, victim.id), NONE);
  } finally {
    await close();
  }
});

Deno.test("issue 16 finding 1 (b)/(c): an unverified account gets 403 'verify first' for a passkey and for TOTP, JSON and form alike", async () => {
  const { app, close } = await setup("on");
  try {
    const { token } = await registerJson(app.origin, "early@example.com");
    for (
      const [path, body] of [
        ["/passkeys/register/options", { password: PASSWORD }],
        ["/passkeys/register", { response: {}, name: "Key" }],
        ["/account/totp", { password: PASSWORD }],
        ["/account/totp/confirm", { code: "123456" }],
      ] as const
    ) {
      const res = await api(app.origin, "POST", path, body, bearer(token));
      assert.equal(res.status, 403, path);
      assert.equal(res.body.error, "unverified", path);
      assert.match(
        String(res.body.message),
        /^Verify your email address first/,
      );
    }
    const b = new Browser(app.origin);
    await (await b.post("/login", {
      email: "early@example.com",
      password: PASSWORD,
    })).body?.cancel();
    const form = await b.post("/account/totp", { password: PASSWORD });
    assert.equal(form.status, 403);
    assert.match(await form.text(), /Verify your email address first/);
    const subject = (await app.credentials.findByEmail("early@example.com"))!
      .id;
    assert.deepEqual(await methodRows(app, subject), NONE);
  } finally {
    await close();
  }
});

Deno.test("issue 16 finding 1: proving the address by a reset removes every credential and session set up before it (provider, passkey, TOTP, recovery codes), and the activity says so", async () => {
  const { app, op, close } = await setup("on");
  try {
    const attacker = new Browser(app.origin);
    await (await attacker.post("/register", {
      email: "prehijacked@example.com",
      password: ATTACKER_PASSWORD,
    })).body?.cancel();
    const victim = (await app.credentials.findByEmail(
      "prehijacked@example.com",
    ))!;
    await plantPreFixCredentials(app, victim.id, "planted-op");
    assert.deepEqual(await methodRows(app, victim.id), {
      identities: 1,
      passkeys: 1,
      totp_credentials: 1,
      recovery_codes: 2,
    });
    const owner = await ownerResetsAndLogsIn(
      app,
      "prehijacked@example.com",
      PASSWORD,
    );
    assert.equal((await me(owner)).body.subject, victim.id);
    assert.deepEqual(await methodRows(app, victim.id), NONE);
    assert.equal((await me(attacker)).status, 401);
    const types = await activity(owner);
    assert.ok(types.includes("credentials_removed"), types.join(","));
    assert.ok(types.includes("verified"), types.join(","));
    // The planted provider link no longer reaches the account.
    const later = new Browser(app.origin);
    await (await later.fetch(
      await throughOp(later, op, "planted-op;attacker@evil.example;true"),
    )).body?.cancel();
    assert.notEqual((await me(later)).body?.subject, victim.id);
    // A reset of an account proven before removes no method.
    app.advance(1000);
    const id = (await app.credentials.findByEmail("prehijacked@example.com"))!
      .id;
    await app.query(
      `INSERT INTO identities (provider, provider_subject, user_id, email, created_at) VALUES ('local', 'owners-op', '${id}', 'prehijacked@example.com', ${app.now()})`,
    );
    await ownerResetsAndLogsIn(
      app,
      "prehijacked@example.com",
      "a newer passphrase",
    );
    assert.equal(await count(app, "identities", id), 1);
  } finally {
    await close();
  }
});

Deno.test("issue 16 finding 1: a verification link opened in another browser keeps the registrant's password and session only with that password", async () => {
  const { app, close } = await setup();
  try {
    // Registered on a laptop, the link opened on a phone.
    const laptop = new Browser(app.origin);
    await (await laptop.post("/register", {
      email: "two-devices@example.com",
      password: PASSWORD,
    })).body?.cancel();
    const link = new URL(app.lastLink("two-devices@example.com"));
    const phone = new Browser(app.origin);
    const shown = await phone.page(link.pathname + link.search);
    assert.equal(shown.status, 200);
    assert.match(shown.body, /id="password"/);
    assert.match(shown.body, /id="disown"/);
    const token = link.searchParams.get("token")!;
    const bare = await phone.post("/verify", { token });
    assert.equal(bare.status, 401);
    assert.match(await bare.text(), /id="disown">This wasn(&#39;|')t me/);
    const wrong = await phone.post("/verify", { token, password: "nope nope" });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    assert.equal((await me(laptop)).body.verified, false);
    const right = await phone.post("/verify", { token, password: PASSWORD });
    assert.equal(right.status, 303);
    await right.body?.cancel();
    // Same party: the password and the laptop's session stay.
    assert.equal((await me(laptop)).body.verified, true);
    const again = await api(app.origin, "POST", "/login", {
      email: "two-devices@example.com",
      password: PASSWORD,
    });
    assert.equal(again.status, 200);
    assert.equal((await me(phone)).status, 401, "the link signs nobody in");
  } finally {
    await close();
  }
});

Deno.test("issue 16 finding 1: 'This wasn't me' on the verification link proves the address, removes the registrant's password, methods and sessions, and mails the owner a set-a-password link", async () => {
  const { app, close } = await setup("on");
  try {
    const attacker = new Browser(app.origin);
    await (await attacker.post("/register", {
      email: "disowned@example.com",
      password: ATTACKER_PASSWORD,
    })).body?.cancel();
    const id = (await app.credentials.findByEmail("disowned@example.com"))!.id;
    await plantPreFixCredentials(app, id, "disowned-op");
    const link = new URL(app.lastLink("disowned@example.com"));
    const mailsBefore = app.mail.length;
    const owner = new Browser(app.origin);
    const res = await owner.post("/verify", {
      token: link.searchParams.get("token")!,
      disown: "1",
    });
    assert.equal(res.status, 303);
    await res.body?.cancel();
    assert.equal((await me(attacker)).status, 401);
    const login = await api(app.origin, "POST", "/login", {
      email: "disowned@example.com",
      password: ATTACKER_PASSWORD,
    });
    assert.equal(login.status, 401);
    assert.deepEqual(await methodRows(app, id), NONE);
    const user = (await app.credentials.findById(id))!;
    assert.ok(user.verifiedAt > 0);
    assert.ok(user.passwordHash.startsWith("!"));
    // The owner sets a password by the mailed link and signs in.
    const set = new URL(await app.awaitLink("disowned@example.com", 2));
    assert.ok(app.mail.length > mailsBefore);
    assert.equal(set.pathname, "/password/reset");
    const reset = await api(app.origin, "POST", "/password/reset", {
      token: set.searchParams.get("token"),
      password: PASSWORD,
    });
    assert.equal(reset.status, 200);
    const mine = new Browser(app.origin);
    await (await mine.post("/login", {
      email: "disowned@example.com",
      password: PASSWORD,
    })).body?.cancel();
    assert.equal((await me(mine)).body.subject, id);
    assert.ok((await activity(mine)).includes("credentials_removed"));
  } finally {
    await close();
  }
});

Deno.test("issue 16 finding 2: POST /account/delete removes every method's rows and sessions; password, provider and TOTP second step then fail as for an unknown account; the address registers again and links the provider again", async () => {
  const { app, op, close } = await setup("on");
  try {
    const b = new Browser(app.origin);
    await (await b.post("/register", {
      email: "leaving@example.com",
      password: PASSWORD,
    })).body?.cancel();
    const id = await verifyDirectly(app, "leaving@example.com");
    // Link the provider from the account page (password re-checked).
    const linkPage = await b.fetch(
      await throughOp(b, op, "leaving-op;leaving@example.com;true"),
    );
    assert.equal(linkPage.status, 200);
    await linkPage.body?.cancel();
    const linked = await b.post("/login/oidc/link", { password: PASSWORD });
    assert.equal(linked.status, 303);
    await linked.body?.cancel();
    // TOTP on, with recovery codes.
    const { token } = (await api(app.origin, "POST", "/login", {
      email: "leaving@example.com",
      password: PASSWORD,
    })).body;
    const started = await api(app.origin, "POST", "/account/totp", {
      password: PASSWORD,
    }, bearer(token));
    assert.equal(started.status, 200);
    const secret = String(started.body.secret);
    const confirmed = await api(app.origin, "POST", "/account/totp/confirm", {
      code: code(secret, app.now()),
    }, bearer(token));
    assert.equal(confirmed.status, 200);
    // A passkey row (the browser test registers a real one).
    await app.query(
      `INSERT INTO passkeys (credential_id, user_id, public_key, counter, transports, name, created_at, last_used_at) VALUES ('leaving-key', '${id}', 'pQECAyYgASFYIA', 0, '[]', 'Key', ${app.now()}, 0)`,
    );
    assert.deepEqual(await methodRows(app, id), {
      identities: 1,
      passkeys: 1,
      totp_credentials: 1,
      recovery_codes: 10,
    });
    // A second-step value minted before the deletion.
    const step = await api(app.origin, "POST", "/login", {
      email: "leaving@example.com",
      password: PASSWORD,
    });
    assert.equal(step.status, 202);
    const pending = String(step.body.pending);

    app.advance(31_000);
    const gone = await api(app.origin, "POST", "/account/delete", {
      password: PASSWORD,
    }, bearer(token));
    assert.equal(gone.status, 204);
    assert.equal(await app.credentials.findById(id), null);
    assert.deepEqual(await methodRows(app, id), NONE);
    assert.equal(
      (await api(app.origin, "GET", "/api/me", undefined, bearer(token)))
        .status,
      401,
    );
    // Password: the same answer as for an address nobody registered.
    const deleted = await api(app.origin, "POST", "/login", {
      email: "leaving@example.com",
      password: PASSWORD,
    });
    const unknown = await api(app.origin, "POST", "/login", {
      email: "nobody-ever@example.com",
      password: PASSWORD,
    });
    assert.equal(deleted.status, 401);
    assert.deepEqual(deleted.body, unknown.body);
    // TOTP second step: the same answer as a wrong code.
    const second = await api(app.origin, "POST", "/login/totp", {
      pending,
      code: code(secret, app.now()),
    });
    assert.equal(second.status, 401);
    assert.equal(second.body.error, "invalid_code");

    // The address registers again; the provider is not linked to it (a
    // sign-in asks for the new account's password) and links again.
    const { token: fresh } = await registerJson(
      app.origin,
      "leaving@example.com",
    );
    const newId = await verifyDirectly(app, "leaving@example.com");
    assert.notEqual(newId, id);
    const viaOp = new Browser(app.origin);
    const res = await viaOp.fetch(
      await throughOp(viaOp, op, "leaving-op;leaving@example.com;true"),
    );
    assert.equal(res.status, 200);
    assert.match(await res.text(), /Enter its\s+password once/);
    assert.equal((await me(viaOp)).status, 401);
    const relinked = await viaOp.post("/login/oidc/link", {
      password: PASSWORD,
    });
    assert.equal(relinked.status, 303);
    await relinked.body?.cancel();
    assert.equal((await me(viaOp)).body.subject, newId);
    assert.equal(await count(app, "identities", newId), 1);
    assert.equal(
      (await api(app.origin, "GET", "/api/me", undefined, bearer(fresh)))
        .body.subject,
      newId,
    );
  } finally {
    await close();
  }
});

/** The passkeys' lifecycle part behind a switch that makes its store fail. */
function flakyPasskeys(): {
  wrap: (modules: readonly AccountsModule[]) => AccountsModule[];
  down: { value: boolean };
} {
  const down = { value: false };
  const fail = () => Promise.reject(new Error("connection refused"));
  const flaky = (passkeys: AccountsModule): AccountsModule => ({
    name: passkeys.name,
    setup(ctx) {
      const parts = passkeys.setup(ctx);
      return {
        ...parts,
        lifecycle: parts.lifecycle!.map((real) => ({
          method: real.method,
          addressProven: (e) => down.value ? fail() : real.addressProven(e),
          accountDeleted: (s) => down.value ? fail() : real.accountDeleted(s),
        })),
      };
    },
  });
  return {
    down,
    wrap: (modules) => modules.map((m) => m.name === "passkeys" ? flaky(m) : m),
  };
}

async function plantPasskey(app: TestApp, subject: string): Promise<void> {
  await app.query(
    `INSERT INTO passkeys (credential_id, user_id, public_key, counter, transports, name, created_at, last_used_at) VALUES ('key-${subject}', '${subject}', 'pQECAyYgASFYIA', 0, '[]', 'Key', ${app.now()}, 0)`,
  );
}

Deno.test("issue 16: the lifecycle fails closed: with the passkey store down a deletion answers 503 and keeps the account and its password, a verification 503 and verifies nothing; both finish on retry", async () => {
  const flaky = flakyPasskeys();
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
    wrapModules: flaky.wrap,
  });
  // Deletion.
  const { token } = await registerJson(app.origin, "flaky@example.com");
  const id = await verifyDirectly(app, "flaky@example.com");
  await plantPasskey(app, id);
  flaky.down.value = true;
  const failed = await api(app.origin, "POST", "/account/delete", {
    password: PASSWORD,
  }, bearer(token));
  assert.equal(failed.status, 503);
  assert.equal(failed.body.error, "unavailable");
  assert.notEqual(await app.credentials.findById(id), null);
  assert.equal(await count(app, "passkeys", id), 1);
  const again = await api(app.origin, "POST", "/login", {
    email: "flaky@example.com",
    password: PASSWORD,
  });
  assert.equal(again.status, 200, "the password is kept for the retry");
  flaky.down.value = false;
  const done = await api(app.origin, "POST", "/account/delete", {
    password: PASSWORD,
  }, bearer(again.body.token));
  assert.equal(done.status, 204);
  assert.equal(await app.credentials.findById(id), null);
  assert.equal(await count(app, "passkeys", id), 0);

  // Verification: nothing is stamped or consumed while a part is down.
  await registerJson(app.origin, "flaky2@example.com");
  const id2 = (await app.credentials.findByEmail("flaky2@example.com"))!.id;
  await plantPasskey(app, id2);
  const link = new URL(app.lastLink("flaky2@example.com"));
  const body = { token: link.searchParams.get("token"), password: PASSWORD };
  flaky.down.value = true;
  assert.equal((await api(app.origin, "POST", "/verify", body)).status, 503);
  assert.equal((await app.credentials.findById(id2))!.verifiedAt, 0);
  flaky.down.value = false;
  assert.equal((await api(app.origin, "POST", "/verify", body)).status, 303);
  assert.ok((await app.credentials.findById(id2))!.verifiedAt > 0);
  assert.equal(await count(app, "passkeys", id2), 0);
});
