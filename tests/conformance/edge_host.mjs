/**
 * Test support, run by Node: serves a classic-script bundle in Vercel's
 * `edge-runtime` (npm `edge-runtime`, the runtime `vercel dev` uses) on
 * 127.0.0.1:$PORT. Like production and unlike the package's default, code
 * generation from strings and WebAssembly compilation from bytes are
 * refused. `process.env` inside the runtime is the JSON object in
 * `$EDGE_ENV`, as Vercel provides it to Edge Functions.
 *
 * Usage: `node tests/conformance/edge_host.mjs <bundle.js>`
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

// Loaded from node_modules by Node (package.json pins it), not by Deno.
const { EdgeRuntime, runServer } = createRequire(import.meta.url)(
  "edge-runtime",
);

const code = await readFile(process.argv[2], "utf8");
const env = JSON.parse(process.env.EDGE_ENV ?? "{}");
const runtime = new EdgeRuntime({
  initialCode: code,
  codeGeneration: { strings: false, wasm: false },
  extend: (context) => Object.assign(context, { process: { env } }),
});
const server = await runServer({
  runtime,
  port: Number(process.env.PORT),
  host: "127.0.0.1",
});
console.log(`edge-runtime listening on ${server.url}`);
process.once("SIGTERM", () => server.close().then(() => process.exit(0)));
