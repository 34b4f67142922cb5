// examples/sveltekit through SvelteKit's own commands: `npm ci`, this
// checkout's packages from their npm build, the guide's files written over
// the copy, `vite build` with @sveltejs/adapter-node, `node build`; then
// every account flow over HTTP through the handle hook, and the app's own
// page.
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
    "examples/sveltekit: vite build, node build, then every account flow over HTTP",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const install = await prepareExample("sveltekit", ACCOUNTS_PACKAGES, {
      guide: "docs/frameworks/sveltekit.md",
    });
    if (!install.ok) return;
    const DIR = install.dir;
    const mail = startMailSink();
    try {
      const build = await run("npm", ["run", "build"], { cwd: DIR });
      assert.ok(build.ok, build.out.slice(-3000));
      const port = freePort();
      const origin = `http://127.0.0.1:${port}`;
      const started = performance.now();
      const server = await startServer(["node", "build"], {
        cwd: DIR,
        env: {
          AUTH_SECRET: randomSecret(),
          APP_ORIGIN: origin,
          ORIGIN: origin, // adapter-node's own
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
        `sveltekit: npm install ${install.ms} ms, vite build ${build.ms} ms, start and flows ${
          Math.round(performance.now() - started)
        } ms`,
      );
    } finally {
      await mail.close();
      await install.remove();
    }
  },
});
