/**
 * The generator against its committed output: `examples/app/` is what
 * `renderApp()` writes, the embedded templates are current, the CLI writes
 * a project, and the generated projects (with and without verification)
 * type-check, lint and pass their own tests.
 */
import assert from "node:assert/strict";
import {
  projectConfig,
  renderApp,
  scaffold,
} from "../../packages/scaffold/mod.ts";
import { TEMPLATES } from "../../packages/scaffold/_templates.ts";

const root = new URL("../../", import.meta.url);
const appDir = new URL("examples/app/", root);
const deno = Deno.execPath();

async function readTree(dir: URL, prefix = ""): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const entry of Deno.readDir(dir)) {
    const rel = prefix + entry.name;
    if (entry.isDirectory) {
      if (rel === "data") continue;
      for (
        const [k, v] of await readTree(
          new URL(entry.name + "/", dir),
          rel + "/",
        )
      ) {
        out.set(k, v);
      }
    } else out.set(rel, await Deno.readTextFile(new URL(entry.name, dir)));
  }
  return out;
}

async function run(args: string[], cwd: string) {
  const out = await new Deno.Command(deno, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", DENO_NO_PACKAGE_JSON: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  return { code: out.code, text };
}

Deno.test("the embedded templates are examples/app/ exactly (run packages/scaffold/_build_templates.ts after changing the app)", async () => {
  const tree = await readTree(appDir);
  assert.deepEqual([...tree.keys()].sort(), Object.keys(TEMPLATES).sort());
  for (const [path, content] of tree) {
    assert.equal(TEMPLATES[path], content, `${path} differs from its template`);
  }
});

Deno.test("regenerating into a temporary directory gives examples/app/ with no difference", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-scaffold-" });
  try {
    const r = await run([
      "run",
      "-A",
      new URL("packages/scaffold/mod.ts", root).pathname,
      dir,
    ], root.pathname);
    assert.equal(r.code, 0, r.text);
    const generated = await readTree(new URL(`file://${dir}/`));
    const expected = await readTree(appDir);
    assert.deepEqual([...generated.keys()].sort(), [...expected.keys()].sort());
    for (const [path, content] of expected) {
      assert.equal(generated.get(path), content, path);
    }
    const again = await run([
      "run",
      "-A",
      new URL("packages/scaffold/mod.ts", root).pathname,
      dir,
    ], root.pathname);
    assert.equal(again.code, 1, "refuses to overwrite without --force");
    assert.match(again.text, /Refusing to overwrite/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("generated files import only the package, never this repository's paths", () => {
  for (const verification of [true, false]) {
    for (const [path, content] of renderApp({ verification })) {
      assert.doesNotMatch(content, /["'](\.\.\/)+(lib|stores|mod\.ts)/, path);
    }
  }
  const config = JSON.parse(projectConfig());
  assert.equal(
    config.imports["@portcullis/auth"],
    "jsr:@portcullis/auth@^0.2.0",
  );
  assert.equal(config.imports["@portcullis/sql"], "jsr:@portcullis/sql@^0.2.0");
  assert.equal(config.tasks.start, "deno run -A --unstable-kv main.ts");
});

Deno.test("--no-verification leaves out the verification routes, views and gates", () => {
  const files = renderApp({ verification: false });
  assert.ok(!files.has("routes/verify.ts"));
  assert.ok(!files.has("views/emails/verify_email.ts"));
  for (const [path, content] of files) {
    assert.doesNotMatch(content, /\[verification\]/, path);
    assert.doesNotMatch(
      content,
      /requireVerified|\.\/verify\.ts|verify_email|path: "\/verify/,
      path,
    );
  }
  const full = renderApp();
  assert.match(full.get("methods/verification/mod.ts")!, /"\/verify"/);
  assert.ok(!files.has("methods/verification/mod.ts"));
  assert.doesNotMatch(files.get("modules.ts")!, /verification/);
  assert.match(full.get("routes/api.ts")!, /requireVerified/);
});

for (const verification of [true, false]) {
  Deno.test({
    name: `a generated project (${
      verification ? "with" : "without"
    } verification) type-checks, lints and passes its own tests`,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "portcullis-project-" });
      try {
        await scaffold(dir, { verification, package: root.pathname });
        for (
          const args of [["check", "main.ts", "app_test.ts"], ["lint"], [
            "test",
            "-A",
          ]]
        ) {
          const r = await run(args, dir);
          assert.equal(r.code, 0, `deno ${args.join(" ")}:\n${r.text}`);
        }
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
