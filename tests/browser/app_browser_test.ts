/**
 * The reference app in headless Chromium (Debian's, driven by
 * playwright-core): register through the form, open the link from the
 * mail log (elsewhere: a confirmation page; in the owner's browser: verified
 * at once), see the flash and /account, log out, be sent from /account to
 * /login, log back in. Keeps the `__Host-` Secure cookie on
 * http://localhost, which Chromium accepts as a secure context.
 */
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, haveChromium } from "../support/chromium.ts";
import { startApp } from "../app/_harness.ts";

Deno.test({
  name:
    "browser: register, verify from the mailed link (owner's browser at once, elsewhere a confirm page), account, log out, redirect to login, log back in",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp();
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        ...CHROMIUM_ARGS,
      ],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`${app.origin}/register`);
      await page.fill("#email", "browser@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("button[type=submit]"),
      ]);
      assert.match(
        await page.textContent("#email") ?? "",
        /browser@example\.com/,
      );
      assert.match(await page.textContent(".flash") ?? "", /Check your inbox/);
      const cookies = await page.context().cookies();
      const session = cookies.find((c) => c.name === "__Host-session");
      assert.ok(
        session,
        "Chromium kept the __Host- Secure cookie on http://localhost",
      );
      assert.equal(session!.httpOnly, true);
      assert.equal(session!.sameSite, "Lax");

      // The link, read from the app's mail log, opened in another browser
      // (a link scanner, a second device) shows a confirmation page and
      // consumes nothing.
      const link = app.lastLink("browser@example.com");
      const elsewhere = await (await browser.newContext()).newPage();
      const landing = await elsewhere.goto(link);
      assert.equal(landing?.status(), 200);
      assert.equal(
        (await landing?.allHeaders())?.["referrer-policy"],
        "strict-origin",
      );
      assert.ok(await elsewhere.isVisible("#confirm"));
      await elsewhere.context().close();
      // In the owner's signed-in browser the same link verifies at once.
      await page.goto(link);
      assert.equal(new URL(page.url()).pathname, "/");
      assert.match(
        await page.textContent(".flash") ?? "",
        /your email address is verified/,
      );
      assert.ok(await page.isVisible("#verified"));

      await page.goto(`${app.origin}/account`);
      assert.equal(new URL(page.url()).pathname, "/account");
      assert.match(await page.textContent("h1") ?? "", /Your account/);
      assert.ok(await page.isVisible("#verified"));

      // Log out with the form in the navigation bar.
      await Promise.all([
        page.waitForURL(/\/login$/),
        page.click("nav form[action='/logout'] button"),
      ]);
      assert.match(await page.textContent(".flash") ?? "", /signed out/);
      assert.equal(
        (await page.context().cookies()).some((c) =>
          c.name === "__Host-session"
        ),
        false,
      );

      await page.goto(`${app.origin}/account`);
      const url = new URL(page.url());
      assert.equal(url.pathname, "/login");
      assert.equal(url.searchParams.get("next"), "/account");

      await page.fill("#email", "browser@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/account`),
        page.click("main button[type=submit]"),
      ]);
      assert.match(
        await page.textContent("#email") ?? "",
        /browser@example\.com/,
      );
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "browser, hardening finding 13: on a plain-HTTP origin other than localhost (no Sec-Fetch-Site, Origin only), registering and confirming the email through the page works",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    // http://app.example.com:PORT is not a secure context: no __Host-
    // Secure cookie (COOKIE_SECURE=false) and no Fetch Metadata, so the
    // cross-origin check decides on Origin alone. With no-referrer on the
    // confirm page the form's POST carried Origin: null and got 403.
    await using app = await startApp({ cookieSecure: false }, {
      host: "app.example.com",
    });
    assert.match(app.origin, /^http:\/\/app\.example\.com:\d+$/);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        ...CHROMIUM_ARGS,
        "--host-resolver-rules=MAP app.example.com 127.0.0.1",
      ],
    });
    try {
      const page = await browser.newPage();
      const posts: { path: string; origin?: string; site?: string }[] = [];
      page.on("request", (r) => {
        if (r.method() !== "POST") return;
        const h = r.headers();
        posts.push({
          path: new URL(r.url()).pathname,
          origin: h["origin"],
          site: h["sec-fetch-site"],
        });
      });
      await page.goto(`${app.origin}/register`);
      await page.fill("#email", "remote@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("button[type=submit]"),
      ]);
      assert.match(await page.textContent(".flash") ?? "", /Check your inbox/);

      const link = app.lastLink("remote@example.com");
      assert.ok(link.startsWith(`${app.origin}/verify?token=`), link);
      // Opened signed out (another device): the owner's signed-in browser
      // would be verified by the GET alone, and this test is about the
      // confirm page's POST.
      await page.context().clearCookies();
      const landing = await page.goto(link);
      assert.equal(
        (await landing?.allHeaders())?.["referrer-policy"],
        "strict-origin",
      );
      // Another browser confirms with the account's password.
      await page.fill("#password", "correct horse battery");
      const [confirmed] = await Promise.all([
        page.waitForNavigation(),
        page.click("#confirm"),
      ]);
      assert.notEqual(confirmed?.status(), 403);
      assert.equal(page.url(), `${app.origin}/`);
      assert.match(
        await page.textContent(".flash") ?? "",
        /your email address is verified/,
      );
      const user = await app.credentials.findByEmail("remote@example.com");
      assert.ok(user!.verifiedAt > 0);
      // The Origin-only path of the check was the one exercised.
      const verify = posts.find((p) => p.path === "/verify");
      assert.equal(verify?.site, undefined, "no Sec-Fetch-Site on this origin");
      assert.equal(verify?.origin, app.origin);
    } finally {
      await browser.close();
    }
  },
});
