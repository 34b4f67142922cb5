/**
 * The automatic passkey upgrade (issue 29 item 4) over HTTP, with a
 * software passkey: a password sign-in grants the browser that signed in
 * the right to make one passkey without a dialog for five minutes; its
 * pages load the browser module with the marker; the passkey made is in
 * the activity (`passkey_added`). A session alone, another user's right, a
 * spent or expired right: 403, nothing added.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  Browser,
  registerJson,
  startApp,
  verifyDirectly,
} from "../app/_harness.ts";
import { FLAGS, SoftAuthenticator } from "../support/soft_authenticator.ts";

const PASSWORD = "correct horse battery";
const UPGRADE = "__Host-passkey-upgrade";
const SESSION = "__Host-session";

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

Deno.test("passkey upgrade: a password sign-in lets that browser make one passkey without a dialog; recorded as passkey_added; a session alone, a spent or an expired right make none", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  await registerJson(app.origin, "up@example.com", PASSWORD);
  const subject = await verifyDirectly(app, "up@example.com");
  const b = new Browser(app.origin);
  const login = await b.post("/login", {
    email: "up@example.com",
    password: PASSWORD,
  });
  assert.equal(login.status, 303);
  assert.ok(b.cookies.has(UPGRADE), "the sign-in grants the upgrade");
  const home = await b.page("/");
  assert.match(home.body, /id="passkey-upgrade"/);
  assert.match(home.body, /src="\/assets\/passkeys\.js"/);

  // A copy of the session cookie alone makes nothing.
  const thief = new Browser(app.origin);
  thief.cookies.set(SESSION, b.cookies.get(SESSION)!);
  assert.doesNotMatch((await thief.page("/")).body, /id="passkey-upgrade"/);
  const refused = await post(thief, "/passkeys/upgrade/options", {});
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, "upgrade_unavailable");

  const options = await post(b, "/passkeys/upgrade/options", {});
  assert.equal(options.status, 200);
  const key = new SoftAuthenticator(app.origin);
  const made = await post(b, "/passkeys/upgrade", {
    response: await key.create(
      options.body as { challenge: string; user: { id: string } },
    ),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.equal(b.cookies.has(UPGRADE), false, "the right is spent");
  const rows = await app.query(
    `SELECT credential_id FROM passkeys WHERE user_id = '${subject}'`,
  );
  assert.equal(rows.length, 1);
  const events = await app.query(
    `SELECT type FROM auth_events WHERE subject = '${subject}'`,
  );
  assert.ok(events.some((e) => e.type === "passkey_added"));
  assert.ok(app.logs.some((l) => l.includes('"method":"upgrade"')));
  assert.doesNotMatch((await b.page("/")).body, /id="passkey-upgrade"/);

  // A spent right (a copy of its cookie) adds nothing more.
  const again = new Browser(app.origin);
  again.cookies.set(SESSION, b.cookies.get(SESSION)!);
  const login2 = await again.post("/login", {
    email: "up@example.com",
    password: PASSWORD,
  });
  assert.equal(login2.status, 303);
  const right = again.cookies.get(UPGRADE)!;
  const o2 = await post(again, "/passkeys/upgrade/options", {});
  assert.equal(o2.status, 200);
  const r2 = await new SoftAuthenticator(app.origin).create(
    o2.body as { challenge: string; user: { id: string } },
  );
  assert.equal(
    (await post(again, "/passkeys/upgrade", { response: r2 })).status,
    201,
  );
  again.cookies.set(UPGRADE, right);
  const o3 = await post(again, "/passkeys/upgrade/options", {});
  const spent = await post(again, "/passkeys/upgrade", {
    response: await new SoftAuthenticator(app.origin).create(
      o3.body as { challenge: string; user: { id: string } },
    ),
  });
  assert.equal(spent.status, 403);
  assert.equal(
    (await app.query(
      `SELECT credential_id FROM passkeys WHERE user_id = '${subject}'`,
    )).length,
    2,
  );

  // Five minutes later the right is gone.
  const late = new Browser(app.origin);
  await late.post("/login", { email: "up@example.com", password: PASSWORD });
  app.advance(301_000);
  assert.equal(
    (await post(late, "/passkeys/upgrade/options", {})).status,
    403,
  );
  // A failed password sign-in grants nothing.
  const wrong = new Browser(app.origin);
  await wrong.post("/login", { email: "up@example.com", password: "nope" });
  assert.equal(wrong.cookies.has(UPGRADE), false);
});

Deno.test("passkey upgrade: a refused registration (no user verification, another origin) keeps the right for a good retry; parallel good ones make one passkey (outside tester's finding 2)", async () => {
  await using app = await startApp({}, {
    signInEnv: { PASSKEYS: "on", TOTP: "off" },
  });
  await registerJson(app.origin, "retry@example.com", PASSWORD);
  const subject = await verifyDirectly(app, "retry@example.com");
  const b = new Browser(app.origin);
  await b.post("/login", { email: "retry@example.com", password: PASSWORD });
  const right = b.cookies.get(UPGRADE);
  assert.ok(right, "the sign-in grants the upgrade");
  const count = async (who: string) =>
    (await app.query(
      `SELECT credential_id FROM passkeys WHERE user_id = '${who}'`,
    )).length;
  const key = new SoftAuthenticator(app.origin);
  for (
    const [reason, lies] of [
      ["verification_failed", { flags: FLAGS.UP }],
      ["origin_mismatch", { origin: "https://evil.example.com" }],
    ] as const
  ) {
    const options = await post(b, "/passkeys/upgrade/options", {});
    assert.equal(options.status, 200);
    const refused = await post(b, "/passkeys/upgrade", {
      response: await key.create(
        options.body as { challenge: string; user: { id: string } },
        lies,
      ),
    });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error, "passkey_refused");
    assert.equal(refused.body.reason, reason);
    assert.equal(b.cookies.get(UPGRADE), right, "the right's cookie stays");
    assert.equal(await count(subject), 0);
  }
  const options = await post(b, "/passkeys/upgrade/options", {});
  const made = await post(b, "/passkeys/upgrade", {
    response: await key.create(
      options.body as { challenge: string; user: { id: string } },
    ),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.equal(await count(subject), 1);

  // Two good attempts at once with one right: one passkey.
  await registerJson(app.origin, "twice@example.com", PASSWORD);
  const other = await verifyDirectly(app, "twice@example.com");
  const c = new Browser(app.origin);
  await c.post("/login", { email: "twice@example.com", password: PASSWORD });
  const o1 = await post(c, "/passkeys/upgrade/options", {});
  const o2 = await post(c, "/passkeys/upgrade/options", {});
  const [r1, r2] = await Promise.all([
    new SoftAuthenticator(app.origin).create(
      o1.body as { challenge: string; user: { id: string } },
    ),
    new SoftAuthenticator(app.origin).create(
      o2.body as { challenge: string; user: { id: string } },
    ),
  ]);
  const answers = await Promise.all([
    post(c, "/passkeys/upgrade", { response: r1 }),
    post(c, "/passkeys/upgrade", { response: r2 }),
  ]);
  assert.deepEqual(answers.map((a) => a.status).sort(), [201, 403]);
  assert.equal(await count(other), 1);
  const events = await app.query(
    `SELECT type FROM auth_events WHERE subject = '${other}' AND type = 'passkey_added'`,
  );
  assert.equal(events.length, 1);
});
