/**
 * A module written outside the package plugs in without touching it (issue
 * 26, item 2): an "email one-time code" sign-in, defined in this file from
 * the package's public entry points alone (`@portcullis/accounts`, its
 * `/plugin` and `/views`), mounted beside the built-in modules. Its button
 * is on `/login`, its routes serve, a sign-in through it ends like the
 * password's (a session in "my sessions", the login in the activity, the
 * second factors' hook), the account's lifecycle reaches its data, and its
 * view is replaced like any other.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { normalizeEmail } from "../../mod.ts";
import type {
  AccountsEnv,
  AccountsModule,
  MailMessage,
} from "../../packages/accounts/mod.ts";
import {
  bodyOrBadRequest,
  handle,
  json,
  type ModuleContext,
  sessionJson,
  signInWith,
  stepAfterPassword,
} from "../../packages/accounts/plugin.ts";
import { type Html, html } from "../../packages/accounts/views/mod.ts";
import {
  api,
  bearer,
  registerJson,
  startApp,
  verifyDirectly,
} from "../app/_harness.ts";

const CODE_SECONDS = 600;

/** The module's one view: the form under the login form. */
type CodeButton = (next: string) => Html;

const defaultButton: CodeButton = (next) =>
  html`<form method="post" action="/login/code/request" id="email-code">
  <input type="hidden" name="next" value="${next}">
  <label for="code-email">Email</label>
  <input id="code-email" name="email" type="email" required>
  <button type="submit">Email me a code</button>
</form>`;

async function digest(text: string): Promise<string> {
  const bytes = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/**
 * Sign-in by a six-digit code mailed to a verified address: a module of an
 * application's own, with its settings typed in its factory.
 */
function emailCode(
  options: { button?: CodeButton; deleted?: string[] } = {},
): AccountsModule {
  const button = options.button ?? defaultButton;
  return {
    name: "email_code",
    setup(ctx: ModuleContext) {
      const key = (subject: string) => `email-code:${subject}`;
      const routes = new Hono<AccountsEnv>();
      routes.post(
        "/login/code/request",
        handle(ctx, async (ctx, req) => {
          const body = await bodyOrBadRequest(req);
          if (body instanceof Response) return body;
          let email: string;
          try {
            email = normalizeEmail(body.fields.email ?? "");
          } catch {
            return json({ error: "invalid_email" }, 422);
          }
          const user = await ctx.credentials.findByEmail(email);
          // Only an address proven to be the account's gets a code.
          if (user !== null && user.verifiedAt > 0) {
            const code = String(
              crypto.getRandomValues(new Uint32Array(1))[0] % 1_000_000,
            ).padStart(6, "0");
            await ctx.kv.put(key(user.id), await digest(code), {
              ttlSeconds: CODE_SECONDS,
            });
            await ctx.mailer.send({
              to: user.email,
              subject: "Your sign-in code",
              view: String(html`<p>Your code: ${code}</p>`),
              text: `Your code: ${code}\n`,
            });
          }
          // The same answer whether or not the address has an account.
          return json({}, 202);
        }),
      );
      routes.post(
        "/login/code",
        handle(ctx, async (ctx, req) => {
          const body = await bodyOrBadRequest(req);
          if (body instanceof Response) return body;
          const refused = json({ error: "invalid_code" }, 401);
          let email: string;
          try {
            email = normalizeEmail(body.fields.email ?? "");
          } catch {
            return refused;
          }
          const user = await ctx.credentials.findByEmail(email);
          if (user === null) return refused;
          const [stored] = await ctx.kv.getMany([key(user.id)]);
          if (
            stored === null ||
            stored !== await digest(body.fields.code ?? "")
          ) return refused;
          await ctx.kv.delete(key(user.id));
          // A second factor is never skipped: the modules' hook runs first.
          const second = await stepAfterPassword(ctx, req, user.id, "/", false);
          if (second !== null) return second;
          return sessionJson(await signInWith(ctx, req, user.id, "email_code"));
        }),
      );
      return {
        routes,
        loginButtons: (next) => button(next),
        lifecycle: [{
          method: "email_code",
          addressProven: () => Promise.resolve(0),
          accountDeleted: async (subject) => {
            await ctx.kv.delete(key(subject));
            options.deleted?.push(subject);
            return 0;
          },
        }],
      };
    },
  };
}

/** A module of the test's own that asks for a second factor after any first one. */
function alwaysSecondFactor(): AccountsModule {
  return {
    name: "always_second",
    setup: () => ({
      afterPassword: () =>
        Promise.resolve(json({ secondFactor: "test", pending: "x" }, 202)),
      hasSecondFactor: () => Promise.resolve(true),
    }),
  };
}

async function start(extra: AccountsModule[]) {
  const sent: MailMessage[] = [];
  const app = await startApp({
    mailer: { send: (m) => Promise.resolve(void sent.push(m)) },
  }, { wrapModules: (modules) => [...modules, ...extra] });
  const codeFor = (to: string) =>
    sent.findLast((m) => m.to === to && m.subject === "Your sign-in code")
      ?.text.match(/\d{6}/)?.[0];
  return { app, codeFor };
}

Deno.test("a module defined outside the package: its button on /login, a sign-in through it ends like the password's, deletion reaches its data", async () => {
  const deleted: string[] = [];
  const { app, codeFor } = await start([emailCode({ deleted })]);
  try {
    const login = await (await fetch(`${app.origin}/login`)).text();
    assert.match(login, /action="\/login\/code\/request"/);

    await registerJson(app.origin, "code@example.com");
    // An unverified address gets no code, with the same answer.
    const early = await api(app.origin, "POST", "/login/code/request", {
      email: "code@example.com",
    });
    assert.equal(early.status, 202);
    assert.equal(codeFor("code@example.com"), undefined);
    const unknown = await api(app.origin, "POST", "/login/code/request", {
      email: "nobody@example.com",
    });
    assert.equal(unknown.status, 202);

    const subject = await verifyDirectly(app, "code@example.com");
    await api(app.origin, "POST", "/login/code/request", {
      email: "code@example.com",
    });
    const code = codeFor("code@example.com")!;
    assert.match(code, /^\d{6}$/);
    const wrong = await api(app.origin, "POST", "/login/code", {
      email: "code@example.com",
      code: code === "000000" ? "000001" : "000000",
    });
    assert.equal(wrong.status, 401);
    const ok = await api(app.origin, "POST", "/login/code", {
      email: "code@example.com",
      code,
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.tokenType, "Bearer");
    const token = ok.body.token as string;
    // A session like any other: who am I, "my sessions", the activity.
    const me = await api(
      app.origin,
      "GET",
      "/api/me",
      undefined,
      bearer(token),
    );
    assert.equal(me.body.subject, subject);
    const sessions = await api(
      app.origin,
      "GET",
      "/api/sessions",
      undefined,
      bearer(token),
    );
    assert.ok((sessions.body.sessions as unknown[]).length >= 1);
    const activity = await api(
      app.origin,
      "GET",
      "/api/activity",
      undefined,
      bearer(token),
    );
    assert.ok(
      (activity.body.events as { type: string }[]).some((e) =>
        e.type === "login"
      ),
    );
    // A code works once.
    const again = await api(app.origin, "POST", "/login/code", {
      email: "code@example.com",
      code,
    });
    assert.equal(again.status, 401);

    // Deletion runs the module's part of the account's lifecycle.
    await api(app.origin, "POST", "/login/code/request", {
      email: "code@example.com",
    });
    assert.deepEqual(deleted, []);
    const gone = await api(app.origin, "POST", "/account/delete", {
      password: "correct horse battery",
    }, bearer(token));
    assert.equal(gone.status, 204);
    assert.deepEqual(deleted, [subject]);
    const late = await api(app.origin, "POST", "/login/code", {
      email: "code@example.com",
      code: codeFor("code@example.com")!,
    });
    assert.equal(late.status, 401);
  } finally {
    await app.close();
  }
});

Deno.test("an outside module's first factor goes through the second factors' hook, and its view is replaced through its factory", async () => {
  const { app, codeFor } = await start([
    emailCode({
      button: (next) =>
        html`<p id="custom-code"><a href="/code?next=${next}">Use a code</a></p>`,
    }),
    alwaysSecondFactor(),
  ]);
  try {
    const login = await (await fetch(`${app.origin}/login`)).text();
    assert.match(login, /id="custom-code"/);
    assert.doesNotMatch(login, /action="\/login\/code\/request"/);
    await registerJson(app.origin, "two@example.com");
    await verifyDirectly(app, "two@example.com");
    await api(app.origin, "POST", "/login/code/request", {
      email: "two@example.com",
    });
    const step = await api(app.origin, "POST", "/login/code", {
      email: "two@example.com",
      code: codeFor("two@example.com")!,
    });
    assert.equal(step.status, 202);
    assert.equal(step.body.secondFactor, "test");
    assert.equal(
      step.body.token,
      undefined,
      "no session before the second step",
    );
  } finally {
    await app.close();
  }
});
