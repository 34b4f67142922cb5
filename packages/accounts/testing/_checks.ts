/**
 * The checks of the security test kit, each a function of the app under
 * test: real HTTP through {@linkcode KitClient}, links read through the
 * app's mail. A check throws {@linkcode KitFailure} when the app breaks a
 * guarantee. Checks that need a module the app leaves out declare it, and
 * the kit reports them as not applicable.
 *
 * The kit registers few accounts (six, and four refused registrations),
 * within the package's default limit of ten registrations per client
 * address an hour, and spends no more than a handful of password hashes
 * per check.
 *
 * @module
 */
import {
  expect,
  expectStatus,
  type KitClient,
  pathOf,
  type Reply,
  sessionCookie,
  setCookies,
  tokenOf,
  totpCode,
} from "./_client.ts";
import type { MailReader } from "./mail_readers.ts";

/** A module a check needs, detected from the app's answers or given. */
export type KitModule = "verification" | "totp";

/** What every check works with. */
export interface KitContext {
  /** The client of the app under test. */
  client: KitClient;
  /** The mail reader. */
  mail: MailReader;
  /** The password every account of the run uses. */
  password: string;
  /** A fresh address of this run for `who`. */
  email(who: string): string;
  /** How long to wait for a mail. */
  mailTimeoutMs: number;
  /** The body cap the app enforces, in bytes. */
  bodyCapBytes: number;
  /** The fewest characters of a password that is an account's only factor. */
  minPasswordLength: number;
  /** Whether the app is served over https (where `Secure` is required). */
  https: boolean;
  /** The modules on, as detected or given. */
  modules: Record<KitModule, boolean>;
  /** Accounts registered once and shared by checks that do not change them. */
  accounts: Map<string, Promise<Account>>;
}

/** An account the kit registered. */
export interface Account {
  /** Its address. */
  email: string;
  /** The subject the app answered. */
  subject: string;
  /** The Bearer token registration answered. */
  token: string;
}

/** One check. */
export interface KitCheck {
  /** What it proves, as a test name. */
  name: string;
  /** The module it needs, if any. */
  needs?: KitModule;
  /** Runs it: returns when the app keeps the guarantee, throws otherwise. */
  run(ctx: KitContext): Promise<void>;
}

function brief(reply: Reply): string {
  return `${reply.status} ${reply.text.slice(0, 160).replace(/\s+/g, " ")}`;
}

/**
 * Registers an account over JSON.
 *
 * @param ctx The run.
 * @param who The account's name in this run.
 * @returns The account.
 */
export async function register(ctx: KitContext, who: string): Promise<Account> {
  const email = ctx.email(who);
  const r = await ctx.client.call("POST", "/register", {
    json: { email, password: ctx.password },
  });
  expectStatus(r, 201, `POST /register (JSON) for ${who}`);
  expect(
    typeof r.json?.token === "string" && typeof r.json?.subject === "string",
    `POST /register answers {subject, token}: ${brief(r)}`,
  );
  return { email, subject: r.json.subject, token: r.json.token };
}

/**
 * The account `who`, registered on first use and shared afterwards.
 *
 * @param ctx The run.
 * @param who The account's name in this run.
 * @returns The account.
 */
export function shared(ctx: KitContext, who: string): Promise<Account> {
  let account = ctx.accounts.get(who);
  if (account === undefined) {
    account = register(ctx, who);
    ctx.accounts.set(who, account);
  }
  return account;
}

/**
 * Waits for a link mailed to `address` that differs from `before`.
 *
 * @param ctx The run.
 * @param address The recipient.
 * @param before The latest link before the action, or null.
 * @returns The new link.
 */
export async function newLink(
  ctx: KitContext,
  address: string,
  before: string | null,
): Promise<string> {
  const deadline = Date.now() + ctx.mailTimeoutMs;
  while (true) {
    const link = await ctx.mail(address);
    if (link !== null && link !== before) return link;
    if (Date.now() > deadline) {
      throw new Error(
        `No new mail to ${address} within ${ctx.mailTimeoutMs} ms: check the mail reader`,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function me(ctx: KitContext, auth: { bearer?: string; cookie?: string }) {
  return await ctx.client.call("GET", "/api/me", {
    ...auth,
    headers: { accept: "application/json" },
  });
}

async function loginJson(
  ctx: KitContext,
  email: string,
  password: string = ctx.password,
): Promise<Reply> {
  return await ctx.client.call("POST", "/login", {
    json: { email, password },
  });
}

async function bearerLogin(ctx: KitContext, email: string): Promise<string> {
  const r = await loginJson(ctx, email);
  expectStatus(r, 200, "POST /login (JSON) with the right password");
  return r.json.token;
}

async function cookieLogin(ctx: KitContext, email: string): Promise<Reply> {
  const r = await ctx.client.call("POST", "/login", {
    form: { email, password: ctx.password },
  });
  expectStatus(r, 303, "POST /login (form) with the right password");
  return r;
}

/**
 * Proves an address: with the mailed verification link and the password,
 * or, in an app without the verification module, with a password reset
 * (which proves the address too, and ends the account's sessions).
 *
 * @returns A session token of the account after the proof.
 */
async function verifyAddress(
  ctx: KitContext,
  account: Account,
): Promise<string> {
  if (ctx.modules.verification) {
    const link = await newLink(ctx, account.email, null);
    const r = await ctx.client.call("POST", "/verify", {
      json: { token: tokenOf(link), password: ctx.password },
    });
    expectStatus(r, 200, "POST /verify with the mailed token and the password");
    return account.token;
  }
  const before = await ctx.mail(account.email);
  const asked = await ctx.client.call("POST", "/password/forgot", {
    json: { email: account.email },
  });
  expectStatus(asked, 202, "POST /password/forgot (to prove the address)");
  const link = await newLink(ctx, account.email, before);
  const reset = await ctx.client.call("POST", "/password/reset", {
    json: { token: tokenOf(link), password: ctx.password },
  });
  expectStatus(reset, 200, "POST /password/reset (to prove the address)");
  return await bearerLogin(ctx, account.email);
}

function sameAnswer(a: Reply, b: Reply, what: string): void {
  expect(
    a.status === b.status && a.text === b.text,
    `${what}: a registered and an unknown address answer alike (${brief(a)} / ${
      brief(b)
    })`,
  );
}

/** Every check, in the order they run. */
export const CHECKS: readonly KitCheck[] = [
  {
    name:
      "sign-in, reset and registration answer alike for a registered and an unknown address",
    async run(ctx) {
      const known = await shared(ctx, "main");
      const unknown = ctx.email("nobody");
      const wrongKnown = await loginJson(ctx, known.email, "not the password");
      const wrongUnknown = await loginJson(ctx, unknown, "not the password");
      expectStatus(wrongKnown, 401, "POST /login with a wrong password");
      sameAnswer(wrongKnown, wrongUnknown, "POST /login");
      const resetKnown = await ctx.client.call("POST", "/password/forgot", {
        json: { email: known.email },
      });
      const resetUnknown = await ctx.client.call("POST", "/password/forgot", {
        json: { email: unknown },
      });
      expectStatus(resetKnown, 202, "POST /password/forgot");
      sameAnswer(resetKnown, resetUnknown, "POST /password/forgot");
      // Registration's "taken" is the one answer that may say an address
      // exists; a refused password must not.
      const shortKnown = await ctx.client.call("POST", "/register", {
        json: { email: known.email, password: "short" },
      });
      const shortUnknown = await ctx.client.call("POST", "/register", {
        json: { email: unknown, password: "short" },
      });
      expectStatus(
        shortKnown,
        422,
        "POST /register with a 5-character password",
      );
      sameAnswer(
        shortKnown,
        shortUnknown,
        "POST /register with a refused password",
      );
      const taken = await ctx.client.call("POST", "/register", {
        json: { email: known.email.toUpperCase(), password: ctx.password },
      });
      expectStatus(
        taken,
        409,
        "POST /register with a taken address (upper case)",
      );
      expect(
        taken.json?.token === undefined && taken.json?.subject === undefined &&
          sessionCookie(taken) === null,
        `a taken address gets no session: ${brief(taken)}`,
      );
    },
  },
  {
    name:
      "registration with a password alone refuses one shorter than the minimum for a sole factor (15 by default, NIST SP 800-63B-4)",
    async run(ctx) {
      const short = "x".repeat(ctx.minPasswordLength - 1);
      const r = await ctx.client.call("POST", "/register", {
        json: { email: ctx.email("short"), password: short },
      });
      expectStatus(
        r,
        422,
        `POST /register with a ${short.length}-character password`,
      );
      expect(
        r.json?.error === "invalid_password",
        `the refusal says invalid_password: ${brief(r)}`,
      );
      expect(
        sessionCookie(r) === null,
        "a refused registration opens no session",
      );
    },
  },
  {
    name:
      "a verification link proves the address once: a GET consumes nothing, the POST does, a second use answers 400",
    needs: "verification",
    async run(ctx) {
      const account = await register(ctx, "verify");
      const link = await newLink(ctx, account.email, null);
      const token = tokenOf(link);
      const landing = await ctx.client.call("GET", pathOf(link), {
        headers: { accept: "text/html" },
      });
      expectStatus(landing, 200, "GET of the mailed link from another browser");
      expect(
        setCookies(landing).length === 0,
        "the GET of a mailed link signs nobody in",
      );
      expect(
        (await me(ctx, { bearer: account.token })).json?.verified === false,
        "a GET of the link leaves the address unproven",
      );
      const wrong = await ctx.client.call("POST", "/verify", {
        json: { token, password: "not the password" },
      });
      expectStatus(
        wrong,
        401,
        "POST /verify from elsewhere with a wrong password",
      );
      const used = await ctx.client.call("POST", "/verify", {
        json: { token, password: ctx.password },
      });
      expectStatus(used, 200, "POST /verify with the token and the password");
      expect(
        (await me(ctx, { bearer: account.token })).json?.verified === true,
        "GET /api/me says verified after the POST",
      );
      const again = await ctx.client.call("POST", "/verify", {
        json: { token, password: ctx.password },
      });
      expectStatus(again, 400, "POST /verify with the used token");
      const reopened = await ctx.client.call("GET", pathOf(link), {
        headers: { accept: "text/html" },
      });
      expectStatus(reopened, 400, "GET of the used link");
    },
  },
  {
    name:
      "a password reset ends every session, the old password stops working, the link works once",
    async run(ctx) {
      const account = await register(ctx, "reset");
      const second = await bearerLogin(ctx, account.email);
      const before = await ctx.mail(account.email);
      const asked = await ctx.client.call("POST", "/password/forgot", {
        json: { email: account.email },
      });
      expectStatus(asked, 202, "POST /password/forgot");
      const link = await newLink(ctx, account.email, before);
      const token = tokenOf(link);
      const fresh = `${ctx.password} renewed`;
      const reset = await ctx.client.call("POST", "/password/reset", {
        json: { token, password: fresh },
      });
      expectStatus(reset, 200, "POST /password/reset");
      for (const token of [account.token, second]) {
        expectStatus(
          await me(ctx, { bearer: token }),
          401,
          "GET /api/me with a session from before the reset",
        );
      }
      expectStatus(
        await loginJson(ctx, account.email),
        401,
        "POST /login with the old password",
      );
      expectStatus(
        await loginJson(ctx, account.email, fresh),
        200,
        "POST /login with the new password",
      );
      const again = await ctx.client.call("POST", "/password/reset", {
        json: { token, password: `${fresh} again` },
      });
      expectStatus(again, 400, "POST /password/reset with the used link");
    },
  },
  {
    name:
      "an email change waits for the new address's link, and the link needs the account's password from elsewhere",
    async run(ctx) {
      const account = await register(ctx, "change");
      const moved = ctx.email("moved");
      const wrong = await ctx.client.call("POST", "/account/email", {
        bearer: account.token,
        json: { email: moved, password: "not the password" },
      });
      expectStatus(wrong, 401, "POST /account/email with a wrong password");
      const asked = await ctx.client.call("POST", "/account/email", {
        bearer: account.token,
        json: { email: moved, password: ctx.password },
      });
      expectStatus(asked, 202, "POST /account/email");
      expect(
        (await me(ctx, { bearer: account.token })).json?.email ===
          account.email,
        "the address is unchanged until the new one confirms",
      );
      const token = tokenOf(await newLink(ctx, moved, null));
      const elsewhere = await ctx.client.call(
        "POST",
        "/account/email/confirm",
        {
          json: { token, password: "not the password" },
        },
      );
      expectStatus(
        elsewhere,
        401,
        "POST /account/email/confirm from elsewhere with a wrong password",
      );
      expect(
        (await me(ctx, { bearer: account.token })).json?.email ===
          account.email,
        "a refused confirmation changes nothing",
      );
      const confirmed = await ctx.client.call(
        "POST",
        "/account/email/confirm",
        {
          json: { token, password: ctx.password },
        },
      );
      expectStatus(confirmed, 200, "POST /account/email/confirm");
      expect(
        (await me(ctx, { bearer: account.token })).json?.email === moved,
        "GET /api/me answers the new address",
      );
    },
  },
  {
    name:
      "deleting the account asks for the password again, then ends every session and every sign-in",
    async run(ctx) {
      const account = await register(ctx, "delete");
      const wrong = await ctx.client.call("POST", "/account/delete", {
        bearer: account.token,
        json: { password: "not the password" },
      });
      expectStatus(wrong, 401, "POST /account/delete with a wrong password");
      expectStatus(
        await me(ctx, { bearer: account.token }),
        200,
        "the account stands after a refused deletion",
      );
      const deleted = await ctx.client.call("POST", "/account/delete", {
        bearer: account.token,
        json: { password: ctx.password },
      });
      expectStatus(deleted, 204, "POST /account/delete with the password");
      expectStatus(
        await me(ctx, { bearer: account.token }),
        401,
        "GET /api/me with the deleted account's session",
      );
      const login = await loginJson(ctx, account.email);
      const unknown = await loginJson(ctx, ctx.email("never"));
      expectStatus(login, 401, "POST /login as the deleted account");
      sameAnswer(login, unknown, "POST /login after deletion");
    },
  },
  {
    name:
      "an unsafe request from another site is refused with 403 and changes nothing",
    async run(ctx) {
      const account = await shared(ctx, "main");
      const cookie = sessionCookie(await cookieLogin(ctx, account.email));
      expect(cookie, "POST /login (form) sets the session cookie");
      const attempts: [string, Record<string, string>][] = [
        ["Sec-Fetch-Site: cross-site", {
          "sec-fetch-site": "cross-site",
          origin: "https://attacker.example",
        }],
        ["Sec-Fetch-Site: same-site", { "sec-fetch-site": "same-site" }],
        ["an Origin of another site", { origin: "https://attacker.example" }],
        ["Origin: null", { origin: "null" }],
      ];
      for (const [what, headers] of attempts) {
        const out = await ctx.client.call("POST", "/logout", {
          cookie,
          headers: { ...headers, accept: "application/json" },
        });
        expectStatus(out, 403, `POST /logout with the cookie and ${what}`);
        expect(
          out.json?.error === "cross_origin_rejected",
          `the refusal says cross_origin_rejected: ${brief(out)}`,
        );
        const signIn = await ctx.client.call("POST", "/login", {
          raw: new URLSearchParams({
            email: account.email,
            password: ctx.password,
          }).toString(),
          headers: {
            ...headers,
            "content-type": "application/x-www-form-urlencoded",
          },
        });
        expectStatus(signIn, 403, `POST /login (form) with ${what}`);
        expect(
          sessionCookie(signIn) === null,
          "a refused sign-in sets no session cookie",
        );
      }
      expectStatus(
        await me(ctx, { cookie }),
        200,
        "the session survives the refused sign-outs",
      );
    },
  },
  {
    name:
      "cookies are HttpOnly, SameSite, Path=/, and Secure with the __Host- prefix on https",
    async run(ctx) {
      const account = await shared(ctx, "main");
      const r = await cookieLogin(ctx, account.email);
      const lines = setCookies(r);
      expect(sessionCookie(r), "POST /login (form) sets the session cookie");
      for (const line of lines) {
        const name = line.slice(0, line.indexOf("="));
        const attrs = line.split(";").slice(1).map((a) => a.trim());
        const has = (re: RegExp) => attrs.some((a) => re.test(a));
        expect(has(/^httponly$/i), `${name} is HttpOnly`);
        expect(
          has(/^samesite=(lax|strict)$/i),
          `${name} is SameSite=Lax or Strict`,
        );
        expect(has(/^path=\/$/i), `${name} has Path=/`);
        expect(!has(/^domain=/i), `${name} names no Domain`);
        if (ctx.https) {
          expect(has(/^secure$/i), `${name} is Secure on https`);
          expect(
            name.startsWith("__Host-"),
            `${name} has the __Host- prefix on https`,
          );
        } else if (name.startsWith("__Host-")) {
          expect(has(/^secure$/i), `${name} (__Host-) is Secure`);
        }
      }
    },
  },
  {
    name:
      "signing out revokes the session: the token or cookie answers 401 afterwards",
    async run(ctx) {
      const account = await shared(ctx, "main");
      const token = await bearerLogin(ctx, account.email);
      expectStatus(await me(ctx, { bearer: token }), 200, "GET /api/me");
      const out = await ctx.client.call("POST", "/logout", { bearer: token });
      expectStatus(out, 204, "POST /logout with a Bearer token");
      expectStatus(
        await me(ctx, { bearer: token }),
        401,
        "GET /api/me with the signed-out token",
      );
      const cookie = sessionCookie(await cookieLogin(ctx, account.email));
      expect(cookie, "POST /login (form) sets the session cookie");
      const formOut = await ctx.client.call("POST", "/logout", {
        cookie,
        form: {},
      });
      expectStatus(formOut, 303, "POST /logout (form) with the cookie");
      expect(
        formOut.headers.getSetCookie().some((l) =>
          l.startsWith(cookie.slice(0, cookie.indexOf("=") + 1))
        ),
        "the sign-out clears the cookie",
      );
      expectStatus(
        await me(ctx, { cookie }),
        401,
        "GET /api/me with the signed-out cookie, replayed",
      );
    },
  },
  {
    name: "a body over the cap answers 413 before any route reads it",
    async run(ctx) {
      const big = "x".repeat(Math.max(ctx.bodyCapBytes * 4, 65536));
      for (const path of ["/login", "/register", "/password/forgot"]) {
        const r = await ctx.client.call("POST", path, {
          raw: JSON.stringify({ email: ctx.email("cap"), password: big }),
          headers: {
            "content-type": "application/json",
            accept: "application/json",
          },
        });
        expectStatus(r, 413, `POST ${path} with a ${big.length}-byte body`);
        expect(
          r.json?.error === "payload_too_large",
          `the refusal says payload_too_large: ${brief(r)}`,
        );
      }
      expectStatus(
        await loginJson(ctx, ctx.email("cap"), big.slice(0, 64)),
        401,
        "no account was made from the refused body",
      );
    },
  },
  {
    name:
      "errors answer {error, message} JSON to API clients and an HTML page to browsers, without a stack trace",
    async run(ctx) {
      const path = `/kit-no-such-path-${crypto.randomUUID()}`;
      const api = await ctx.client.call("GET", path, {
        headers: { accept: "application/json" },
      });
      expectStatus(api, 404, `GET ${path} (JSON)`);
      expect(
        api.json?.error === "not_found" &&
          typeof api.json?.message === "string",
        `a JSON client gets {error, message}: ${brief(api)}`,
      );
      const page = await ctx.client.call("GET", path, {
        headers: { accept: "text/html" },
      });
      expectStatus(page, 404, `GET ${path} (a browser)`);
      expect(
        /^text\/html/.test(page.headers.get("content-type") ?? ""),
        "a browser gets an HTML page",
      );
      const anonymous = await me(ctx, {});
      expectStatus(anonymous, 401, "GET /api/me without a session");
      expect(
        typeof anonymous.json?.error === "string",
        `401 is JSON for an API client: ${brief(anonymous)}`,
      );
      const browser = await ctx.client.call("GET", "/account", {
        headers: { accept: "text/html", "sec-fetch-mode": "navigate" },
      });
      expectStatus(browser, 303, "GET /account without a session (a browser)");
      expect(
        browser.headers.get("location") === "/login?next=%2Faccount",
        `a browser is sent to /login?next=%2Faccount: ${
          browser.headers.get("location")
        }`,
      );
      const form = await ctx.client.call("POST", "/login", {
        form: { email: ctx.email("nobody"), password: "not the password" },
      });
      expectStatus(form, 401, "POST /login (form) with wrong credentials");
      expect(
        /^text\/html/.test(form.headers.get("content-type") ?? "") &&
          /<form/i.test(form.text),
        "a refused form sign-in answers the login page again",
      );
      const json = await loginJson(
        ctx,
        ctx.email("nobody"),
        "not the password",
      );
      expect(
        json.json?.error === "invalid_credentials" &&
          typeof json.json?.message === "string",
        `a refused JSON sign-in answers {error, message}: ${brief(json)}`,
      );
      const media = await ctx.client.call("POST", "/login", {
        raw: "email=a&password=b",
        headers: { "content-type": "text/plain", accept: "application/json" },
      });
      expectStatus(media, 415, "POST /login with text/plain");
      for (const r of [api, page, anonymous, form, json, media]) {
        expect(
          !/\n\s+at\s+\S+.*[:(]\d+/.test(r.text),
          `no stack trace in an answer: ${brief(r)}`,
        );
      }
    },
  },
  {
    name:
      "repeated failed sign-ins are throttled (429 with Retry-After), for a registered and an unknown address alike",
    async run(ctx) {
      const account = await shared(ctx, "main");
      for (const email of [account.email, ctx.email("throttled")]) {
        let last: Reply | null = null;
        for (let i = 0; i < 20; i++) {
          last = await loginJson(ctx, email, `wrong password ${i}`);
          if (last.status !== 401) break;
        }
        expect(last, "the kit sent sign-ins");
        expectStatus(last, 429, "POST /login after repeated failures");
        const wait = Number(last.headers.get("retry-after"));
        expect(
          Number.isInteger(wait) && wait > 0,
          `a 429 says when to retry: Retry-After ${
            last.headers.get("retry-after")
          }`,
        );
        const right = await loginJson(ctx, email);
        expectStatus(
          right,
          429,
          "POST /login while throttled, even with the right password",
        );
      }
    },
  },
  {
    name:
      "TOTP: the right password alone opens no session; a wrong code answers 401, the right one a session, used once",
    needs: "totp",
    async run(ctx) {
      const account = await register(ctx, "totp");
      const token = await verifyAddress(ctx, account);
      const start = await ctx.client.call("POST", "/account/totp", {
        bearer: token,
        json: { password: ctx.password },
      });
      expectStatus(start, 200, "POST /account/totp with the password");
      const key = start.json?.secret;
      expect(
        typeof key === "string",
        `enrolment answers the key: ${brief(start)}`,
      );
      const step = Math.floor(Date.now() / 30_000);
      const confirmed = await ctx.client.call("POST", "/account/totp/confirm", {
        bearer: token,
        json: { code: await totpCode(key, step) },
      });
      expectStatus(confirmed, 200, "POST /account/totp/confirm with a code");
      const pending = async () => {
        const r = await loginJson(ctx, account.email);
        expectStatus(r, 202, "POST /login with the right password and TOTP on");
        expect(
          r.json?.secondFactor === "totp" && r.json?.token === undefined &&
            sessionCookie(r) === null,
          `the password alone answers the second step, no session: ${brief(r)}`,
        );
        return r.json.pending as string;
      };
      const value = await pending();
      expectStatus(
        await me(ctx, { bearer: value }),
        401,
        "GET /api/me with the pending value",
      );
      const next = await totpCode(key, step + 1);
      const wrong = String((Number(next) + 1) % 1_000_000).padStart(6, "0");
      const refused = await ctx.client.call("POST", "/login/totp", {
        json: { pending: value, code: wrong },
      });
      expectStatus(refused, 401, "POST /login/totp with a wrong code");
      const passed = await ctx.client.call("POST", "/login/totp", {
        json: { pending: value, code: next },
      });
      expectStatus(passed, 200, "POST /login/totp with the right code");
      expectStatus(
        await me(ctx, { bearer: passed.json?.token }),
        200,
        "GET /api/me with the session the code opened",
      );
      const replayed = await ctx.client.call("POST", "/login/totp", {
        json: { pending: await pending(), code: next },
      });
      expectStatus(replayed, 401, "POST /login/totp with the used code");
    },
  },
];
