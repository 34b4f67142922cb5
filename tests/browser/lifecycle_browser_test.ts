/**
 * The account lifecycle in headless Chromium (Debian's, through
 * playwright-core): the whole password reset from the login page's link to
 * signing in with the new password, the sessions page's sign-out buttons,
 * keyboard focus, and a screenshot that shows the app's stylesheet painted
 * the page (and that without it the same pixel is not painted).
 */
import assert from "node:assert/strict";
import { type Browser as Chromium, chromium, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, haveChromium } from "../support/chromium.ts";
import { api, bearer, registerJson, startApp } from "../app/_harness.ts";

const OLD = "correct horse battery";
const NEW = "a fresh passphrase for chromium";

function launch(): Promise<Chromium> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      ...CHROMIUM_ARGS,
    ],
  });
}

/** The colour of one pixel of a PNG screenshot, decoded by Chromium itself. */
async function pixel(
  browser: Chromium,
  png: Uint8Array,
  x: number,
  y: number,
): Promise<[number, number, number]> {
  const page = await browser.newPage();
  try {
    const url = `data:image/png;base64,${btoa(String.fromCharCode(...png))}`;
    // A string, run in the page: Deno's type check has no DOM.
    return await page.evaluate(`(async () => {
      const img = new Image();
      img.src = ${JSON.stringify(url)};
      await img.decode();
      const canvas = document.createElement("canvas");
      canvas.width = img.width;
      canvas.height = img.height;
      const ctx = canvas.getContext("2d");
      ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(${x}, ${y}, 1, 1).data;
      return [d[0], d[1], d[2]];
    })()`) as [number, number, number];
  } finally {
    await page.close();
  }
}

async function navPixel(
  browser: Chromium,
  page: Page,
): Promise<[number, number, number]> {
  const png = await page.screenshot({
    clip: { x: 0, y: 0, width: 40, height: 20 },
  });
  return await pixel(browser, png, 4, 4);
}

Deno.test({
  name:
    "browser: forgot password → mailed link → new password (a refused one first) → log in; the stylesheet paints the page (screenshot)",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp();
    await registerJson(app.origin, "reset@example.com", OLD);
    const browser = await launch();
    try {
      const page = await browser.newPage();
      await page.goto(`${app.origin}/login`);

      // Screenshot: the navigation bar is painted in the stylesheet's ink
      // colour (#1f2937); with /style.css blocked it is not.
      assert.deepEqual(await navPixel(browser, page), [31, 41, 55]);
      const bare = await browser.newPage();
      await bare.route("**/style.css", (route) => route.abort());
      await bare.goto(`${app.origin}/login`);
      assert.notDeepEqual(await navPixel(browser, bare), [31, 41, 55]);
      await bare.close();

      // Keyboard focus is visible.
      await page.focus("#email");
      await page.keyboard.press("Tab");
      await page.keyboard.press("Shift+Tab");
      const outline = await page.evaluate(
        "getComputedStyle(document.activeElement).outlineStyle",
      );
      assert.notEqual(outline, "none");

      await Promise.all([
        page.waitForURL(`${app.origin}/password/forgot`),
        page.click("a[href='/password/forgot']"),
      ]);
      await page.fill("#email", "reset@example.com");
      await Promise.all([
        page.waitForURL(`${app.origin}/login`),
        page.click("main button[type=submit]"),
      ]);
      assert.match(
        await page.textContent(".flash") ?? "",
        /If an account uses that address/,
      );

      const link = await app.awaitLink("reset@example.com", 2);
      const landing = await page.goto(link);
      assert.equal(landing?.status(), 200);
      assert.equal(
        (await landing?.allHeaders())?.["referrer-policy"],
        "strict-origin",
      );
      await page.fill("#password", "short");
      // The browser's own check (minlength) would stop this submit; remove
      // it to see the server's refusal tied to the field.
      await page.evaluate(
        'document.querySelector("#password").removeAttribute("minlength")',
      );
      await page.click("#reset");
      await page.waitForSelector("#password-error");
      assert.equal(
        await page.getAttribute("#password", "aria-invalid"),
        "true",
      );
      assert.match(
        await page.getAttribute("#password", "aria-describedby") ?? "",
        /password-error/,
      );
      await page.fill("#password", NEW);
      await Promise.all([
        page.waitForURL(`${app.origin}/login`),
        page.click("#reset"),
      ]);
      assert.match(
        await page.textContent(".flash") ?? "",
        /Your password is changed/,
      );
      await page.fill("#email", "reset@example.com");
      await page.fill("#password", NEW);
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("main button[type=submit]"),
      ]);
      assert.match(await page.textContent("h1") ?? "", /Welcome back/);
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "browser: the sessions page lists this browser and another session; its buttons sign one out and all others out without JavaScript",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp();
    const { token: phone } = await registerJson(
      app.origin,
      "many@example.com",
      OLD,
    );
    const browser = await launch();
    try {
      app.advance(1000); // this browser's session is the newer one
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(`${app.origin}/login`);
      await page.fill("#email", "many@example.com");
      await page.fill("#password", OLD);
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("main button[type=submit]"),
      ]);
      await page.goto(`${app.origin}/account`);
      const rows = page.locator("#session-list > li");
      assert.equal(await rows.count(), 2);
      assert.match(await rows.nth(0).textContent() ?? "", /This browser/);
      assert.match(
        await rows.nth(0).locator("summary").textContent() ?? "",
        /Chrome on Linux/,
      );
      // This browser's row has no sign-out of its own (the bar's Log out).
      assert.equal(await rows.nth(0).locator("button").count(), 0);
      assert.match(await page.textContent("#activity") ?? "", /Signed in/);

      // Sign the other session (the "phone") out with its row's button.
      await Promise.all([
        page.waitForURL(`${app.origin}/account`),
        rows.nth(1).locator("button").click(),
      ]);
      assert.match(
        await page.textContent(".flash") ?? "",
        /That session is signed out/,
      );
      assert.equal(
        (await api(app.origin, "GET", "/api/me", undefined, bearer(phone)))
          .status,
        401,
      );
      assert.equal(await page.locator("#session-list > li").count(), 1);

      const tablet = (await api(app.origin, "POST", "/login", {
        email: "many@example.com",
        password: OLD,
      })).body.token;
      app.advance(1000);
      await page.reload();
      assert.equal(await page.locator("#session-list > li").count(), 2);
      await Promise.all([
        page.waitForURL(`${app.origin}/account`),
        page.click("#revoke-others"),
      ]);
      assert.match(
        await page.textContent(".flash") ?? "",
        /Every other session is signed out/,
      );
      assert.equal(
        (await api(app.origin, "GET", "/api/me", undefined, bearer(tablet)))
          .status,
        401,
      );
      assert.equal(await page.locator("#session-list > li").count(), 1);
      await context.close();
    } finally {
      await browser.close();
    }
  },
});
