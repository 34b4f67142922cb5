/**
 * Device-bound sessions (DBSC) in headless Chromium, end to end, against a
 * small Deno server built with the library and served over TLS with a
 * certificate made for this run (trusted through
 * `--ignore-certificate-errors-spki-list`, never
 * `--ignore-certificate-errors`): registration, the bound cookie, a held
 * request refreshed after the cookie expired, the stolen-cookie test, the
 * unbound cookie captured before registration, logout ending refreshes,
 * and a browser without the feature keeping an ordinary session.
 *
 * Chromium takes part only with
 * `--enable-features=DeviceBoundSessions,EnableBoundSessionCredentialsSoftwareKeysForManualTesting`
 * (a software key, for tests: no hardware guarantee).
 */
import assert from "node:assert/strict";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import {
  compose,
  currentIdentity,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  SecretProvider,
  SessionManager,
  signIn,
  signOut,
} from "../../mod.ts";
import { SecurityEvents } from "../../lib/events/mod.ts";
import { CHROMIUM, CHROMIUM_ARGS, haveChromium } from "../support/chromium.ts";
import { missing } from "../support/services.ts";
import { startApp } from "../app/_harness.ts";

const FEATURES =
  "--enable-features=DeviceBoundSessions,EnableBoundSessionCredentialsSoftwareKeysForManualTesting";
const LIFETIME = 10; // seconds: the shortest the option allows

async function run(cmd: string[], stdin?: Uint8Array): Promise<Uint8Array> {
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    await w.write(stdin);
    await w.close();
  }
  const out = await child.output();
  if (!out.success) {
    throw new Error(
      `${cmd[0]} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return out.stdout;
}

/** A self-signed P-256 certificate for localhost and its SPKI hash. */
async function makeCertificate(dir: string) {
  await run([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    `${dir}/key.pem`,
    "-out",
    `${dir}/cert.pem`,
    "-days",
    "1",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost",
  ]);
  const pub = await run([
    "openssl",
    "x509",
    "-in",
    `${dir}/cert.pem`,
    "-pubkey",
    "-noout",
  ]);
  const der = await run(["openssl", "pkey", "-pubin", "-outform", "der"], pub);
  const hash = await crypto.subtle.digest(
    "SHA-256",
    der as Uint8Array<ArrayBuffer>,
  );
  return {
    cert: await Deno.readTextFile(`${dir}/cert.pem`),
    key: await Deno.readTextFile(`${dir}/key.pem`),
    spki: btoa(String.fromCharCode(...new Uint8Array(hash))),
  };
}

function startServer(tls: { cert: string; key: string }) {
  const kv = new MemoryKV();
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(
      btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
    ),
    store: new KVSessionStore(kv),
  });
  const counts = { bound: 0, refreshed: 0, refused: 0 };
  const events = new SecurityEvents({
    hook: (e) => {
      if (e.type === "session_bound") counts.bound++;
      if (e.type === "session_refreshed") counts.refreshed++;
      if (e.type === "binding_proof_refused") counts.refused++;
    },
  });
  const handler = compose(
    [identityMiddleware(sessions, {
      deviceBound: { store: kv, cookieLifetime: LIFETIME },
      securityEvents: events,
      onEvent: () => {},
    })],
    async (req) => {
      const path = new URL(req.url).pathname;
      const html = (body: string, init: ResponseInit = {}) =>
        new Response(`<!doctype html><meta charset=utf-8>${body}`, {
          ...init,
          headers: {
            "content-type": "text/html; charset=utf-8",
            "cache-control": "no-store",
            ...init.headers,
          },
        });
      if (path === "/login" && req.method === "POST") {
        const s = await signIn(req, "alice");
        return new Response(null, {
          status: 303,
          headers: { location: "/", "set-cookie": s.setCookie! },
        });
      }
      if (path === "/logout" && req.method === "POST") {
        const out = await signOut(req);
        return new Response(null, {
          status: 303,
          headers: { location: "/", "set-cookie": out.clearCookie! },
        });
      }
      if (path === "/") {
        const id = currentIdentity(req);
        return html(
          `<p id=who>${id ? id.subject : "anonymous"}</p><p id=binding>${
            id?.binding ?? "none"
          }</p><form method=post action=/login><button id=login>in</button></form><form method=post action=/logout><button id=logout>out</button></form>`,
        );
      }
      return new Response("not found", { status: 404 });
    },
  );
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: tls.cert,
    key: tls.key,
    onListen: () => {},
  }, (req) => handler(req));
  // The same server state over plain HTTP, for requests a browser cannot
  // make (a thief's hand-made refresh with Sec- headers).
  const plain = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => handler(req),
  );
  return {
    server,
    plain,
    origin: `https://localhost:${server.addr.port}`,
    plainOrigin: `http://127.0.0.1:${plain.addr.port}`,
    counts,
  };
}

async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 15000,
) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function text(ctx: BrowserContext, origin: string) {
  const page = ctx.pages()[0] ?? await ctx.newPage();
  await page.goto(`${origin}/`);
  return {
    who: await page.textContent("#who"),
    binding: await page.textContent("#binding"),
  };
}

Deno.test({
  name:
    "browser: DBSC register → bound cookie → expiry → held request refreshed; a stolen cookie dies and cannot be renewed; logout ends refreshing; no flags, ordinary session",
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
    const { server, plain: plainServer, origin, plainOrigin, counts } =
      startServer(tls);
    const args = [
      ...CHROMIUM_ARGS,
      `--ignore-certificate-errors-spki-list=${tls.spki}`,
    ];
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...args, FEATURES],
    });
    try {
      // 1. Sign in; capture the unbound cookie the sign-in set.
      const a = await browser.newContext();
      const page = await a.newPage();
      let unbound: string | null = null;
      page.on("response", async (res) => {
        if (new URL(res.url()).pathname === "/login") {
          const set = await res.headerValue("set-cookie");
          const m = /__Host-session=([^;]+)/.exec(set ?? "");
          if (m) unbound = m[1];
        }
      });
      await page.goto(`${origin}/`);
      await Promise.all([
        page.waitForURL(`${origin}/`),
        page.click("#login"),
      ]);
      assert.ok(unbound, "the sign-in set an unbound cookie");
      // 2. Chromium registers its key: the bound cookie replaces it.
      // Chromium registers in the background; on a loaded machine it
      // sometimes lets an offer pass. Every page of an unbound session
      // offers again, as a user's next click would.
      for (let attempt = 0; counts.bound === 0 && attempt < 4; attempt++) {
        try {
          await waitFor("registration", () => counts.bound === 1, 8000);
        } catch {
          await page.goto(`${origin}/`);
        }
      }
      assert.equal(counts.bound, 1, `registered (refused: ${counts.refused})`);
      await waitFor(
        "the bound cookie",
        async () =>
          (await a.cookies()).some((c) => c.name === "__Host-session-bound"),
      );
      const cookies = await a.cookies();
      const bound = cookies.find((c) => c.name === "__Host-session-bound")!;
      assert.equal(bound.httpOnly, true);
      assert.equal(bound.secure, true);
      assert.ok(!cookies.some((c) => c.name === "__Host-session"));
      assert.deepEqual(await text(a, origin), {
        who: "alice",
        binding: "device",
      });

      // 3. The unbound cookie captured right after sign-in is dead now.
      const c = await browser.newContext();
      await c.addCookies([{
        name: "__Host-session",
        value: unbound!,
        url: origin,
        secure: true,
        httpOnly: true,
      }]);
      assert.deepEqual(await text(c, origin), {
        who: "anonymous",
        binding: "none",
      });
      await c.close();

      // 4. The stolen-cookie test: the bound cookie copied into a second
      // context (no key) works at most until its short expiry.
      const b = await browser.newContext();
      await b.addCookies([{
        name: "__Host-session-bound",
        value: bound.value,
        url: origin,
        secure: true,
        httpOnly: true,
        expires: Math.floor(Date.now() / 1000) + 3600, // the thief keeps it
      }]);
      assert.equal((await text(b, origin)).who, "alice");

      // 5. The cookie expires; the first context's next page is held,
      // refreshed with its key, and served.
      const refreshedBefore = counts.refreshed;
      await new Promise((r) => setTimeout(r, (LIFETIME + 2) * 1000));
      assert.deepEqual(await text(a, origin), {
        who: "alice",
        binding: "device",
      });
      assert.ok(counts.refreshed > refreshedBefore, "a refresh happened");

      // ...while the thief's copy is anonymous now,
      assert.deepEqual(await text(b, origin), {
        who: "anonymous",
        binding: "none",
      });
      // and a refresh with it fails: the thief can read the session id off
      // the cookie (the payload is not secret) and gets a challenge, but
      // has no key to answer it.
      const id = atob(
        bound.value.split(".")[2].replace(/-/g, "+").replace(/_/g, "/"),
      ).split("|")[1];
      const thief = (headers: Record<string, string>) =>
        fetch(`${plainOrigin}/auth/dbsc/refresh`, {
          method: "POST",
          headers: {
            cookie: `__Host-session-bound=${bound.value}`,
            ...headers,
          },
        });
      const challenged = await thief({ "sec-secure-session-id": id });
      assert.equal(challenged.status, 403);
      const challenge = /^"([^"]+)"/.exec(
        challenged.headers.get("secure-session-challenge")!,
      )![1];
      const own = await crypto.subtle.generateKey(
        { name: "ECDSA", namedCurve: "P-256" },
        false,
        ["sign"],
      );
      const b64 = (v: unknown) =>
        btoa(JSON.stringify(v)).replace(/\+/g, "-").replace(/\//g, "_")
          .replace(/=+$/, "");
      const input = `${b64({ alg: "ES256", typ: "dbsc+jwt" })}.${
        b64({ jti: challenge })
      }`;
      const sig = new Uint8Array(
        await crypto.subtle.sign(
          { name: "ECDSA", hash: "SHA-256" },
          own.privateKey,
          new TextEncoder().encode(input),
        ),
      );
      const forged = await thief({
        "sec-secure-session-id": id,
        "secure-session-response": `${input}.${
          btoa(String.fromCharCode(...sig)).replace(/\+/g, "-").replace(
            /\//g,
            "_",
          ).replace(/=+$/, "")
        }`,
      });
      assert.equal(forged.status, 400);
      assert.equal(forged.headers.getSetCookie().length, 0);
      await forged.body?.cancel();
      await b.close();

      // 6. Logout in the first context ends refreshing.
      await page.goto(`${origin}/`);
      await Promise.all([
        page.waitForURL(`${origin}/`),
        page.click("#logout"),
      ]);
      const afterLogout = counts.refreshed;
      await new Promise((r) => setTimeout(r, (LIFETIME + 2) * 1000));
      assert.deepEqual(await text(a, origin), {
        who: "anonymous",
        binding: "none",
      });
      assert.equal(counts.refreshed, afterLogout, "no refresh succeeded");
      await a.close();
    } finally {
      await browser.close();
    }

    // 7. A browser without the feature flags keeps an ordinary session.
    const plain = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args,
    });
    try {
      const ctx = await plain.newContext();
      const p = await ctx.newPage();
      await p.goto(`${origin}/`);
      const boundBefore = counts.bound;
      await Promise.all([p.waitForURL(`${origin}/`), p.click("#login")]);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(counts.bound, boundBefore, "no registration");
      assert.deepEqual(await text(ctx, origin), {
        who: "alice",
        binding: "none",
      });
      assert.ok((await ctx.cookies()).some((x) => x.name === "__Host-session"));
    } finally {
      await plain.close();
      await server.shutdown();
      await plainServer.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/**
 * A TLS-terminating proxy on 127.0.0.1 in front of a plain-HTTP server:
 * the request goes on with its method, headers and body; the answer comes
 * back as it is (redirects included).
 */
function tlsProxy(tls: { cert: string; key: string }) {
  let target = "";
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: tls.cert,
    key: tls.key,
    onListen: () => {},
  }, async (req) => {
    const url = new URL(req.url);
    const res = await fetch(`${target}${url.pathname}${url.search}`, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      redirect: "manual",
    });
    return new Response(res.body, res);
  });
  return {
    server,
    origin: `https://localhost:${server.addr.port}`,
    to(origin: string) {
      target = origin;
    },
  };
}

/** Waits for the bound cookie; a page of the unbound session offers again. */
async function awaitBound(
  ctx: BrowserContext,
  page: Page,
  origin: string,
): Promise<void> {
  const bound = async () =>
    (await ctx.cookies()).some((c) => c.name === "__Host-session-bound");
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      return await waitFor("the bound cookie", bound, 8000);
    } catch {
      await page.goto(`${origin}/`);
    }
  }
  assert.ok(await bound(), "the browser registered");
}

Deno.test({
  name:
    "browser: the reference app (Deno entry) behind a TLS proxy binds the session on registration, renews it, and lists it as bound",
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
    const proxy = tlsProxy(tls);
    await using app = await startApp({
      appOrigin: proxy.origin,
      deviceBound: { cookieLifetime: LIFETIME },
    });
    proxy.to(app.origin);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        ...CHROMIUM_ARGS,
        `--ignore-certificate-errors-spki-list=${tls.spki}`,
        FEATURES,
      ],
    });
    try {
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      await page.goto(`${proxy.origin}/register`);
      await page.fill("#email", "bound@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${proxy.origin}/`),
        page.click("button[type=submit]"),
      ]);
      await awaitBound(ctx, page, proxy.origin);
      assert.ok(
        !(await ctx.cookies()).some((c) => c.name === "__Host-session"),
        "the unbound cookie was cleared",
      );
      const sessions = async () =>
        await page.evaluate(async () =>
          (await (await fetch("/api/sessions")).json()).sessions
        ) as { current: boolean; bound: boolean }[];
      const listed = await sessions();
      assert.deepEqual(
        listed.filter((s) => s.current).map((s) => s.bound),
        [true],
      );
      // The bound cookie expires; the next page is held, renewed, served.
      await new Promise((r) => setTimeout(r, (LIFETIME + 2) * 1000));
      assert.ok(
        !(await ctx.cookies()).some((c) => c.name === "__Host-session-bound"),
        "the browser dropped the expired cookie",
      );
      await page.goto(`${proxy.origin}/account`);
      assert.equal(new URL(page.url()).pathname, "/account");
      assert.ok(
        (await ctx.cookies()).some((c) => c.name === "__Host-session-bound"),
        "renewed",
      );
      assert.equal((await sessions()).filter((s) => s.current).length, 1);
    } finally {
      await browser.close();
      await proxy.server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "browser: the Bun entry behind a TLS proxy binds the session, and a missing bound cookie is renewed by the browser's key",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await haveChromium())) return;
    // Loaded here, not at the top: only this test needs the runners.
    const { freePort, randomSecret, spawnServer, waitForHttp } = await import(
      "../conformance/_runner.ts"
    );
    const { linkPackageForBun, ROOT } = await import(
      "../conformance/_import_map.ts"
    );
    const bun = `${ROOT}/node_modules/.bin/bun`;
    try {
      await Deno.stat(bun);
      await run(["openssl", "version"]);
    } catch {
      missing("Bun (tests/run_all.ts installs it) or openssl is not installed");
      return;
    }
    await linkPackageForBun();
    const dir = await Deno.makeTempDir();
    const tls = await makeCertificate(dir);
    const proxy = tlsProxy(tls);
    const port = freePort();
    const entry = spawnServer(
      [bun, "run", "--no-install", "tests/conformance/entries/bun.ts"],
      {
        PORT: String(port),
        APP_ORIGIN: proxy.origin,
        AUTH_SECRET: randomSecret(),
        DATABASE_URL: `file:${dir}/app.db`,
      },
    );
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        ...CHROMIUM_ARGS,
        `--ignore-certificate-errors-spki-list=${tls.spki}`,
        FEATURES,
      ],
    });
    try {
      const upstream = `http://127.0.0.1:${port}`;
      assert.ok(
        await waitForHttp(`${upstream}/`, 30_000, () => true),
        `Bun did not start: ${entry.output()}`,
      );
      proxy.to(upstream);
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      await page.goto(`${proxy.origin}/register`);
      await page.fill("#email", "bun@example.com");
      await page.fill("#password", "correct horse battery");
      await Promise.all([
        page.waitForURL(`${proxy.origin}/`),
        page.click("button[type=submit]"),
      ]);
      await awaitBound(ctx, page, proxy.origin);
      const first = (await ctx.cookies()).find((c) =>
        c.name === "__Host-session-bound"
      )!.value;
      // The cookie is gone (as when it expires): the page is held and the
      // browser renews the session with its key before it is served.
      await ctx.clearCookies({ name: "__Host-session-bound" });
      await page.goto(`${proxy.origin}/account`);
      assert.equal(new URL(page.url()).pathname, "/account");
      const renewed = (await ctx.cookies()).find((c) =>
        c.name === "__Host-session-bound"
      );
      // Only the refresh sets the bound cookie (within the same second it
      // is the same token: same jti, same expiry).
      assert.ok(renewed, "the bound cookie is back");
      assert.equal(
        renewed.value.split(".")[2].length,
        first.split(".")[2].length,
      );
    } finally {
      await browser.close();
      await entry.stop();
      await proxy.server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
