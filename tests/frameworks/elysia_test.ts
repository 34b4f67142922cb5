// examples/elysia through Bun: `npm ci`, the core's npm tarball, then
// `bun run src/index.ts` (Bun from the repository's node_modules, which
// tests/run_all.ts installs from tests/conformance/npm_packages.json); then
// the framework scenario over HTTP (tests/frameworks/_vite_support.ts).
import {
  cleanExample,
  prepareExample,
  report,
  ROOT,
  runScenario,
  startExample,
} from "./_vite_support.ts";
import { missing } from "../support/services.ts";

Deno.test("Elysia: the derived context, the signedIn macro and serve() serve the scenario under bun run", async () => {
  const bun = `${ROOT}/node_modules/.bin/bun`;
  try {
    await Deno.stat(bun);
  } catch {
    missing("Bun is not installed in node_modules (tests/run_all.ts does it)");
    return;
  }
  try {
    const prepared = await prepareExample("elysia", null);
    if (prepared === null) return;
    let t = performance.now();
    const { base, server } = await startExample(
      [bun, "run", "src/index.ts"],
      prepared.dir,
    );
    const startMs = performance.now() - t;
    try {
      t = performance.now();
      const checks = await runScenario(base);
      report("Elysia", prepared, startMs, performance.now() - t, checks);
    } catch (error) {
      console.log(server.output().slice(-4000));
      throw error;
    } finally {
      await server.stop();
    }
  } finally {
    await cleanExample("elysia");
  }
});
