/**
 * The sign-in methods' rows of the HTTP contract, run by `contract.ts`
 * against every runtime's entry with real parts only:
 *
 * - TOTP (`@portcullis/totp`): enrolment over HTTP, codes computed here
 *   with `otpauth` (RFC 6238) from the key the enrolment page shows, the
 *   pending step after the password, replayed and older time steps, a
 *   recovery code once, and one answer for a wrong code and for an expired
 *   pending value (minted as the app would, with its secret and an earlier
 *   clock).
 * - OpenID Connect (`@portcullis/oidc`): the app under test fetches the
 *   real `oidc-provider` process on 127.0.0.1 (discovery, token endpoint);
 *   its development login and consent forms are driven over HTTP.
 * - Passkeys (`@portcullis/passkeys`): headless Chromium with a CDP
 *   virtual authenticator against the app served by the runtime.
 *
 * Every method's session then ends with `POST
 * /account/sessions/revoke-others` (revokeAll, then a new session), as a
 * password session does.
 *
 * A missing Chromium or provider prints `SKIPPED: <why>`; under `CI=true`
 * it is a failed check.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import { SecretProvider } from "../../mod.ts";
import {
  deriveSecretKey,
  MemoryTotpStore,
  TotpAuthenticator,
} from "../../packages/totp/mod.ts";
import {
  purposeKeyList,
  purposeSigner,
} from "../../packages/accounts/sign_in_methods.ts";
import {
  OIDC_PROVIDER_ID,
  type Reply,
  type SignInContext,
} from "./_signin_services.ts";
import { runPasskeyRows } from "./signin_passkeys.ts";

const STEP_MS = 30_000;

/**
 * What a failed status check prints: the status and the error code, never
 * the body (which may hold a token).
 *
 * @param r The reply.
 * @returns One line.
 */
export function brief(r: Reply): string {
  try {
    const body = r.json();
    return typeof body?.error === "string"
      ? `status ${r.status} ${body.error}: ${body.message ?? ""}`
      : `status ${r.status} (JSON without error)`;
  } catch {
    return `status ${r.status} (${r.headers.get("content-type") ?? "no body"})`;
  }
}

/** `name=value` of the first cookie a reply sets under `name` (or `__Host-name`). */
function cookieOf(reply: Reply, name: string): string | null {
  const re = new RegExp(`^((?:__Host-)?${name})=([^;]*)`);
  for (const line of reply.headers.getSetCookie()) {
    const m = line.match(re);
    if (m && m[2] !== "") return `${m[1]}=${m[2]}`;
  }
  return null;
}

/**
 * Runs the rows of the three methods.
 *
 * @param c The contract's helpers and the sign-in services.
 */
export async function runSignInContract(c: SignInContext): Promise<void> {
  const ms: string[] = [];
  for (
    const [name, rows] of [
      ["TOTP", totpRows],
      ["OIDC", oidcRows],
      ["passkeys", runPasskeyRows],
    ] as const
  ) {
    const t0 = performance.now();
    await rows(c);
    ms.push(`${name} ${Math.round(performance.now() - t0)} ms`);
  }
  console.log(`# sign-in methods' rows: ${ms.join(", ")}`);
}

/** Checks that `/api/me` accepts (200, answering the email) or refuses (401). */
async function me(
  c: SignInContext,
  auth: { bearer?: string; cookie?: string },
): Promise<Reply> {
  return await c.call("GET", "/api/me", auth);
}

/**
 * `revoke-others` with the method's session: revokeAll, a new session in
 * the answer (Bearer: the token in the body; a cookie session: 303 with the
 * new cookie and no token in a body), and the method's session refused
 * from then on.
 */
async function revokeEnds(
  c: SignInContext,
  auth: { bearer?: string; cookie?: string },
): Promise<void> {
  const r = await c.call("POST", "/account/sessions/revoke-others", {
    ...auth,
    json: {},
    sameOrigin: auth.cookie !== undefined,
  });
  let fresh: { bearer?: string; cookie?: string };
  if (auth.cookie !== undefined) {
    assert.equal(r.status, 303, brief(r));
    assert.equal(r.headers.get("location"), "/account");
    assert.doesNotMatch(r.text, /token/);
    const cookie = cookieOf(r, "session");
    assert.ok(cookie, "the new session cookie");
    fresh = { cookie };
  } else {
    assert.equal(r.status, 200, brief(r));
    assert.equal(typeof r.json().token, "string");
    fresh = { bearer: r.json().token };
  }
  assert.equal((await me(c, auth)).status, 401, "the method's session ended");
  assert.equal((await me(c, fresh)).status, 200, "the new one");
}

async function totpRows(c: SignInContext): Promise<void> {
  const { call, check } = c;
  const user = {
    email: c.email("totp"),
    token: "",
    key: "",
    recovery: [] as string[],
    step: 0,
    session: "",
    subject: "",
  };
  const codeAt = (step: number) =>
    new TOTP({ secret: Secret.fromBase32(user.key) }).generate({
      timestamp: step * STEP_MS,
    });
  /** A right password now: the pending value of the JSON answer. */
  const pending = async (): Promise<string> => {
    const r = await call("POST", "/login", {
      json: { email: user.email, password: c.password },
    });
    assert.equal(r.status, 202, brief(r));
    return r.json().pending;
  };
  const second = (value: string, code: string) =>
    call("POST", "/login/totp", { json: { pending: value, code } });

  await check(
    "TOTP: POST /account/totp shows the QR code and the key; a code from it confirms and answers ten recovery codes",
    async () => {
      const reg = await call("POST", "/register", {
        json: { email: user.email, password: c.password },
      });
      assert.equal(reg.status, 201, brief(reg));
      user.token = reg.json().token;
      await c.verify(user.email);
      const page = await call("POST", "/account/totp", {
        bearer: user.token,
        form: { password: c.password },
      });
      assert.equal(page.status, 200, brief(page));
      assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
      assert.match(page.text, /<svg[\s\S]*<\/svg>/, "the QR code");
      user.key = page.text.match(/id="totp-secret">([A-Z2-7]+)</)?.[1] ?? "";
      assert.ok(user.key.length >= 32, "a 160-bit base32 key");
      // The code of the current step confirms. Later logins use the next
      // step's code, which stays within the ±1 window for a whole step, so
      // no check waits for the clock.
      user.step = Math.floor(Date.now() / STEP_MS);
      const confirmed = await call("POST", "/account/totp/confirm", {
        bearer: user.token,
        json: { code: codeAt(user.step) },
      });
      assert.equal(confirmed.status, 200, brief(confirmed));
      user.recovery = confirmed.json().recoveryCodes;
      assert.equal(user.recovery.length, 10);
      assert.equal(new Set(user.recovery).size, 10);
    },
  );

  await check(
    "TOTP: after logout, the right password answers the pending step (202), not a session: /api/me with it answers 401",
    async () => {
      const out = await call("POST", "/logout", { bearer: user.token });
      assert.equal(out.status, 204);
      assert.equal((await me(c, { bearer: user.token })).status, 401);
      const r = await call("POST", "/login", {
        json: { email: user.email, password: c.password },
      });
      assert.equal(r.status, 202, brief(r));
      const body = r.json();
      assert.equal(body.secondFactor, "totp");
      assert.equal(body.token, undefined, "no session token");
      assert.equal(typeof body.pending, "string");
      assert.equal((await me(c, { bearer: body.pending })).status, 401);
      const account = await call("GET", "/account", { bearer: body.pending });
      assert.equal(account.status, 401);
    },
  );

  await check(
    "TOTP: a form login answers 303 to /login/totp with the pending cookie and no session cookie; the code form needs it",
    async () => {
      const r = await call("POST", "/login", {
        form: { email: user.email, password: c.password },
        sameOrigin: true,
      });
      assert.equal(r.status, 303, brief(r));
      assert.equal(r.headers.get("location"), "/login/totp");
      assert.equal(cookieOf(r, "session"), null, "no session cookie");
      const pendingCookie = cookieOf(r, "2fa");
      assert.ok(pendingCookie, "the pending cookie");
      const form = await call("GET", "/login/totp", { cookie: pendingCookie });
      assert.equal(form.status, 200);
      assert.match(form.text, /<form[^>]*method="post"/i, "the code form");
      const without = await call("GET", "/login/totp");
      assert.equal(without.status, 303);
      assert.equal(without.headers.get("location"), "/login");
    },
  );

  await check(
    "TOTP: POST /login/totp with the pending value and a right code answers a session that /api/me accepts",
    async () => {
      const r = await second(await pending(), codeAt(user.step + 1));
      assert.equal(r.status, 200, brief(r));
      user.session = r.json().token;
      const who = await me(c, { bearer: user.session });
      assert.equal(who.status, 200, brief(who));
      assert.equal(who.json().email, user.email);
      user.subject = who.json().subject;
    },
  );

  await check(
    "TOTP: the same code again (its time step is used) and an older step's code are refused (401)",
    async () => {
      const value = await pending();
      const replay = await second(value, codeAt(user.step + 1));
      assert.equal(replay.status, 401, brief(replay));
      const older = await second(value, codeAt(user.step));
      assert.equal(older.status, 401, brief(older));
    },
  );

  await check(
    "TOTP: a wrong code gets the same 401 answer as an expired or a tampered pending value",
    async () => {
      const value = await pending();
      const valid = new Set([-1, 0, 1, 2].map((d) => codeAt(user.step + d)));
      const wrongCode = ["000000", "111111", "222222"].find((x) =>
        !valid.has(x)
      )!;
      const wrong = await second(value, wrongCode);
      assert.equal(wrong.status, 401, brief(wrong));
      // Expired: signed with the app's key for that purpose by the
      // authenticator as the app builds it, on a clock ten minutes back.
      const secret = SecretProvider.fromValue(c.secret);
      const earlier = new TotpAuthenticator({
        store: new MemoryTotpStore(),
        issuer: "Portcullis",
        secretKeys: purposeKeyList(secret, "totp-secret").then((keys) =>
          Promise.all(keys.map(deriveSecretKey))
        ),
        pending: purposeSigner(secret, "totp-pending"),
        now: () => Date.now() - 10 * 60_000,
      });
      assert.ok(user.subject, "the user's subject is known");
      const expired = await second(
        await earlier.issuePending(user.subject, "/"),
        codeAt(user.step + 1),
      );
      assert.equal(expired.status, 401, brief(expired));
      const tampered = await second(
        value.slice(0, -4) + (value.endsWith("AAAA") ? "BBBB" : "AAAA"),
        codeAt(user.step + 1),
      );
      assert.equal(tampered.status, 401, brief(tampered));
      assert.equal(expired.text, wrong.text, "expired: the same answer");
      assert.equal(tampered.text, wrong.text, "tampered: the same answer");
    },
  );

  await check(
    "TOTP: a recovery code signs in once; the same code again is refused",
    async () => {
      const code = user.recovery[0];
      assert.ok(code, "a recovery code");
      const first = await second(await pending(), code);
      assert.equal(first.status, 200, brief(first));
      const who = await me(c, { bearer: first.json().token });
      assert.equal(who.status, 200);
      assert.equal(who.json().subject, user.subject);
      const again = await second(await pending(), code);
      assert.equal(again.status, 401, brief(again));
    },
  );

  await check(
    "TOTP: POST /account/sessions/revoke-others (revokeAll) ends the session the code gave",
    () => revokeEnds(c, { bearer: user.session }),
  );
}

async function oidcRows(c: SignInContext): Promise<void> {
  const { call, check, op } = c;
  if (op === null) {
    await c.missing(
      `OpenID Connect rows: the OpenID Provider (oidc-provider) could not start: ${c.opError}`,
    );
    return;
  }
  const start = `/login/oidc/${OIDC_PROVIDER_ID}`;
  const email = c.email("oidc");
  const login = `${email.split("@")[0]}-sub;${email.toUpperCase()};true`;
  const user = { subject: "", cookie: "" };

  /** From the app to the provider and back: the state cookie and the callback path. */
  const throughOp = async (): Promise<{ state: string; path: string }> => {
    const r = await call(
      "GET",
      `${start}?next=${encodeURIComponent("/account")}`,
    );
    assert.equal(r.status, 303, brief(r));
    const location = r.headers.get("location") ?? "";
    assert.ok(location.startsWith(op.issuer + "/"), "to the provider");
    const state = cookieOf(r, "oidc");
    assert.ok(state, "the state cookie");
    const callback = new URL(await op.signIn(location, login));
    assert.equal(callback.origin, c.base, "back to the app");
    return { state, path: callback.pathname + callback.search };
  };
  const refused = (r: Reply): void => {
    assert.equal(r.status, 400, brief(r));
    assert.match(r.text, /could not be completed/, "the refusal page");
    assert.equal(cookieOf(r, "session"), null, "no session cookie");
  };

  await check(
    "OIDC: /login offers the provider; GET /login/oidc/local answers 303 to oidc-provider with the state cookie",
    async () => {
      const page = await call("GET", "/login");
      assert.equal(page.status, 200);
      assert.ok(page.text.includes(`href="${start}?next=%2F"`), "the button");
      const r = await call("GET", start);
      assert.equal(r.status, 303);
      const url = new URL(r.headers.get("location") ?? "");
      assert.equal(url.origin, op.issuer);
      assert.equal(url.searchParams.get("code_challenge_method"), "S256");
      assert.ok(url.searchParams.get("state"), "state");
      assert.ok(url.searchParams.get("nonce"), "nonce");
      assert.match(cookieOf(r, "oidc") ?? "", /^(__Host-)?oidc=/);
    },
  );

  await check(
    "OIDC: a full login at the provider (the app fetches it at 127.0.0.1) creates the user and ends in a session that /api/me accepts",
    async () => {
      const { state, path } = await throughOp();
      const r = await call("GET", path, { cookie: state });
      assert.equal(r.status, 303, brief(r));
      assert.equal(r.headers.get("location"), "/account");
      user.cookie = cookieOf(r, "session") ?? "";
      assert.ok(user.cookie, "a session cookie");
      const who = await me(c, { cookie: user.cookie });
      assert.equal(who.status, 200, brief(who));
      assert.equal(who.json().email, email, "the provider's email, normalised");
      assert.equal(who.json().verified, true);
      user.subject = who.json().subject;
      // The new account has no password.
      const pw = await call("POST", "/login", {
        json: { email, password: c.password },
      });
      assert.equal(pw.status, 401);
    },
  );

  await check(
    "OIDC: a second login at the provider signs the same user in",
    async () => {
      const { state, path } = await throughOp();
      const r = await call("GET", path, { cookie: state });
      assert.equal(r.status, 303, brief(r));
      const who = await me(c, { cookie: cookieOf(r, "session") ?? "" });
      assert.equal(who.status, 200, brief(who));
      assert.equal(who.json().subject, user.subject);
    },
  );

  await check(
    "OIDC: a tampered state cookie is refused (400) and signs nobody in",
    async () => {
      const { state, path } = await throughOp();
      const forged = state.slice(0, -4) +
        (state.endsWith("AAAA") ? "BBBB" : "AAAA");
      refused(await call("GET", path, { cookie: forged }));
      // The callback's own state parameter does not match another value.
      const other = await throughOp();
      refused(await call("GET", path, { cookie: other.state }));
    },
  );

  await check(
    "OIDC: a replayed authorization code is refused (400)",
    async () => {
      const { state, path } = await throughOp();
      const first = await call("GET", path, { cookie: state });
      assert.equal(first.status, 303, brief(first));
      refused(await call("GET", path, { cookie: state }));
    },
  );

  await check(
    "OIDC: POST /account/sessions/revoke-others (revokeAll) ends the session the provider gave",
    () => revokeEnds(c, { cookie: user.cookie }),
  );
}
