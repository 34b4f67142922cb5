/**
 * The reference app on Node ≥ 20 through the `node:http` adapter. Node 20
 * does not run TypeScript: bundle first (README.md, "Node"), then
 * `node dist/server.mjs`. `HOST` and `PORT` (default 3000) choose where it
 * listens; the other bindings are read by `app.ts`.
 *
 * @module
 */
import process from "node:process";
import { serve } from "@portcullis/auth/adapters/node";
import { createNodeApp } from "./app.ts";

const app = await createNodeApp(process.env);
const server = await serve(app, {
  port: Number(process.env.PORT ?? 3000),
  hostname: process.env.HOST,
});
console.log(`Listening on ${JSON.stringify(server.address())}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
