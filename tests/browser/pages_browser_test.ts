/**
 * What a person sees, in headless Chromium (Debian's, driven by
 * playwright-core), on every page of the reference app with every module on,
 * signed out and signed in (issue 31, "Pages people enjoy"):
 *
 * - an axe-core audit (WCAG 2.1 A and AA, best practices) finds nothing,
 *   with every `<details>` closed and again opened;
 * - every text field is styled (the stylesheet's border and radius, not
 *   the browser's inset box), and the fields of one form are equally wide;
 * - the navigation bar's first link lines up with the main column;
 * - nothing scrolls sideways at a 375 px phone width;
 * - no inline script or style, and no Content-Security-Policy refusal;
 * - the wrong-password page keeps the email and every way to sign in;
 * - `/account` at 1280 px and 375 px: its groups named at the top, device
 *   names with the full User-Agent string one click away, this browser's
 *   session marked without its own "Sign out", a page far shorter than the
 *   2,800 px it was; and it works without JavaScript.
 *
 * With `SCREENSHOTS_DIR` set, each page is saved there as a PNG at both
 * widths, for people to look at.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Page,
} from "playwright-core";
import { Secret, TOTP } from "otpauth";
import {
  addVirtualAuthenticator,
  CHROMIUM,
  CHROMIUM_ARGS,
  haveChromium,
} from "../support/chromium.ts";
import { audit } from "../support/axe.ts";
import {
  api,
  EVERY_MODULE,
  registerJson,
  startApp,
  type TestApp,
  verifyDirectly,
} from "../app/_harness.ts";

const PASSWORD = "correct horse battery";
const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 375, height: 740 };
/** A desktop Chrome on Linux, as a second device of the same person. */
const CHROME_LINUX =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const SHOTS = Deno.env.get("SCREENSHOTS_DIR") ?? null;

/** Every field a person types in (not hidden, not a box to tick). */
const TEXT_FIELDS =
  "input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button]), textarea, select";

/** What the page checks found, one line each; empty when all is well. */
type Findings = string[];

/** Submits by a click and waits for the page it leads to. */
async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

/** The link in the last mail to `email` after `count` mails to it. */
function mailed(app: TestApp, email: string, count: number): Promise<string> {
  return app.awaitLink(email, count);
}

function mailsTo(app: TestApp, email: string): number {
  return app.mail.filter((l) => l.includes(`to=${email} `)).length;
}

/** Checks of the page as it is laid out now, at the current width. */
async function layoutChecks(
  page: Page,
  name: string,
  markup = false,
): Promise<Findings> {
  const width = page.viewportSize()!.width;
  const found: Findings = [];
  // A string, run in the page: Deno's type check has no DOM.
  const facts = await page.evaluate(`(() => {
    const forms = [...document.querySelectorAll("form")].map((form) => {
      const fields = [...form.querySelectorAll(${
    JSON.stringify(TEXT_FIELDS)
  })].filter((i) => i.checkVisibility());
      return {
        form: form.getAttribute("action") || form.id || "(form)",
        widths: fields.map((i) => Math.round(i.getBoundingClientRect().width)),
        unstyled: fields.filter((i) => {
          const s = getComputedStyle(i);
          return s.borderTopStyle !== "solid" || s.borderTopLeftRadius === "0px";
        }).map((i) => i.id || i.name),
      };
    });
    const link = document.querySelector("body > nav a");
    const column = document.querySelector("main > h1") ?? document.querySelector("main > *");
    return {
      forms,
      nav: link ? link.getBoundingClientRect().left : null,
      main: column ? column.getBoundingClientRect().left : null,
      scrollWidth: document.documentElement.scrollWidth,
      inlineStyles: document.querySelectorAll("[style]").length,
      inlineScripts: document.querySelectorAll("script:not([src])").length,
      styleElements: document.querySelectorAll("style").length,
    };
  })()`) as {
    forms: { form: string; widths: number[]; unstyled: string[] }[];
    nav: number | null;
    main: number | null;
    scrollWidth: number;
    inlineStyles: number;
    inlineScripts: number;
    styleElements: number;
  };
  const at = `${name} at ${width} px`;
  for (const f of facts.forms) {
    if (f.unstyled.length > 0) {
      found.push(`${at}: unstyled fields in ${f.form}: ${f.unstyled}`);
    }
    if (new Set(f.widths).size > 1) {
      found.push(`${at}: fields of ${f.form} differ in width: ${f.widths}`);
    }
    // A native, unstyled text box is about 177 px wide.
    if (width >= 1000 && f.widths.some((w) => w < 200)) {
      found.push(`${at}: narrow fields in ${f.form}: ${f.widths}`);
    }
  }
  if (facts.nav === null || facts.main === null) {
    found.push(`${at}: no navigation link or main column`);
  } else if (Math.abs(facts.nav - facts.main) > 0.5) {
    found.push(
      `${at}: navigation starts at ${facts.nav} px, the main column at ${facts.main} px`,
    );
  }
  if (facts.scrollWidth > width) {
    found.push(`${at}: scrolls sideways (${facts.scrollWidth} px wide)`);
  }
  // Before axe-core runs: it leaves style attributes of its own.
  if (
    markup && facts.inlineStyles + facts.inlineScripts + facts.styleElements > 0
  ) {
    found.push(`${at}: inline style or script in the markup`);
  }
  return found;
}

/**
 * Every check of one page, at 1280 px and at 375 px: the layout as first
 * seen and with every `<details>` open, the audit both ways, screenshots.
 */
async function look(page: Page, name: string): Promise<Findings> {
  const found: Findings = [];
  await page.setViewportSize(WIDE);
  found.push(...await layoutChecks(page, name, true));
  if (SHOTS) {
    await page.screenshot({
      path: `${SHOTS}/${name}-1280.png`,
      fullPage: true,
    });
  }
  found.push(...(await audit(page)).map((v) => `${name}: ${v}`));
  await page.setViewportSize(PHONE);
  found.push(...await layoutChecks(page, name));
  if (SHOTS) {
    await page.screenshot({ path: `${SHOTS}/${name}-375.png`, fullPage: true });
  }
  const closed = await page.locator("details:not([open])").count();
  if (closed > 0) {
    await page.evaluate(
      `document.querySelectorAll("details").forEach((d) => { d.open = true; })`,
    );
    found.push(...await layoutChecks(page, `${name} (opened)`));
    if (SHOTS) {
      await page.screenshot({
        path: `${SHOTS}/${name}-opened-375.png`,
        fullPage: true,
      });
    }
    await page.setViewportSize(WIDE);
    found.push(...await layoutChecks(page, `${name} (opened)`));
    if (SHOTS) {
      await page.screenshot({
        path: `${SHOTS}/${name}-opened-1280.png`,
        fullPage: true,
      });
    }
    found.push(...(await audit(page)).map((v) => `${name} (opened): ${v}`));
  }
  await page.setViewportSize(WIDE);
  return found;
}

/** A page that reports refusals by the Content-Security-Policy. */
async function watchedPage(
  context: BrowserContext,
  refusals: string[],
): Promise<Page> {
  const page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error" && /Content.Security.Policy/i.test(m.text())) {
      refusals.push(m.text());
    }
  });
  page.on("pageerror", (e) => refusals.push(`page error: ${e.message}`));
  return page;
}

/** Which ways to sign in the login page offers, as a person sees them. */
async function signInOptions(page: Page): Promise<Record<string, boolean>> {
  await page.waitForSelector("#passkey-login:not([hidden])");
  return {
    password: await page.isVisible("form[action='/login'] #password"),
    passkey: await page.isVisible("#passkey-login"),
    magicLink: await page.isVisible(
      "form[action='/magic-link'] input[name=email]",
    ),
    provider: await page.isVisible("#providers a"),
    forgot: await page.isVisible("a[href='/password/forgot']"),
  };
}

async function signIn(
  page: Page,
  origin: string,
  email: string,
): Promise<void> {
  await page.goto(`${origin}/login`);
  await page.fill("#email", email);
  await page.fill("#password", PASSWORD);
  await submit(page, "form[action='/login'] button[type=submit]");
}

function totpCode(app: TestApp, secret: string): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({
    timestamp: app.now(),
  });
}

Deno.test({
  name:
    "browser, issue 31: every page, signed out and signed in, passes axe-core (WCAG 2.1 AA, best practices), has styled fields of one width per form, a navigation bar in line with the main column, no sideways scroll at 375 px, and no inline script or style",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({
      limits: {
        loginPerAccount: {
          freeFailures: 10,
          baseDelaySeconds: 1,
          maxDelaySeconds: 60,
          hardStop: 3,
        },
      },
    }, { signInEnv: EVERY_MODULE });
    if (SHOTS) await Deno.mkdir(SHOTS, { recursive: true });
    const browser: Browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS],
    });
    const found: Findings = [];
    const refusals: string[] = [];
    try {
      const o = app.origin;
      const out = await watchedPage(
        await browser.newContext({ viewport: WIDE }),
        refusals,
      );

      // Signed out.
      for (
        const [name, path] of [
          ["home-signed-out", "/"],
          ["login", "/login"],
          ["register", "/register"],
          ["forgot", "/password/forgot"],
          ["passkey-signup", "/passkeys/signup"],
          ["passkey-recover", "/passkeys/recover"],
        ]
      ) {
        await out.goto(`${o}${path}`);
        found.push(...await look(out, name));
      }
      await registerJson(o, "taken@example.com");
      await out.goto(`${o}/register`);
      await out.fill("#email", "taken@example.com");
      await out.fill("#password", PASSWORD);
      await submit(out, "main button[type=submit]");
      found.push(...await look(out, "register-refused"));

      await out.goto(`${o}/password/forgot`);
      await out.evaluate(
        `document.querySelector("main form").noValidate = true`,
      );
      await out.fill("#email", "not an address");
      await submit(out, "main button[type=submit]");
      found.push(...await look(out, "forgot-refused"));

      await out.goto(`${o}/login`);
      await out.fill("#email", "taken@example.com");
      await out.fill("#password", "not the password");
      await submit(out, "form[action='/login'] button[type=submit]");
      found.push(...await look(out, "login-refused"));

      // The 30-day hard stop (here after 3 failures): the login page again,
      // saying that a password reset opens the account.
      for (let i = 0; i < 3; i++) {
        await api(o, "POST", "/login", {
          email: "stopped@example.com",
          password: "a wrong guess",
        });
      }
      await out.goto(`${o}/login`);
      await out.fill("#email", "stopped@example.com");
      await out.fill("#password", PASSWORD);
      const [paused] = await Promise.all([
        out.waitForNavigation(),
        out.click("form[action='/login'] button[type=submit]"),
      ]);
      assert.equal(paused?.status(), 429);
      assert.match(
        await out.textContent("main .alert") ?? "",
        /resetting its password/,
      );
      found.push(...await look(out, "login-paused"));

      // The reset link.
      let n = mailsTo(app, "taken@example.com");
      await out.goto(`${o}/password/forgot`);
      await out.fill("#email", "taken@example.com");
      await submit(out, "main button[type=submit]");
      found.push(...await look(out, "login-with-flash"));
      await out.goto(await mailed(app, "taken@example.com", n + 1));
      found.push(...await look(out, "reset"));
      await out.evaluate(
        `document.querySelector("main form").noValidate = true`,
      );
      await out.fill("#password", "short");
      await submit(out, "#reset");
      found.push(...await look(out, "reset-refused"));

      // A verification link opened in another browser, a bad one, a
      // refused password.
      await registerJson(o, "new@example.com");
      await out.goto(app.lastLink("new@example.com"));
      found.push(...await look(out, "verify-confirm"));
      await out.fill("#password", "not the password");
      await submit(out, "#confirm");
      found.push(...await look(out, "verify-refused"));
      await out.goto(`${o}/verify?token=not-a-token`);
      found.push(...await look(out, "verify-bad-link"));

      // A sign-in link: the request refused, the link's page.
      await out.goto(`${o}/login`);
      await out.evaluate(
        `document.querySelector("form[action='/magic-link']").noValidate = true`,
      );
      await out.fill("#magic-link-email", "not an address");
      await submit(out, "#magic-link");
      found.push(...await look(out, "magic-link-refused"));
      n = mailsTo(app, "taken@example.com");
      await out.goto(`${o}/login`);
      await out.fill("#magic-link-email", "taken@example.com");
      await submit(out, "#magic-link");
      await out.goto(await mailed(app, "taken@example.com", n + 1));
      found.push(...await look(out, "magic-link-confirm"));

      // Signed in: registered through the form, verified; a second device
      // (a desktop Chrome on Linux) signs in too.
      const me = await watchedPage(
        await browser.newContext({ viewport: WIDE }),
        refusals,
      );
      await addVirtualAuthenticator(me);
      await me.goto(`${o}/register`);
      await me.fill("#email", "me@example.com");
      await me.fill("#password", PASSWORD);
      await submit(me, "main button[type=submit]");
      await verifyDirectly(app, "me@example.com");
      app.advance(60_000);
      const laptop = await browser.newContext({ userAgent: CHROME_LINUX });
      await signIn(await laptop.newPage(), o, "me@example.com");
      await laptop.close();
      app.advance(60_000);
      await me.goto(`${o}/`);
      found.push(...await look(me, "home"));
      await me.goto(`${o}/account`);
      found.push(...await look(me, "account"));

      await me.goto(`${o}/account`);
      await me.click("#password summary");
      await me.fill("#current", "not the password");
      await me.fill("#new", "another long passphrase");
      await submit(me, "form[action='/account/password'] button");
      found.push(...await look(me, "account-refused"));

      // The email change's link, opened in another browser.
      await me.goto(`${o}/account`);
      await me.click("#change-email summary");
      await me.fill("#new-email", "moved@example.com");
      await me.fill("#email-password", PASSWORD);
      await submit(me, "form[action='/account/email'] button");
      await out.goto(await mailed(app, "moved@example.com", 1));
      found.push(...await look(out, "email-change-confirm"));

      // A passkey.
      await me.goto(`${o}/account`);
      await me.waitForSelector("#passkey-add:not([hidden])");
      await me.fill("#passkey-name", "Laptop");
      await me.fill("#passkey-add-password", PASSWORD);
      await Promise.all([
        me.waitForResponse((r) =>
          r.url().endsWith("/passkeys/register") && r.status() === 201
        ),
        me.click("#passkey-add button[type=submit]"),
      ]);
      await me.waitForSelector("#passkeys li");

      // Two-factor authentication: enrolment, its refusal, the codes.
      await me.click("#two-factor summary");
      await me.fill("#totp-setup-password", PASSWORD);
      await submit(me, "form[action='/account/totp'] button");
      found.push(...await look(me, "totp-enrol"));
      await me.fill("#code", "000000");
      await submit(me, "form[action='/account/totp/confirm'] button");
      found.push(...await look(me, "totp-enrol-refused"));
      // A wrong code ends the set-up: start again.
      await me.goto(`${o}/account`);
      await me.click("#two-factor summary");
      await me.fill("#totp-setup-password", PASSWORD);
      await submit(me, "form[action='/account/totp'] button");
      const secret = (await me.textContent("#totp-secret"))!.trim();
      await me.fill("#code", totpCode(app, secret));
      await submit(me, "form[action='/account/totp/confirm'] button");
      found.push(...await look(me, "totp-recovery-codes"));
      await me.goto(`${o}/account`);
      found.push(...await look(me, "account-totp-passkey"));

      // The TOTP step of a sign-in, and its refusal.
      await out.context().clearCookies();
      await signIn(out, o, "me@example.com");
      assert.equal(new URL(out.url()).pathname, "/login/totp");
      found.push(...await look(out, "totp-login"));
      await out.fill("#code", "000000");
      await submit(out, "form[action='/login/totp'] button");
      found.push(...await look(out, "totp-login-refused"));

      // An account without a password ("This wasn't me" on its link),
      // signed in by a sign-in link.
      await registerJson(o, "nopass@example.com");
      const other = await watchedPage(
        await browser.newContext({ viewport: WIDE }),
        refusals,
      );
      await other.goto(app.lastLink("nopass@example.com"));
      await submit(other, "#disown");
      found.push(...await look(other, "home-signed-out-with-flash"));
      // The verification link, then the set-a-password link.
      await mailed(app, "nopass@example.com", 2);
      n = mailsTo(app, "nopass@example.com");
      await other.goto(`${o}/login`);
      await other.fill("#magic-link-email", "nopass@example.com");
      await submit(other, "#magic-link");
      await other.goto(await mailed(app, "nopass@example.com", n + 1));
      await submit(other, "#sign-in");
      await other.goto(`${o}/account`);
      assert.equal(await other.locator("#reauth-needed").count(), 1);
      found.push(...await look(other, "account-passwordless"));
    } finally {
      await browser.close();
    }
    assert.deepEqual(found, []);
    assert.deepEqual(refusals, []);
  },
});

Deno.test({
  name:
    "browser, issue 31: the wrong-password page keeps the email as typed and every way to sign in (passkey, sign-in link, providers), and the field has the focus",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, { signInEnv: EVERY_MODULE });
    await registerJson(app.origin, "known@example.com");
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS],
    });
    try {
      const page = await browser.newPage({ viewport: WIDE });
      await page.goto(`${app.origin}/login`);
      const offered = await signInOptions(page);
      assert.deepEqual(
        Object.values(offered).every(Boolean),
        true,
        JSON.stringify(offered),
      );
      for (const email of ["known@example.com", "unknown@example.com"]) {
        await page.goto(`${app.origin}/login`);
        await page.fill("#email", email);
        await page.fill("#password", "not the password");
        const [res] = await Promise.all([
          page.waitForNavigation(),
          page.click("form[action='/login'] button[type=submit]"),
        ]);
        assert.equal(res?.status(), 401);
        assert.match(
          await page.textContent("main .alert") ?? "",
          /Email or password is incorrect/,
        );
        assert.equal(await page.inputValue("#email"), email);
        assert.deepEqual(await signInOptions(page), offered, email);
        assert.equal(
          await page.evaluate(
            "document.activeElement && document.activeElement.id",
          ),
          "password",
        );
      }
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "browser, issue 31: /account at 1280 px and 375 px: its groups named at the top, device names with the full string one click away, this browser's row marked (not bold, no own Sign out), far shorter than 2,800 px; its forms open without JavaScript",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, { signInEnv: EVERY_MODULE });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS],
    });
    try {
      const o = app.origin;
      // Registered on a desktop Chrome on Linux, then signed in here.
      const laptop = await browser.newContext({ userAgent: CHROME_LINUX });
      const first = await laptop.newPage();
      await first.goto(`${o}/register`);
      await first.fill("#email", "me@example.com");
      await first.fill("#password", PASSWORD);
      await submit(first, "main button[type=submit]");
      await laptop.close();
      await verifyDirectly(app, "me@example.com");
      app.advance(60_000);
      for (const js of [true, false]) {
        const context = await browser.newContext({
          viewport: WIDE,
          javaScriptEnabled: js,
        });
        const page = await context.newPage();
        await signIn(page, o, "me@example.com");
        await page.goto(`${o}/account`);
        for (const viewport of [WIDE, PHONE]) {
          await page.setViewportSize(viewport);
          const at = `${viewport.width} px, JavaScript ${js ? "on" : "off"}`;
          if (SHOTS && js) {
            await page.screenshot({
              path: `${SHOTS}/account-sessions-${viewport.width}.png`,
              fullPage: true,
            });
          }
          // The groups, named in the first screenful.
          for (
            const [href, heading] of [
              ["#security", "Security"],
              ["#sessions", "Sessions"],
              ["#email-address", "Email address"],
              ["#danger-zone", "Danger zone"],
            ]
          ) {
            const link = page.locator(`nav.toc a[href='${href}']`);
            const box = await link.boundingBox();
            assert.ok(
              box && box.y + box.height <= viewport.height,
              `${href} at ${at}`,
            );
            assert.equal(
              (await page.textContent(`${href} > h2`))?.trim(),
              heading,
            );
          }
          const height = await page.evaluate(
            "document.documentElement.scrollHeight",
          ) as number;
          // Every module is on (API keys and the console included): the
          // page was 2,800 px with fewer before the groups and folded forms.
          const most = viewport.width === PHONE.width ? 2200 : 2000;
          assert.ok(height < most, `${height} px tall at ${at}`);
          const wide = await page.evaluate(
            "document.documentElement.scrollWidth",
          ) as number;
          assert.ok(wide <= viewport.width, `${wide} px wide at ${at}`);

          // Sessions: a device name each; this browser's marked, with no
          // Sign out of its own (the bar's "Log out" does that).
          const names = await page.locator("#session-list summary")
            .allTextContents();
          assert.deepEqual([...new Set(names.map((s) => s.trim()))].sort(), [
            "Chrome on Linux",
            "Headless Chrome on Linux",
          ]);
          const current = page.locator("#session-list > li.current");
          assert.equal(await current.count(), 1);
          assert.equal(
            (await current.locator(".badge").textContent())?.trim(),
            "This browser",
          );
          assert.equal(await current.locator("button").count(), 0);
          for (
            const label of await page.locator(
              "#session-list > li:not(.current) button",
            ).allTextContents()
          ) {
            assert.equal(label, "Sign out");
          }
          const weight = await page.evaluate(
            `getComputedStyle(document.querySelector("#session-list > li.current summary")).fontWeight`,
          );
          assert.equal(weight, "400", "this browser's row is not bold");
          // The full User-Agent string: hidden until its name is opened.
          const agent = page.locator(
            "#session-list > li:not(.current) details.agent",
            { hasText: "Chrome on Linux" },
          ).filter({ hasNotText: "Headless" }).first();
          assert.equal(await agent.locator("code").isVisible(), false);
          assert.equal(
            await page.getByText(CHROME_LINUX).first().isVisible(),
            false,
          );
          await agent.locator("summary").click();
          assert.equal(await agent.locator("code").textContent(), CHROME_LINUX);
          assert.equal(await agent.locator("code").isVisible(), true);
          const opened = await page.evaluate(
            "document.documentElement.scrollWidth",
          ) as number;
          assert.ok(
            opened <= viewport.width,
            `${opened} px wide, opened, at ${at}`,
          );
          await agent.locator("summary").click();
          // The activity names devices the same way.
          assert.ok(
            (await page.locator("#activity summary").allTextContents())
              .includes("Chrome on Linux"),
          );
          assert.equal(
            await page.locator("#activity code").first().isVisible(),
            false,
          );
        }
        // A form behind its name opens with a click, script or not.
        assert.equal(await page.isVisible("#current"), false);
        await page.click("#password summary");
        assert.equal(await page.isVisible("#current"), true);
        await context.close();
      }
    } finally {
      await browser.close();
    }
  },
});
