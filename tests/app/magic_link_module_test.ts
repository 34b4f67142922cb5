/**
 * The reference app's magic-link module over HTTP, with real mail: the app
 * sends through `ResendMailer` to a sink on 127.0.0.1 that speaks Resend's
 * API (`tests/conformance/mail_sink.ts`), and the tests read the links from
 * what it received. Bad input (forged, used, expired token; cross-site
 * posts) answers 400 or 403 and changes nothing; an address never proven
 * goes through the verification link's rules (docs/security.md, "One
 * account owns every credential"); TOTP still follows the link.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import { ResendMailer } from "../../packages/accounts/mod.ts";
import { MAGIC_LINK_TTL_MS } from "../../packages/accounts/magic_link/routes.ts";
import { startMailSink } from "../conformance/mail_sink.ts";
import {
  api,
  Browser,
  registerJson,
  startApp,
  type StartOptions,
  verifyDirectly,
} from "./_harness.ts";

const PASSWORD = "correct horse battery";

/** The app with the module on and mail going to a sink. */
async function start(options: StartOptions = {}) {
  const sink = startMailSink();
  const mailer = new ResendMailer({
    apiKey: sink.apiKey,
    from: "App <app@example.com>",
    baseUrl: sink.url,
  });
  const app = await startApp({ mailer }, options);
  /** The token of the `n`-th sign-in link mailed to `email`. */
  const token = async (email: string, n = 1) => {
    const links = () =>
      sink.mails.filter((m) =>
        m.to.includes(email) && m.text.includes("/magic-link/")
      );
    for (let i = 0; i < 250 && links().length < n; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const link = links()[n - 1]?.text.match(/https?:\/\/\S+/)?.[0];
    if (link === undefined) {
      throw new Error(`no sign-in link #${n} to ${email}`);
    }
    assert.equal(new URL(link).origin, app.origin);
    return new URL(link).searchParams.get("token")!;
  };
  return {
    app,
    sink,
    token,
    async [Symbol.asyncDispose]() {
      await app.close();
      await sink.close();
    },
  };
}

Deno.test("magic link over HTTP: a mailed link's page consumes nothing, its form signs in once, and JSON gets a token", async () => {
  await using s = await start();
  await registerJson(s.app.origin, "ml@example.com");
  const subject = await verifyDirectly(s.app, "ml@example.com");

  const b = new Browser(s.app.origin);
  const login = await b.page("/login");
  assert.match(login.body, /action="\/magic-link"/);
  const asked = await b.post("/magic-link", { email: "ml@example.com" });
  assert.equal(asked.status, 303);
  await asked.body?.cancel();
  const token = await s.token("ml@example.com");
  assert.match(s.sink.mails.at(-1)!.subject, /sign-in link/);

  const scanner = await fetch(
    `${s.app.origin}/magic-link/callback?token=${token}`,
  );
  assert.equal(scanner.status, 200);
  assert.equal(scanner.headers.get("set-cookie"), null);
  assert.equal(scanner.headers.get("referrer-policy"), "strict-origin");
  await scanner.body?.cancel();

  const signedIn = await b.post("/magic-link/callback", { token });
  assert.equal(signedIn.status, 303);
  await signedIn.body?.cancel();
  const me = await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal((await me.json()).subject, subject);

  const used = await b.post("/magic-link/callback", { token });
  assert.equal(used.status, 400, "used");
  assert.match(await used.text(), /This link does not work/);

  // JSON: the same request and redemption, a Bearer token back.
  const again = await api(s.app.origin, "POST", "/magic-link", {
    email: "ml@example.com",
  });
  assert.equal(again.status, 202);
  const json = await api(s.app.origin, "POST", "/magic-link/callback", {
    token: await s.token("ml@example.com", 2),
  });
  assert.equal(json.status, 200);
  const who = await api(s.app.origin, "GET", "/api/me", undefined, {
    authorization: `Bearer ${json.body.token}`,
  });
  assert.equal(who.body.subject, subject);
});

Deno.test("magic link over HTTP: forged, used, expired and cross-site redemptions answer 400 or 403 and change nothing", async () => {
  await using s = await start();
  await registerJson(s.app.origin, "bad@example.com");
  await verifyDirectly(s.app, "bad@example.com");
  const ask = async (n: number) => {
    const res = await api(s.app.origin, "POST", "/magic-link", {
      email: "bad@example.com",
    });
    assert.equal(res.status, 202);
    return await s.token("bad@example.com", n);
  };
  const token = await ask(1);
  const b = new Browser(s.app.origin);
  for (
    const forged of ["", "not-a-token", "A".repeat(43), `${token}x`]
  ) {
    const res = await b.post("/magic-link/callback", { token: forged });
    assert.equal(res.status, 400, forged);
    assert.match(await res.text(), /This link does not work/);
  }
  // A cross-site form (login CSRF) and a foreign Origin: 403, nothing consumed.
  const cross = await b.post("/magic-link/callback", { token }, {
    "sec-fetch-site": "cross-site",
  });
  assert.equal(cross.status, 403);
  await cross.body?.cancel();
  const origin = await fetch(`${s.app.origin}/magic-link/callback`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: "https://evil.example",
    },
    body: new URLSearchParams({ token }),
  });
  assert.equal(origin.status, 403);
  await origin.body?.cancel();
  const askCross = await b.post("/magic-link", { email: "bad@example.com" }, {
    "sec-fetch-site": "cross-site",
  });
  assert.equal(askCross.status, 403, "nobody else's page can mail links");
  await askCross.body?.cancel();
  assert.ok(!b.cookies.has("__Host-session"));
  // The refusals consumed nothing: the link still signs in, once.
  const ok = await b.post("/magic-link/callback", { token });
  assert.equal(ok.status, 303);
  await ok.body?.cancel();

  const late = await ask(2);
  s.app.advance(MAGIC_LINK_TTL_MS + 1000);
  const expired = await new Browser(s.app.origin).post(
    "/magic-link/callback",
    { token: late },
  );
  assert.equal(expired.status, 400, "expired");
  await expired.body?.cancel();
  const older = await ask(3);
  await ask(4);
  const voided = await new Browser(s.app.origin).post("/magic-link/callback", {
    token: older,
  });
  assert.equal(voided.status, 400, "a newer link voids the older");
  await voided.body?.cancel();
});

Deno.test("magic link over HTTP: unknown and known addresses get the same answer; only known ones get mail; asking is throttled per address", async () => {
  await using s = await start();
  await registerJson(s.app.origin, "known@example.com");
  await verifyDirectly(s.app, "known@example.com");
  const known = await api(s.app.origin, "POST", "/magic-link", {
    email: "known@example.com",
  });
  const unknown = await api(s.app.origin, "POST", "/magic-link", {
    email: "unknown@example.com",
  });
  assert.equal(known.status, 202);
  assert.deepEqual(unknown, { ...known, headers: unknown.headers });
  await s.token("known@example.com");
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(
    s.sink.mails.filter((m) => m.to.includes("unknown@example.com")).length,
    0,
  );
  assert.equal(
    await s.app.credentials.findByEmail("unknown@example.com"),
    null,
    "a link for an unknown address creates no account",
  );
  let last = 0;
  for (let i = 0; i < 6; i++) {
    last = (await api(s.app.origin, "POST", "/magic-link", {
      email: "unknown@example.com",
    })).status;
  }
  assert.equal(last, 429, "5 links an hour per address asked for");
});

Deno.test("magic link over HTTP (pre-account hijacking): a link to an address someone else registered needs that account's password, or 'This wasn't me', which revokes the registrant's sessions and password", async () => {
  await using s = await start();
  const attacker = new Browser(s.app.origin);
  const reg = await attacker.post("/register", {
    email: "victim@example.com",
    password: PASSWORD,
  });
  assert.equal(reg.status, 303);
  await reg.body?.cancel();

  const victim = new Browser(s.app.origin);
  const asked = await victim.post("/magic-link", {
    email: "victim@example.com",
  });
  await asked.body?.cancel();
  const token = await s.token("victim@example.com");
  const page = await victim.page(`/magic-link/callback?token=${token}`);
  assert.match(page.body, /name="password"/);
  assert.match(page.body, /id="disown"/);

  const bare = await victim.post("/magic-link/callback", { token });
  assert.equal(
    bare.status,
    401,
    "the link alone signs in to no unproven account",
  );
  await bare.body?.cancel();
  assert.ok(!victim.cookies.has("__Host-session"));
  assert.equal(
    (await s.app.credentials.findByEmail("victim@example.com"))!.verifiedAt,
    0,
    "nothing stamped",
  );

  const disown = await victim.post("/magic-link/callback", {
    token,
    disown: "1",
  });
  assert.equal(disown.status, 303);
  await disown.body?.cancel();
  assert.ok(victim.cookies.has("__Host-session"));
  const user = (await s.app.credentials.findByEmail("victim@example.com"))!;
  assert.ok(user.verifiedAt > 0, "the address is proven");
  const old = await attacker.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal(old.status, 401, "the registrant's session is revoked");
  await old.body?.cancel();
  const relogin = await api(s.app.origin, "POST", "/login", {
    email: "victim@example.com",
    password: PASSWORD,
  });
  assert.equal(relogin.status, 401, "the registrant's password is gone");
  const events = await victim.fetch("/api/activity", {
    headers: { accept: "application/json" },
  });
  const types = ((await events.json()).events as { type: string }[]).map((e) =>
    e.type
  );
  assert.ok(types.includes("credentials_removed"), types.join(","));
});

Deno.test("magic link over HTTP: with TOTP on, the link issues no session, only the second step", async () => {
  await using s = await start({ signInEnv: { TOTP: "on", PASSKEYS: "off" } });
  const b = new Browser(s.app.origin);
  let res = await b.post("/register", {
    email: "totp@example.com",
    password: PASSWORD,
  });
  await res.body?.cancel();
  await verifyDirectly(s.app, "totp@example.com");
  res = await b.post("/account/totp", { password: PASSWORD });
  const secret = (await res.text()).match(/id="totp-secret">([A-Z2-7]+)</)![1];
  res = await b.post("/account/totp/confirm", {
    code: new TOTP({ secret: Secret.fromBase32(secret) }).generate({
      timestamp: s.app.now(),
    }),
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();

  const other = new Browser(s.app.origin);
  res = await other.post("/magic-link", { email: "totp@example.com" });
  await res.body?.cancel();
  const token = await s.token("totp@example.com");
  res = await other.post("/magic-link/callback", { token });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/login/totp");
  await res.body?.cancel();
  assert.ok(!other.cookies.has("__Host-session"), "no session before the code");
  const json = await api(s.app.origin, "POST", "/magic-link", {
    email: "totp@example.com",
  });
  assert.equal(json.status, 202);
  const step = await api(s.app.origin, "POST", "/magic-link/callback", {
    token: await s.token("totp@example.com", 2),
  });
  assert.equal(step.status, 202);
  assert.equal(step.body.secondFactor, "totp");
  assert.equal(step.body.token, undefined);
});
