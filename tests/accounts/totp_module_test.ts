/**
 * The TOTP module's own tests: enrolment on the account, the password that
 * issues no session while TOTP is on, the code step, a recovery code once,
 * turning it off, and its routes answering 404 while it is off. Codes are
 * computed here (RFC 6238) from the key the enrolment answers.
 *
 * @module
 */
import assert from "node:assert/strict";
import { startTestApp, type TestApp } from "../../examples/app/testing.ts";

const PASSWORD = "correct horse battery";

/** The RFC 6238 code (SHA-1, 6 digits, 30 s) of a base32 key at a time. */
async function totpCode(base32: string, at: number): Promise<string> {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const c of base32.replace(/=+$/, "")) {
    value = (value << 5) | alphabet.indexOf(c);
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  const key = await crypto.subtle.importKey(
    "raw",
    new Uint8Array(bytes),
    { name: "HMAC", hash: "SHA-1" },
    false,
    ["sign"],
  );
  const counter = new DataView(new ArrayBuffer(8));
  counter.setBigUint64(0, BigInt(Math.floor(at / 30_000)));
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, counter.buffer),
  );
  const o = mac[19] & 0xf;
  const n = ((mac[o] & 0x7f) << 24) | (mac[o + 1] << 16) | (mac[o + 2] << 8) |
    mac[o + 3];
  return String(n % 1_000_000).padStart(6, "0");
}

/** A verified user with TOTP on: its token, key and recovery codes. */
async function enrolled(app: TestApp, email: string) {
  const { token } = await app.verifiedUser(email, PASSWORD);
  // A session alone does not start enrolment: the password first.
  assert.equal(
    (await app.call("POST", "/account/totp", {}, token)).res.status,
    401,
  );
  const started = await app.call("POST", "/account/totp", {
    password: PASSWORD,
  }, token);
  assert.equal(started.res.status, 200);
  assert.match(started.json.uri, /^otpauth:\/\/totp\//);
  const secret: string = started.json.secret;
  const wrong = await app.call("POST", "/account/totp/confirm", {
    code: "000000",
  }, token);
  assert.equal(wrong.res.status, 422);
  const confirmed = await app.call("POST", "/account/totp/confirm", {
    code: await totpCode(secret, app.now()),
  }, token);
  assert.equal(confirmed.res.status, 200);
  assert.equal(confirmed.json.recoveryCodes.length, 10);
  return { token, secret, recovery: confirmed.json.recoveryCodes as string[] };
}

Deno.test("TOTP: the password issues no session, only a pending value; a right code does", async () => {
  const app = await startTestApp({ TOTP: "on" });
  const { secret } = await enrolled(app, "totp@example.com");
  app.advance(30_000);
  const login = () =>
    app.call("POST", "/login", {
      email: "totp@example.com",
      password: PASSWORD,
    });
  const step = await login();
  assert.equal(step.res.status, 202);
  assert.equal(step.json.secondFactor, "totp");
  assert.equal(step.json.token, undefined);
  // The pending value is no session.
  assert.equal(
    (await app.call("GET", "/api/me", undefined, step.json.pending)).res
      .status,
    401,
  );
  const wrong = await app.call("POST", "/login/totp", {
    pending: step.json.pending,
    code: "000000",
  });
  assert.equal(wrong.res.status, 401);
  const right = await app.call("POST", "/login/totp", {
    pending: step.json.pending,
    code: await totpCode(secret, app.now()),
  });
  assert.equal(right.res.status, 200);
  const me = await app.call("GET", "/api/me", undefined, right.json.token);
  assert.equal(me.json.email, "totp@example.com");
  // The pending value served its one sign-in.
  const again = await app.call("POST", "/login/totp", {
    pending: step.json.pending,
    code: await totpCode(secret, app.now() + 30_000),
  });
  assert.equal(again.res.status, 401);
  app.close();
});

Deno.test("TOTP: a recovery code works once; the account page shows what is left; TOTP turns off with a code", async () => {
  const app = await startTestApp({ TOTP: "on" });
  const { token, secret, recovery } = await enrolled(app, "rc@example.com");
  const pending = async () =>
    (await app.call("POST", "/login", {
      email: "rc@example.com",
      password: PASSWORD,
    })).json.pending;
  const first = await app.call("POST", "/login/totp", {
    pending: await pending(),
    code: recovery[0],
  });
  assert.equal(first.res.status, 200);
  const reused = await app.call("POST", "/login/totp", {
    pending: await pending(),
    code: recovery[0],
  });
  assert.equal(reused.res.status, 401);
  const account = await app.call("GET", "/account", undefined, token, {
    headers: { accept: "text/html" },
  });
  assert.match(account.text, /id="totp-on">On\. 9 recovery codes left/);
  // The enrolment used this time step: the code comes from the next one.
  app.advance(30_000);
  const off = await app.call("POST", "/account/totp/disable", {
    password: PASSWORD,
    code: await totpCode(secret, app.now()),
  }, token);
  assert.equal(off.res.status, 204, off.text);
  const plain = await app.call("POST", "/login", {
    email: "rc@example.com",
    password: PASSWORD,
  });
  assert.equal(plain.res.status, 200);
  assert.ok(plain.json.token);
  app.close();
});

Deno.test("TOTP: after a sign-in with a recovery code, the next sign-in's TOTP code passes at the first try", async () => {
  const app = await startTestApp({ TOTP: "on" });
  const { secret, recovery } = await enrolled(app, "next@example.com");
  // The enrolment used this time step: the sign-ins come in the next one.
  app.advance(30_000);
  const pending = async () =>
    (await app.call("POST", "/login", {
      email: "next@example.com",
      password: PASSWORD,
    })).json.pending;
  const byRecovery = await app.call("POST", "/login/totp", {
    pending: await pending(),
    code: recovery[0],
  });
  assert.equal(byRecovery.res.status, 200);
  const out = await app.call("POST", "/logout", {}, byRecovery.json.token);
  assert.equal(out.res.status, 204);
  // The code the app shows now, on the first try (the recovery code used
  // to spend the next time step, and this code was refused).
  const byCode = await app.call("POST", "/login/totp", {
    pending: await pending(),
    code: await totpCode(secret, app.now()),
  });
  assert.equal(byCode.res.status, 200, byCode.text);
  const me = await app.call("GET", "/api/me", undefined, byCode.json.token);
  assert.equal(me.json.email, "next@example.com");
  app.close();
});

Deno.test("TOTP: turning it on and off are in the account's activity; a wrong code records neither", async () => {
  const app = await startTestApp({ TOTP: "on" });
  const { token, secret } = await enrolled(app, "activity@example.com");
  const types = async () =>
    ((await app.call("GET", "/api/activity", undefined, token)).json
      .events as { type: string }[]).map((e) => e.type);
  assert.equal((await types())[0], "totp_enabled");
  assert.equal((await types()).filter((t) => t === "totp_enabled").length, 1);
  const page = await app.call("GET", "/account", undefined, token, {
    headers: { accept: "text/html" },
  });
  assert.match(page.text, /Two-factor authentication turned on/);
  const wrong = await app.call("POST", "/account/totp/disable", {
    password: PASSWORD,
    code: "000000",
  }, token);
  assert.equal(wrong.res.status, 401);
  assert.ok(!(await types()).includes("totp_disabled"));
  app.advance(30_000);
  const off = await app.call("POST", "/account/totp/disable", {
    password: PASSWORD,
    code: await totpCode(secret, app.now()),
  }, token);
  assert.equal(off.res.status, 204);
  assert.equal((await types())[0], "totp_disabled");
  app.close();
});

Deno.test("TOTP: the login throttle's device cookie comes with the completed sign-in, never with the password alone", async () => {
  const app = await startTestApp({ TOTP: "on" });
  const { secret } = await enrolled(app, "device@example.com");
  app.advance(30_000);
  const named = (answer: { res: Response }, name: string) =>
    answer.res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  const password = await app.call(
    "POST",
    "/login",
    {
      email: "device@example.com",
      password: PASSWORD,
    },
    undefined,
    { form: true },
  );
  assert.equal(password.res.status, 303);
  assert.equal(password.res.headers.get("location"), "/login/totp");
  const pending = named(password, "__Host-2fa");
  assert.ok(pending, "the pending cookie");
  assert.equal(
    named(password, "__Host-device"),
    undefined,
    "no device cookie while the second factor is owed",
  );
  const cookie = { cookie: pending.split(";")[0] };
  const wrong = await app.call(
    "POST",
    "/login/totp",
    {
      code: "000000",
    },
    undefined,
    { form: true, headers: cookie },
  );
  assert.equal(wrong.res.status, 401);
  assert.equal(named(wrong, "__Host-device"), undefined);
  const right = await app.call(
    "POST",
    "/login/totp",
    {
      code: await totpCode(secret, app.now()),
    },
    undefined,
    { form: true, headers: cookie },
  );
  assert.equal(right.res.status, 303);
  assert.ok(named(right, "__Host-session"), "signed in");
  const device = named(right, "__Host-device");
  assert.ok(device, "the device cookie once the sign-in is complete");
  assert.match(device, /HttpOnly/);
  assert.match(device, /Max-Age=[1-9]/);
  app.close();
});

Deno.test("TOTP: off, its routes answer 404 and the account page has no section", async () => {
  const app = await startTestApp({ TOTP: "off" });
  const { token } = await app.verifiedUser("off@example.com", PASSWORD);
  assert.equal(
    (await app.call("POST", "/login/totp", { code: "123456" })).res.status,
    404,
  );
  assert.equal(
    (await app.call("POST", "/account/totp", { password: PASSWORD }, token))
      .res.status,
    404,
  );
  const account = await app.call("GET", "/account", undefined, token, {
    headers: { accept: "text/html" },
  });
  assert.equal(account.res.status, 200);
  assert.doesNotMatch(account.text, /totp/);
  app.close();
  // SIGN_IN_METHODS=off: every method beside the password off.
  const none = await startTestApp({ SIGN_IN_METHODS: "off" });
  assert.equal(
    (await none.call("POST", "/login/totp", { code: "123456" })).res.status,
    404,
  );
  none.close();
});

Deno.test("TOTP: 0, false and no in any case turn it off; a value neither yes nor no stops the start", async () => {
  for (const value of ["0", "FALSE", " no "]) {
    const app = await startTestApp({ TOTP: value });
    assert.equal(
      (await app.call("POST", "/login/totp", { code: "123456" })).res.status,
      404,
      value,
    );
    app.close();
  }
  await assert.rejects(
    startTestApp({ TOTP: "disabled" }),
    /^TypeError: TOTP must be one of 1, true, yes, on \(yes\) or 0, false, no, off \(no\), in any case: received "disabled"$/,
  );
});
