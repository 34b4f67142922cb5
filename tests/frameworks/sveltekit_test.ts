// examples/sveltekit through SvelteKit's own commands: `npm ci`, the core's
// npm tarball, `vite build` with @sveltejs/adapter-node, `node build`; then
// the framework scenario over HTTP (tests/frameworks/_vite_support.ts).
import {
  cleanExample,
  prepareExample,
  report,
  runScenario,
  startExample,
} from "./_vite_support.ts";

Deno.test("SvelteKit: the handle hook, form actions and endpoints serve the scenario after vite build and adapter-node", async () => {
  try {
    const prepared = await prepareExample("sveltekit", ["npm", "run", "build"]);
    if (prepared === null) return;
    let t = performance.now();
    const { base, server } = await startExample(
      ["node", "build"],
      prepared.dir,
    );
    const startMs = performance.now() - t;
    try {
      t = performance.now();
      const checks = await runScenario(base);
      report("SvelteKit", prepared, startMs, performance.now() - t, checks);
    } catch (error) {
      console.log(server.output().slice(-4000));
      throw error;
    } finally {
      await server.stop();
    }
  } finally {
    await cleanExample("sveltekit");
  }
});
