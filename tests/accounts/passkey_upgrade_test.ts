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
import { SoftAuthenticator } from "../support/soft_authenticator.ts";

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
