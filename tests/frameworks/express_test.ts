// examples/express as a user runs it: `npm ci`, this checkout's packages
// from their npm build, `node server.mjs` (JavaScript with JSDoc types: no
// build step), then every account flow over HTTP and the app's own page.
import assert from "node:assert/strict";
import {
  ACCOUNTS_PACKAGES,
  freePort,
  prepareExample,
  randomSecret,
  startServer,
} from "./_support.ts";
import { runFlows, runKitSteps, startMailSink } from "./_flows.ts";

Deno.test({
  name: "examples/express: node server.mjs, then every account flow over HTTP",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const install = await prepareExample("express", ACCOUNTS_PACKAGES, {
      guide: "docs/frameworks/express.md",
    });
    if (!install.ok) return;
    const DIR = install.dir;
    const mail = startMailSink();
    try {
      const port = freePort();
      const origin = `http://127.0.0.1:${port}`;
      const started = performance.now();
      const server = await startServer(["node", "server.mjs"], {
        cwd: DIR,
        env: {
          AUTH_SECRET: randomSecret(),
          APP_ORIGIN: origin,
          PORT: String(port),
          RESEND_API_KEY: mail.apiKey,
          RESEND_BASE_URL: mail.url,
        },
        url: `${origin}/login`,
      });
      try {
        await runFlows(t, { origin, mail, page: "/dashboard" });
        // The security kit users run on their own app, on this mount.
        await runKitSteps(t, origin, mail, { totp: true, verification: true });
        await t.step(
          "a malformed JSON body is a 400 without a stack trace",
          async () => {
            const res = await fetch(`${origin}/login`, {
              method: "POST",
              headers: { "content-type": "application/json", origin },
              body: "{not json",
            });
            const text = await res.text();
            assert.equal(res.status, 400);
            assert.doesNotMatch(text, /at .*\.m?js:\d+/);
          },
        );
        await t.step(
          "the app's own form route: express.urlencoded after the gate",
          async () => {
            const anonymous = await fetch(`${origin}/feedback`, {
              method: "POST",
              headers: { origin, accept: "application/json" },
              body: new URLSearchParams({ text: "hi" }),
            });
            await anonymous.body?.cancel();
            assert.equal(anonymous.status, 401);
          },
        );
      } catch (error) {
        console.log(server.output().slice(-3000));
        throw error;
      } finally {
        await server.stop();
      }
      console.log(
        `express: npm install ${install.ms} ms, start and flows ${
          Math.round(performance.now() - started)
        } ms`,
      );
    } finally {
      await mail.close();
      await install.remove();
    }
  },
});
