// examples/astro through Astro's own commands: `npm ci`, the core's npm
// tarball, `astro build` with @astrojs/node (standalone), `node
// ./dist/server/entry.mjs`; then the framework scenario over HTTP
// (tests/frameworks/_vite_support.ts).
import {
  cleanExample,
  prepareExample,
  report,
  runScenario,
  startExample,
} from "./_vite_support.ts";

Deno.test("Astro: the middleware, pages and endpoints serve the scenario after astro build with @astrojs/node standalone", async () => {
  try {
    const prepared = await prepareExample("astro", ["npm", "run", "build"], {
      // The host Astro may build request URLs from (any port of it).
      APP_ORIGIN: "http://127.0.0.1",
    });
    if (prepared === null) return;
    let t = performance.now();
    const { base, server } = await startExample(
      ["node", "./dist/server/entry.mjs"],
      prepared.dir,
    );
    const startMs = performance.now() - t;
    try {
      t = performance.now();
      const checks = await runScenario(base);
      report("Astro", prepared, startMs, performance.now() - t, checks);
    } catch (error) {
      console.log(server.output().slice(-4000));
      throw error;
    } finally {
      await server.stop();
    }
  } finally {
    await cleanExample("astro");
  }
});
