// The core's PBKDF2 is WebCrypto only, and Cloudflare Workers' WebCrypto
// refuses more than 100000 iterations. In workerd (Miniflare), a Worker
// whose password authenticator takes the default hasher must fail to START,
// with a message that names the package to add (not fail at the first
// login); with `Pbkdf2WasmHasher` of @portcullis/hashers and its imported
// `.wasm` module it starts and hashes at 600000 in WebAssembly (production's
// cap stood in by tests/conformance/_workers_pbkdf2_cap.ts, which local
// workerd does not enforce).
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";
import { bundle, ROOT, stopBundler } from "../conformance/_import_map.ts";
import { scratchDir } from "../conformance/_runner.ts";

/** Bundles `source` as a module Worker, `.wasm` imports kept as modules. */
async function worker(name: string, source: string): Promise<string> {
  const dir = await scratchDir(name);
  await Deno.writeTextFile(`${dir}/entry.ts`, source);
  await bundle({
    entry: `${dir}/entry.ts`,
    outfile: `${dir}/worker.js`,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    loader: { ".wasm": "copy" }, // as wrangler: a compiled module
  });
  await stopBundler();
  return dir;
}

function miniflare(dir: string): Miniflare {
  return new Miniflare({
    modules: true,
    scriptPath: `${dir}/worker.js`,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2025-09-01",
  });
}

const REFUSAL =
  /Pbkdf2Hasher cannot hash at 600000 iterations on Cloudflare Workers, whose WebCrypto refuses PBKDF2 above 100000: add @portcullis\/hashers \(npx jsr add @portcullis\/hashers\) and pass new Pbkdf2WasmHasher\(\{ wasmModule \}\) of @portcullis\/hashers\/pbkdf2-wasm/;

Deno.test("workerd: a Worker that makes the default Pbkdf2Hasher at global scope fails to start, naming @portcullis/hashers", async () => {
  const dir = await worker(
    "pbkdf2-default",
    `import { Pbkdf2Hasher } from "@portcullis/auth";
const hasher = new Pbkdf2Hasher();
export default {
  fetch() {
    return new Response(String(hasher.iterations));
  },
};
`,
  );
  const mf = miniflare(dir);
  try {
    await assert.rejects(mf.ready, (err: Error) => {
      assert.match(err.message, /Workers runtime failed to start/);
      assert.match(err.message, /AuthError: /);
      assert.match(err.message, REFUSAL);
      return true;
    });
  } finally {
    await mf.dispose().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("workerd: a PasswordAuthenticator built per isolate with the default hasher fails at that build, before any password", async () => {
  const dir = await worker(
    "pbkdf2-default-build",
    `import { AuthError, MemoryCredentialStore, PasswordAuthenticator } from "@portcullis/auth";
let built = 0;
export default {
  fetch() {
    try {
      // The app's parts, built on the isolate's first request (any path).
      new PasswordAuthenticator({ credentials: new MemoryCredentialStore() });
      built++;
      return new Response("built", { status: 200 });
    } catch (err) {
      if (!(err instanceof AuthError)) throw err;
      return Response.json({ code: err.code, reason: err.reason, message: err.message, built }, { status: 500 });
    }
  },
};
`,
  );
  const mf = miniflare(dir);
  try {
    await mf.ready;
    const res = await mf.dispatchFetch("http://worker/health");
    assert.equal(res.status, 500);
    const body = await res.json() as {
      code: string;
      reason: string;
      built: number;
      message: string;
    };
    assert.equal(body.code, "RUNTIME_UNSUPPORTED");
    assert.equal(body.reason, "webCryptoRefusesCost");
    assert.equal(body.built, 0);
    assert.match(body.message, REFUSAL);
  } finally {
    await mf.dispose().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("workerd: with Pbkdf2WasmHasher and the imported .wasm module the Worker starts and hashes at 600000 in WebAssembly", async () => {
  const cap = `${ROOT}/tests/conformance/_workers_pbkdf2_cap.ts`;
  const dir = await worker(
    "pbkdf2-wasm",
    `import { refusals } from ${JSON.stringify(cap)};
import { MemoryCredentialStore, PasswordAuthenticator } from "@portcullis/auth";
import { Pbkdf2WasmHasher } from "@portcullis/hashers/pbkdf2-wasm";
// @ts-ignore: a compiled WebAssembly.Module, as wrangler imports it
import pbkdf2Wasm from "@portcullis/hashers/pbkdf2-sha256.wasm";
// At global scope: constructing it does no I/O and refuses nothing.
const hasher = new Pbkdf2WasmHasher({ wasmModule: pbkdf2Wasm });
const credentials = new MemoryCredentialStore();
export default {
  async fetch() {
    const auth = new PasswordAuthenticator({ credentials, hasher });
    const registered = await auth.register("ada@example.com", "correct horse battery");
    const user = await credentials.findByEmail("ada@example.com");
    return Response.json({
      agent: navigator.userAgent,
      registered: registered.kind,
      login: await auth.authenticate("ada@example.com", "correct horse battery") !== null,
      wrong: await auth.authenticate("ada@example.com", "correct horse batterY") !== null,
      prefix: user.passwordHash.slice(0, 24),
      route: hasher.lastRoute,
      refused: refusals.count,
    });
  },
};
`,
  );
  const mf = miniflare(dir);
  try {
    await mf.ready;
    const res = await mf.dispatchFetch("http://worker/");
    assert.equal(res.status, 200);
    const { refused, ...rest } = await res.json() as Record<string, unknown>;
    assert.deepEqual(rest, {
      agent: "Cloudflare-Workers",
      registered: "created",
      login: true,
      wrong: false,
      prefix: "$pbkdf2-sha256$i=600000$",
      route: "wasm",
    });
    // WebCrypto refused 600000 (the authenticator's dummy hash may race the
    // registration's to the first refusal), and WebAssembly derived.
    assert.ok(Number(refused) >= 1, `refusals: ${refused}`);
  } finally {
    await mf.dispose().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
