/**
 * What the Bun conformance run executes with `bun run`: the Bun entry's
 * `createBunApp` with the conformance hasher, behind `Bun.serve`.
 *
 * @module
 */
import process from "node:process";
import {
  type BunServerLike,
  createBunApp,
} from "../../../examples/bun/server.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "../_hasher.ts";

declare const Bun: {
  serve(options: {
    hostname: string;
    port: number;
    fetch: (req: Request, server: BunServerLike) => Promise<Response>;
  }): { port: number };
};

const hasher = conformanceHasher();
const app = withHasherReport(
  await createBunApp(process.env, { hasher, limits: CONFORMANCE_LIMITS }),
  hasher,
);
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT),
  fetch: (req, server) => app(req, server),
});
console.log(`listening on ${server.port}`);
