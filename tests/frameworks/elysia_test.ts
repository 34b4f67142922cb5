// examples/elysia through Bun: `npm ci`, this checkout's packages from their
// npm build, the guide's file written over the copy, then `bun run
// src/index.ts` (Bun from the repository's node_modules, which
// tests/run_all.ts installs from tests/conformance/npm_packages.json, or
// BUN_BIN); then every account flow over HTTP through the catch-all, and
// the app's own page.
import {
  ACCOUNTS_PACKAGES,
  freePort,
  prepareExample,
  randomSecret,
  ROOT,
  startServer,
} from "./_support.ts";
import { runFlows, startMailSink } from "./_flows.ts";
import { missing } from "../support/services.ts";

Deno.test({
  name:
    "examples/elysia: bun run src/index.ts, then every account flow over HTTP",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const bun = Deno.env.get("BUN_BIN") ?? `${ROOT}/node_modules/.bin/bun`;
    try {
      await Deno.stat(bun);
    } catch {
      missing(
        "Bun is not installed in node_modules (tests/run_all.ts does it)",
      );
      return;
    }
    const install = await prepareExample("elysia", ACCOUNTS_PACKAGES, {
      guide: "docs/frameworks/elysia.md",
    });
    if (!install.ok) return;
    const DIR = install.dir;
    const mail = startMailSink();
    try {
      const port = freePort();
      const origin = `http://127.0.0.1:${port}`;
      const started = performance.now();
      const server = await startServer([bun, "run", "src/index.ts"], {
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
        `elysia: npm install ${install.ms} ms, start and flows ${
          Math.round(performance.now() - started)
        } ms`,
      );
    } finally {
      await mail.close();
      await install.remove();
    }
  },
});
