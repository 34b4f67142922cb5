// examples/express as a user runs it: `npm ci`, this checkout's
// @portcullis/auth tarball, `node server.mjs` (JavaScript with JSDoc types:
// no build step), then the shared scenario and a malformed body.
import assert from "node:assert/strict";
import {
  freePort,
  prepareExample,
  randomSecret,
  runAuthScenario,
  startServer,
} from "./_support.ts";

Deno.test({
  name: "examples/express: node server.mjs, then the auth scenario over HTTP",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const install = await prepareExample("express", ["."]);
    if (!install.ok) return;
    const DIR = install.dir;
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
        },
        url: `${origin}/login`,
      });
      try {
        await runAuthScenario(t, {
          origin,
          routes: {
            register: "/api/register",
            login: "/api/login",
            logout: "/api/logout",
            page: "/dashboard",
            me: "/api/me",
            notes: "/api/notes",
          },
        });
        await t.step(
          "a malformed JSON body is a 400 without a stack trace",
          async () => {
            const res = await fetch(`${origin}/api/login`, {
              method: "POST",
              headers: { "content-type": "application/json", origin },
              body: "{not json",
            });
            const text = await res.text();
            assert.equal(res.status, 400);
            assert.doesNotMatch(text, /at .*\.m?js:\d+/);
          },
        );
      } catch (error) {
        console.log(server.output().slice(-3000));
        throw error;
      } finally {
        await server.stop();
      }
      console.log(
        `express: npm install ${install.ms} ms, start and scenario ${
          Math.round(performance.now() - started)
        } ms`,
      );
    } finally {
      await install.remove();
    }
  },
});
