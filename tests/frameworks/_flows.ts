/**
 * The account flows every framework mount passes over HTTP, as test steps:
 * register → the mailed link → verify → log in → TOTP enrolment → sign-in
 * with TOTP → sign out → password reset → log in with the new password; and
 * issue 27's throttle check: a stranger's 100 failed logins from one
 * address leave another address's login open.
 *
 * Mail goes to a recording Resend stand-in on 127.0.0.1
 * (`tests/conformance/mail_sink.ts`), given to the example as
 * `RESEND_API_KEY` and `RESEND_BASE_URL`. Distinct client addresses are
 * real sockets bound to 127.0.0.2 and 127.0.0.3, so the example must take
 * the address from the connection.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import type { MailSink } from "../conformance/mail_sink.ts";
import { accountsKit, recordedMailReader } from "@portcullis/accounts/testing";

export { startMailSink } from "../conformance/mail_sink.ts";

const STEP_MS = 30_000;
const PASSWORD = "correct horse battery staple";
const NEW_PASSWORD = "a new and rather long passphrase";

/** Options of {@linkcode runFlows}. */
export interface FlowsOptions {
  /** The server's origin (its `APP_ORIGIN`), such as `http://127.0.0.1:4000`. */
  origin: string;
  /** The mail sink the server sends through. */
  mail: MailSink;
  /**
   * A page of the app's own, behind its framework's gate: 303/307 to
   * `/login` signed out, 200 with the user's email signed in.
   */
  page?: string;
}

/** An answer read whole. */
interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // deno-lint-ignore no-explicit-any
  json(): any;
}

function clientFrom(address: string): Deno.HttpClient {
  return Deno.createHttpClient({ localAddress: address });
}

/**
 * Runs the flows against a running server.
 *
 * @param t The test context; each part is a step.
 * @param options See {@linkcode FlowsOptions}.
 */
export async function runFlows(
  t: Deno.TestContext,
  options: FlowsOptions,
): Promise<void> {
  const { origin, mail } = options;
  const suffix = crypto.randomUUID().slice(0, 8);
  const email = `flows-${suffix}@example.com`;
  const sameOrigin = { origin, "sec-fetch-site": "same-origin" };
  const call = async (
    method: string,
    path: string,
    init: {
      json?: unknown;
      form?: Record<string, string>;
      bearer?: string;
      cookie?: string;
      headers?: Record<string, string>;
      client?: Deno.HttpClient;
    } = {},
  ): Promise<Answer> => {
    const headers: Record<string, string> = {
      accept: init.form ? "text/html" : "application/json",
      ...(method === "GET" ? {} : sameOrigin),
      ...init.headers,
    };
    if (init.bearer) headers.authorization = `Bearer ${init.bearer}`;
    if (init.cookie) headers.cookie = init.cookie;
    let body: BodyInit | undefined;
    if (init.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(init.json);
    } else if (init.form) body = new URLSearchParams(init.form);
    const res = await fetch(`${origin}${path}`, {
      method,
      headers,
      body,
      redirect: "manual",
      client: init.client,
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      text,
      json: () => JSON.parse(text),
    };
  };
  const brief = (a: Answer) => `${a.status} ${a.text.slice(0, 300)}`;
  const tokenOf = (link: string) =>
    new URL(link).searchParams.get("token") ?? "";
  let key = "";
  let recovery: string[] = [];
  let token = "";
  const code = (offset: number) =>
    new TOTP({ secret: Secret.fromBase32(key) }).generate({
      timestamp: (Math.floor(Date.now() / STEP_MS) + offset) * STEP_MS,
    });

  await t.step("the package's pages come through the framework", async () => {
    const login = await call("GET", "/login", {
      headers: { accept: "text/html" },
    });
    assert.equal(login.status, 200, brief(login));
    assert.match(login.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(login.text, /<form[^>]+action="\/login"/);
    const unknown = await call("GET", "/no-such-page-here");
    assert.equal(unknown.status, 404);
  });

  await t.step(
    "register, then the mailed link with the password verifies the address",
    async () => {
      const reg = await call("POST", "/register", {
        json: { email, password: PASSWORD },
      });
      assert.equal(reg.status, 201, brief(reg));
      token = reg.json().token;
      let me = await call("GET", "/api/me", { bearer: token });
      assert.equal(me.status, 200, brief(me));
      assert.equal(me.json().verified, false);
      const link = await mail.link(email, 1, 10_000);
      assert.match(link, new RegExp(`^${origin}/verify\\?token=`));
      const shown = await call("GET", new URL(link).pathname + "?token=x", {
        headers: { accept: "text/html" },
      });
      assert.ok(shown.status < 500, brief(shown));
      const wrong = await call("POST", "/verify", {
        json: { token: tokenOf(link), password: "not the password at all" },
      });
      assert.equal(wrong.status, 401, brief(wrong));
      const ok = await call("POST", "/verify", {
        json: { token: tokenOf(link), password: PASSWORD },
      });
      assert.equal(ok.status, 200, brief(ok));
      me = await call("GET", "/api/me", { bearer: token });
      assert.equal(me.json().verified, true);
      assert.equal(me.json().email, email);
    },
  );

  await t.step("log in; a wrong password is 401", async () => {
    const bad = await call("POST", "/login", {
      json: { email, password: "wrong password here" },
    });
    assert.equal(bad.status, 401, brief(bad));
    const ok = await call("POST", "/login", {
      json: { email, password: PASSWORD },
    });
    assert.equal(ok.status, 200, brief(ok));
    token = ok.json().token;
    if (options.page) {
      const viaForm = await call("POST", "/login", {
        form: { email, password: PASSWORD },
      });
      assert.equal(viaForm.status, 303, brief(viaForm));
      const cookie = viaForm.headers.getSetCookie().map((c) => c.split(";")[0])
        .filter((c) => /=./.test(c)).join("; ");
      assert.match(cookie, /session=./, "the form login sets the cookie");
      const page = await call("GET", options.page, {
        cookie,
        headers: { accept: "text/html" },
      });
      assert.equal(page.status, 200, brief(page));
      assert.ok(page.text.includes(email), "the app's page shows the user");
      const anonymous = await call("GET", options.page, {
        headers: { accept: "text/html", "sec-fetch-mode": "navigate" },
      });
      assert.ok(
        [302, 303, 307].includes(anonymous.status),
        brief(anonymous),
      );
      assert.match(
        anonymous.headers.get("location") ?? "",
        /^(https?:\/\/[^/]+)?\/login\b/,
      );
    }
  });

  await t.step(
    "TOTP: enrolment needs the password, a code confirms it and answers ten recovery codes",
    async () => {
      const refused = await call("POST", "/account/totp", {
        bearer: token,
        form: { password: "not the password at all" },
      });
      assert.equal(refused.status, 401, brief(refused));
      const page = await call("POST", "/account/totp", {
        bearer: token,
        form: { password: PASSWORD },
      });
      assert.equal(page.status, 200, brief(page));
      assert.match(page.text, /<svg[\s\S]*<\/svg>/, "the QR code");
      key = page.text.match(/id="totp-secret">([A-Z2-7]+)</)?.[1] ?? "";
      assert.ok(key.length >= 32, "a 160-bit base32 key");
      const wrong = await call("POST", "/account/totp/confirm", {
        bearer: token,
        json: { code: code(0) === "000000" ? "111111" : "000000" },
      });
      assert.equal(wrong.status, 422, brief(wrong));
      const confirmed = await call("POST", "/account/totp/confirm", {
        bearer: token,
        json: { code: code(0) },
      });
      assert.equal(confirmed.status, 200, brief(confirmed));
      recovery = confirmed.json().recoveryCodes;
      assert.equal(recovery.length, 10);
    },
  );

  await t.step(
    "sign out; the password alone then answers the TOTP step (202), and a code signs in",
    async () => {
      const out = await call("POST", "/logout", { bearer: token });
      assert.equal(out.status, 204, brief(out));
      const gone = await call("GET", "/api/me", { bearer: token });
      assert.equal(gone.status, 401, "the session ended");
      const first = await call("POST", "/login", {
        json: { email, password: PASSWORD },
      });
      assert.equal(first.status, 202, brief(first));
      const pending = first.json().pending;
      assert.equal(typeof pending, "string");
      assert.equal(first.json().token, undefined, "no session yet");
      const bad = await call("POST", "/login/totp", {
        json: { pending, code: "12345" },
      });
      assert.ok([400, 401, 422].includes(bad.status), brief(bad));
      const second = await call("POST", "/login/totp", {
        json: { pending, code: code(1) },
      });
      assert.equal(second.status, 200, brief(second));
      token = second.json().token;
      const me = await call("GET", "/api/me", { bearer: token });
      assert.equal(me.status, 200, brief(me));
      const out2 = await call("POST", "/logout", { bearer: token });
      assert.equal(out2.status, 204);
    },
  );

  await t.step(
    "password reset by the mailed link, then the new password signs in and the old one does not",
    async () => {
      const forgot = await call("POST", "/password/forgot", {
        json: { email },
      });
      assert.equal(forgot.status, 202, brief(forgot));
      const link = await mail.link(email, 2, 10_000);
      assert.match(link, new RegExp(`^${origin}/password/reset\\?token=`));
      const weak = await call("POST", "/password/reset", {
        json: { token: tokenOf(link), password: "short" },
      });
      assert.equal(weak.status, 422, brief(weak));
      const ok = await call("POST", "/password/reset", {
        json: { token: tokenOf(link), password: NEW_PASSWORD },
      });
      assert.equal(ok.status, 200, brief(ok));
      const old = await call("POST", "/login", {
        json: { email, password: PASSWORD },
      });
      assert.equal(old.status, 401, brief(old));
      const fresh = await call("POST", "/login", {
        json: { email, password: NEW_PASSWORD },
      });
      assert.equal(fresh.status, 202, "TOTP stays on: " + brief(fresh));
      const second = await call("POST", "/login/totp", {
        json: { pending: fresh.json().pending, code: recovery[0] },
      });
      assert.equal(second.status, 200, brief(second));
      const me = await call("GET", "/api/me", { bearer: second.json().token });
      assert.equal(me.json().email, email);
    },
  );

  await t.step(
    "a stranger's 100 failed logins from 127.0.0.2 leave a login from 127.0.0.3 open (issue 27)",
    async () => {
      const victim = `victim-${suffix}@example.com`;
      const reg = await call("POST", "/register", {
        json: { email: victim, password: PASSWORD },
      });
      assert.equal(reg.status, 201, brief(reg));
      const stranger = clientFrom("127.0.0.2");
      const user = clientFrom("127.0.0.3");
      try {
        // The stranger guesses until its address is held back: at least
        // the 100 failures the issue names (the limit's window slides, so
        // the first 429 may come a little later), at most 160.
        const statuses: number[] = [];
        const guess = (n: number) =>
          call("POST", "/login", {
            client: stranger,
            json: {
              email: `nobody-${suffix}-${n}@example.com`,
              password: "guessing a password",
            },
          });
        while (statuses.length < 160 && !statuses.includes(429)) {
          const n = statuses.length;
          const batch = await Promise.all(
            [0, 1, 2, 3, 4].map((j) => guess(n + j)),
          );
          statuses.push(...batch.map((a) => a.status));
        }
        assert.ok(
          statuses.every((s) => s === 401 || s === 429),
          statuses.join(","),
        );
        assert.ok(statuses.includes(429), "the stranger is held back");
        assert.ok(
          statuses.filter((s) => s === 401).length >= 100,
          `the stranger failed 100 times first: ${statuses.join(",")}`,
        );
        // Right after the stranger was held back, another address (with the
        // right password) is not: two buckets, not one shared by everyone.
        // (The stranger's own next try is not asserted: the window slides,
        // so its count hovers at the limit and a try may slip in.)
        const ok = await call("POST", "/login", {
          client: user,
          json: { email: victim, password: PASSWORD },
        });
        assert.equal(ok.status, 200, "another address logs in: " + brief(ok));
      } finally {
        stranger.close();
        user.close();
      }
    },
  );
}

/**
 * The security kit of `@portcullis/accounts/testing` against a framework's
 * mount, as a user runs it on their own app: one step per check, from a
 * client address of its own (the flows' steps above spent some of
 * 127.0.0.1's registrations).
 *
 * @param t The test context.
 * @param origin The server's origin.
 * @param mail The mail sink the server sends through.
 * @param options What the mount serves (the examples list TOTP and the
 * address proof).
 */
export async function runKitSteps(
  t: Deno.TestContext,
  origin: string,
  mail: MailSink,
  options: { totp: boolean; verification: boolean },
): Promise<void> {
  const client = clientFrom("127.0.0.9");
  try {
    await accountsKit({
      baseUrl: origin,
      mail: recordedMailReader(mail.mails),
      ...options,
      fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
        fetch(input, { ...init, client } as RequestInit)) as typeof fetch,
    }, t);
  } finally {
    client.close();
  }
}
