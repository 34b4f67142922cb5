/**
 * What the Node conformance run bundles and starts with `node`: the Node
 * entry's `createNodeApp` with the conformance hasher, served through the
 * `node:http` adapter exactly as examples/node/server.ts does.
 *
 * @module
 */
import process from "node:process";
import { serve } from "../../../lib/http/adapters/node.ts";
import { createNodeApp } from "../../../examples/node/app.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "../_hasher.ts";

const hasher = conformanceHasher();
const app = withHasherReport(
  await createNodeApp(process.env, { hasher, limits: CONFORMANCE_LIMITS }),
  hasher,
);
const server = await serve(app, {
  port: Number(process.env.PORT),
  hostname: "127.0.0.1",
});
console.log(`listening on ${JSON.stringify(server.address())}`);
process.once("SIGTERM", () => server.close(() => process.exit(0)));
