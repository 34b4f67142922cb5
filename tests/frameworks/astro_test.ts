// examples/astro through Astro's own commands: `npm ci`, this checkout's
// packages from their npm build, the guide's files written over the copy,
// `astro build` with @astrojs/node (standalone), `node
// ./dist/server/entry.mjs`; then every account flow over HTTP through the
// catch-all endpoint, and the app's own page behind the middleware.
import assert from "node:assert/strict";
import {
  ACCOUNTS_PACKAGES,
  freePort,
  prepareExample,
  randomSecret,
  run,
  startServer,
} from "./_support.ts";
import { runFlows, startMailSink } from "./_flows.ts";

Deno.test({
  name:
    "examples/astro: astro build, node ./dist/server/entry.mjs, then every account flow over HTTP",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const install = await prepareExample("astro", ACCOUNTS_PACKAGES, {
      guide: "docs/frameworks/astro.md",
    });
    if (!install.ok) return;
    const DIR = install.dir;
    const mail = startMailSink();
    try {
      const build = await run("npm", ["run", "build"], {
        cwd: DIR,
        // The host Astro may build request URLs from (any port of it).
        env: { APP_ORIGIN: "http://127.0.0.1" },
      });
      assert.ok(build.ok, build.out.slice(-3000));
      const port = freePort();
      const origin = `http://127.0.0.1:${port}`;
      const started = performance.now();
      const server = await startServer(["node", "./dist/server/entry.mjs"], {
        cwd: DIR,
        env: {
          AUTH_SECRET: randomSecret(),
          APP_ORIGIN: origin,
          HOST: "127.0.0.1",
          PORT: String(port),
          RESEND_API_KEY: mail.apiKey,
          RESEND_BASE_URL: mail.url,
        },
        url: `${origin}/login`,
      });
      try {
        await runFlows(t, { origin, mail, page: "/dashboard" });
      } catch (error) {
        console.log(server.output().slice(-3000));
        throw error;
      } finally {
        await server.stop();
      }
      console.log(
        `astro: npm install ${install.ms} ms, astro build ${build.ms} ms, start and flows ${
          Math.round(performance.now() - started)
        } ms`,
      );
    } finally {
      await mail.close();
      await install.remove();
    }
  },
});
