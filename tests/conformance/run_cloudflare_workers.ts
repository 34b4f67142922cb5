/**
 * Conformance on Cloudflare's runtime: tests/conformance/entries/cloudflare_workers.ts
 * (the reference app as a Worker) bundled by esbuild as a module Worker and run in
 * `workerd` through Miniflare 4, with a local KV namespace (`AUTH_KV`) and
 * a local D1 database (`DB`) as bindings. TOTP, passkeys and OpenID Connect
 * on: the Worker fetches the OpenID Provider (oidc-provider) at 127.0.0.1,
 * as it posts to the mail sink there (Miniflare lets workerd reach local
 * addresses).
 *
 * The build first installs a stand-in for production's PBKDF2 cap
 * (_workers_pbkdf2_cap.ts), so the full-strength check proves that the
 * Worker's hasher falls back to its WebAssembly route (the module imported
 * as wrangler imports it) and still hashes at 600000 iterations, and
 * measures that route.
 *
 * Miniflare runs under Deno here: it asks for Node ≥ 22, and this machine's
 * Node is 20. The start is `startEntry("cloudflare_workers")`
 * (_start_entry.ts).
 *
 * Usage: `deno run -A tests/conformance/run_cloudflare_workers.ts`
 *
 * @module
 */
import { runEntry } from "./_run_entry.ts";

await runEntry("cloudflare_workers", async (origin, result) => {
  const cap = await (await fetch(origin + "/__conformance/pbkdf2-cap")).json();
  console.log(
    `# PBKDF2 cap stand-in refused ${cap.refusals} WebCrypto derivation(s)`,
  );
  if (cap.refusals < 1) {
    console.log(
      "FAIL - the PBKDF2 cap stand-in never refused: the fallback was not exercised",
    );
    result.failed++;
  } else {
    console.log(
      "ok - the PBKDF2 cap stand-in refused 600000 and the hasher fell back",
    );
    result.passed++;
  }
});
