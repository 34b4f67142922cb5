/**
 * TOTP in the reference app, over HTTP: enrolment on /account, the password
 * step that issues no session, `POST /login/totp` with a code or a recovery
 * code, and every refusal the issue names.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import { es256Key } from "../session/_dpop_proofs.ts";
import {
  dpopClient,
  loginWithProof,
  nonceOf,
  proof,
  status,
} from "./_dpop_client.ts";
import {
  api,
  bearer,
  Browser,
  registerJson,
  startApp,
  type TestApp,
  verifyDirectly,
} from "./_harness.ts";

const PASSWORD = "correct horse battery";

function code(secret: string, at: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({
    timestamp: at,
  });
}

/** Registers in a browser and turns TOTP on; answers the secret and codes. */
async function enrol(app: TestApp, email: string) {
  const browser = new Browser(app.origin);
  let res = await browser.post("/register", { email, password: PASSWORD });
  assert.equal(res.status, 303);
  await verifyDirectly(app, email);
  let page = await browser.page("/account");
  assert.match(page.body, /id="totp-off"/);
  // A session alone does not turn TOTP on: the current password first.
  res = await browser.post("/account/totp", {});
  assert.equal(res.status, 401);
  await res.body?.cancel();
  res = await browser.post("/account/totp", { password: PASSWORD });
  const body = await res.text();
  assert.equal(res.status, 200);
  assert.match(body, /<svg [^>]*viewBox/);
  const secret = body.match(/id="totp-secret">([A-Z2-7]+)</)![1];
  res = await browser.post("/account/totp/confirm", { code: "000000" });
  assert.equal(res.status, 422);
  await res.body?.cancel();
  res = await browser.post("/account/totp/confirm", {
    code: code(secret, app.now()),
  });
  const shown = await res.text();
  assert.equal(res.status, 200);
  const recovery = [...shown.matchAll(/<li><code>([0-9A-Z-]+)<\/code>/g)].map(
    (m) => m[1],
  );
  assert.equal(recovery.length, 10);
  page = await browser.page("/account");
  assert.match(page.body, /id="totp-on">On\. 10 recovery codes left/);
  return { browser, secret, recovery };
}

async function passwordStep(app: TestApp, email: string): Promise<Browser> {
  const b = new Browser(app.origin);
  const res = await b.post("/login", {
    email,
    password: PASSWORD,
    next: "/account",
  });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/login/totp");
  return b;
}

Deno.test("TOTP: with TOTP on, the password issues no session, only a pending value that no gate accepts", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  await enrol(app, "t1@example.com");
  const b = await passwordStep(app, "t1@example.com");
  assert.ok(!b.cookies.has("__Host-session"), "no session cookie");
  const pending = b.cookies.get("__Host-2fa");
  assert.ok(pending);
  assert.equal(
    (await b.fetch("/api/me", { headers: { accept: "application/json" } }))
      .status,
    401,
  );
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(pending)))
      .status,
    401,
  );
  const sessionCookie = await fetch(new URL("/api/me", app.origin), {
    headers: {
      cookie: `__Host-session=${pending}`,
      accept: "application/json",
    },
  });
  await sessionCookie.body?.cancel();
  assert.equal(sessionCookie.status, 401);
  const form = await b.page("/login/totp");
  assert.equal(form.status, 200);
  assert.match(form.body, /name="code"/);
  // Without a pending value the code page sends the browser back to /login.
  const bare = await new Browser(app.origin).fetch("/login/totp");
  assert.equal(bare.status, 303);
  assert.equal(bare.headers.get("location"), "/login");
});

Deno.test("TOTP: a right code after the password signs in (form), a session that revokeAll ends", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { secret } = await enrol(app, "t2@example.com");
  app.advance(30_000);
  const b = await passwordStep(app, "t2@example.com");
  const res = await b.post("/login/totp", { code: code(secret, app.now()) });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/account");
  assert.ok(b.cookies.has("__Host-session"));
  assert.ok(!b.cookies.has("__Host-2fa"), "pending cookie cleared");
  const me = await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal(me.status, 200);
  const { subject } = await me.json();
  await app.sessions.revokeAll(subject);
  app.advance(1000);
  assert.equal(
    (await b.fetch("/api/me", { headers: { accept: "application/json" } }))
      .status,
    401,
  );
  assert.ok(app.logs.some((l) => l.includes('"type":"login","method":"totp"')));
});

Deno.test("TOTP: one pending value opens one session, even with several right codes sent at once", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { recovery } = await enrol(app, "t10@example.com");
  const first = await api(app.origin, "POST", "/login", {
    email: "t10@example.com",
    password: PASSWORD,
  });
  assert.equal(first.status, 202);
  const pending = first.body.pending as string;
  const answers = await Promise.all(
    recovery.slice(0, 5).map((code) =>
      api(app.origin, "POST", "/login/totp", { pending, code })
    ),
  );
  assert.deepEqual(
    answers.map((a) => a.status).sort(),
    [200, 401, 401, 401, 401],
  );
});

Deno.test("TOTP over DPoP: the pending value of a sign-in with a proof opens only with a proof by the same key, and the session is bound to it", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { secret } = await enrol(app, "t9@example.com");
  app.advance(30_000);
  const key = await es256Key();
  const nonce = await nonceOf(app, key);
  const first = await loginWithProof(app, key, "t9@example.com", nonce);
  assert.equal(first.status, 202);
  const pending = first.body.pending as string;
  const second = async (headers: HeadersInit) =>
    await api(app.origin, "POST", "/login/totp", {
      pending,
      code: code(secret, app.now()),
    }, headers);
  const totpProof = async (by: typeof key) => ({
    dpop: await proof(app, by, "POST", "/login/totp", { nonce }),
  });
  // A copy of the pending value, with the right code: without a proof,
  // or with another key's, it is no pending value.
  for (const headers of [{}, await totpProof(await es256Key())]) {
    const refused = await second(headers);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, "invalid_code");
  }
  const done = await second(await totpProof(key));
  assert.equal(done.status, 200);
  assert.equal(done.body.tokenType, "DPoP");
  const token = done.body.token as string;
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).status,
    401,
    "bound: no Bearer token",
  );
  const owner = dpopClient(app, key);
  assert.equal(await status(await owner.request(token, "GET", "/api/me")), 200);
});

Deno.test("TOTP: a code's time step works once (replay refused), ±1 step of skew passes, ±2 does not", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { secret } = await enrol(app, "t3@example.com");
  app.advance(5 * 30_000);
  const used = code(secret, app.now());
  let b = await passwordStep(app, "t3@example.com");
  assert.equal((await b.post("/login/totp", { code: used })).status, 303);
  b = await passwordStep(app, "t3@example.com");
  const replay = await b.post("/login/totp", { code: used });
  assert.equal(replay.status, 401);
  assert.match(
    await replay.text(),
    /The code is incorrect or the sign-in has expired/,
  );
  app.advance(5 * 30_000);
  b = await passwordStep(app, "t3@example.com");
  const r2 = await b.post("/login/totp", {
    code: code(secret, app.now() - 60_000),
  });
  assert.equal(r2.status, 401);
  await r2.body?.cancel();
  const r3 = await b.post("/login/totp", {
    code: code(secret, app.now() - 30_000),
  });
  assert.equal(r3.status, 303);
  b = await passwordStep(app, "t3@example.com");
  const r4 = await b.post("/login/totp", {
    code: code(secret, app.now() + 30_000),
  });
  assert.equal(r4.status, 303);
});

Deno.test("TOTP: a wrong code and an expired pending value get the same answer (JSON and form)", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { secret } = await enrol(app, "t4@example.com");
  app.advance(60_000);
  const step = await api(app.origin, "POST", "/login", {
    email: "t4@example.com",
    password: PASSWORD,
  });
  assert.equal(step.status, 202);
  assert.equal(step.body.secondFactor, "totp");
  assert.equal(step.body.token, undefined, "no session token");
  const pending = step.body.pending as string;
  const wrong = await api(app.origin, "POST", "/login/totp", {
    pending,
    code: "000000",
  });
  app.advance(301_000);
  const expired = await api(app.origin, "POST", "/login/totp", {
    pending,
    code: code(secret, app.now()),
  });
  const forged = await api(app.origin, "POST", "/login/totp", {
    pending: pending.slice(0, -3) + "AAA",
    code: code(secret, app.now()),
  });
  const missing = await api(app.origin, "POST", "/login/totp", {
    code: "123456",
  });
  for (const r of [wrong, expired, forged, missing]) {
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, wrong.body);
  }
  assert.equal(wrong.body.error, "invalid_code");
  // Form: the same page bytes for a wrong code and an expired cookie.
  const b = await passwordStep(app, "t4@example.com");
  const formWrong = await (await b.post("/login/totp", { code: "000000" }))
    .text();
  app.advance(301_000);
  const formExpired = await b.post("/login/totp", {
    code: code(secret, app.now()),
  });
  assert.equal(formExpired.status, 401);
  assert.equal(await formExpired.text(), formWrong);
});

Deno.test("TOTP: JSON clients finish with a recovery code, which works once", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { recovery } = await enrol(app, "t5@example.com");
  const login = () =>
    api(app.origin, "POST", "/login", {
      email: "t5@example.com",
      password: PASSWORD,
    });
  let step = await login();
  const done = await api(app.origin, "POST", "/login/totp", {
    pending: step.body.pending,
    code: recovery[0].toLowerCase(),
  });
  assert.equal(done.status, 200);
  assert.equal(typeof done.body.token, "string");
  const me = await api(
    app.origin,
    "GET",
    "/api/me",
    undefined,
    bearer(done.body.token),
  );
  assert.equal(me.status, 200);
  assert.equal(me.body.email, "t5@example.com");
  step = await login();
  const again = await api(app.origin, "POST", "/login/totp", {
    pending: step.body.pending,
    code: recovery[0],
  });
  assert.equal(again.status, 401);
});

Deno.test("TOTP: attempts are throttled per account: the 11th within the window is 429, even with the right code", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { secret } = await enrol(app, "t6@example.com");
  app.advance(30_000);
  const step = await api(app.origin, "POST", "/login", {
    email: "t6@example.com",
    password: PASSWORD,
  });
  for (let i = 0; i < 10; i++) {
    const r = await api(app.origin, "POST", "/login/totp", {
      pending: step.body.pending,
      code: String(100000 + i),
    }, { "x-test-client": `203.0.113.${i}` });
    assert.equal(r.status, 401, `attempt ${i + 1}`);
  }
  const blocked = await api(app.origin, "POST", "/login/totp", {
    pending: step.body.pending,
    code: code(secret, app.now()),
  }, { "x-test-client": "203.0.113.99" });
  assert.equal(blocked.status, 429);
  assert.ok(Number(blocked.headers.get("retry-after")) > 0);
});

Deno.test("TOTP: turning it off needs the password and a code; then the password alone signs in again", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { browser, secret } = await enrol(app, "t7@example.com");
  app.advance(30_000);
  let res = await browser.post("/account/totp/disable", {
    password: "wrong password!",
    code: code(secret, app.now()),
  });
  assert.equal(res.status, 401);
  await res.body?.cancel();
  res = await browser.post("/account/totp/disable", {
    password: PASSWORD,
    code: "000000",
  });
  assert.equal(res.status, 401);
  await res.body?.cancel();
  res = await browser.post("/account/totp/disable", {
    password: PASSWORD,
    code: code(secret, app.now()),
  });
  assert.equal(res.status, 303);
  const login = await api(app.origin, "POST", "/login", {
    email: "t7@example.com",
    password: PASSWORD,
  });
  assert.equal(login.status, 200);
  assert.equal(typeof login.body.token, "string");
});

Deno.test("TOTP: enrolment needs a session and the password, and the routes answer 404 when TOTP is off", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const anon = await api(app.origin, "POST", "/account/totp", {});
  assert.equal(anon.status, 401);
  const { token } = await registerJson(app.origin, "t8@example.com");
  // Issue 16, finding 1: an unverified account cannot turn TOTP on.
  const unverified = await api(
    app.origin,
    "POST",
    "/account/totp",
    { password: PASSWORD },
    bearer(token),
  );
  assert.equal(unverified.status, 403);
  assert.equal(unverified.body.error, "unverified");
  assert.match(
    String(unverified.body.message),
    /^Verify your email address first/,
  );
  await verifyDirectly(app, "t8@example.com");
  const wrong = await api(
    app.origin,
    "POST",
    "/account/totp",
    { password: "not the password" },
    bearer(token),
  );
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error, "invalid_credentials");
  const started = await api(
    app.origin,
    "POST",
    "/account/totp",
    { password: PASSWORD },
    bearer(token),
  );
  assert.equal(started.status, 200);
  assert.match(String(started.body.uri), /^otpauth:\/\/totp\//);
  await using off = await startApp();
  const r = await api(off.origin, "POST", "/login/totp", { code: "123456" });
  assert.equal(r.status, 404);
  const { token: t2 } = await registerJson(off.origin, "t9@example.com");
  assert.equal(
    (await api(off.origin, "POST", "/account/totp", {}, bearer(t2))).status,
    404,
  );
  const page = await new Browser(off.origin).fetch("/login/totp");
  assert.equal(page.status, 404);
});

Deno.test("issue 16 finding 4: the pending value serves one successful second step; a password change between the steps ends it", async () => {
  await using app = await startApp({}, { signInEnv: { TOTP: "on" } });
  const { secret } = await enrol(app, "t9@example.com");
  const passwordStep = () =>
    api(app.origin, "POST", "/login", {
      email: "t9@example.com",
      password: PASSWORD,
    });
  app.advance(60_000);
  const step = await passwordStep();
  assert.equal(step.status, 202);
  const pending = step.body.pending as string;
  const first = await api(app.origin, "POST", "/login/totp", {
    pending,
    code: code(secret, app.now()),
  });
  assert.equal(first.status, 200);
  // The same value again, with the next valid code: refused.
  app.advance(30_000);
  const again = await api(app.origin, "POST", "/login/totp", {
    pending,
    code: code(secret, app.now()),
  });
  assert.equal(again.status, 401);
  assert.equal(again.body.error, "invalid_code");

  // A pending value taken before a password change is refused after it.
  app.advance(30_000);
  const before = (await passwordStep()).body.pending as string;
  const owner = new Browser(app.origin);
  await owner.post("/login", { email: "t9@example.com", password: PASSWORD });
  const signedIn = await owner.post("/login/totp", {
    code: code(secret, app.now()),
  });
  assert.equal(signedIn.status, 303);
  await signedIn.body?.cancel();
  const changed = await owner.post("/account/password", {
    currentPassword: PASSWORD,
    newPassword: "a brand new passphrase",
  });
  assert.equal(changed.status, 303);
  await changed.body?.cancel();
  app.advance(30_000);
  const stale = await api(app.origin, "POST", "/login/totp", {
    pending: before,
    code: code(secret, app.now()),
  });
  assert.equal(stale.status, 401);
});

Deno.test("issue 16 finding 5: at most N consecutive failed second steps per account, then 429 with Retry-After and an event; strangers without the password never trip it; a password reset lifts it", async () => {
  await using app = await startApp({
    limits: { totpConsecutiveFailures: { max: 3, windowSeconds: 86400 } },
  }, { signInEnv: { TOTP: "on" } });
  const { secret } = await enrol(app, "t10@example.com");
  app.advance(60_000);
  // A stranger (no password, so no valid pending value) guesses at will
  // from many addresses: every answer is the same 401, no hard stop.
  for (let i = 0; i < 12; i++) {
    const r = await api(app.origin, "POST", "/login/totp", {
      pending: i % 2 ? "forged.value" : undefined,
      code: String(100000 + i),
    }, { "x-test-client": `198.51.100.${i}` });
    assert.equal(r.status, 401, `stranger attempt ${i + 1}`);
  }
  const login = (password = PASSWORD) =>
    api(app.origin, "POST", "/login", { email: "t10@example.com", password });
  // The owner is not locked out by them.
  let step = await login();
  let ok = await api(app.origin, "POST", "/login/totp", {
    pending: step.body.pending,
    code: code(secret, app.now()),
  });
  assert.equal(ok.status, 200);

  // Someone with the password: three wrong codes in a row, then the stop,
  // even for the right code, and across new pending values.
  app.advance(30_000);
  step = await login();
  for (let i = 0; i < 3; i++) {
    const r = await api(app.origin, "POST", "/login/totp", {
      pending: step.body.pending,
      code: String(200000 + i),
    }, { "x-test-client": `203.0.113.${i}` });
    assert.equal(r.status, 401, `failure ${i + 1}`);
  }
  for (const pending of [step.body.pending, (await login()).body.pending]) {
    const stopped = await api(app.origin, "POST", "/login/totp", {
      pending,
      code: code(secret, app.now()),
    });
    assert.equal(stopped.status, 429);
    assert.equal(stopped.body.error, "too_many_failures");
    assert.match(String(stopped.body.message), /reset your password/);
    assert.ok(Number(stopped.headers.get("retry-after")) > 0);
  }
  assert.ok(
    app.logs.some((l) =>
      l.includes('"type":"login_failed","method":"totp"') &&
      l.includes('"reason":"too_many_failures"')
    ),
  );
  const events = await app.query(
    "SELECT type FROM auth_events WHERE type = 'throttled'",
  );
  assert.ok(events.length >= 1, "a throttled event in the activity");

  // A password reset by email (the owner proving the address) lifts it.
  const forgot = await api(app.origin, "POST", "/password/forgot", {
    email: "t10@example.com",
  });
  assert.equal(forgot.status, 202);
  const link = await app.awaitLink("t10@example.com", 2);
  const reset = await api(app.origin, "POST", "/password/reset", {
    token: new URL(link).searchParams.get("token"),
    password: "a brand new passphrase",
  });
  assert.equal(reset.status, 200);
  app.advance(30_000);
  step = await login("a brand new passphrase");
  ok = await api(app.origin, "POST", "/login/totp", {
    pending: step.body.pending,
    code: code(secret, app.now()),
  });
  assert.equal(ok.status, 200);
});

Deno.test("issue 16 finding 5: the hard stop defaults to 100 and cannot be set above it", async () => {
  const { DEFAULT_LIMITS } = await import("../../packages/accounts/mod.ts");
  assert.equal(DEFAULT_LIMITS.totpConsecutiveFailures.max, 100);
  await assert.rejects(
    () =>
      startApp({
        limits: { totpConsecutiveFailures: { max: 101, windowSeconds: 60 } },
      }),
    /at most 100 consecutive failures/,
  );
});
