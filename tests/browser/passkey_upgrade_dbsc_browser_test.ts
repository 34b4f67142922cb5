/**
 * The automatic passkey upgrade and device-bound sessions in headless
 * Chromium (Debian's, playwright-core), the reference app's Deno entry
 * behind a TLS-terminating proxy on 127.0.0.1 with a certificate made for
 * this run (trusted through `--ignore-certificate-errors-spki-list`), as
 * the DBSC browser test does. The upgrade right is good only for the
 * session the password sign-in started, and a device-bound session never
 * carries one: this test measures how the two meet in a real browser.
 *
 * A stand-in password manager answers the page's conditional create at
 * once (the request goes to the CDP virtual authenticator as a modal one):
 * the earliest a passkey could be sent. Headless Chromium has no password
 * manager of its own, so without it the request would wait forever.
 *
 * - With DBSC (`--enable-features=DeviceBoundSessions,…SoftwareKeys…`):
 *   every upgrade request that carries the bound cookie is refused (403
 *   `upgrade_unavailable`); a passkey is made only if the page's requests
 *   beat the registration with the ordinary session (the right's intended
 *   use); after the binding no page loads the attempt. The order seen is
 *   printed (measured: the registration follows the sign-in's answer by
 *   tens of milliseconds and comes first, so the silent upgrade is
 *   skipped).
 * - Without DBSC: the page makes its passkey (201).
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Browser, chromium } from "playwright-core";
import { mailRecorder } from "@portcullis/accounts/testing";
import {
  addVirtualAuthenticator,
  CHROMIUM,
  CHROMIUM_ARGS,
  haveChromium,
} from "../support/chromium.ts";
import { missing } from "../support/services.ts";
import { makeCertificate, run } from "../support/tls_certificate.ts";
import { EntryUnavailable, startEntry } from "../conformance/_start_entry.ts";
import { freePort, randomSecret, scratchDir } from "../conformance/_runner.ts";

const FEATURES =
  "--enable-features=DeviceBoundSessions:RefreshQuota/false,EnableBoundSessionCredentialsSoftwareKeysForManualTesting";
const PASSWORD = "correct horse battery";

/** A password manager that answers a conditional create at once. */
const INSTANT_CREATE = `{
  const create = navigator.credentials.create.bind(navigator.credentials);
  navigator.credentials.create = (o) => {
    const { mediation, ...rest } = o ?? {};
    return create(rest);
  };
}`;

/** One request the proxy passed on, in the order of the answers. */
interface Seen {
  /** Milliseconds since the proxy started, when the request arrived. */
  at: number;
  /** Milliseconds since the proxy started, when its answer came back. */
  done: number;
  method: string;
  path: string;
  /** Which cookies it carried: ordinary session, bound session, right. */
  ordinary: boolean;
  bound: boolean;
  right: boolean;
  status: number;
  /** The `error` of a JSON refusal. */
  error?: string;
}

/** A TLS-terminating proxy on 127.0.0.1 that notes every request. */
function tlsProxy(tls: { cert: string; key: string }, target: string) {
  const seen: Seen[] = [];
  const t0 = performance.now();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: tls.cert,
    key: tls.key,
    onListen: () => {},
  }, async (req) => {
    const url = new URL(req.url);
    const at = Math.round(performance.now() - t0);
    const cookie = req.headers.get("cookie") ?? "";
    let res: Response;
    try {
      res = await fetch(`${target}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        redirect: "manual",
      });
    } catch {
      return new Response("the entry is gone", { status: 502 });
    }
    const headers = new Headers(res.headers);
    headers.delete("content-encoding");
    headers.delete("content-length");
    const text = await res.text();
    let error: string | undefined;
    if (url.pathname.startsWith("/passkeys/upgrade")) {
      try {
        error = JSON.parse(text).error;
      } catch {
        // not JSON
      }
    }
    seen.push({
      at,
      done: Math.round(performance.now() - t0),
      method: req.method,
      path: url.pathname,
      ordinary: /(^|; )__Host-session=/.test(cookie),
      bound: /(^|; )__Host-session-bound=/.test(cookie),
      right: /(^|; )__Host-passkey-upgrade=/.test(cookie),
      status: res.status,
      error,
    });
    return new Response(text, {
      status: res.status,
      statusText: res.statusText,
      headers,
    });
  });
  return {
    server,
    origin: `https://localhost:${server.addr.port}`,
    seen,
  };
}

/** What one browser did after its password sign-in. */
interface Outcome {
  /** `data-passkey-upgrade` on the page: the script's outcome. */
  result: string | null;
  /** The requests from the sign-in on. */
  after: Seen[];
  /** The upgrade marker on the next page, after everything settled. */
  markerLater: number;
}

/**
 * Registers, proves the address, signs out, signs in with the password,
 * and waits for the page's upgrade to finish one way or the other. `binds`:
 * the browser has DBSC on, so its registration binds its session.
 */
async function signInAndUpgrade(
  browser: Browser,
  origin: string,
  email: string,
  read: (address: string) => Promise<string | null>,
  proxy: ReturnType<typeof tlsProxy>,
  binds: boolean,
): Promise<Outcome> {
  const ctx = await browser.newContext();
  try {
    const page = await ctx.newPage();
    await addVirtualAuthenticator(page);
    await ctx.addInitScript(INSTANT_CREATE);
    await page.goto(`${origin}/register`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    const registered = proxy.seen.length;
    await Promise.all([
      page.waitForURL(`${origin}/`),
      page.click("main button[type=submit]"),
    ]);
    if (binds) {
      // The registration's answer offers a binding, and a request sent
      // while it is on the wire goes with the cookie it revokes (answered
      // as signed out, see docs/security.md): wait for the binding, then
      // load the page with the bound cookie. The upgrade is what this tests.
      const bound = () =>
        proxy.seen.slice(registered).some((s) =>
          s.path === "/auth/dbsc/start" && s.status === 200
        );
      // (A loaded Chromium sometimes lets an offer pass: then nothing binds.)
      for (let i = 0; i < 100 && !bound(); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      await page.goto(`${origin}/`);
    }
    let link: string | null = null;
    for (let i = 0; i < 50 && link === null; i++) {
      link = await read(email);
      if (link === null) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(link, "the verification mail");
    const u = new URL(link);
    await page.goto(`${origin}${u.pathname}${u.search}`);
    if (new URL(page.url()).pathname !== "/") {
      await Promise.all([
        page.waitForURL(`${origin}/`),
        page.click("main button[type=submit]"),
      ]);
    }
    await page.click("nav form[action='/logout'] button");
    await page.waitForURL(`${origin}/login`);
    // The login page's own requests (autofill) settle first.
    await new Promise((r) => setTimeout(r, 1000));
    const from = proxy.seen.length;
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await Promise.all([
      page.waitForURL(`${origin}/`),
      page.click("form[action='/login'] button[type=submit]"),
    ]);
    await page.waitForFunction(
      () =>
        (globalThis as unknown as {
          document: { documentElement: { dataset: Record<string, string> } };
        }).document.documentElement.dataset.passkeyUpgrade !== undefined,
      undefined,
      { timeout: 15000 },
    ).catch(() => {});
    // A registration still in flight settles.
    await new Promise((r) => setTimeout(r, 2000));
    const result = await page.getAttribute("html", "data-passkey-upgrade");
    await page.goto(`${origin}/account`);
    const markerLater = await page.locator("#passkey-upgrade").count();
    return {
      result,
      after: proxy.seen.slice(from).filter((s) =>
        !s.path.startsWith("/assets") && s.path !== "/style.css" &&
        s.path !== "/favicon.ico"
      ),
      markerLater,
    };
  } finally {
    await ctx.close();
  }
}

function describe(o: Outcome): string {
  return o.after.map((s) =>
    `${s.at}–${s.done}ms ${s.method} ${s.path} [${
      [s.ordinary && "ordinary", s.bound && "bound", s.right && "right"]
        .filter(Boolean).join("+")
    }] ${s.status}${s.error ? ` ${s.error}` : ""}`
  ).join("\n");
}

Deno.test({
  name:
    "browser: the passkey upgrade in Chromium with and without DBSC: a bound session's upgrade requests are refused and nothing is added after the binding; without DBSC the page makes its passkey",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    try {
      await run(["openssl", "version"]);
    } catch {
      missing("openssl is not installed");
      return;
    }
    const dir = await Deno.makeTempDir();
    const tls = await makeCertificate(dir);
    const recorder = mailRecorder();
    const sink = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      recorder.fetch,
    );
    const port = freePort();
    const proxy = tlsProxy(tls, `http://127.0.0.1:${port}`);
    const scratch = await scratchDir("upgrade-dbsc");
    let entry;
    try {
      entry = await startEntry("deno", {
        port,
        dir: scratch,
        settings: {
          APP_ORIGIN: proxy.origin,
          AUTH_SECRET: randomSecret(),
          PASSKEYS: "on",
          TOTP: "off",
          RESEND_API_KEY: recorder.apiKey,
          RESEND_BASE_URL: `http://127.0.0.1:${sink.addr.port}`,
        },
      });
    } catch (error) {
      await proxy.server.shutdown();
      await sink.shutdown();
      if (!(error instanceof EntryUnavailable)) throw error;
      missing(`deno: ${error.message}`);
      return;
    }
    const args = [
      ...CHROMIUM_ARGS,
      `--ignore-certificate-errors-spki-list=${tls.spki}`,
    ];
    const flagged = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...args, FEATURES],
    });
    const plain = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args,
    });
    try {
      // With DBSC.
      const bound = await signInAndUpgrade(
        flagged,
        proxy.origin,
        "bound@example.com",
        recorder.read,
        proxy,
        true,
      );
      console.log(
        `with DBSC: data-passkey-upgrade=${bound.result}\n${describe(bound)}`,
      );
      const trace = describe(bound);
      const start = bound.after.findIndex((s) =>
        s.path === "/auth/dbsc/start" && s.status === 200
      );
      assert.ok(start >= 0, `the browser bound its session:\n${trace}`);
      const upgrades = bound.after.filter((s) =>
        s.path.startsWith("/passkeys/upgrade")
      );
      for (const s of upgrades) {
        if (s.bound) {
          assert.equal(s.status, 403, trace);
          assert.equal(s.error, "upgrade_unavailable", trace);
        }
      }
      const made = bound.after.findIndex((s) =>
        s.path === "/passkeys/upgrade" && s.status === 201
      );
      if (made >= 0) {
        // Only the sign-in's own ordinary session, sent before the binding
        // was answered (the binding revokes it, and the right with it).
        assert.ok(bound.after[made].ordinary && !bound.after[made].bound);
        assert.ok(bound.after[made].at <= bound.after[start].done, trace);
        assert.equal(bound.result, "created", trace);
      } else {
        assert.ok(
          bound.result === "upgrade_unavailable" ||
            bound.result === "unauthenticated",
          `the page records the refusal:\n${trace}`,
        );
      }
      assert.equal(bound.markerLater, 0, "the bound session's pages load none");

      // Without DBSC.
      const ordinary = await signInAndUpgrade(
        plain,
        proxy.origin,
        "plain@example.com",
        recorder.read,
        proxy,
        false,
      );
      console.log(
        `without DBSC: data-passkey-upgrade=${ordinary.result}\n${
          describe(ordinary)
        }`,
      );
      assert.equal(ordinary.result, "created", describe(ordinary));
      assert.ok(
        !ordinary.after.some((s) => s.path === "/auth/dbsc/start"),
        "no binding without the flags",
      );
      assert.equal(ordinary.markerLater, 0, "the right is spent");
    } finally {
      await flagged.close();
      await plain.close();
      await entry.stop();
      await proxy.server.shutdown();
      await sink.shutdown();
      await Deno.remove(scratch, { recursive: true });
      await Deno.remove(dir, { recursive: true });
    }
  },
});
