/**
 * Passkeys in headless Chromium (Debian's, driven by playwright-core) with
 * a CDP virtual authenticator (`WebAuthn.addVirtualAuthenticator`):
 * register a passkey on /account, log out, sign in with it from /login
 * (discoverable credential, no email typed), see /api/me; then the
 * refusals: a cloned credential with a stale counter, an assertion whose
 * origin or RP id is not the app's, and a replayed challenge. An account
 * without a password confirms it is the user with a passkey before a
 * sensitive change.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "playwright-core";
import {
  addVirtualAuthenticator as authenticator,
  CHROMIUM,
  CHROMIUM_ARGS as ARGS,
  haveChromium,
} from "../support/chromium.ts";
import { startApp, type TestApp, verifyDirectly } from "../app/_harness.ts";

async function apiMe(page: Page): Promise<{ status: number; email?: string }> {
  return await page.evaluate(async () => {
    const res = await fetch("/api/me", {
      headers: { accept: "application/json" },
    });
    return {
      status: res.status,
      email: res.ok ? (await res.json()).email : undefined,
    };
  });
}

/** Clicks "Sign in with a passkey" and answers the JSON the page posted. */
async function passkeyLogin(
  page: Page,
  app: TestApp,
): Promise<Record<string, unknown>> {
  await page.goto(`${app.origin}/login`);
  await page.waitForSelector("#passkey-login:not([hidden])");
  // Resolve only once the server has answered: a caller that replays the
  // body must not race the browser's own request for the challenge.
  const [request] = await Promise.all([
    page.waitForRequest((r) =>
      r.url().endsWith("/passkeys/login") && r.method() === "POST"
    ),
    page.waitForResponse((r) =>
      r.url().endsWith("/passkeys/login") && r.request().method() === "POST"
    ),
    page.click("#passkey-login"),
  ]);
  return request.postDataJSON();
}

type Held = { response: { response: Record<string, string> } };

/**
 * Signs in with the passkey but holds the browser's assertion back (the
 * route answers in its place), so its challenge is still unused.
 */
async function heldBack(page: Page, app: TestApp): Promise<Held> {
  let held: Held | null = null;
  await page.context().clearCookies();
  await page.route("**/passkeys/login", async (route) => {
    held = route.request().postDataJSON();
    await route.fulfill({
      status: 401,
      contentType: "application/json",
      body: "{}",
    });
  });
  await page.goto(`${app.origin}/login`);
  await page.waitForSelector("#passkey-login:not([hidden])");
  await page.click("#passkey-login");
  await page.waitForSelector("#passkey-status:has-text('failed')");
  await page.unroute("**/passkeys/login");
  return held!;
}

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(
    /\//g,
    "_",
  ).replace(/=+$/, "");
}

function unb64url(text: string): Uint8Array {
  return Uint8Array.from(
    atob(text.replace(/-/g, "+").replace(/_/g, "/")),
    (c) => c.charCodeAt(0),
  );
}

async function postLogin(app: TestApp, body: unknown): Promise<number> {
  const res = await fetch(`${app.origin}/passkeys/login`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (Deno.env.get("DEBUG_PASSKEYS")) {
    console.log("postLogin", res.status, text);
  }
  return res.status;
}

Deno.test({
  name:
    "browser: add a passkey on /account, log out, sign in with it from /login, /api/me; revokeAll ends it; refusals of a stale counter, a foreign origin or RP id and a replayed challenge",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, {
      signInEnv: { PASSKEYS: "on", TOTP: "off" },
    });
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: [...ARGS],
      });
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      const { cdp, id } = await authenticator(page);

      // Register with a password, then add a passkey on /account.
      await page.goto(`${app.origin}/register`);
      await page.fill("#email", "passkey@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("button[type=submit]"),
      ]);
      // Issue 16: a passkey needs a verified address.
      await verifyDirectly(app, "passkey@example.com");
      await page.goto(`${app.origin}/account`);
      await page.waitForSelector("#passkey-add:not([hidden])");
      await page.fill("#passkey-name", "Laptop");
      // The session alone adds no passkey: the current password first.
      await page.fill("#passkey-add-password", "not the password");
      await Promise.all([
        page.waitForResponse((r) =>
          r.url().endsWith("/passkeys/register/options") && r.status() === 401
        ),
        page.click("#passkey-add button[type=submit]"),
      ]);
      await page.waitForSelector(
        "#passkey-status:has-text('The current password is incorrect')",
      );
      assert.equal(await page.locator("#passkeys li").count(), 0);
      await page.fill("#passkey-add-password", "correct horse battery");
      await Promise.all([
        page.waitForResponse((r) =>
          r.url().endsWith("/passkeys/register") && r.status() === 201
        ),
        page.click("#passkey-add button[type=submit]"),
      ]);
      await page.waitForSelector("#passkeys li");
      assert.match(await page.textContent("#passkeys") ?? "", /Laptop/);
      const { credentials } = await cdp.send("WebAuthn.getCredentials", {
        authenticatorId: id,
      });
      assert.equal(credentials.length, 1);
      assert.equal(credentials[0].isResidentCredential, true);
      const cloned = credentials[0];

      // Log out; sign in with the passkey alone.
      await Promise.all([
        page.waitForURL(`${app.origin}/login`),
        page.click("nav form[action='/logout'] button"),
      ]);
      assert.equal((await apiMe(page)).status, 401);
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        passkeyLogin(page, app),
      ]);
      const me = await apiMe(page);
      assert.deepEqual(me, { status: 200, email: "passkey@example.com" });
      assert.ok(
        app.logs.some((l) => l.includes('"type":"login","method":"passkey"')),
      );

      // A second sign-in moves the counter on; capture what the page sent.
      await page.context().clearCookies();
      const [sent] = await Promise.all([
        passkeyLogin(page, app),
        page.waitForURL(`${app.origin}/`),
      ]);
      const stored = await cdp.send("WebAuthn.getCredentials", {
        authenticatorId: id,
      });
      assert.ok(
        stored.credentials[0].signCount > cloned.signCount,
        "counter advanced",
      );

      // Replayed challenge: the same assertion again, from elsewhere.
      assert.equal(await postLogin(app, sent), 401);
      assert.ok(app.logs.some((l) => l.includes('"reason":"challenge_used"')));

      // Assertions whose origin or RP id is not the app's (the browser's own
      // bytes, edited): refused before the signature is looked at.
      // The browser's assertion is held back (the route answers in its
      // place), so its challenge is still unused when the edited copies
      // arrive.
      const fresh = await heldBack(page, app);
      const client = JSON.parse(
        new TextDecoder().decode(
          unb64url(fresh.response.response.clientDataJSON),
        ),
      );
      const wrongOrigin = structuredClone(fresh);
      wrongOrigin.response.response.clientDataJSON = b64url(
        new TextEncoder().encode(
          JSON.stringify({ ...client, origin: "https://evil.example.com" }),
        ),
      );
      assert.equal(await postLogin(app, wrongOrigin), 401);
      assert.ok(
        app.logs.some((l) => l.includes('"reason":"origin_mismatch"')),
        app.logs.join("\n"),
      );
      // Each edited copy needs an unused challenge of its own: the
      // challenge is checked (and spent) before the origin.
      const fresh2 = await heldBack(page, app);
      const wrongRp = structuredClone(fresh2);
      const authData = unb64url(fresh2.response.response.authenticatorData);
      authData.set(
        new Uint8Array(
          await crypto.subtle.digest(
            "SHA-256",
            new TextEncoder().encode("evil.example.com"),
          ),
        ),
        0,
      );
      wrongRp.response.response.authenticatorData = b64url(authData);
      assert.equal(await postLogin(app, wrongRp), 401);
      assert.ok(
        app.logs.some((l) => l.includes('"reason":"rp_id_mismatch"')),
        app.logs.join("\n"),
      );

      // A clone of the credential as it was at registration (stale counter),
      // in another browser profile: refused.
      const other = await browser.newContext();
      const clonePage = await other.newPage();
      const clone = await authenticator(clonePage);
      await clone.cdp.send("WebAuthn.addCredential", {
        authenticatorId: clone.id,
        credential: { ...cloned },
      });
      const [cloneSent] = await Promise.all([
        passkeyLogin(clonePage, app),
        clonePage.waitForSelector("#passkey-status:has-text('failed')"),
      ]);
      assert.ok(cloneSent);
      assert.equal((await apiMe(clonePage)).status, 401);
      assert.ok(app.logs.some((l) => l.includes('"reason":"counter_stale"')));

      // The original still works, and revokeAll ends its session.
      await page.context().clearCookies();
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        passkeyLogin(page, app),
      ]);
      assert.equal((await apiMe(page)).status, 200);
      const subject =
        (await app.credentials.findByEmail("passkey@example.com"))!.id;
      await app.sessions.revokeAll(subject);
      app.advance(1000);
      assert.equal((await apiMe(page)).status, 401);

      // Remove the passkey from /account (signed in with the password).
      await page.goto(`${app.origin}/login`);
      await page.fill("#email", "passkey@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("form[action='/login'] button[type=submit]"),
      ]);
      await page.goto(`${app.origin}/account`);
      await page.click("#passkeys li summary");
      await page.fill(
        "form[action='/account/passkeys/delete'] input[name=password]",
        "correct horse battery",
      );
      await Promise.all([
        page.waitForURL(`${app.origin}/account`),
        page.click("form[action='/account/passkeys/delete'] button"),
      ]);
      assert.equal(await page.locator("#passkeys li").count(), 0);
      assert.deepEqual(
        errors.filter((e) => /Content Security Policy/i.test(e)),
        [],
      );
    } finally {
      await browser?.close();
    }
  },
});

Deno.test({
  name:
    "browser: an account without a password confirms it is the user with its passkey, then deletes itself; without that the deletion is refused",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, {
      signInEnv: { PASSKEYS: "on", TOTP: "off" },
    });
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: [...ARGS],
      });
      const page = await browser.newPage();
      await authenticator(page);
      await page.goto(`${app.origin}/register`);
      await page.fill("#email", "nopass@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("button[type=submit]"),
      ]);
      // Issue 16: a passkey needs a verified address.
      await verifyDirectly(app, "nopass@example.com");
      await page.goto(`${app.origin}/account`);
      await page.waitForSelector("#passkey-add:not([hidden])");
      await page.fill("#passkey-add-password", "correct horse battery");
      await Promise.all([
        page.waitForResponse((r) =>
          r.url().endsWith("/passkeys/register") && r.status() === 201
        ),
        page.click("#passkey-add button[type=submit]"),
      ]);
      await page.waitForSelector("#passkeys li");
      // The account loses its password, as one made by a provider has none
      // (the stored marker the app writes for those).
      const subject =
        (await app.credentials.findByEmail("nopass@example.com"))!.id;
      assert.ok(
        await app.credentials.updatePasswordHash(subject, "!oidc-only"),
      );

      await page.goto(`${app.origin}/account`);
      assert.equal(await page.locator("#reauth-needed").count(), 1);
      assert.equal(await page.locator("#delete-password").count(), 0);
      const refused = await page.evaluate(async () =>
        (await fetch("/account/delete", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json",
          },
          body: "{}",
        })).status
      );
      assert.equal(refused, 403);
      assert.notEqual(await app.credentials.findById(subject), null);

      await page.goto(`${app.origin}/account`);
      await page.waitForSelector("#passkey-reauth:not([hidden])");
      await Promise.all([
        page.waitForResponse((r) =>
          r.url().endsWith("/passkeys/reauth") && r.status() === 200
        ),
        page.click("#passkey-reauth"),
      ]);
      await page.waitForSelector("#reauth-fresh");
      assert.ok(
        app.logs.some((l) =>
          l.includes('"type":"reauthenticated","method":"passkey"')
        ),
      );
      await page.click("#delete-account summary");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("#delete-account button[type=submit]"),
      ]);
      assert.equal(await app.credentials.findById(subject), null);
      assert.equal((await apiMe(page)).status, 401);
    } finally {
      await browser?.close();
    }
  },
});
