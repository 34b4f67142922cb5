/**
 * What a hostile client may send to the passkey ceremonies, and the
 * server's refusals (issue 29): a credential of another account, an
 * assertion for another RP id or from another origin, a replayed
 * assertion, a user handle of another account, and flags that lie (user
 * verification missing, backed up without being backup-eligible, a
 * credential whose backup eligibility differs from the registered one). Each refusal changes
 * nothing: no session, the stored counter and backup state unchanged. The
 * backup state a passkey reports is kept and shown on the account page.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  ORIGIN,
  startTestApp,
  type TestApp,
} from "../../examples/app/testing.ts";
import { FLAGS, SoftAuthenticator } from "../support/soft_authenticator.ts";

const PASSWORD = "correct horse battery";

async function withPasskey(
  app: TestApp,
  email: string,
  backup: "synced" | "device" = "device",
): Promise<{ key: SoftAuthenticator; token: string; subject: string }> {
  const { token, subject } = await app.verifiedUser(email, PASSWORD);
  const options = await app.call("POST", "/passkeys/register/options", {
    password: PASSWORD,
  }, token);
  const key = new SoftAuthenticator(ORIGIN, backup);
  const added = await app.call("POST", "/passkeys/register", {
    response: await key.create(options.json),
  }, token);
  assert.equal(added.res.status, 201, added.text);
  return { key, token, subject };
}

async function loginOptions(app: TestApp): Promise<{ challenge: string }> {
  return (await app.call("POST", "/passkeys/login/options", {})).json;
}

function reasons(app: TestApp): string[] {
  return app.logs.flatMap((l) => l.match(/"reason":"([a-z_]+)"/)?.[1] ?? []);
}

Deno.test("passkey lies: another RP id, another origin, a replayed assertion, a forged signature, missing user verification: 401 and no session", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const { key } = await withPasskey(app, "lies@example.com");
  const cases: [string, Parameters<SoftAuthenticator["get"]>[1]][] = [
    ["rp_id_mismatch", { rpId: "evil.example.com" }],
    ["origin_mismatch", { origin: "https://evil.example.com" }],
    ["verification_failed", { forge: true }],
    ["verification_failed", { flags: FLAGS.UP }],
  ];
  for (const [reason, lies] of cases) {
    const res = await app.call("POST", "/passkeys/login", {
      response: await key.get(await loginOptions(app), lies),
    });
    assert.equal(res.res.status, 401, reason);
    assert.equal(res.json.token, undefined);
    assert.equal(reasons(app).at(-1), reason, JSON.stringify(lies));
  }
  // A right assertion works once; sent again it is refused.
  const good = await key.get(await loginOptions(app));
  const first = await app.call("POST", "/passkeys/login", { response: good });
  assert.equal(first.res.status, 200);
  const replay = await app.call("POST", "/passkeys/login", { response: good });
  assert.equal(replay.res.status, 401);
  assert.equal(reasons(app).at(-1), "challenge_used");
  app.close();
});

Deno.test("passkey lies: a user handle of another account, and a credential of another account used to confirm it is you: 401", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const alice = await withPasskey(app, "alice@example.com");
  const bob = await withPasskey(app, "bob@example.com");
  const bobHandle = btoa(bob.subject).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
  const swapped = await app.call("POST", "/passkeys/login", {
    response: await alice.key.get(await loginOptions(app), {
      userHandle: bobHandle,
    }),
  });
  assert.equal(swapped.res.status, 401);
  assert.equal(swapped.json.unknownCredential, undefined, "not unknown");
  assert.equal(reasons(app).at(-1), "user_handle_mismatch");
  // Alice's passkey confirms nothing of Bob's session.
  const options = await app.call(
    "POST",
    "/passkeys/reauth/options",
    {},
    bob.token,
  );
  const reauth = await app.call("POST", "/passkeys/reauth", {
    response: await alice.key.get(options.json),
  }, bob.token);
  assert.equal(reauth.res.status, 401);
  assert.equal(reauth.res.headers.get("set-cookie"), null);
  assert.equal(reasons(app).at(-1), "another_user");
  app.close();
});

Deno.test("passkey lies: backed up without being backup-eligible (BS without BE) is refused at registration and at sign-in; an eligible passkey that stops being eligible is refused", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const { token } = await app.verifiedUser("flags@example.com", PASSWORD);
  const options = await app.call("POST", "/passkeys/register/options", {
    password: PASSWORD,
  }, token);
  const liar = new SoftAuthenticator(ORIGIN);
  const refused = await app.call("POST", "/passkeys/register", {
    response: await liar.create(options.json, {
      flags: FLAGS.UP | FLAGS.UV | FLAGS.BS,
    }),
  }, token);
  assert.equal(refused.res.status, 400);
  assert.equal(refused.json.reason, "backup_flags_invalid");

  const synced = await withPasskey(app, "synced@example.com", "synced");
  const bsOnly = await app.call("POST", "/passkeys/login", {
    response: await synced.key.get(await loginOptions(app), {
      flags: FLAGS.UP | FLAGS.UV | FLAGS.BS,
    }),
  });
  assert.equal(bsOnly.res.status, 401);
  assert.equal(reasons(app).at(-1), "backup_flags_invalid");
  const dropped = await app.call("POST", "/passkeys/login", {
    response: await synced.key.get(await loginOptions(app), {
      flags: FLAGS.UP | FLAGS.UV,
    }),
  });
  assert.equal(dropped.res.status, 401);
  assert.equal(reasons(app).at(-1), "backup_flags_invalid");
  // Its own flags still sign in.
  const ok = await app.call("POST", "/passkeys/login", {
    response: await synced.key.get(await loginOptions(app)),
  });
  assert.equal(ok.res.status, 200);
  // A passkey registered without BE that claims it later (outside tester's
  // finding 1): refused, and its backup state stays as registered.
  const device = await withPasskey(app, "device-be@example.com");
  const claimed = await app.call("POST", "/passkeys/login", {
    response: await device.key.get(await loginOptions(app), {
      flags: FLAGS.UP | FLAGS.UV | FLAGS.BE | FLAGS.BS,
    }),
  });
  assert.equal(claimed.res.status, 401);
  assert.equal(claimed.json.token, undefined);
  assert.equal(reasons(app).at(-1), "backup_flags_invalid");
  const page = await app.call("GET", "/account", undefined, device.token, {
    headers: { accept: "text/html" },
  });
  assert.match(page.text, /class="passkey-backup">This device only</);
  app.close();
});

Deno.test("passkey backup state: the account page says synced or this device only, and nudges a user whose only passkey is on one device", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const page = async (token: string) =>
    (await app.call("GET", "/account", undefined, token, {
      headers: { accept: "text/html" },
    })).text;
  const device = await withPasskey(app, "device@example.com");
  const one = await page(device.token);
  assert.match(one, /class="passkey-backup">This device only</);
  assert.match(one, /id="passkey-nudge"/);
  assert.match(one, /keep your password/);
  const synced = await withPasskey(app, "cloud@example.com", "synced");
  const two = await page(synced.token);
  assert.match(two, /class="passkey-backup">Synced</);
  assert.doesNotMatch(two, /id="passkey-nudge"/);
  // A second passkey: no nudge.
  const options = await app.call("POST", "/passkeys/register/options", {
    password: PASSWORD,
  }, device.token);
  await app.call("POST", "/passkeys/register", {
    response: await new SoftAuthenticator(ORIGIN).create(options.json),
  }, device.token);
  assert.doesNotMatch(await page(device.token), /id="passkey-nudge"/);
  // The Signals' data: the RP id, the user handle and the accepted ids.
  assert.match(two, /data-rp-id="localhost"/);
  assert.match(two, new RegExp(`data-credential-ids="${synced.key.id}"`));
  assert.match(two, /data-user-name="cloud@example.com"/);
  app.close();
});
