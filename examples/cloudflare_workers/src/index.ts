/**
 * The reference app as a Cloudflare Worker. Bindings and stores: app.ts;
 * configuration: wrangler.toml; deployment: README.md, "Cloudflare Workers".
 *
 * Passwords are hashed with PBKDF2-SHA256 at 600000 iterations. Workers'
 * WebCrypto refuses more than 100000, so the hasher derives the same PBKDF2
 * in the WebAssembly module imported by pbkdf2_wasm.ts, at the same cost
 * (about 3.3× WebCrypto's time on a build machine): a paid plan's CPU
 * limit is needed, never a lower iteration count.
 *
 * @module
 */
import { appFor, type Env } from "./app.ts";

export default {
  /**
   * Serves one request.
   *
   * @param req The request.
   * @param env The bindings.
   * @param ctx The execution context, passed on to the app.
   * @returns The response.
   */
  async fetch(req: Request, env: Env, ctx: unknown): Promise<Response> {
    const app = await appFor(env);
    return app(req, env, ctx);
  },
};
