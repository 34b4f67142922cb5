/**
 * `requestMailedLink` of `@portcullis/accounts/plugin`, through a module
 * defined in this file from the package's public entry points alone (its
 * main entry, `/plugin` and `/views`), mounted beside the built-in
 * modules: a "hello link" mailed to whoever owns an address. The answer is
 * the same for a registered and an unknown address, bad input gets a
 * clear 4xx and spends nothing, the two limits answer 429, and the lookup
 * and the mail run after the answer, a failure logged without the token.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import type {
  AccountsEnv,
  AccountsModule,
  MailMessage,
} from "../../packages/accounts/mod.ts";
import {
  handle,
  type MailedLinkFlow,
  type ModuleContext,
  requestMailedLink,
} from "../../packages/accounts/plugin.ts";
import { html } from "../../packages/accounts/views/mod.ts";
import { registerJson, startApp } from "../app/_harness.ts";

const SENT = "If an account uses that address, a hello link is on its way.";

/** What the test changes in the module's mail. */
interface HelloOptions {
  /** Awaited before the mail is sent. */
  gate?: Promise<void>;
  /** Throws this message instead of sending (after minting the token). */
  fail?: (token: string) => string;
  /** Every token minted. */
  minted?: string[];
}

/** A module of the test's own: `POST /hello-link` mails a link. */
function helloLink(options: HelloOptions = {}): AccountsModule {
  return {
    name: "hello_link",
    setup(ctx: ModuleContext) {
      const flow: MailedLinkFlow = {
        limit: "hello-link",
        perEmail: { max: 2, windowSeconds: 3600 },
        perAddress: { max: 4, windowSeconds: 3600 },
        sent: SENT,
        invalidForm: ({ email, error, fields }) => ({
          title: "Hello link",
          email: null,
          body: html`<form method="post" action="/hello-link">
  <input name="email" value="${email}">
  <input type="hidden" name="greeting" value="${fields.greeting ?? ""}">
  <p class="field-error" role="alert">${error}</p>
</form>`,
        }),
        mail: async (user, fields) => {
          const token = await ctx.tokens.issue({
            subject: user.id,
            email: user.email,
            purpose: "hello-link",
          });
          options.minted?.push(token);
          await options.gate;
          if (options.fail) throw new Error(options.fail(token));
          const link = new URL("/hello", ctx.appOrigin);
          link.searchParams.set("token", token);
          await ctx.mailer.send({
            to: user.email,
            subject: "Hello",
            view: String(html`<a href="${link.href}">Hello</a>`),
            text: `${fields.greeting ?? "Hello"}: ${link.href}\n`,
          });
        },
        what: "hello-link",
      };
      const routes = new Hono<AccountsEnv>();
      routes.post(
        "/hello-link",
        handle(ctx, (ctx, req) => requestMailedLink(ctx, req, flow)),
      );
      return { routes };
    },
  };
}

async function start(options: HelloOptions = {}) {
  const sent: MailMessage[] = [];
  const deferred: Promise<unknown>[] = [];
  const app = await startApp({
    mailer: { send: (m) => Promise.resolve(void sent.push(m)) },
    // The platform's waitUntil: the work after the answer lands here.
    defer: (work) => void deferred.push(work),
  }, {
    wrapModules: (modules) => [...modules, helloLink(options)],
  });
  const settled = async () => {
    while (deferred.length > 0) await deferred.shift();
  };
  const hellos = (to: string) =>
    sent.filter((m) => m.to === to && m.subject === "Hello");
  return { app, sent, settled, hellos };
}

async function ask(
  origin: string,
  body: string,
  type: "json" | "form",
  client = "198.51.100.1",
): Promise<Response> {
  return await fetch(`${origin}/hello-link`, {
    method: "POST",
    headers: {
      "content-type": type === "json"
        ? "application/json"
        : "application/x-www-form-urlencoded",
      accept: type === "json" ? "application/json" : "text/html",
      "sec-fetch-site": "same-origin",
      "x-test-client": client,
    },
    body,
    redirect: "manual",
  });
}

const askJson = (origin: string, email: string, client?: string) =>
  ask(origin, JSON.stringify({ email }), "json", client);
const askForm = (origin: string, fields: Record<string, string>) =>
  ask(origin, String(new URLSearchParams(fields)), "form");

Deno.test("requestMailedLink: a registered and an unknown address get the same answer, JSON and form; only the account gets a mail, at its stored address", async () => {
  const { app, settled, hellos, sent } = await start();
  try {
    await registerJson(app.origin, "known@example.com");
    const known = await askJson(app.origin, "  Known@Example.COM ");
    const unknown = await askJson(app.origin, "unknown@example.com");
    assert.equal(known.status, 202);
    assert.equal(unknown.status, 202);
    assert.equal(await known.text(), "{}");
    assert.equal(await unknown.text(), "{}");
    for (const h of ["content-type", "cache-control", "set-cookie"]) {
      assert.equal(known.headers.get(h), unknown.headers.get(h), h);
    }

    const knownForm = await askForm(app.origin, {
      email: "known@example.com",
    });
    const unknownForm = await askForm(app.origin, {
      email: "unknown@example.com",
    });
    await knownForm.body?.cancel();
    await unknownForm.body?.cancel();
    assert.equal(knownForm.status, 303);
    assert.equal(unknownForm.status, 303);
    assert.equal(knownForm.headers.get("location"), "/login");
    assert.equal(unknownForm.headers.get("location"), "/login");
    // The flash on /login says the same sentence for both.
    for (const res of [knownForm, unknownForm]) {
      const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0])
        .join("; ");
      const login = await (await fetch(`${app.origin}/login`, {
        headers: { cookie },
      })).text();
      assert.ok(login.includes(SENT), "the flash is shown");
    }

    await settled();
    assert.equal(hellos("known@example.com").length, 2);
    assert.ok(
      sent.every((m) => m.to !== "unknown@example.com"),
      "no mail for an unknown address",
    );
    assert.match(hellos("known@example.com")[0].text, /\/hello\?token=/);
  } finally {
    await app.close();
  }
});

Deno.test("requestMailedLink: bad input gets 400 or 422 and spends nothing of the limits", async () => {
  const { app, settled, hellos } = await start();
  try {
    await registerJson(app.origin, "typo@example.com");
    for (let i = 0; i < 5; i++) {
      const res = await askJson(app.origin, "typo@@example.com");
      assert.equal(res.status, 422);
      assert.deepEqual(await res.json(), {
        error: "invalid_email",
        message: "Enter a valid email address",
      });
    }
    // A form gets its page again, the typed text and its fields kept.
    const page = await askForm(app.origin, {
      email: "not an address",
      greeting: "Hi",
    });
    assert.equal(page.status, 422);
    const text = await page.text();
    assert.match(text, /value="not an address"/);
    assert.match(text, /name="greeting" value="Hi"/);
    assert.match(text, /Enter a valid email address/);
    // An unreadable body: 400, nothing else.
    const broken = await ask(app.origin, "{not json", "json");
    assert.equal(broken.status, 400);
    assert.equal((await broken.json()).error, "bad_request");

    // Nothing was counted: the address's two requests are still there.
    assert.equal((await askJson(app.origin, "typo@example.com")).status, 202);
    assert.equal((await askJson(app.origin, "typo@example.com")).status, 202);
    await settled();
    assert.equal(hellos("typo@example.com").length, 2);
  } finally {
    await app.close();
  }
});

Deno.test("requestMailedLink: per address asked for and per client address, 429 with Retry-After, for registered and unknown addresses alike; the window passes", async () => {
  const { app, settled, hellos } = await start();
  try {
    await registerJson(app.origin, "often@example.com");
    for (const email of ["often@example.com", "ghost@example.com"]) {
      for (let i = 0; i < 2; i++) {
        const res = await askJson(app.origin, email, `203.0.113.${i}`);
        assert.equal(res.status, 202);
        await res.body?.cancel();
      }
      // A third for the same address, from a third client: 429.
      const third = await askJson(app.origin, email, "203.0.113.9");
      assert.equal(third.status, 429);
      assert.ok(Number(third.headers.get("retry-after")) > 0);
      await third.body?.cancel();
    }
    // Per client: four addresses, the fifth refused; another client not.
    for (let i = 0; i < 4; i++) {
      const res = await askJson(app.origin, `x${i}@example.com`, "192.0.2.7");
      assert.equal(res.status, 202);
      await res.body?.cancel();
    }
    const fifth = await askJson(app.origin, "x4@example.com", "192.0.2.7");
    assert.equal(fifth.status, 429);
    await fifth.body?.cancel();
    const other = await askJson(app.origin, "x4@example.com", "192.0.2.8");
    assert.equal(other.status, 202);
    await other.body?.cancel();

    await settled();
    assert.equal(hellos("often@example.com").length, 2, "no mail past a 429");
    // A sliding window: the count of the one before weighs in for a while.
    app.advance(2 * 3600 * 1000);
    const later = await askJson(app.origin, "often@example.com", "203.0.113.9");
    assert.equal(later.status, 202);
    await later.body?.cancel();
    await settled();
    assert.equal(hellos("often@example.com").length, 3);
  } finally {
    await app.close();
  }
});

Deno.test("requestMailedLink: the answer does not wait for the lookup or the mail (they run after it, through defer); a failed mail is logged without its token", async () => {
  const gate = Promise.withResolvers<void>();
  const minted: string[] = [];
  const { app, settled, hellos } = await start({
    gate: gate.promise,
    minted,
  });
  try {
    await registerJson(app.origin, "slow@example.com");
    // The mail hangs until the test lets it go: the answer comes anyway.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const res = await Promise.race([
      askJson(app.origin, "slow@example.com"),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error("the answer waited for the mail")),
          5000,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    assert.equal(res.status, 202);
    await res.body?.cancel();
    assert.equal(hellos("slow@example.com").length, 0, "not mailed yet");
    gate.resolve();
    await settled();
    assert.equal(hellos("slow@example.com").length, 1);
    assert.equal(minted.length, 1);
  } finally {
    await app.close();
  }

  const failing = await start({
    minted,
    fail: (token) =>
      `the mail API refused ${"https://x.test/hello?token="}${token}&a=1`,
  });
  try {
    await registerJson(failing.app.origin, "fails@example.com");
    const res = await askJson(failing.app.origin, "fails@example.com");
    assert.equal(res.status, 202, "a failed mail is never answered");
    await res.body?.cancel();
    await failing.settled();
    const token = minted.at(-1)!;
    const line = failing.app.logs.find((l) => l.startsWith("hello-link"));
    assert.equal(
      line,
      "hello-link email failed: the mail API refused https://x.test/hello?token=…&a=1",
    );
    assert.ok(
      failing.app.logs.every((l) => !l.includes(token)),
      "no log line holds the token",
    );
  } finally {
    await failing.app.close();
  }
});
