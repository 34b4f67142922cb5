// examples/nextjs through Next's own commands: `npm ci`, this checkout's
// packages from their npm build, the guide's files written over the copy,
// `next build`, `next start`, then every account flow over HTTP through the
// catch-all route handler, and the app's own page behind the edge
// middleware.
import assert from "node:assert/strict";
import {
  ACCOUNTS_PACKAGES,
  freePort,
  prepareExample,
  randomSecret,
  run,
  startServer,
} from "./_support.ts";
import { runFlows, runKitSteps, startMailSink } from "./_flows.ts";

Deno.test({
  name:
    "examples/nextjs: next build, next start, then every account flow over HTTP",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const install = await prepareExample(
      "nextjs",
      [...ACCOUNTS_PACKAGES, "next"],
      { guide: "docs/frameworks/nextjs.md" },
    );
    if (!install.ok) return;
    const DIR = install.dir;
    const mail = startMailSink();
    try {
      const port = freePort();
      const origin = `http://127.0.0.1:${port}`;
      const env = {
        AUTH_SECRET: randomSecret(),
        APP_ORIGIN: origin,
        NEXT_TELEMETRY_DISABLED: "1",
        RESEND_API_KEY: mail.apiKey,
        RESEND_BASE_URL: mail.url,
      };
      const next = `${DIR}/node_modules/next/dist/bin/next`;
      const build = await run("node", [next, "build"], { cwd: DIR, env });
      assert.ok(build.ok, build.out.slice(-3000));
      assert.match(build.out, /Middleware/, "the edge middleware is built");
      const started = performance.now();
      const server = await startServer(
        ["node", next, "start", "-p", String(port), "-H", "127.0.0.1"],
        { cwd: DIR, env, url: `${origin}/login` },
      );
      try {
        await runFlows(t, { origin, mail, page: "/dashboard" });
        // The security kit users run on their own app, on this mount.
        await runKitSteps(t, origin, mail, { totp: true, verification: true });
        await t.step(
          "a public server component reads identity: anonymous and signed in differ",
          async () => {
            const anonymous = await (await fetch(`${origin}/`)).text();
            assert.match(anonymous, /href="\/register"/);
            const login = await fetch(`${origin}/login`, {
              method: "POST",
              redirect: "manual",
              headers: { origin, "sec-fetch-site": "same-origin" },
              body: new URLSearchParams({
                email: "nobody@example.com",
                password: "not a password of anyone",
              }),
            });
            await login.body?.cancel();
            assert.ok(login.status >= 400, "a wrong password signs nobody in");
          },
        );
        await t.step(
          "the edge middleware refuses a cross-site POST to the flows with 403",
          async () => {
            const res = await fetch(`${origin}/register`, {
              method: "POST",
              redirect: "manual",
              headers: {
                origin: "https://evil.example",
                "sec-fetch-site": "cross-site",
                "content-type": "application/json",
              },
              body: JSON.stringify({
                email: "csrf@example.com",
                password: "correct horse battery staple",
              }),
            });
            await res.body?.cancel();
            assert.equal(res.status, 403);
          },
        );
      } catch (error) {
        console.log(server.output().slice(-3000));
        throw error;
      } finally {
        await server.stop();
      }
      console.log(
        `nextjs: npm install ${install.ms} ms, next build ${build.ms} ms, start and flows ${
          Math.round(performance.now() - started)
        } ms`,
      );
    } finally {
      await mail.close();
      await install.remove();
    }
  },
});
