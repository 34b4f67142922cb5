/**
 * The automatic passkey upgrade's right is good only for the very session
 * it was issued with (an outside tester's HIGH finding, scripts t16 and
 * t15): a copy of the browser's cookies taken after the session was bound
 * to a device (DBSC), or after "sign out everywhere else" re-minted it,
 * adds no passkey, and a device-bound session never carries the right.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  Browser,
  registerJson,
  startApp,
  type TestApp,
  verifyDirectly,
} from "../app/_harness.ts";
import { SoftAuthenticator } from "../support/soft_authenticator.ts";

const PASSWORD = "correct horse battery";
const UPGRADE = "__Host-passkey-upgrade";
const SESSION = "__Host-session";
const BOUND = "__Host-session-bound";
const PASSKEYS = { signInEnv: { PASSKEYS: "on", TOTP: "off" } };

type Options = { challenge: string; user: { id: string } };

async function post(
  b: Browser,
  path: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown>; res: Response }> {
  const res = await b.fetch(path, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === "" ? {} : JSON.parse(text),
    res,
  };
}

const enc = new TextEncoder();
const b64u = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
const b64json = (v: unknown) => b64u(enc.encode(JSON.stringify(v)));

/** Binds the browser's session as Chromium does after the sign-in's offer. */
async function bind(b: Browser, login: Response): Promise<void> {
  const offer = login.headers.get("secure-session-registration");
  const challenge = /challenge="([^"]+)"/.exec(offer ?? "")?.[1];
  assert.ok(challenge, `no registration offer: ${offer}`);
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const j = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const header = {
    alg: "ES256",
    typ: "dbsc+jwt",
    jwk: { kty: "EC", crv: "P-256", x: j.x, y: j.y },
  };
  const input = `${b64json(header)}.${b64json({ jti: challenge })}`;
  const sig = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    pair.privateKey,
    enc.encode(input),
  );
  const res = await b.fetch("/auth/dbsc/start", {
    method: "POST",
    headers: {
      "secure-session-response": `${input}.${b64u(new Uint8Array(sig))}`,
    },
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  assert.ok(b.cookies.has(BOUND), "the session is bound");
}

function copy(app: TestApp, from: Browser): Browser {
  const thief = new Browser(app.origin);
  for (const [k, v] of from.cookies) thief.cookies.set(k, v);
  return thief;
}

async function nothingAdded(app: TestApp, subject: string): Promise<void> {
  assert.equal(
    (await app.query(
      `SELECT credential_id FROM passkeys WHERE user_id = '${subject}'`,
    )).length,
    0,
    "no passkey added",
  );
  assert.equal(
    (await app.query(
      `SELECT type FROM auth_events WHERE subject = '${subject}' AND type = 'passkey_added'`,
    )).length,
    0,
    "no passkey_added",
  );
  assert.ok(!app.logs.some((l) => l.includes('"type":"passkey_added"')));
}

async function signedIn(app: TestApp, email: string) {
  await registerJson(app.origin, email, PASSWORD);
  const subject = await verifyDirectly(app, email);
  const owner = new Browser(app.origin);
  const login = await owner.post("/login", { email, password: PASSWORD });
  assert.equal(login.status, 303);
  await login.body?.cancel();
  assert.ok(owner.cookies.has(UPGRADE), "the sign-in grants the upgrade");
  return { subject, owner, login };
}

Deno.test("passkey upgrade (t16): cookies copied after the browser bound its session add no passkey, even with options fetched before; the bound session carries no right", async () => {
  await using app = await startApp({}, PASSKEYS);
  const { subject, owner, login } = await signedIn(app, "t16@example.com");
  // Options fetched while the session was still the sign-in's own.
  const early = await post(owner, "/passkeys/upgrade/options", {});
  assert.equal(early.status, 200);
  await bind(owner, login);
  assert.ok(owner.cookies.has(UPGRADE), "the browser still holds the cookie");

  const thief = copy(app, owner);
  const options = await post(thief, "/passkeys/upgrade/options", {});
  assert.equal(options.status, 403, JSON.stringify(options.body));
  assert.equal(options.body.error, "upgrade_unavailable");
  assert.equal(typeof options.body.message, "string");
  const made = await post(thief, "/passkeys/upgrade", {
    response: await new SoftAuthenticator(app.origin).create(
      early.body as Options,
    ),
  });
  assert.equal(made.status, 403, JSON.stringify(made.body));
  assert.equal(made.body.error, "upgrade_unavailable");
  // The right is dead for good: its cookie is cleared.
  assert.equal(thief.cookies.has(UPGRADE), false);
  // The owner's bound browser has no right either; its pages load no
  // upgrade.
  assert.doesNotMatch((await owner.page("/")).body, /id="passkey-upgrade"/);
  assert.equal(
    (await post(owner, "/passkeys/upgrade/options", {})).status,
    403,
  );
  await nothingAdded(app, subject);

  // A bound session that signs in again with its password (it stays
  // bound) is granted nothing.
  const again = await owner.post("/login", {
    email: "t16@example.com",
    password: PASSWORD,
  });
  assert.equal(again.status, 303);
  await again.body?.cancel();
  assert.equal(owner.cookies.has(UPGRADE), false);
  assert.equal(
    (await post(owner, "/passkeys/upgrade/options", {})).status,
    403,
  );
  await nothingAdded(app, subject);
});

Deno.test("passkey upgrade (t15): after 'sign out everywhere else' re-minted the session, by the thief or the owner, the right is gone", async () => {
  await using app = await startApp({}, PASSKEYS);
  const { subject, owner } = await signedIn(app, "t15@example.com");
  // The thief's copy, re-minted by its own "sign out everywhere else".
  const thief = copy(app, owner);
  const remint = await thief.post("/account/sessions/revoke-others", {});
  assert.equal(remint.status, 303);
  await remint.body?.cancel();
  assert.notEqual(thief.cookies.get(SESSION), owner.cookies.get(SESSION));
  assert.ok(thief.cookies.has(UPGRADE));
  const options = await post(thief, "/passkeys/upgrade/options", {});
  assert.equal(options.status, 403, JSON.stringify(options.body));
  assert.equal(options.body.error, "upgrade_unavailable");
  assert.doesNotMatch((await thief.page("/")).body, /id="passkey-upgrade"/);
  await nothingAdded(app, subject);

  // The owner's own re-mint (signing out everywhere else) ends the right
  // too, and so does the thief's copy of the re-minted cookies.
  const second = new Browser(app.origin);
  const login = await second.post("/login", {
    email: "t15@example.com",
    password: PASSWORD,
  });
  await login.body?.cancel();
  const early = await post(second, "/passkeys/upgrade/options", {});
  assert.equal(early.status, 200);
  const out = await second.post("/account/sessions/revoke-others", {});
  assert.equal(out.status, 303);
  await out.body?.cancel();
  for (const b of [second, copy(app, second)]) {
    assert.equal(
      (await post(b, "/passkeys/upgrade/options", {})).status,
      403,
    );
  }
  const made = await post(second, "/passkeys/upgrade", {
    response: await new SoftAuthenticator(app.origin).create(
      early.body as Options,
    ),
  });
  assert.equal(made.status, 403, JSON.stringify(made.body));
  await nothingAdded(app, subject);
});

Deno.test("passkey upgrade: the right goes with its session (signed out, signed out everywhere) and is never good for another session of the same account", async () => {
  await using app = await startApp({}, PASSKEYS);
  const { subject, owner } = await signedIn(app, "gone@example.com");
  // Another session of the same account, with this right's cookie.
  const other = new Browser(app.origin);
  const login = await other.post("/login", {
    email: "gone@example.com",
    password: PASSWORD,
  });
  await login.body?.cancel();
  other.cookies.set(UPGRADE, owner.cookies.get(UPGRADE)!);
  const refused = await post(other, "/passkeys/upgrade/options", {});
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, "upgrade_unavailable");

  // The owner signs out everywhere from a third browser: the first
  // session, and its right, are gone.
  const thief = copy(app, owner);
  const third = new Browser(app.origin);
  (await third.post("/login", {
    email: "gone@example.com",
    password: PASSWORD,
  })).body?.cancel();
  (await third.post("/account/sessions/revoke-others", {})).body?.cancel();
  const after = await post(thief, "/passkeys/upgrade/options", {});
  assert.equal(after.status, 401, JSON.stringify(after.body));
  // A signed-out session's right is gone too.
  const fourth = new Browser(app.origin);
  (await fourth.post("/login", {
    email: "gone@example.com",
    password: PASSWORD,
  })).body?.cancel();
  const kept = copy(app, fourth);
  (await fourth.post("/logout", {})).body?.cancel();
  assert.equal(
    (await post(kept, "/passkeys/upgrade/options", {})).status,
    401,
  );
  await nothingAdded(app, subject);

  // The legitimate use still works: the browser that signed in, its
  // session as issued.
  const fifth = new Browser(app.origin);
  (await fifth.post("/login", {
    email: "gone@example.com",
    password: PASSWORD,
  })).body?.cancel();
  assert.match((await fifth.page("/")).body, /id="passkey-upgrade"/);
  const options = await post(fifth, "/passkeys/upgrade/options", {});
  assert.equal(options.status, 200);
  const made = await post(fifth, "/passkeys/upgrade", {
    response: await new SoftAuthenticator(app.origin).create(
      options.body as Options,
    ),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
});
