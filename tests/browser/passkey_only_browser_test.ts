/**
 * Passkey-only accounts, autofill and the WebAuthn Signals in headless
 * Chromium (Debian's, driven by playwright-core) with a CDP virtual
 * authenticator (issue 29): sign-up with an email and a passkey, sign-out,
 * sign-in with the passkey alone; recovery without a passkey (the recovery
 * session adds one and can do nothing else); an attacker's passkey on an
 * unverified account removed by the owner's proof; the Signals the pages
 * send, observed by an init script that wraps `PublicKeyCredential.signal*`
 * and by the virtual authenticator's credential list; the login page's
 * conditional (autofill) request.
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
import {
  addVirtualAuthenticator as authenticator,
  CHROMIUM,
  CHROMIUM_ARGS as ARGS,
  haveChromium,
} from "../support/chromium.ts";
import { startApp, type TestApp } from "../app/_harness.ts";

/**
 * Records every call the page makes to the Signals API and to
 * `navigator.credentials.get` (its mediation), into `window.__calls`, then
 * lets the browser's own function run.
 */
const RECORDER = `
  window.__calls = [];
  const P = window.PublicKeyCredential;
  for (const name of ["signalUnknownCredential", "signalAllAcceptedCredentials", "signalCurrentUserDetails"]) {
    const own = P && P[name];
    if (!P) continue;
    P[name] = function (options) {
      window.__calls.push({ name, options: JSON.parse(JSON.stringify(options)) });
      return typeof own === "function" ? own.call(P, options) : Promise.resolve();
    };
  }
  const get = navigator.credentials.get.bind(navigator.credentials);
  navigator.credentials.get = function (options) {
    window.__calls.push({ name: "get", options: { mediation: options && options.mediation || "optional" } });
    return get(options);
  };
  const create = navigator.credentials.create.bind(navigator.credentials);
  navigator.credentials.create = function (options) {
    window.__calls.push({ name: "create", options: { mediation: options && options.mediation || "optional" } });
    return create(options);
  };
`;

type Call = { name: string; options: Record<string, unknown> };

async function calls(page: Page, name?: string): Promise<Call[]> {
  const all = await page.evaluate(() =>
    (globalThis as unknown as { __calls: Call[] }).__calls
  );
  return name ? all.filter((c) => c.name === name) : all;
}

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

async function launch(): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...ARGS],
  });
}

async function newPage(browser: Browser): Promise<
  { context: BrowserContext; page: Page }
> {
  const context = await browser.newContext();
  await context.addInitScript(RECORDER);
  const page = await context.newPage();
  return { context, page };
}

/** Signs up on /passkeys/signup; lands on `/`. */
async function signUp(page: Page, app: TestApp, email: string): Promise<void> {
  await page.goto(`${app.origin}/passkeys/signup`);
  await page.waitForSelector("#passkey-signup-button:not([disabled])");
  await page.fill("#signup-email", email);
  await Promise.all([
    page.waitForURL(`${app.origin}/`),
    page.click("#passkey-signup-button"),
  ]);
}

async function signInWithButton(page: Page, app: TestApp): Promise<number> {
  await page.goto(`${app.origin}/login`);
  await page.waitForSelector("#passkey-login:not([hidden])");
  const [res] = await Promise.all([
    page.waitForResponse((r) =>
      r.url().endsWith("/passkeys/login") && r.request().method() === "POST"
    ),
    page.click("#passkey-login"),
  ]);
  return res.status();
}

Deno.test({
  name:
    "browser: passkey-only sign-up, sign-out and sign-in with the passkey alone; the login page's email field makes a conditional (autofill) request",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, {
      signInEnv: { PASSKEYS: "on", TOTP: "off" },
    });
    const browser = await launch();
    try {
      const { page } = await newPage(browser);
      const { cdp, id } = await authenticator(page, { autofill: true });
      await signUp(page, app, "solo@example.com");
      assert.deepEqual(await apiMe(page), {
        status: 200,
        email: "solo@example.com",
      });
      assert.match(await page.textContent("main") ?? "", /account is ready/);
      const { credentials } = await cdp.send("WebAuthn.getCredentials", {
        authenticatorId: id,
      });
      assert.equal(credentials.length, 1);
      assert.equal(credentials[0].isResidentCredential, true);
      const user = (await app.credentials.findByEmail("solo@example.com"))!;
      assert.match(user.passwordHash, /^!/, "no password");

      // Sign out: the login page's email field offers the passkey in its
      // autofill (a conditional request); the virtual authenticator picks
      // it at once, as a user choosing it from the list, and the page signs
      // in without anything typed or clicked.
      const [autofilled] = await Promise.all([
        page.waitForResponse((r) =>
          r.url().endsWith("/passkeys/login") && r.request().method() === "POST"
        ),
        page.click("nav form[action='/logout'] button"),
      ]);
      assert.equal(autofilled.status(), 200);
      await page.waitForURL(`${app.origin}/`);
      assert.deepEqual(await apiMe(page), {
        status: 200,
        email: "solo@example.com",
      });
      // The login page's own markup and request, looked at without the
      // passkey (a new authenticator holds none, so the request waits).
      const bare = await newPage(browser);
      await authenticator(bare.page, { autofill: true });
      await bare.page.goto(`${app.origin}/login`);
      assert.equal(
        await bare.page.getAttribute("#email", "autocomplete"),
        "username webauthn",
      );
      await bare.page.waitForFunction(() =>
        (globalThis as unknown as { __calls: Call[] }).__calls.some((c) =>
          c.name === "get" && c.options.mediation === "conditional"
        )
      );
      // Without autofill (a browser that has none), the button signs in.
      const button = await newPage(browser);
      const second = await authenticator(button.page);
      await second.cdp.send("WebAuthn.addCredential", {
        authenticatorId: second.id,
        credential: (await cdp.send("WebAuthn.getCredentials", {
          authenticatorId: id,
        })).credentials[0],
      });
      await Promise.all([
        button.page.waitForURL(`${app.origin}/`),
        signInWithButton(button.page, app),
      ]);
      assert.deepEqual(await apiMe(button.page), {
        status: 200,
        email: "solo@example.com",
      });
      assert.equal(
        (await calls(button.page, "get")).filter((c) =>
          c.options.mediation === "conditional"
        ).length,
        0,
      );
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "browser: without JavaScript the login page still signs in with a password, and the sign-up page points to registration",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, {
      signInEnv: { PASSKEYS: "on", TOTP: "off" },
    });
    const browser = await launch();
    try {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(`${app.origin}/passkeys/signup`);
      assert.ok(
        await page.isVisible(
          "noscript a[href='/register'], a[href='/register']",
        ),
      );
      await page.goto(`${app.origin}/register`);
      await page.fill("#email", "nojs@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("main button[type=submit]"),
      ]);
      await page.click("nav form[action='/logout'] button");
      await page.waitForURL(`${app.origin}/login`);
      assert.equal(await page.isVisible("#passkey-login"), false);
      await page.fill("#email", "nojs@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("form[action='/login'] button[type=submit]"),
      ]);
      assert.match(await page.textContent("main") ?? "", /nojs@example\.com/);
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "browser: recovery without a passkey: the mailed link starts a session that is refused elsewhere (403) and adds a passkey, which signs in",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, {
      signInEnv: { PASSKEYS: "on", TOTP: "off" },
    });
    const browser = await launch();
    try {
      const first = await newPage(browser);
      const old = await authenticator(first.page);
      await signUp(first.page, app, "lost@example.com");
      const subject = (await app.credentials.findByEmail("lost@example.com"))!
        .id;
      await app.credentials.markVerified(subject, "lost@example.com", 1);
      await app.awaitLink("lost@example.com");

      // A new device, without the passkey.
      const { page } = await newPage(browser);
      const fresh = await authenticator(page);
      await page.goto(`${app.origin}/login`);
      await Promise.all([
        page.waitForURL(`${app.origin}/passkeys/recover`),
        page.click("a[href='/passkeys/recover']"),
      ]);
      await page.fill("#recover-email", "lost@example.com");
      await Promise.all([
        page.waitForURL(`${app.origin}/login`),
        page.click("main button[type=submit]"),
      ]);
      await page.goto(await app.awaitLink("lost@example.com", 2));
      await Promise.all([
        page.waitForURL(`${app.origin}/passkeys/recover/session`),
        page.click("main button[type=submit]"),
      ]);
      // Anything else is refused while the recovery lasts.
      const account = await page.goto(`${app.origin}/account`);
      assert.equal(account?.status(), 403);
      assert.match(
        await page.textContent("body") ?? "",
        /can only add a passkey or set a password/,
      );
      const deleted = await page.evaluate(async () =>
        (await fetch("/account/delete", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json",
          },
          body: "{}",
        })).status
      );
      assert.equal(deleted, 403);
      assert.notEqual(await app.credentials.findById(subject), null);

      await page.goto(`${app.origin}/passkeys/recover/session`);
      await page.waitForSelector("#passkey-recover-add:not([hidden])");
      await page.fill("#recover-passkey-name", "New phone");
      await Promise.all([
        page.waitForURL(`${app.origin}/account`),
        page.click("#passkey-recover-add button[type=submit]"),
      ]);
      assert.deepEqual(await apiMe(page), {
        status: 200,
        email: "lost@example.com",
      });
      assert.match(await page.textContent("#passkeys") ?? "", /New phone/);
      const made = await fresh.cdp.send("WebAuthn.getCredentials", {
        authenticatorId: fresh.id,
      });
      assert.equal(made.credentials.length, 1);
      // The first device's session ended with the recovery.
      assert.equal((await apiMe(first.page)).status, 401);
      assert.equal(
        (await old.cdp.send("WebAuthn.getCredentials", {
          authenticatorId: old.id,
        })).credentials.length,
        1,
      );
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "browser: an attacker's passkey on an unverified account is removed by the owner's proof; its sign-in is refused and the page signals the credential unknown",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, {
      signInEnv: { PASSKEYS: "on", TOTP: "off" },
    });
    const browser = await launch();
    try {
      const attacker = await newPage(browser);
      const key = await authenticator(attacker.page, { autofill: true });
      await signUp(attacker.page, app, "victim@example.com");
      const credentialId = (await key.cdp.send("WebAuthn.getCredentials", {
        authenticatorId: key.id,
      })).credentials[0].credentialId;

      // The owner opens the mailed link in their own browser.
      const owner = await newPage(browser);
      await owner.page.goto(await app.awaitLink("victim@example.com"));
      await Promise.all([
        owner.page.waitForURL(`${app.origin}/`),
        owner.page.click("main form[action='/verify'] button[type=submit]"),
      ]);
      const subject =
        (await app.credentials.findByEmail("victim@example.com"))!.id;
      assert.ok((await app.credentials.findById(subject))!.verifiedAt > 0);
      assert.deepEqual(
        await app.query(
          `SELECT credential_id FROM passkeys WHERE user_id = '${subject}'`,
        ),
        [],
      );
      assert.equal((await apiMe(attacker.page)).status, 401);

      // The attacker's passkey signs in to nothing (offered by the login
      // page's autofill), and its page tells the browser that the server
      // does not know it; Chromium's virtual authenticator then drops it.
      const [refused] = await Promise.all([
        attacker.page.waitForResponse((r) =>
          r.url().endsWith("/passkeys/login") && r.request().method() === "POST"
        ),
        attacker.page.goto(`${app.origin}/login`),
      ]);
      assert.equal(refused.status(), 401);
      await attacker.page.waitForSelector(
        "#passkey-status:has-text('not known')",
      );
      await attacker.page.waitForFunction(() =>
        (globalThis as unknown as { __calls: Call[] }).__calls.some((c) =>
          c.name === "signalUnknownCredential"
        )
      );
      const signalled = await calls(attacker.page, "signalUnknownCredential");
      assert.equal(signalled.length, 1);
      const expected = btoa(
        String.fromCharCode(
          ...Uint8Array.from(atob(credentialId), (c) => c.charCodeAt(0)),
        ),
      ).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      assert.deepEqual(signalled[0].options, {
        rpId: "localhost",
        credentialId: expected,
      });
      assert.equal((await apiMe(attacker.page)).status, 401);
      assert.equal(
        (await key.cdp.send("WebAuthn.getCredentials", {
          authenticatorId: key.id,
        })).credentials.length,
        0,
      );
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "browser: the account page signals the accepted credentials and the user's details on each visit: after a passkey is removed, and after an email change",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, {
      signInEnv: { PASSKEYS: "on", TOTP: "off" },
    });
    const browser = await launch();
    try {
      const { page } = await newPage(browser);
      const { cdp, id } = await authenticator(page);
      await signUp(page, app, "sig@example.com");
      const subject = (await app.credentials.findByEmail("sig@example.com"))!
        .id;
      await app.credentials.markVerified(subject, "sig@example.com", 1);
      const userId = btoa(subject).replace(/\+/g, "-").replace(/\//g, "_")
        .replace(/=+$/, "");
      const [cred] = (await cdp.send("WebAuthn.getCredentials", {
        authenticatorId: id,
      })).credentials;
      const credId = btoa(
        String.fromCharCode(
          ...Uint8Array.from(atob(cred.credentialId), (c) => c.charCodeAt(0)),
        ),
      ).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

      await page.goto(`${app.origin}/account`);
      await page.waitForFunction(() =>
        (globalThis as unknown as { __calls: Call[] }).__calls.length >= 2
      );
      assert.deepEqual(
        (await calls(page, "signalAllAcceptedCredentials"))[0].options,
        { rpId: "localhost", userId, allAcceptedCredentialIds: [credId] },
      );
      assert.deepEqual(
        (await calls(page, "signalCurrentUserDetails"))[0].options,
        {
          rpId: "localhost",
          userId,
          name: "sig@example.com",
          displayName: "sig@example.com",
        },
      );

      // Confirm it's me with the passkey, then remove it.
      await page.waitForSelector("#passkey-reauth:not([hidden])");
      await Promise.all([
        page.waitForResponse((r) =>
          r.url().endsWith("/passkeys/reauth") && r.status() === 200
        ),
        page.click("#passkey-reauth"),
      ]);
      await page.waitForSelector("#reauth-fresh");
      await page.click("#passkeys li summary");
      await Promise.all([
        page.waitForURL(`${app.origin}/account`),
        page.click("form[action='/account/passkeys/delete'] button"),
      ]);
      assert.equal(await page.locator("#passkeys li").count(), 0);
      await page.waitForFunction(() =>
        (globalThis as unknown as { __calls: Call[] }).__calls.some((c) =>
          c.name === "signalAllAcceptedCredentials"
        )
      );
      assert.deepEqual(
        (await calls(page, "signalAllAcceptedCredentials"))[0].options,
        { rpId: "localhost", userId, allAcceptedCredentialIds: [] },
      );
      // Chromium's virtual authenticator acts on the signal: the passkey
      // the server no longer accepts is gone from it.
      const left = await cdp.send("WebAuthn.getCredentials", {
        authenticatorId: id,
      });
      assert.equal(left.credentials.length, 0);

      // An email change: the next visit names the new address.
      await app.credentials.updateEmail(subject, "moved@example.com", {
        verifiedAt: 1,
      });
      await page.goto(`${app.origin}/account`);
      await page.waitForFunction(() =>
        (globalThis as unknown as { __calls: Call[] }).__calls.some((c) =>
          c.name === "signalCurrentUserDetails"
        )
      );
      assert.equal(
        (await calls(page, "signalCurrentUserDetails"))[0].options.name,
        "moved@example.com",
      );
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "browser: after a password sign-in the page asks for a passkey by conditional create (no dialog), feature-detected with getClientCapabilities()",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    await using app = await startApp({}, {
      signInEnv: { PASSKEYS: "on", TOTP: "off" },
    });
    const browser = await launch();
    try {
      const { page } = await newPage(browser);
      const { cdp, id } = await authenticator(page);
      await page.goto(`${app.origin}/register`);
      await page.fill("#email", "upgrade@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("main button[type=submit]"),
      ]);
      const subject =
        (await app.credentials.findByEmail("upgrade@example.com"))!.id;
      await app.credentials.markVerified(subject, "upgrade@example.com", 1);
      await page.click("nav form[action='/logout'] button");
      await page.waitForURL(`${app.origin}/login`);
      await page.fill("#email", "upgrade@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${app.origin}/`),
        page.click("form[action='/login'] button[type=submit]"),
      ]);
      const capable = await page.evaluate(async () =>
        (await (globalThis as unknown as {
          PublicKeyCredential: {
            getClientCapabilities?: () => Promise<Record<string, boolean>>;
          };
        }).PublicKeyCredential.getClientCapabilities?.())?.conditionalCreate ===
          true
      );
      // The page's script asks (a create call recorded), or says why not.
      await page.waitForFunction(() =>
        (globalThis as unknown as {
            document: { documentElement: { dataset: Record<string, string> } };
          }).document.documentElement.dataset.passkeyUpgrade !== undefined ||
        (globalThis as unknown as { __calls: Call[] }).__calls.some((c) =>
          c.name === "create"
        )
      );
      await new Promise((r) => setTimeout(r, 2000));
      const outcome = await page.getAttribute(
        "html",
        "data-passkey-upgrade",
      );
      const made = (await cdp.send("WebAuthn.getCredentials", {
        authenticatorId: id,
      })).credentials.length;
      // Chromium says it can, and the page asks without a dialog. Whether a
      // passkey is made is the password manager's choice (a password it
      // saved and filled for this account): headless Chromium has none, so
      // the request waits and nothing is made. The server's side (the
      // options, the passkey stored, passkey_added) is tested with a
      // software passkey in tests/accounts/passkey_upgrade_test.ts.
      assert.equal(capable, true);
      assert.equal(await page.locator("#passkey-upgrade").count(), 1);
      assert.deepEqual(
        (await calls(page, "create")).map((c) => c.options.mediation),
        ["conditional"],
      );
      assert.equal(outcome, null, "the request still waits");
      assert.equal(made, 0);
    } finally {
      await browser.close();
    }
  },
});
