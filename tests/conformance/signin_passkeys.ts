/**
 * The passkey rows of the sign-in contract (signin_contract.ts): headless
 * Chromium (Debian's, driven by playwright-core) with a CDP virtual
 * authenticator (`WebAuthn.addVirtualAuthenticator`) against the app the
 * runtime serves. One browser per conformance run.
 *
 * The app's origin is `http://localhost:<port>`: WebAuthn refuses an IP
 * address as the relying party id (Chromium: "This is an invalid domain"),
 * and `localhost` is a secure context, so the `__Host-` cookies hold.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "playwright-core";
import {
  addVirtualAuthenticator as authenticator,
  CHROMIUM,
  CHROMIUM_ARGS,
} from "../support/chromium.ts";
import type { SignInContext } from "./_signin_services.ts";
import { brief } from "./signin_contract.ts";

/** `GET /api/me` from the page, with the browser's cookies. */
async function apiMe(
  page: Page,
): Promise<{ status: number; email?: string }> {
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

/**
 * Runs the passkey rows.
 *
 * @param c The contract's helpers.
 */
export async function runPasskeyRows(c: SignInContext): Promise<void> {
  try {
    await Deno.stat(CHROMIUM);
  } catch {
    await c.missing(
      `passkey rows: Chromium is not installed at ${CHROMIUM} (apt-get install chromium)`,
    );
    return;
  }
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS],
    });
  } catch (error) {
    await c.missing(
      `passkey rows: Chromium did not start: ${(error as Error).message}`,
    );
    return;
  }
  try {
    await rows(c, browser);
  } finally {
    await browser.close();
  }
}

async function rows(c: SignInContext, browser: Browser): Promise<void> {
  const { check, base } = c;
  const email = c.email("passkey");
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  const { cdp, id } = await authenticator(page);
  let sent: unknown = null;

  await check(
    "passkeys: in Chromium with a virtual authenticator, a signed-in user adds a passkey on /account",
    async () => {
      await page.goto(`${base}/register`);
      await page.fill("#email", email);
      await page.fill("#password", c.password);
      await Promise.all([
        page.waitForURL(`${base}/`),
        page.click("button[type=submit]"),
      ]);
      await c.verify(email);
      await page.goto(`${base}/account`);
      await page.waitForSelector("#passkey-add:not([hidden])");
      await page.fill("#passkey-name", "Conformance key");
      // Adding a passkey re-checks the current password.
      await page.fill("#passkey-add-password", c.password);
      const [registered] = await Promise.all([
        page.waitForResponse((r) =>
          r.url().endsWith("/passkeys/register") &&
          r.request().method() === "POST"
        ),
        page.click("#passkey-add button[type=submit]"),
      ]);
      // (The page reloads after it: the status says enough.)
      assert.equal(registered.status(), 201);
      await page.waitForSelector("#passkeys li");
      assert.match(
        await page.textContent("#passkeys") ?? "",
        /Conformance key/,
      );
      const { credentials } = await cdp.send("WebAuthn.getCredentials", {
        authenticatorId: id,
      });
      assert.equal(credentials.length, 1);
      assert.equal(credentials[0].isResidentCredential, true);
    },
  );

  await check(
    "passkeys: after logout, the passkey alone signs in from /login (no email typed); /api/me accepts the session",
    async () => {
      await Promise.all([
        page.waitForURL(`${base}/login`),
        page.click("nav form[action='/logout'] button"),
      ]);
      assert.equal((await apiMe(page)).status, 401);
      await page.waitForSelector("#passkey-login:not([hidden])");
      // Resolve once the server has answered, so a replay cannot race the
      // browser's own request for the single-use challenge.
      const [request, response] = await Promise.all([
        page.waitForRequest((r) =>
          r.url().endsWith("/passkeys/login") && r.method() === "POST"
        ),
        page.waitForResponse((r) =>
          r.url().endsWith("/passkeys/login") &&
          r.request().method() === "POST"
        ),
        page.waitForURL(`${base}/`),
        page.click("#passkey-login"),
      ]);
      // (The body is gone once the page navigated: the status says enough.)
      assert.equal(response.status(), 200);
      sent = request.postDataJSON();
      assert.deepEqual(await apiMe(page), { status: 200, email });
    },
  );

  await check(
    "passkeys: the same assertion posted again is refused (401), its challenge spent",
    async () => {
      assert.ok(sent, "the browser's assertion was captured");
      const r = await fetch(`${base}/passkeys/login`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(sent),
      });
      const text = await r.text();
      assert.equal(
        r.status,
        401,
        brief({ ...r, text, json: () => JSON.parse(text) }),
      );
      assert.equal(r.headers.getSetCookie().length, 0, "no cookie set");
    },
  );

  await check(
    "passkeys: POST /account/sessions/revoke-others (revokeAll) ends the session the passkey gave",
    async () => {
      const session = async () =>
        (await page.context().cookies(base)).find((k) =>
          /^(__Host-)?session$/.test(k.name)
        );
      const before = await session();
      assert.ok(before, "the passkey session's cookie");
      const answer = await page.evaluate(async () => {
        const res = await fetch("/account/sessions/revoke-others", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json",
          },
          body: "{}",
        });
        return {
          redirected: res.redirected,
          url: res.url,
          body: await res.text(),
        };
      });
      // A cookie session gets the new cookie and the account page, never
      // the new token in a body a script could read.
      assert.ok(answer.redirected, "303 to the account page");
      assert.ok(answer.url.endsWith("/account"), answer.url);
      assert.doesNotMatch(answer.body, /"token"/);
      const after = await session();
      assert.ok(after && after.value !== before.value, "a new session cookie");
      const old = await c.call("GET", "/api/me", {
        cookie: `${before.name}=${before.value}`,
      });
      assert.equal(old.status, 401, "the passkey session ended");
      assert.deepEqual(await apiMe(page), { status: 200, email });
      assert.deepEqual(
        errors.filter((e) => /Content Security Policy/i.test(e)),
        [],
        "no CSP violation on the passkey pages",
      );
    },
  );
}
