/**
 * What the Workers conformance run bundles and loads into workerd: the
 * production PBKDF2 cap stand-in first, then the Worker's `appFor` with the
 * conformance hasher (whose full-strength side is the Worker's own hasher,
 * over the imported PBKDF2 WebAssembly module), as a module Worker.
 *
 * @module
 */
import { refusals } from "../_workers_pbkdf2_cap.ts";
import {
  appFor,
  type Env,
} from "../../../examples/cloudflare_workers/src/app.ts";
import { pbkdf2WasmModule } from "../../../examples/cloudflare_workers/src/pbkdf2_wasm.ts";
import { Pbkdf2Hasher } from "../../../mod.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "../_hasher.ts";

// The production hasher the Worker uses: WASM where WebCrypto refuses.
const hasher = conformanceHasher(
  new Pbkdf2Hasher({ wasmModule: pbkdf2WasmModule }),
);

export default {
  async fetch(req: Request, env: Env, ctx: unknown): Promise<Response> {
    if (new URL(req.url).pathname === "/__conformance/pbkdf2-cap") {
      return Response.json({ refusals: refusals.count });
    }
    const app = await appFor(env, { hasher, limits: CONFORMANCE_LIMITS });
    return withHasherReport(app, hasher)(req, env, ctx);
  },
};
