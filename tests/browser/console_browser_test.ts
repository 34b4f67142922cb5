/**
 * The operator's console and impersonation in headless Chromium (Debian's,
 * through playwright-core) with JavaScript off: the console's pages work as
 * plain forms; an operator confirms the password, searches, opens a user,
 * acts as them (the banner with the operator's name and the end button on
 * every page, screenshots), is refused a password change, ends it and is
 * back in their own session, then bans the user, whose right password then
 * gets the wrong-password page. A user's API key is made on `/account`.
 * Screenshots go to `SCREENSHOTS_DIR` (default a temporary directory) and
 * are checked where it matters: the banner is painted at the top, in its
 * own colour.
 */
import assert from "node:assert/strict";
import { type Browser as Chromium, chromium, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, haveChromium } from "../support/chromium.ts";
import { registerJson, startApp, verifyDirectly } from "../app/_harness.ts";

const PASSWORD = "correct horse battery";
const ENV = {
  TOTP: "off",
  PASSKEYS: "off",
  OPERATORS: "ops@example.com",
};

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

async function shot(
  page: Page,
  dir: string,
  name: string,
): Promise<Uint8Array> {
  const png = await page.screenshot({ fullPage: true });
  await Deno.writeFile(`${dir}/${name}.png`, png);
  return png;
}

async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForLoadState("load"), page.click(selector)]);
}

Deno.test({
  name:
    "browser (no JavaScript): console confirm → search → user → impersonate (banner on every page, password change refused) → end → ban; a key made on /account (screenshots)",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    const dir = Deno.env.get("SCREENSHOTS_DIR") ??
      await Deno.makeTempDir({ prefix: "portcullis-console-shots-" });
    await Deno.mkdir(dir, { recursive: true });
    await using app = await startApp({}, { signInEnv: ENV });
    for (const email of ["ops@example.com", "helped@example.com"]) {
      await registerJson(app.origin, email, PASSWORD);
      await verifyDirectly(app, email);
    }
    for (let i = 0; i < 5; i++) {
      await registerJson(app.origin, `someone${i}@example.com`, PASSWORD);
    }
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS],
    });
    try {
      // The user makes an API key on /account, in a browser of their own.
      const userContext = await browser.newContext({
        javaScriptEnabled: false,
      });
      const user = await userContext.newPage();
      await user.goto(`${app.origin}/login`);
      await user.fill("#email", "helped@example.com");
      await user.fill("#password", PASSWORD);
      await submit(user, "main button[type=submit]");
      await user.goto(`${app.origin}/account#api-keys`);
      await user.click("#api-keys summary");
      await user.fill("#key-name", "Nightly export");
      await user.check("input[name='scope:notes:view']");
      await user.fill("#key-password", PASSWORD);
      await submit(user, "#api-keys button[type=submit]");
      const key = await user.textContent("#new-key");
      assert.match(key ?? "", /^pc_[a-z2-7]{16}_[a-z2-7]{59}$/);
      await shot(user, dir, "01-api-key-created");
      await user.goto(`${app.origin}/account`);
      assert.match(await user.textContent("#api-keys") ?? "", /Nightly export/);
      assert.ok(!(await user.content()).includes(key!), "shown once");
      await shot(user, dir, "02-account-api-keys");

      // The operator, JavaScript off.
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(`${app.origin}/login`);
      await page.fill("#email", "ops@example.com");
      await page.fill("#password", PASSWORD);
      await submit(page, "main button[type=submit]");
      await page.goto(`${app.origin}/console/users`);
      assert.equal(await page.title(), "Confirm it's you");
      await shot(page, dir, "03-console-confirm");
      await page.fill("#console-password", PASSWORD);
      await submit(page, "main button[type=submit]");
      assert.equal(new URL(page.url()).pathname, "/console/users");
      await page.fill("#console-q", "helped");
      await submit(page, "form[role=search] button");
      const rows = await page.locator("#users tbody tr").count();
      assert.equal(rows, 1);
      await shot(page, dir, "04-console-search");
      await submit(page, "#users a");
      assert.equal(await page.textContent("#user-email"), "helped@example.com");
      assert.match(
        await page.textContent("#console-keys") ?? "",
        /Nightly export/,
      );
      await shot(page, dir, "05-console-user");

      // Impersonation: the banner on every page, with the end button.
      await submit(page, "#impersonate");
      assert.equal(new URL(page.url()).pathname, "/");
      const banner = page.locator("#impersonation-banner");
      assert.ok(await banner.isVisible());
      assert.match(
        await banner.textContent() ?? "",
        /ops@example\.com\s+is acting as\s+helped@example\.com/,
      );
      const box = (await banner.boundingBox())!;
      assert.equal(box.y, 0, "the banner is at the very top");
      const home = await shot(page, dir, "06-impersonation-home");
      // Painted in the banner's own colour (#7c2d12), not the page's.
      assert.deepEqual(await pixel(browser, home, 2, 2), [124, 45, 18]);
      await page.goto(`${app.origin}/account`);
      assert.ok(await page.locator("#impersonation-banner").isVisible());
      assert.match(
        await page.textContent("#email") ?? "",
        /helped@example.com/,
      );
      await shot(page, dir, "07-impersonation-account");
      // The password change form is there (it is the user's page), and
      // refused.
      // The form is behind its action's name, as every account form is.
      await page.click("summary:has-text('Change password')");
      await page.fill("#current", PASSWORD);
      await page.fill("#new", "the operator's new password");
      const refused = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith("/account/password")),
        page.click("form[action='/account/password'] button"),
      ]);
      assert.equal(refused[0].status(), 403);
      await page.waitForLoadState("load");
      assert.match(await page.content(), /operator acting as this user cannot/);
      assert.ok(
        await page.locator("#impersonation-banner").isVisible(),
        "even the refusal page carries the banner",
      );
      await shot(page, dir, "08-impersonation-refused");
      // End it: back in the operator's own session, on the user's page.
      await submit(page, "#end-impersonation");
      assert.equal(
        new URL(page.url()).pathname.startsWith("/console/users/"),
        true,
      );
      assert.equal(await page.locator("#impersonation-banner").count(), 0);
      assert.equal(await page.textContent("#user-email"), "helped@example.com");
      await shot(page, dir, "09-impersonation-ended");

      // Ban, with a reason.
      await page.fill("#ban-reason", "Chargeback fraud");
      await submit(page, "#ban");
      assert.match(await page.textContent("#user-state") ?? "", /banned/);
      assert.match(
        await page.textContent("#user-state") ?? "",
        /Chargeback fraud/,
      );
      await shot(page, dir, "10-banned");

      // The banned user's session is gone and the right password answers
      // as a wrong one.
      await user.goto(`${app.origin}/account`);
      assert.equal(new URL(user.url()).pathname, "/login");
      await user.fill("#email", "helped@example.com");
      await user.fill("#password", PASSWORD);
      await submit(user, "main button[type=submit]");
      assert.match(await user.content(), /Email or password is incorrect/);
      await shot(user, dir, "11-banned-sign-in");
      console.log(`screenshots in ${dir}`);
    } finally {
      await browser.close();
    }
  },
});
