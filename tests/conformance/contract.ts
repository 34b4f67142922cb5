/**
 * The HTTP contract of the reference app, written once as a
 * function of a base URL: plain `fetch` against a running server, whatever
 * runtime serves it. Verification links are read from the mail sink the
 * runner started (mail_sink.ts).
 *
 * Each check prints `ok - <name>` or `FAIL - <name>: <why>`; the runner
 * prints the closing `N passed, N failed`.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  FULL_STRENGTH_MARK,
  HASHER_REPORT_PATH,
  type HasherReport,
} from "./_hasher.ts";
import type { MailSink } from "./mail_sink.ts";
import { runLifecycleContract } from "./lifecycle_contract.ts";
import { runDpopContract } from "./dpop_contract.ts";
import type { SignInContext, SignInOptions } from "./_signin_services.ts";

/** Options of {@linkcode runContract}. */
export interface ContractOptions {
  /** Where the app listens, such as `http://127.0.0.1:41234`. */
  baseUrl: string;
  /** The mail sink the app sends to. */
  mail: MailSink;
  /** The runtime's name, for the output. */
  label: string;
  /** Whether the build answers {@linkcode HASHER_REPORT_PATH}; default true. */
  hasherReport?: boolean;
  /**
   * The PBKDF2 route the full-strength check must have taken: `wasm` where
   * WebCrypto refuses 600000 iterations (Workers, with the imported
   * module), else `webcrypto`.
   */
  expectRoute?: "webcrypto" | "wasm" | "javascript";
  /**
   * The sign-in methods beside the password (TOTP, OpenID Connect,
   * passkeys; signin_contract.ts): the app's secret and the OpenID
   * Provider it was configured with. Without it those rows do not run.
   */
  signIn?: SignInOptions;
}

/** The tally of one run. */
export interface ContractResult {
  /** Checks that passed. */
  passed: number;
  /** Checks that failed. */
  failed: number;
  /** Names of the failed checks. */
  failures: string[];
  /** Measurements worth printing (full-strength hashing cost). */
  notes: string[];
}

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // deno-lint-ignore no-explicit-any
  json: () => any;
}

interface CallOptions {
  json?: unknown;
  form?: Record<string, string>;
  bearer?: string;
  cookie?: string;
  headers?: Record<string, string>;
  /** Browser-like unsafe request from the app's own pages. */
  sameOrigin?: boolean;
}

const PASSWORD = "correct horse battery staple";

/**
 * Runs every check against a running app.
 *
 * @param options See {@linkcode ContractOptions}.
 * @returns The tally.
 */
export async function runContract(
  options: ContractOptions,
): Promise<ContractResult> {
  const base = options.baseUrl.replace(/\/$/, "");
  const result: ContractResult = {
    passed: 0,
    failed: 0,
    failures: [],
    notes: [],
  };
  const run = Math.random().toString(36).slice(2, 8);
  const email = (who: string) => `${who}-${run}@example.com`;

  async function call(
    method: string,
    path: string,
    o: CallOptions = {},
  ): Promise<Reply> {
    const headers = new Headers(o.headers);
    let body: string | undefined;
    if (o.json !== undefined) {
      headers.set("content-type", "application/json");
      headers.set("accept", "application/json");
      body = JSON.stringify(o.json);
    } else if (o.form !== undefined) {
      headers.set("content-type", "application/x-www-form-urlencoded");
      body = new URLSearchParams(o.form).toString();
    }
    if (o.bearer !== undefined) {
      headers.set("authorization", `Bearer ${o.bearer}`);
    }
    if (o.cookie !== undefined) headers.set("cookie", o.cookie);
    if (o.sameOrigin) {
      headers.set("sec-fetch-site", "same-origin");
      headers.set("origin", base);
    }
    const res = await fetch(base + path, {
      method,
      headers,
      body,
      redirect: "manual",
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      text,
      json: () => JSON.parse(text),
    };
  }

  /** The session cookie (`name=value`) a response sets, or null. */
  function sessionCookie(reply: Reply): string | null {
    for (const line of reply.headers.getSetCookie()) {
      const m = line.match(/^((?:__Host-)?session)=([^;]*)/);
      if (m && m[2] !== "") return `${m[1]}=${m[2]}`;
    }
    return null;
  }

  async function check(name: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
      result.passed++;
      console.log(`ok - ${name}`);
    } catch (error) {
      result.failed++;
      result.failures.push(name);
      const why = error instanceof Error ? error.message : String(error);
      console.log(`FAIL - ${name}: ${why.split("\n").slice(0, 6).join(" ")}`);
    }
  }

  // State shared by later checks; a failed step leaves it empty and the
  // checks that need it fail too, each with its own line.
  const alice = { email: email("alice"), subject: "", token: "" };
  const bob = { email: email("bob"), subject: "", cookie: "" };

  await check("GET / answers 200 HTML", async () => {
    const r = await call("GET", "/");
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /^text\/html/);
  });

  await check(
    "GET /register and GET /login answer 200 HTML forms",
    async () => {
      for (const path of ["/register", "/login"]) {
        const r = await call("GET", path);
        assert.equal(r.status, 200, path);
        assert.match(r.text, /<form[^>]*method="post"/i, path);
      }
    },
  );

  await check(
    "POST /register (JSON) answers 201 {subject, token}",
    async () => {
      const r = await call("POST", "/register", {
        json: { email: alice.email, password: PASSWORD },
      });
      assert.equal(r.status, 201, r.text);
      const body = r.json();
      assert.equal(typeof body.subject, "string");
      assert.equal(typeof body.token, "string");
      alice.subject = body.subject;
    },
  );

  await check("registration mails a verification link", async () => {
    const link = await options.mail.link(alice.email);
    assert.match(link, /\/verify\?token=[A-Za-z0-9_-]+$/);
  });

  await check(
    "POST /register with a taken email answers 409, after normalisation",
    async () => {
      for (const e of [alice.email, `  ${alice.email.toUpperCase()} `]) {
        const r = await call("POST", "/register", {
          json: { email: e, password: PASSWORD },
        });
        assert.equal(r.status, 409, e);
        assert.equal(r.json().error, "email_taken");
      }
    },
  );

  await check("POST /register with invalid input answers 422", async () => {
    const bad = [
      { email: "not-an-email", password: PASSWORD },
      { email: email("short"), password: "short" },
    ];
    for (const json of bad) {
      const r = await call("POST", "/register", { json });
      assert.equal(r.status, 422, JSON.stringify(json));
    }
  });

  await check(
    "POST /register with a body that is not JSON or a form answers 415 and registers nobody",
    async () => {
      const target = email("mediatype");
      for (const type of ["text/plain", "image/png"]) {
        const res = await fetch(base + "/register", {
          method: "POST",
          headers: { "content-type": type, accept: "application/json" },
          body: JSON.stringify({ email: target, password: PASSWORD }),
        });
        const text = await res.text();
        assert.equal(res.status, 415, `${type}: ${text}`);
        assert.equal(JSON.parse(text).error, "unsupported_media_type");
      }
      const login = await call("POST", "/login", {
        json: { email: target, password: PASSWORD },
      });
      assert.equal(login.status, 401, "nobody was registered");
    },
  );

  await check("POST /login (JSON) answers 200 {token, expiresAt}", async () => {
    const r = await call("POST", "/login", {
      json: { email: alice.email, password: PASSWORD },
    });
    assert.equal(r.status, 200, r.text);
    const body = r.json();
    assert.equal(typeof body.token, "string");
    assert.equal(typeof body.expiresAt, "number");
    alice.token = body.token;
  });

  await check(
    "a wrong password and an unknown email get the same 401",
    async () => {
      const wrong = await call("POST", "/login", {
        json: { email: alice.email, password: PASSWORD + "!" },
      });
      const unknown = await call("POST", "/login", {
        json: { email: email("nobody"), password: PASSWORD },
      });
      assert.equal(wrong.status, 401);
      assert.equal(unknown.status, 401);
      assert.equal(wrong.text, unknown.text);
    },
  );

  await check(
    "GET /api/me with Bearer answers {subject, email, verified: false}",
    async () => {
      const r = await call("GET", "/api/me", { bearer: alice.token });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json(), {
        subject: alice.subject,
        email: alice.email,
        verified: false,
      });
    },
  );

  await check(
    "GET /api/me anonymous, with a bad token, or with identity headers answers 401",
    async () => {
      const cases: CallOptions[] = [
        {},
        { bearer: "v1.bogus.token.value" },
        {
          bearer: alice.token.slice(0, -2) +
            (alice.token.endsWith("AA") ? "BA" : "AA"),
        },
        { headers: { "x-user-id": alice.subject } },
        { headers: { "x-middleware-subrequest": "middleware" } },
      ];
      for (const c of cases) {
        const r = await call("GET", `/api/me?userId=${alice.subject}`, c);
        assert.equal(r.status, 401, JSON.stringify(c));
      }
    },
  );

  await check(
    "POST /register (form) answers 303 to / with an HttpOnly session cookie",
    async () => {
      const r = await call("POST", "/register", {
        form: { email: bob.email, password: PASSWORD },
        sameOrigin: true,
      });
      assert.equal(r.status, 303, r.text);
      assert.equal(r.headers.get("location"), "/");
      const line = r.headers.getSetCookie().find((l) => /session=/.test(l));
      assert.ok(line, "a session cookie is set");
      assert.match(line!, /HttpOnly/i);
      assert.match(line!, /SameSite=Lax/i);
      bob.cookie = sessionCookie(r)!;
    },
  );

  await check("GET /api/me with the cookie answers the user", async () => {
    const r = await call("GET", "/api/me", { cookie: bob.cookie });
    assert.equal(r.status, 200, r.text);
    bob.subject = r.json().subject;
    assert.equal(r.json().email, bob.email);
  });

  await check(
    "POST /login (form) answers 303 to next with a new cookie",
    async () => {
      const r = await call("POST", "/login", {
        form: { email: bob.email, password: PASSWORD, next: "/account" },
        sameOrigin: true,
      });
      assert.equal(r.status, 303, r.text);
      assert.equal(r.headers.get("location"), "/account");
      const cookie = sessionCookie(r);
      assert.ok(cookie);
      assert.notEqual(cookie, bob.cookie);
      bob.cookie = cookie!;
    },
  );

  await check(
    "issue 27 finding 4, docs item 4: only a browser's fresh sign-in answer carries Secure-Session-Registration (not a JSON sign-in, not a page)",
    async () => {
      const form = await call("POST", "/login", {
        form: { email: bob.email, password: PASSWORD },
        sameOrigin: true,
      });
      assert.equal(form.status, 303, form.text);
      assert.match(
        form.headers.get("secure-session-registration") ?? "",
        /;path="\/auth\/dbsc\/start";challenge="/,
      );
      const json = await call("POST", "/login", {
        json: { email: bob.email, password: PASSWORD },
      });
      assert.equal(json.status, 200, json.text);
      assert.equal(json.headers.get("secure-session-registration"), null);
      const page = await call("GET", "/account", {
        cookie: sessionCookie(form)!,
        headers: { accept: "text/html", "sec-fetch-dest": "document" },
      });
      assert.equal(page.status, 200, page.text);
      assert.equal(page.headers.get("secure-session-registration"), null);
    },
  );

  await check("POST /login (form) never redirects off-site", async () => {
    const r = await call("POST", "/login", {
      form: { email: bob.email, password: PASSWORD, next: "//evil.example/x" },
      sameOrigin: true,
    });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get("location"), "/");
  });

  await check("GET /account: 200 HTML with the cookie", async () => {
    const r = await call("GET", "/account", { cookie: bob.cookie });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.text.includes(bob.email));
  });

  await check(
    "GET /account: a browser navigation without a session is sent to /login?next=",
    async () => {
      const r = await call("GET", "/account", {
        headers: { accept: "text/html", "sec-fetch-mode": "navigate" },
      });
      assert.equal(r.status, 303);
      assert.equal(r.headers.get("location"), "/login?next=%2Faccount");
    },
  );

  await check(
    "GET /account: a bad Bearer answers 401 with WWW-Authenticate: Bearer",
    async () => {
      const r = await call("GET", "/account", { bearer: "nope" });
      assert.equal(r.status, 401);
      assert.match(r.headers.get("www-authenticate") ?? "", /^Bearer/);
    },
  );

  await check(
    "a cross-site POST with the cookie answers 403 and changes nothing",
    async () => {
      const r = await call("POST", "/logout", {
        cookie: bob.cookie,
        headers: {
          "sec-fetch-site": "cross-site",
          origin: "https://evil.example",
        },
      });
      assert.equal(r.status, 403);
      const me = await call("GET", "/api/me", { cookie: bob.cookie });
      assert.equal(me.status, 200, "the session survived");
    },
  );

  await check("POST /api/notes before verification answers 403", async () => {
    const r = await call("POST", "/api/notes", {
      bearer: alice.token,
      json: { text: "hello" },
    });
    assert.equal(r.status, 403, r.text);
  });

  await check("POST /verify with an unknown token answers 400", async () => {
    const r = await call("POST", "/verify", {
      json: { token: "A".repeat(43) },
    });
    assert.equal(r.status, 400);
  });

  let token = "";
  await check(
    "GET /verify with the mailed link only shows a confirmation (nothing consumed, strict-origin)",
    async () => {
      const link = await options.mail.link(alice.email);
      const url = new URL(link);
      token = url.searchParams.get("token") ?? "";
      const r = await call("GET", url.pathname + url.search);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get("referrer-policy"), "strict-origin");
      assert.equal(r.headers.get("set-cookie"), null);
      const me = await call("GET", "/api/me", { bearer: alice.token });
      assert.equal(me.json().verified, false);
    },
  );

  await check(
    "POST /verify with the mailed token but without the account's password (another browser) answers 401 and verifies nothing",
    async () => {
      const r = await call("POST", "/verify", { json: { token } });
      assert.equal(r.status, 401, r.text);
      const me = await call("GET", "/api/me", { bearer: alice.token });
      assert.equal(me.json().verified, false);
    },
  );

  await check(
    "POST /verify with the mailed token and the account's password answers 303 to / and verifies",
    async () => {
      const r = await call("POST", "/verify", {
        json: { token, password: PASSWORD },
      });
      assert.equal(r.status, 303, r.text);
      assert.equal(r.headers.get("location"), "/");
      const me = await call("GET", "/api/me", { bearer: alice.token });
      assert.equal(me.json().verified, true);
    },
  );

  await check("the verification link works once", async () => {
    const r = await call("POST", "/verify", {
      json: { token, password: PASSWORD },
    });
    assert.equal(r.status, 400);
  });

  let noteId = "";
  await check("POST /api/notes when verified answers 201 {id}", async () => {
    const r = await call("POST", "/api/notes", {
      bearer: alice.token,
      json: { text: "hello" },
    });
    assert.equal(r.status, 201, r.text);
    noteId = r.json().id;
    assert.equal(typeof noteId, "string");
  });

  await check(
    "GET /api/notes/:id: 200 for any signed-in user, 401 anonymous",
    async () => {
      const other = await call("GET", `/api/notes/${noteId}`, {
        cookie: bob.cookie,
      });
      assert.equal(other.status, 200, other.text);
      assert.equal(other.json().text, "hello");
      const anon = await call("GET", `/api/notes/${noteId}`);
      assert.equal(anon.status, 401);
    },
  );

  await check(
    "PUT /api/notes/:id: 200 for the owner, 403 for another user",
    async () => {
      const mine = await call("PUT", `/api/notes/${noteId}`, {
        bearer: alice.token,
        json: { text: "edited" },
      });
      assert.equal(mine.status, 200, mine.text);
      const theirs = await call("PUT", `/api/notes/${noteId}`, {
        cookie: bob.cookie,
        sameOrigin: true,
        json: { text: "defaced" },
      });
      assert.equal(theirs.status, 403, theirs.text);
      const after = await call("GET", `/api/notes/${noteId}`, {
        bearer: alice.token,
      });
      assert.equal(after.json().text, "edited");
    },
  );

  await check(
    "POST /verify/resend signed in mails a new link and answers 303",
    async () => {
      await options.mail.link(bob.email, 1);
      const r = await call("POST", "/verify/resend", {
        cookie: bob.cookie,
        sameOrigin: true,
        form: {},
      });
      assert.equal(r.status, 303, r.text);
      const second = await options.mail.link(bob.email, 2);
      assert.match(second, /\/verify\?token=/);
    },
  );

  await check(
    "POST /logout with Bearer answers 204 and revokes only that token",
    async () => {
      const other = await call("POST", "/login", {
        json: { email: alice.email, password: PASSWORD },
      });
      const r = await call("POST", "/logout", { bearer: alice.token });
      assert.equal(r.status, 204);
      const me = await call("GET", "/api/me", { bearer: alice.token });
      assert.equal(me.status, 401, "the revoked token no longer works");
      const still = await call("GET", "/api/me", {
        bearer: other.json().token,
      });
      assert.equal(still.status, 200, "another session of the user lives on");
    },
  );

  await check(
    "POST /logout with the cookie answers 303 to /login, clears and revokes it",
    async () => {
      const r = await call("POST", "/logout", {
        cookie: bob.cookie,
        sameOrigin: true,
        form: {},
      });
      assert.equal(r.status, 303);
      assert.equal(r.headers.get("location"), "/login");
      const cleared = r.headers.getSetCookie().some((l) =>
        /session=;/.test(l) || /Max-Age=0/i.test(l)
      );
      assert.ok(cleared, "the cookie is cleared");
      const me = await call("GET", "/api/me", { cookie: bob.cookie });
      assert.equal(me.status, 401, "the old cookie no longer works");
    },
  );

  await check("repeated failed logins for one email answer 429", async () => {
    const target = email("throttled");
    let status = 0;
    for (let i = 0; i < 12 && status !== 429; i++) {
      status = (await call("POST", "/login", {
        json: { email: target, password: PASSWORD },
      })).status;
    }
    assert.equal(status, 429);
  });

  await check(
    "full strength: the default PBKDF2 (600000) registers and logs in",
    async () => {
      const who = email("full");
      const password = FULL_STRENGTH_MARK + PASSWORD;
      const t0 = performance.now();
      const reg = await call("POST", "/register", {
        json: { email: who, password },
      });
      const t1 = performance.now();
      assert.equal(reg.status, 201, reg.text);
      const login = await call("POST", "/login", {
        json: { email: who, password },
      });
      const t2 = performance.now();
      assert.equal(login.status, 200, login.text);
      const wrong = await call("POST", "/login", {
        json: { email: who, password: password + "x" },
      });
      assert.equal(wrong.status, 401);
      let detail = "";
      if (options.hasherReport !== false) {
        const report: HasherReport =
          await (await fetch(base + HASHER_REPORT_PATH)).json();
        assert.equal(report.iterations, 600_000);
        assert.equal(report.route, options.expectRoute ?? "webcrypto");
        const ms = report.timings.map((t) => `${t.op} ${t.ms} ms`).join(", ");
        detail = `, route ${report.route} (${ms})`;
      }
      result.notes.push(
        `${options.label}: full-strength PBKDF2-SHA256 600000: register ${
          Math.round(t1 - t0)
        } ms, login ${Math.round(t2 - t1)} ms over HTTP${detail}`,
      );
    },
  );

  await runLifecycleContract({
    call,
    check,
    email,
    mail: options.mail,
    password: PASSWORD,
  });

  await runDpopContract({ base, call, check, email, password: PASSWORD });

  if (options.signIn) {
    // Loaded only here, from a computed URL: its libraries (otpauth,
    // playwright-core) are the tests' own, and the benchmarks load this
    // runner with their own import map, without them.
    const { runSignInContract } = await import(
      new URL("./signin_contract.ts", import.meta.url).href
    ) as { runSignInContract(c: SignInContext): Promise<void> };
    await runSignInContract({
      ...options.signIn,
      base,
      call,
      check,
      // A service the rows need is missing: a failure under CI, else a
      // SKIPPED line.
      missing: async (why) => {
        if (Deno.env.get("CI") === "true") {
          await check(`required service: ${why}`, () => {
            throw new Error("missing under CI");
          });
        } else console.log(`SKIPPED: ${why}`);
      },
      email,
      password: PASSWORD,
      // A sign-in method needs a verified address: the mailed link,
      // confirmed with the account's password as another browser would.
      verify: async (address) => {
        const link = new URL(await options.mail.link(address));
        const r = await call("POST", "/verify", {
          json: { token: link.searchParams.get("token"), password: PASSWORD },
        });
        assert.equal(r.status, 303, `verify ${address}: ${r.status}`);
      },
    });
  }

  return result;
}
