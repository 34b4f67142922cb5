// examples/hono as a user runs it on Deno: the guide's main.ts written over
// a copy, the copy's deno.json pointed at this checkout (its npm entries
// kept), type-checked, then its own `deno task start`, and every account
// flow over HTTP.
import { pathToFileURL } from "node:url";
import { npmImports, workspacePackages } from "../conformance/_import_map.ts";
import {
  freePort,
  guideFiles,
  randomSecret,
  ROOT,
  startServer,
} from "./_support.ts";
import { runFlows, startMailSink } from "./_flows.ts";

/** Copies examples/hono with the guide's files, on this checkout. */
async function prepare(dir: string): Promise<void> {
  for await (const entry of Deno.readDir(`${ROOT}/examples/hono`)) {
    if (entry.isFile) {
      await Deno.copyFile(
        `${ROOT}/examples/hono/${entry.name}`,
        `${dir}/${entry.name}`,
      );
    }
  }
  for (
    const [path, text] of await guideFiles(`${ROOT}/docs/frameworks/hono.md`)
  ) {
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  const config = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`));
  const local: Record<string, string> = {};
  for (const pkg of workspacePackages) {
    for (const [sub, file] of Object.entries(pkg.exports)) {
      local[pkg.name + sub.slice(1)] = pathToFileURL(file).href;
    }
  }
  const own = Object.fromEntries(
    Object.entries(config.imports as Record<string, string>).filter((
      [name],
    ) => !name.startsWith("@portcullis/")),
  );
  config.imports = { ...npmImports, ...own, ...local };
  await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify(config));
  await Deno.copyFile(`${ROOT}/tests/deno.lock`, `${dir}/deno.lock`);
}

Deno.test({
  name: "examples/hono: deno task start, then every account flow over HTTP",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "portcullis-hono-" });
    const mail = startMailSink();
    try {
      await prepare(dir);
      const port = freePort();
      const origin = `http://127.0.0.1:${port}`;
      const started = performance.now();
      const server = await startServer([Deno.execPath(), "task", "start"], {
        cwd: dir,
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
      } catch (error) {
        console.log(server.output().slice(-3000));
        throw error;
      } finally {
        await server.stop();
      }
      console.log(
        `hono: start and flows ${Math.round(performance.now() - started)} ms`,
      );
    } finally {
      await mail.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
