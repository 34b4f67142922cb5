/**
 * Conformance of the reference app inside Hono (entries/hono.ts) on Deno: the whole
 * contract through Hono's router (the reference app mounted as Hono's
 * catch-all), plus checks of Hono routes guarded by portcullis middleware
 * through lib/http/adapters/hono.ts, on the same sessions; TOTP, passkeys
 * and OpenID Connect (against oidc-provider) on. The start is
 * `startEntry("hono")` (_start_entry.ts).
 *
 * Usage: `deno run -A tests/conformance/run_hono.ts`
 *
 * @module
 */
import assert from "node:assert/strict";
import { runEntry } from "./_run_entry.ts";

await runEntry("hono", async (origin, result) => {
  async function honoCheck(name: string, fn: () => Promise<void>) {
    try {
      await fn();
      result.passed++;
      console.log(`ok - ${name}`);
    } catch (error) {
      result.failed++;
      console.log(`FAIL - ${name}: ${(error as Error).message}`);
    }
  }

  const email = `hono-${crypto.randomUUID()}@example.com`;
  const reg = await fetch(origin + "/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "correct horse battery staple" }),
  });
  const { token, subject } = await reg.json();

  await honoCheck(
    "Hono route behind requireAuth(): a Bearer token from /register works",
    async () => {
      const r = await fetch(origin + "/hono/me", {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), { subject, via: "hono" });
    },
  );
  await honoCheck(
    "Hono route behind requireAuth(): anonymous API call answers 401",
    async () => {
      const r = await fetch(origin + "/hono/me", {
        headers: { accept: "application/json" },
      });
      await r.body?.cancel();
      assert.equal(r.status, 401);
    },
  );
  await honoCheck(
    "Hono route behind requireAuth(): a browser is sent to /login?next=",
    async () => {
      const r = await fetch(origin + "/hono/me", {
        headers: { accept: "text/html", "sec-fetch-mode": "navigate" },
        redirect: "manual",
      });
      await r.body?.cancel();
      assert.equal(r.status, 303);
      assert.equal(r.headers.get("location"), "/login?next=%2Fhono%2Fme");
    },
  );
  await honoCheck(
    "Hono route: a cross-site POST with a cookie answers 403 before the route",
    async () => {
      const r = await fetch(origin + "/hono/echo", {
        method: "POST",
        headers: {
          cookie: `__Host-session=${token}`,
          "sec-fetch-site": "cross-site",
          origin: "https://evil.example",
        },
        body: "x",
      });
      await r.body?.cancel();
      assert.equal(r.status, 403);
    },
  );
  await honoCheck(
    "Hono route: a same-origin POST with the cookie reaches the route",
    async () => {
      const r = await fetch(origin + "/hono/echo", {
        method: "POST",
        headers: {
          cookie: `__Host-session=${token}`,
          "sec-fetch-site": "same-origin",
          origin,
        },
        body: "x",
      });
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), { subject, body: "x" });
    },
  );
});
