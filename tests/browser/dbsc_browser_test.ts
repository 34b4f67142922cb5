/**
 * Device-bound sessions (DBSC) in headless Chromium, end to end, on every
 * runtime entry of the reference app (tests/conformance/entries: Deno,
 * Hono on Deno, Bun, Node, Vercel's edge-runtime, workerd), each started
 * as its conformance run starts it (`startEntry`) and put behind a
 * TLS-terminating proxy on 127.0.0.1 with a certificate made for this run
 * (trusted through `--ignore-certificate-errors-spki-list`, never
 * `--ignore-certificate-errors`). One scenario per entry: registration,
 * the bound cookie, a held request refreshed after the cookie expired, the
 * stolen-cookie test, the unbound cookie captured before registration, a
 * second device signed out from "my sessions" (its refused refresh,
 * `{"continue": false}`, makes Chromium stop trying), logout ending
 * refreshes, and a browser without the feature keeping an ordinary
 * session. One flagged and one plain browser serve every entry; the
 * entries run three at a time.
 *
 * Chromium takes part only with
 * `--enable-features=DeviceBoundSessions,EnableBoundSessionCredentialsSoftwareKeysForManualTesting`
 * (a software key, for tests: no hardware guarantee); its signing quota is
 * turned off here (see `FEATURES`).
 */
import assert from "node:assert/strict";
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, haveChromium } from "../support/chromium.ts";
import { missing } from "../support/services.ts";
import { makeCertificate, run } from "../support/tls_certificate.ts";
import {
  type EntryName,
  EntryUnavailable,
  startEntry,
} from "../conformance/_start_entry.ts";
import { freePort, randomSecret, scratchDir } from "../conformance/_runner.ts";

// `RefreshQuota/false`: Chromium signs at most 6 proofs in 9 minutes per
// site, and renews a cookie that has less than 2 minutes left after each
// request. The 10-second cookie here is within that window from the start,
// so a scenario's requests would use the quota up (it saw 6 signings, then
// a held request let go without a refresh); at the default 10 minutes a
// session signs about once in 8 minutes.
const FEATURES =
  "--enable-features=DeviceBoundSessions:RefreshQuota/false,EnableBoundSessionCredentialsSoftwareKeysForManualTesting";
const LIFETIME = 10; // seconds: the shortest the option allows
const START = "/auth/dbsc/start";
const REFRESH = "/auth/dbsc/refresh";
const BOUND = "__Host-session-bound";
const UNBOUND = "__Host-session";
/** How many entries run at once (2 cores here, shared). */
const LANES = 3;
const ENTRIES: EntryName[] = [
  "deno",
  "hono",
  "bun",
  "node",
  "vercel_edge",
  "cloudflare_workers",
];

/** One registration or refresh request the proxy passed on. */
interface DbscExchange {
  /** When it was answered (mm:ss.mmm). */
  at: string;
  path: typeof START | typeof REFRESH;
  /** Whether it carried a `Secure-Session-Response` proof. */
  proof: boolean;
  status: number;
  /** Whether the answer told the browser to end the session. */
  ended: boolean;
  /** The bound cookie it set, if any. */
  cookie: string | null;
  /** The error code of a refusal. */
  error?: string;
}

/**
 * A TLS-terminating proxy on 127.0.0.1 in front of a plain-HTTP entry: the
 * request goes on with its method, headers and body; the answer comes
 * back as it is (redirects included), decoded. It notes the DBSC
 * exchanges.
 */
function tlsProxy(tls: { cert: string; key: string }, target: string) {
  const exchanges: DbscExchange[] = [];
  /** `Secure-Session-Skipped` values: requests Chromium let go unrenewed. */
  const skipped: string[] = [];
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: tls.cert,
    key: tls.key,
    onListen: () => {},
  }, async (req) => {
    const url = new URL(req.url);
    const skip = req.headers.get("secure-session-skipped");
    if (skip !== null) skipped.push(`${url.pathname}: ${skip}`);
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
    // fetch decoded a compressed body (workerd compresses): it goes on as
    // it is now, without the encoding's headers.
    const headers = new Headers(res.headers);
    headers.delete("content-encoding");
    headers.delete("content-length");
    const init = { status: res.status, statusText: res.statusText, headers };
    const path = url.pathname;
    if (req.method === "POST" && (path === START || path === REFRESH)) {
      const text = await res.text();
      let body: { continue?: boolean; error?: string } = {};
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: no instructions
      }
      const set = res.headers.getSetCookie().join(" ");
      exchanges.push({
        at: new Date().toISOString().slice(14, 23),
        path,
        proof: req.headers.has("secure-session-response"),
        status: res.status,
        ended: body.continue === false,
        cookie: new RegExp(`${BOUND}=([^;]+)`).exec(set)?.[1] ?? null,
        error: body.error,
      });
      return new Response(text, init);
    }
    return new Response(res.body, init);
  });
  return {
    server,
    origin: `https://localhost:${server.addr.port}`,
    exchanges,
    skipped,
    /** When the scenario's steps began, for a slow or failed run. */
    steps: [] as string[],
    /** Chromium's own DBSC events (CDP), for a failure's message. */
    browserEvents: [] as unknown[],
    /** Successful registrations. */
    registered: () =>
      exchanges.filter((e) => e.path === START && e.status === 200).length,
    /** Refreshes that gave a fresh cookie. */
    renewed: () =>
      exchanges.filter((e) =>
        e.path === REFRESH && e.status === 200 && !e.ended
      ).length,
  };
}

/** Polls `check` every 100 ms until it holds, or fails after `ms`. */
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

/** The session token's three parts: subject, jti, expiry (unix seconds). */
function tokenParts(token: string): { jti: string; expiry: number } {
  const [, jti, expiry] = atob(
    token.split(".")[2].replace(/-/g, "+").replace(/_/g, "/"),
  ).split("|");
  return { jti, expiry: Number(expiry) };
}

/** `GET /api/me` as a navigation: the email, or `null` when anonymous. */
async function whoAmI(
  ctx: BrowserContext,
  origin: string,
): Promise<string | null> {
  const page = ctx.pages()[0] ?? await ctx.newPage();
  const res = await page.goto(`${origin}/api/me`);
  if (res!.status() === 401) return null;
  assert.equal(res!.status(), 200);
  return (await res!.json()).email;
}

/** The bound cookie's value in a context, if any. */
async function boundCookie(ctx: BrowserContext) {
  return (await ctx.cookies()).find((c) => c.name === BOUND);
}

/**
 * Records Chromium's DBSC events of a context's first page (CDP
 * `Network.deviceBoundSessionEventOccurred`: registration, challenge,
 * refresh, termination, each with its result).
 */
async function watchDbsc(ctx: BrowserContext, into: unknown[]) {
  const page = ctx.pages()[0] ?? await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  // Not in playwright-core's protocol types yet.
  const send = cdp.send.bind(cdp) as (m: string, p?: object) => Promise<void>;
  await send("Network.enable");
  await send("Network.enableDeviceBoundSessions", { enable: true });
  (cdp as unknown as {
    on(event: string, fn: (e: Record<string, unknown>) => void): void;
  }).on("Network.deviceBoundSessionEventOccurred", (e) => {
    const { sessionId: _, ...rest } = e;
    into.push({ at: new Date().toISOString().slice(14, 23), ...rest });
  });
}

/** Signs up on the app's form; answers the unbound cookie it set. */
async function signUp(
  ctx: BrowserContext,
  origin: string,
  email: string,
): Promise<string> {
  const page = ctx.pages()[0] ?? await ctx.newPage();
  let unbound: string | null = null;
  const seen = (
    res: { url(): string; headerValue(n: string): Promise<string | null> },
  ) =>
    new URL(res.url()).pathname === "/register" &&
    res.headerValue("set-cookie").then((set) => {
      const m = new RegExp(`${UNBOUND}=([^;]+)`).exec(set ?? "");
      if (m) unbound = m[1];
    });
  page.on("response", seen);
  await page.goto(`${origin}/register`);
  await page.fill("#email", email);
  await page.fill("#password", "correct horse battery");
  await Promise.all([
    page.waitForURL(`${origin}/`),
    page.click("main button[type=submit]"),
  ]);
  await waitFor("the sign-in cookie", () => unbound !== null, 5000);
  page.off("response", seen);
  return unbound!;
}

/**
 * Waits for the bound cookie. Chromium registers in the background and, on
 * a loaded machine, sometimes lets an offer pass: every page of an unbound
 * session offers again, as a user's next click would.
 */
async function awaitBound(ctx: BrowserContext, origin: string) {
  const until = Date.now() + 40_000;
  while (!(await boundCookie(ctx))) {
    if (Date.now() > until) throw new Error("the browser never registered");
    try {
      await waitFor(
        "the bound cookie",
        async () => !!(await boundCookie(ctx)),
        8000,
      );
    } catch {
      await (ctx.pages()[0] ?? await ctx.newPage()).goto(`${origin}/`);
    }
  }
}

/**
 * The scenario, on one entry behind the proxy.
 *
 * @param flagged A browser with the DBSC flags.
 * @param plain One without them.
 * @param proxy The TLS proxy in front of the entry.
 * @param upstream The entry itself, over plain HTTP.
 */
async function scenario(
  name: string,
  flagged: Browser,
  plain: Browser,
  proxy: ReturnType<typeof tlsProxy>,
  upstream: string,
) {
  const origin = proxy.origin;
  const email = `${name}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const t0 = performance.now();
  const step = (n: number) =>
    proxy.steps.push(`${n}@${Math.round(performance.now() - t0)}ms`);

  step(1);
  // 1. Sign up; the unbound cookie the sign-in set is captured.
  const a = await flagged.newContext();
  await watchDbsc(a, proxy.browserEvents);
  const unbound = await signUp(a, origin, email);

  step(2);
  // 2. Chromium registers its key: the bound cookie replaces it, once.
  await awaitBound(a, origin);
  assert.equal(proxy.registered(), 1, "one registration succeeded");
  const bound = (await boundCookie(a))!;
  assert.equal(bound.httpOnly, true);
  assert.equal(bound.secure, true);
  assert.ok(
    !(await a.cookies()).some((c) => c.name === UNBOUND),
    "the unbound cookie was cleared",
  );
  assert.equal(await whoAmI(a, origin), email);
  const page = a.pages()[0];
  const sessions = async () =>
    await page.evaluate(async () =>
      (await (await fetch("/api/sessions")).json()).sessions
    ) as { current: boolean; bound: boolean }[];
  assert.deepEqual(
    (await sessions()).filter((s) => s.current).map((s) => s.bound),
    [true],
    "my sessions lists the current session as bound",
  );

  step(3);
  // 3. The unbound cookie captured right after sign-in is dead now.
  const c = await flagged.newContext();
  await c.addCookies([{
    name: UNBOUND,
    value: unbound,
    url: origin,
    secure: true,
    httpOnly: true,
  }]);
  assert.equal(await whoAmI(c, origin), null, "the pre-registration cookie");
  await c.close();

  step(4);
  // 4. The stolen-cookie test: the bound cookie copied into a second
  // context (no key) works at most until its short expiry.
  const b = await flagged.newContext();
  await b.addCookies([{
    name: BOUND,
    value: bound.value,
    url: origin,
    secure: true,
    httpOnly: true,
    expires: Math.floor(Date.now() / 1000) + 3600, // the thief keeps it
  }]);
  assert.equal(await whoAmI(b, origin), email, "the copy works for now");

  step(5);
  // 5. The copy's expiry passes; the first context's next page is held,
  // refreshed with its key, and served. Chromium also renews a cookie of
  // seconds after each request, so the cookie in the first context's jar
  // may be younger than the copy: the page goes out once both have expired
  // (a second past, clear of the moment Chromium decides whether to hold).
  const { jti, expiry } = tokenParts(bound.value);
  assert.ok(
    expiry * 1000 - Date.now() <= LIFETIME * 1000,
    "the bound cookie lives seconds",
  );
  const deadline = Date.now() + 4 * LIFETIME * 1000;
  for (;;) {
    const jar = await boundCookie(a);
    const end = Math.max(expiry, jar?.expires ?? 0) * 1000 + 1000;
    if (jar === undefined && Date.now() >= end) break;
    if (Date.now() > deadline) {
      throw new Error("the bound cookie never expired");
    }
    await new Promise((r) => setTimeout(r, Math.max(100, end - Date.now())));
  }
  assert.equal(await whoAmI(a, origin), email, "the held page is served");
  assert.ok(
    proxy.exchanges.some((e) =>
      e.cookie !== null && !e.ended && tokenParts(e.cookie).jti === jti &&
      tokenParts(e.cookie).expiry > expiry
    ),
    "the key renewed the session's cookie",
  );

  // ...while the thief's copy is anonymous now,
  assert.equal(await whoAmI(b, origin), null, "the stolen copy died");
  await b.close();
  // and a refresh with it fails: the thief reads the session id off the
  // cookie (the payload is not secret) and gets a challenge, but has no
  // key to answer it.
  // The thief's client cannot send Sec- headers from a browser page: it
  // talks to the entry directly.
  const thief = (headers: Record<string, string>) =>
    fetch(`${upstream}${REFRESH}`, {
      method: "POST",
      headers: { cookie: `${BOUND}=${bound.value}`, ...headers },
    });
  const challenged = await thief({ "sec-secure-session-id": jti });
  await challenged.body?.cancel();
  assert.equal(challenged.status, 403);
  const challenge = /^"([^"]+)"/.exec(
    challenged.headers.get("secure-session-challenge")!,
  )![1];
  const forged = await thief({
    "sec-secure-session-id": jti,
    "secure-session-response": await forgedProof(challenge),
  });
  await forged.body?.cancel();
  assert.equal(forged.status, 400);
  assert.equal(forged.headers.getSetCookie().length, 0);

  step(6);
  // 6. A second device signs in and binds; the first signs it out from
  // "my sessions". Its next refresh is refused for good, and the answer
  // (`{"continue": false}`) makes Chromium stop trying: later pages go out
  // anonymous without another attempt.
  const d = await flagged.newContext();
  const dPage = await d.newPage();
  await dPage.goto(`${origin}/login`);
  await dPage.fill("#email", email);
  await dPage.fill("#password", "correct horse battery");
  await Promise.all([
    dPage.waitForURL(`${origin}/`),
    dPage.click("main button[type=submit]"),
  ]);
  await awaitBound(d, origin);
  assert.equal(await whoAmI(d, origin), email);
  const revoked = await page.evaluate(async () => {
    const list = (await (await fetch("/api/sessions")).json()).sessions as {
      id: string;
      current: boolean;
      bound: boolean;
    }[];
    const other = list.find((s) => !s.current && s.bound)!;
    return (await fetch(`/api/sessions/${other.id}`, { method: "DELETE" }))
      .status;
  });
  assert.equal(revoked, 204);
  const afterRevoke = proxy.exchanges.length;
  const refused = () =>
    proxy.exchanges.slice(afterRevoke).filter((e) =>
      e.path === REFRESH && e.proof && (e.status !== 200 || e.ended)
    );
  await d.clearCookies({ name: BOUND }); // as when it expires
  // A renewal that was under way may put a cookie back; its page is
  // anonymous too (the session is revoked), and the refusal comes when
  // that cookie expires.
  await waitFor("the refused refresh", async () => {
    assert.equal(await whoAmI(d, origin), null, "the revoked device");
    return refused().length > 0;
  }, 4 * LIFETIME * 1000);
  for (let i = 0; i < 2; i++) {
    assert.equal(await whoAmI(d, origin), null, "the revoked device");
  }
  assert.equal(refused().length, 1, "one refused refresh, then no more");
  assert.ok(refused()[0].ended, "the refusal ends the session");
  await d.close();

  step(7);
  // 7. "Sign out all other sessions" in the first context keeps it bound:
  // the answer replaces the bound cookie with one of a new session (no
  // ordinary cookie), and once that expires, the key renews it under the
  // session id the browser registered.
  await page.goto(`${origin}/account`);
  await Promise.all([
    page.waitForURL(`${origin}/account`),
    page.click("#revoke-others"),
  ]);
  const kept = await boundCookie(a);
  assert.ok(kept, "a bound cookie");
  assert.ok(
    !(await a.cookies()).some((c) => c.name === UNBOUND),
    "no ordinary session cookie",
  );
  const next = tokenParts(kept.value);
  assert.notEqual(next.jti, jti, "a new session");
  assert.equal(await whoAmI(a, origin), email);
  const renewals = proxy.exchanges.length;
  await a.clearCookies({ name: BOUND }); // as when it expires
  assert.equal(await whoAmI(a, origin), email, "the held page is served");
  assert.ok(
    proxy.exchanges.slice(renewals).some((e) =>
      e.path === REFRESH && e.cookie !== null && !e.ended &&
      tokenParts(e.cookie).jti === next.jti
    ),
    "the key renewed the new session",
  );
  // A JSON sign-in from the page keeps the session bound too, and its
  // answer carries no token: the cookie is the credential.
  const signedIn = await page.evaluate(async (address) => {
    const res = await fetch("/login", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify({
        email: address,
        password: "correct horse battery",
      }),
    });
    return { status: res.status, body: await res.json() };
  }, email);
  assert.equal(signedIn.status, 200);
  assert.equal(signedIn.body.token, undefined, "no token in the body");
  assert.equal(signedIn.body.tokenType, "cookie");
  const relogged = await boundCookie(a);
  assert.ok(relogged && tokenParts(relogged.value).jti !== next.jti);
  assert.ok(!(await a.cookies()).some((c) => c.name === UNBOUND));
  assert.equal(await whoAmI(a, origin), email);

  step(8);
  // 8. Logout in the first context ends refreshing: the bound cookie is
  // cleared and no refresh succeeds after.
  await page.goto(`${origin}/`);
  await Promise.all([
    page.waitForURL(`${origin}/login`),
    page.click("nav form[action='/logout'] button"),
  ]);
  const refreshed = proxy.renewed();
  assert.ok(!(await boundCookie(a)), "the bound cookie was cleared");
  assert.equal(await whoAmI(a, origin), null, "signed out");
  await page.goto(`${origin}/account`);
  assert.equal(await whoAmI(a, origin), null, "still signed out");
  assert.equal(proxy.renewed(), refreshed, "no refresh succeeded");
  await a.close();

  step(9);
  // 9. A browser without the feature flags keeps an ordinary session.
  const p = await plain.newContext();
  const registrations = proxy.exchanges.filter((e) => e.path === START).length;
  await signUp(p, origin, `plain-${email}`);
  assert.equal(await whoAmI(p, origin), `plain-${email}`);
  assert.ok((await p.cookies()).some((x) => x.name === UNBOUND));
  assert.ok(!(await boundCookie(p)));
  assert.equal(
    proxy.exchanges.filter((e) => e.path === START).length,
    registrations,
    "no registration",
  );
  await p.close();
  // Chromium never let a request in scope go without renewing it.
  assert.deepEqual(proxy.skipped, [], "Secure-Session-Skipped");
}

/** A proof signed by a key the server never saw (the thief's own). */
async function forgedProof(challenge: string): Promise<string> {
  const own = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    false,
    ["sign"],
  );
  const b64 = (bytes: Uint8Array) =>
    btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(
      /\//g,
      "_",
    ).replace(/=+$/, "");
  const json = (v: unknown) => b64(new TextEncoder().encode(JSON.stringify(v)));
  const input = `${json({ alg: "ES256", typ: "dbsc+jwt" })}.${
    json({ jti: challenge })
  }`;
  const sig = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    own.privateKey,
    new TextEncoder().encode(input),
  );
  return `${input}.${b64(new Uint8Array(sig))}`;
}

Deno.test({
  name:
    "browser: DBSC on every runtime entry behind a TLS proxy: register → bound cookie → expiry → held request refreshed; a stolen cookie dies and cannot be renewed; the pre-registration cookie is dead; logout ends refreshing; no flags, ordinary session",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    if (!(await haveChromium())) return;
    try {
      await run(["openssl", "version"]);
    } catch {
      missing("openssl is not installed");
      return;
    }
    const t0 = performance.now();
    const dir = await Deno.makeTempDir();
    const tls = await makeCertificate(dir);
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
    const times: string[] = [];
    // Entries run in lanes, each lane one entry after another: the
    // scenario mostly waits for the short cookie to expire.
    const queue = [...ENTRIES];
    const lane = async () => {
      for (let name = queue.shift(); name; name = queue.shift()) {
        const entryName = name;
        await t.step({
          name: entryName,
          sanitizeOps: false,
          sanitizeResources: false,
          sanitizeExit: false,
          fn: async () => {
            const name = entryName;
            const s0 = performance.now();
            const port = freePort();
            const proxy = tlsProxy(tls, `http://127.0.0.1:${port}`);
            const scratch = await scratchDir(`dbsc-${name.replace("_", "-")}`);
            let entry;
            try {
              entry = await startEntry(name, {
                port,
                dir: scratch,
                settings: {
                  APP_ORIGIN: proxy.origin,
                  AUTH_SECRET: randomSecret(),
                  DBSC_COOKIE_LIFETIME: String(LIFETIME),
                },
              });
            } catch (error) {
              await proxy.server.shutdown();
              await Deno.remove(scratch, { recursive: true });
              if (!(error instanceof EntryUnavailable)) throw error;
              missing(`${name}: ${error.message}`);
              return;
            }
            const started = performance.now();
            try {
              await scenario(name, flagged, plain, proxy, entry.url);
            } catch (error) {
              throw new Error(
                `${entry.label}: ${(error as Error).message}\nDBSC requests: ${
                  JSON.stringify(
                    proxy.exchanges.map(({ cookie, ...e }) => ({
                      ...e,
                      cookie: cookie && tokenParts(cookie),
                    })),
                  )
                }\nsteps: ${proxy.steps.join(" ")}\nskipped: ${
                  JSON.stringify(proxy.skipped)
                }\nChromium: ${JSON.stringify(proxy.browserEvents)}\n${
                  entry.output().slice(-2000)
                }`,
                { cause: error },
              );
            } finally {
              await proxy.server.shutdown();
              await entry.stop();
              await Deno.remove(scratch, { recursive: true }).catch(() => {});
            }
            const took = performance.now() - started;
            times.push(
              `${name}: start ${Math.round(started - s0)} ms, scenario ${
                Math.round(took)
              } ms${took > 45_000 ? ` (steps ${proxy.steps.join(" ")})` : ""}`,
            );
          },
        });
      }
    };
    try {
      await Promise.all(Array.from({ length: LANES }, lane));
    } finally {
      await flagged.close();
      await plain.close();
      await Deno.remove(dir, { recursive: true });
      console.log(
        `${times.join("; ")}; total ${Math.round(performance.now() - t0)} ms`,
      );
    }
  },
});
