// The installable identityMiddleware() reads its configuration through
// lib/http/bindings.ts, and refuses at startup (not on the first request)
// a default store this runtime cannot open.
import assert from "node:assert/strict";
import {
  bindingsFrom,
  checkStoreChoice,
  readBinding,
} from "../../lib/http/bindings.ts";
import { MemoryKV } from "../../mod.ts";

Deno.test("bindingsFrom takes the handler's second argument only when it holds the secret", () => {
  assert.deepEqual(bindingsFrom([{ AUTH_SECRET: "s" }], "AUTH_SECRET"), {
    AUTH_SECRET: "s",
  });
  assert.equal(bindingsFrom([{ remoteAddr: {} }], "AUTH_SECRET"), null);
  assert.equal(bindingsFrom([], "AUTH_SECRET"), null);
  assert.equal(bindingsFrom([{ AUTH_SECRET: 1 }], "AUTH_SECRET"), null);
  assert.equal(readBinding({ A: "x", B: 2 }, "A"), "x");
  assert.equal(readBinding({ A: "x", B: 2 }, "B"), undefined);
});

Deno.test("checkStoreChoice accepts explicit stores and Deno KV where it is enabled", () => {
  checkStoreChoice("memory");
  checkStoreChoice(new MemoryKV());
  checkStoreChoice("deno-kv"); // this suite runs with KV enabled
});

Deno.test("identityMiddleware() fails at startup with what to do when Deno KV is not enabled", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-kv-" });
  try {
    const mod = new URL("../../mod.ts", import.meta.url).href;
    await Deno.writeTextFile(
      `${dir}/main.ts`,
      `import { identityMiddleware } from ${JSON.stringify(mod)};
try {
  identityMiddleware();
  console.log("created");
} catch (error) {
  console.log(error instanceof TypeError ? "TypeError: " + error.message : "other");
}
`,
    );
    // --no-config: no "unstable": ["kv"] from this repository's deno.json.
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-config", "--no-lock", "-A", `${dir}/main.ts`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    assert.match(
      text,
      /^TypeError: .*Deno KV is not enabled: run with --unstable-kv/,
    );
    assert.match(text, /pass store: a KeyValueStore/);

    const withKv = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-config",
        "--no-lock",
        "--unstable-kv",
        "-A",
        `${dir}/main.ts`,
      ],
      stdout: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(withKv.stdout).trim(), "created");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
