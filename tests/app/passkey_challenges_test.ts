/**
 * Passkey challenges in the reference app, over HTTP with the real SQL
 * token table: an expired challenge is refused at use, and ceremonies that
 * are started and never finished do not pile up (issuing a challenge
 * removes the expired ones, no scheduled job). The clock is the app's; no
 * test sleeps.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  api,
  bearer,
  registerJson,
  startApp,
  type TestApp,
  verifyDirectly,
} from "./_harness.ts";

const PASSWORD = "correct horse battery";

function b64url(text: string): string {
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function count(app: TestApp, purpose: string): Promise<number> {
  const [row] = await app.query(
    `SELECT count(*) AS n FROM verification_tokens WHERE purpose = '${purpose}'`,
  );
  return Number(row.n);
}

/** A registration answer for `challenge` whose attestation is no real one. */
function registration(app: TestApp, challenge: string) {
  return {
    id: "AAAA",
    rawId: "AAAA",
    type: "public-key",
    response: {
      clientDataJSON: b64url(JSON.stringify({
        type: "webauthn.create",
        challenge,
        origin: app.origin,
      })),
      attestationObject: "AAAA",
    },
    clientExtensionResults: {},
  };
}

Deno.test("passkeys: ceremonies started and never finished are removed once expired, as new ones start; live tokens stay", async () => {
  await using app = await startApp({}, {
    signInEnv: { TOTP: "off", PASSKEYS: "on" },
  });
  // A live single-use token of another purpose (the verification link).
  await registerJson(app.origin, "keeps@example.com");
  assert.equal(await count(app, "verify-email"), 1);
  for (let i = 0; i < 40; i++) {
    const r = await api(app.origin, "POST", "/passkeys/login/options", {}, {
      "x-test-client": `203.0.113.${i}`,
    });
    assert.equal(r.status, 200);
  }
  assert.equal(await count(app, "webauthn-challenge"), 40);
  // Five minutes and a bit later every one of them has expired; the next
  // ceremony start removes them.
  app.advance(6 * 60_000);
  const next = await api(app.origin, "POST", "/passkeys/login/options", {});
  assert.equal(next.status, 200);
  assert.equal(await count(app, "webauthn-challenge"), 1);
  assert.equal(await count(app, "verify-email"), 1, "unexpired tokens stay");
  // A flood keeps the table bounded by the starts of the last few minutes.
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 20; i++) {
      await api(app.origin, "POST", "/passkeys/login/options", {}, {
        "x-test-client": `198.51.100.${round * 20 + i}`,
      });
    }
    app.advance(6 * 60_000);
  }
  await api(app.origin, "POST", "/passkeys/login/options", {});
  assert.equal(await count(app, "webauthn-challenge"), 1);
});

Deno.test("passkeys: an expired challenge is refused at use (challenge_invalid); a fresh one passes the challenge check once", async () => {
  await using app = await startApp({}, {
    signInEnv: { TOTP: "off", PASSKEYS: "on" },
  });
  const { token } = await registerJson(app.origin, "ceremony@example.com");
  await verifyDirectly(app, "ceremony@example.com");
  const options = async () => {
    const r = await api(
      app.origin,
      "POST",
      "/passkeys/register/options",
      { password: PASSWORD },
      bearer(token),
    );
    assert.equal(r.status, 200);
    return String(r.body.challenge);
  };
  const submit = (challenge: string) =>
    api(app.origin, "POST", "/passkeys/register", {
      response: registration(app, challenge),
      name: "Test",
    }, bearer(token));

  const stale = await options();
  app.advance(5 * 60_000 + 1_000);
  const late = await submit(stale);
  assert.equal(late.status, 400);
  assert.equal(late.body.reason, "challenge_invalid");

  // Control: in time, the challenge passes (the made-up attestation is
  // what fails), and only once.
  const fresh = await options();
  const first = await submit(fresh);
  assert.equal(first.status, 400);
  assert.notEqual(first.body.reason, "challenge_invalid");
  assert.notEqual(first.body.reason, "challenge_used");
  const again = await submit(fresh);
  assert.equal(again.body.reason, "challenge_used");
  assert.equal(
    (await app.query("SELECT count(*) AS n FROM passkeys"))[0].n,
    0,
  );
});
