// examples/nextjs through Next's own commands: `npm ci`, this checkout's
// @portcullis/auth and @portcullis/next tarballs, `next build`, `next start`,
// then the shared scenario and what only Next has (a server action).
import assert from "node:assert/strict";
import {
  freePort,
  prepareExample,
  randomSecret,
  run,
  runAuthScenario,
  startServer,
} from "./_support.ts";

Deno.test({
  name:
    "examples/nextjs: next build, next start, then the auth scenario over HTTP",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const install = await prepareExample("nextjs", [".", "packages/next"]);
    if (!install.ok) return;
    const DIR = install.dir;
    try {
      const port = freePort();
      const origin = `http://127.0.0.1:${port}`;
      const env = {
        AUTH_SECRET: randomSecret(),
        APP_ORIGIN: origin,
        NEXT_TELEMETRY_DISABLED: "1",
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
        const { alice, bob } = await runAuthScenario(t, {
          origin,
          routes: {
            register: "/api/register",
            login: "/api/login",
            logout: "/api/logout",
            page: "/dashboard",
            me: "/api/me",
            notes: "/api/notes",
          },
          // redirect() inside a server component answers 307.
          pageRedirects: [303, 307],
        });

        await t.step(
          "a server action reads identity through headers(); a cross-site post to it is 403",
          async () => {
            const page = await fetch(`${origin}/dashboard`, {
              headers: { cookie: bob.cookie, accept: "text/html" },
            });
            const html = await page.text();
            assert.equal(page.status, 200);
            const field = html.match(/name="(\$ACTION_ID_[0-9a-f]+)"/)?.[1];
            assert.ok(field, "the form carries the action's id");
            const post = (text: string, headers: Record<string, string>) => {
              const body = new FormData();
              body.set(field, "");
              body.set("text", text);
              return fetch(`${origin}/dashboard`, {
                method: "POST",
                redirect: "manual",
                headers: {
                  cookie: bob.cookie,
                  accept: "text/html",
                  ...headers,
                },
                body,
              });
            };
            const ok = await post("from an action", {
              origin,
              "sec-fetch-site": "same-origin",
            });
            await ok.body?.cancel();
            assert.ok(ok.status < 400, `the action answered ${ok.status}`);
            const forged = await post("forged by an action", {
              origin: "https://evil.example",
              "sec-fetch-site": "cross-site",
            });
            await forged.body?.cancel();
            assert.equal(forged.status, 403);
            const list = await fetch(`${origin}/api/notes`, {
              headers: { cookie: bob.cookie },
            });
            const texts = (await list.json() as { text: string }[]).map((n) =>
              n.text
            );
            assert.ok(texts.includes("from an action"), JSON.stringify(texts));
            assert.ok(!texts.includes("forged by an action"));
            const alices = await fetch(`${origin}/api/notes`, {
              headers: { cookie: alice.cookie },
            });
            assert.ok(!(await alices.text()).includes("from an action"));
          },
        );

        await t.step(
          "a public server component reads identity: anonymous and signed in differ",
          async () => {
            const anonymous = await (await fetch(`${origin}/`)).text();
            const signedIn = await (await fetch(`${origin}/`, {
              headers: { cookie: alice.cookie },
            })).text();
            assert.match(anonymous, /Sign in or register/);
            assert.match(signedIn, /Signed in/);
          },
        );
      } catch (error) {
        console.log(server.output().slice(-3000));
        throw error;
      } finally {
        await server.stop();
      }
      console.log(
        `nextjs: npm install ${install.ms} ms, next build ${build.ms} ms, start and scenario ${
          Math.round(performance.now() - started)
        } ms`,
      );
    } finally {
      await install.remove();
    }
  },
});
