/**
 * The generator against its committed output: `examples/app/` is what
 * `renderApp()` writes, the embedded templates are current, the CLI writes
 * a project, and a module is left out by its file and its line in
 * `modules.ts` alone. `scaffold_subsets_test.ts` type-checks, lints and
 * tests the project of every subset of modules.
 */
import assert from "node:assert/strict";
import {
  modules,
  projectConfig,
  renderApp,
  RUNTIMES,
  scaffold,
} from "../../packages/scaffold/mod.ts";
import { exampleFiles, EXAMPLES } from "../../packages/scaffold/_examples.ts";
import { TEMPLATES, VERSION } from "../../packages/scaffold/_templates.ts";
import {
  copyView,
  VIEW_COPIES,
  VIEWS_INDEX,
} from "../../packages/scaffold/_views.ts";

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
    assert.equal(again.code, 0, "the same files again: nothing to do");
    assert.match(again.text, /Wrote 0 files .*already there, unchanged/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("generated files import only the package, never this repository's paths", () => {
  for (const without of [[], modules()]) {
    for (const [path, content] of renderApp({ without })) {
      assert.doesNotMatch(content, /["'](\.\.\/)+(lib|stores|mod\.ts)/, path);
    }
  }
  const config = JSON.parse(projectConfig());
  assert.equal(
    config.imports["@portcullis/auth"],
    `jsr:@portcullis/auth@^${VERSION}`,
  );
  assert.equal(
    config.imports["@portcullis/sql"],
    `jsr:@portcullis/sql@^${VERSION}`,
  );
  assert.equal(config.tasks.start, "deno run -A --unstable-kv main.ts");
});

Deno.test("the optional modules are the files under modules/, configured by the project; the password and DPoP are listed in modules.ts itself", () => {
  const files = Object.keys(TEMPLATES).filter((p) => p.startsWith("modules/"))
    .map((p) => p.slice("modules/".length, -".ts".length));
  assert.deepEqual(modules(), files.sort());
  for (
    const m of [
      "verification",
      "magic_link",
      "totp",
      "oidc",
      "passkeys",
      "device_bound",
    ]
  ) {
    assert.ok(modules().includes(m), m);
  }
  assert.match(TEMPLATES["modules.ts"], /^\s*password\(\),$/m);
  assert.match(TEMPLATES["modules.ts"], /\[dpop\(\)\]/);
  assert.throws(
    () => renderApp({ without: ["password"] }),
    /No optional module "password"/,
  );
  assert.throws(
    () => renderApp({ without: ["dpop"] }),
    /No optional module "dpop"/,
  );
  assert.throws(() => renderApp({ without: ["nope"] }), /No optional module/);
  // A module's file configures the package's module; no rule is copied.
  const verification = renderApp().get("modules/verification.ts")!;
  assert.match(verification, /from "@portcullis\/accounts"/);
  assert.match(verification, /\[verification\(\)\]/);
});

Deno.test("leaving a module out writes none of its files, and modules.ts neither imports nor lists it", () => {
  const full = renderApp();
  assert.equal(full.get("modules.ts"), TEMPLATES["modules.ts"]);
  const binding = /import \{ (\w+) \} from "\.\/modules\/([a-z_]+)\.ts"/g;
  const listed = [...full.get("modules.ts")!.matchAll(binding)];
  assert.equal(listed.length, modules().length);
  for (const m of modules()) {
    const files = renderApp({ without: [m] });
    assert.ok(full.has(`modules/${m}.ts`), m);
    assert.ok(!files.has(`modules/${m}.ts`), m);
    const views = VIEW_COPIES.filter((c) => c.module === m).map((c) => c.path);
    for (const path of views) {
      assert.ok(!files.has(path), `${path} without ${m}`);
    }
    assert.equal(
      files.size,
      full.size - 1 - views.length,
      "every other file is written",
    );
    const list = files.get("modules.ts")!;
    assert.doesNotMatch(list, new RegExp(`modules/${m}\\.ts`));
    for (const [, name, file] of listed) {
      const kept = new RegExp(`^\\s*\\.\\.\\.${name}\\(env\\),$`, "m")
        .test(list);
      assert.equal(kept, file !== m, `${name} in modules.ts without ${m}`);
    }
    for (const [path, content] of files) {
      if (path !== "modules.ts") {
        assert.doesNotMatch(content, new RegExp(`modules/${m}\\.ts`), path);
      }
    }
  }
  const none = renderApp({ without: modules() }).get("modules.ts")!;
  assert.match(
    none,
    /return \[\n {4}password\(\),\n {4}\.\.\.envFlag\(env, "DPOP", true\) \? \[dpop\(\)\] : \[\],\n {4}notes\(\),\n {2}\];/,
  );
});

Deno.test("the CLI takes --no-<module> for each optional module and refuses an unknown one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-scaffold-" });
  const mod = new URL("packages/scaffold/mod.ts", root).pathname;
  try {
    const r = await run(
      ["run", "-A", mod, dir, "--no-magic-link", "--no-verification"],
      root.pathname,
    );
    assert.equal(r.code, 0, r.text);
    const written = await readTree(new URL(`file://${dir}/`));
    assert.ok(written.has("modules/totp.ts"));
    assert.ok(!written.has("modules/magic_link.ts"));
    assert.ok(!written.has("modules/verification.ts"));
    assert.doesNotMatch(written.get("modules.ts")!, /magicLink|verification/);
    const bad = await run(
      ["run", "-A", mod, `${dir}/x`, "--no-password"],
      root.pathname,
    );
    assert.equal(bad.code, 2);
    assert.match(bad.text, /--no-magic-link/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the project's views are the packages' default views, copied: every file of the package's views/auth and views/emails, only the public entry imported", async () => {
  const own = new Set<string>();
  for (const dir of ["auth", "emails"]) {
    for await (
      const e of Deno.readDir(new URL(`packages/accounts/views/${dir}/`, root))
    ) {
      if (e.name.endsWith(".ts")) {
        own.add(`packages/accounts/views/${dir}/${e.name}`);
      }
    }
  }
  const copied = new Set(VIEW_COPIES.map((c) => c.source));
  for (const file of own) assert.ok(copied.has(file), `${file} is not copied`);
  for (const copy of VIEW_COPIES) {
    const source = await Deno.readTextFile(new URL(copy.source, root));
    assert.equal(
      TEMPLATES[copy.path],
      copyView(source, copy, VERSION),
      `${copy.path} is stale: run packages/scaffold/_build_templates.ts`,
    );
    assert.doesNotMatch(
      TEMPLATES[copy.path],
      /from "\.\.\/(html|device_name)\.ts"/,
    );
  }
  assert.throws(
    () =>
      copyView(
        'import { x } from "../secret_rule.ts";\n',
        VIEW_COPIES[0],
        VERSION,
      ),
    /not copied/,
  );
});

Deno.test("leaving a module out leaves out its views, and views/mod.ts imports and lists only the views written", () => {
  for (const without of [...modules().map((m) => [m]), modules(), []]) {
    const files = renderApp({ without });
    const index = files.get(VIEWS_INDEX)!;
    for (const m of [...index.matchAll(/from "\.\/([^"]+)"/g)]) {
      assert.ok(files.has(`views/${m[1]}`), `${m[1]} without ${without}`);
    }
    for (const copy of VIEW_COPIES) {
      const kept = copy.module === null || !without.includes(copy.module);
      assert.equal(
        files.has(copy.path),
        kept,
        `${copy.path} without ${without}`,
      );
    }
  }
  const bare = renderApp({ without: modules() }).get(VIEWS_INDEX)!;
  assert.doesNotMatch(bare, /verifyEmail|magicLink|apiKeys|console/);
  assert.match(bare, /login: loginPage,/);
  assert.match(bare, /resetPassword: resetPasswordEmail,/);
});

Deno.test("scaffold over an existing project leaves unchanged files alone and writes only what is missing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-scaffold-" });
  try {
    const first = await scaffold(dir);
    assert.ok(first.written.includes("main.ts"));
    assert.ok(first.written.includes("deno.json"));
    assert.deepEqual(first.unchanged, []);
    const before = (await Deno.stat(`${dir}/modules.ts`)).mtime;
    await Deno.remove(`${dir}/notes.ts`);
    const again = await scaffold(dir);
    assert.deepEqual(again.written, ["notes.ts"], "the missing file only");
    assert.deepEqual(again.proposed, []);
    assert.equal(again.unchanged.length, first.written.length - 1);
    assert.deepEqual((await Deno.stat(`${dir}/modules.ts`)).mtime, before);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an edited file stops the scaffold without --force, and nothing is written", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-scaffold-" });
  try {
    await scaffold(dir);
    const edited = "// my own entry\n";
    await Deno.writeTextFile(`${dir}/main.ts`, edited);
    await Deno.remove(`${dir}/notes.ts`);
    await assert.rejects(
      () => scaffold(dir),
      /differ from what the scaffold writes, so nothing was written: main\.ts\. Run again with --force/,
    );
    assert.equal(await Deno.readTextFile(`${dir}/main.ts`), edited);
    await assert.rejects(() => Deno.stat(`${dir}/main.ts.new`));
    await assert.rejects(() => Deno.stat(`${dir}/notes.ts`), "not written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--force never overwrites an edited file: the scaffold's version goes beside it as <file>.new, and the CLI names each", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-scaffold-" });
  const mod = new URL("packages/scaffold/mod.ts", root).pathname;
  try {
    await scaffold(dir);
    const edited = TEMPLATES["main.ts"] + "// my change\n";
    await Deno.writeTextFile(`${dir}/main.ts`, edited);
    const config = JSON.stringify({ tasks: { start: "mine" } });
    await Deno.writeTextFile(`${dir}/deno.json`, config);
    const r = await run(["run", "-A", mod, dir, "--force"], root.pathname);
    assert.equal(r.code, 0, r.text);
    assert.match(r.text, /main\.ts -> main\.ts\.new/);
    assert.match(r.text, /deno\.json -> deno\.json\.new/);
    assert.equal(await Deno.readTextFile(`${dir}/main.ts`), edited);
    assert.equal(
      await Deno.readTextFile(`${dir}/main.ts.new`),
      TEMPLATES["main.ts"],
    );
    assert.equal(await Deno.readTextFile(`${dir}/deno.json`), config);
    assert.equal(
      await Deno.readTextFile(`${dir}/deno.json.new`),
      projectConfig(),
    );
    // Only the two that differ get a .new; the others are left alone.
    const news = [...(await readTree(new URL(`file://${dir}/`))).keys()]
      .filter((p) => p.endsWith(".new"));
    assert.deepEqual(news.sort(), ["deno.json.new", "main.ts.new"]);
    // The API says the same.
    const result = await scaffold(dir, { force: true });
    assert.deepEqual(result.proposed.sort(), ["deno.json", "main.ts"]);
    assert.deepEqual(result.written, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/{bun,node,deno_deploy,vercel_edge,cloudflare_workers} are the generator's output for their runtime (run packages/scaffold/_build_templates.ts after changing the scaffold)", async () => {
  assert.deepEqual(
    [...new Set(Object.values(EXAMPLES))].sort(),
    [...RUNTIMES].sort(),
    "every runtime has an example",
  );
  for (const name of Object.keys(EXAMPLES)) {
    const tree = await readTree(new URL(`examples/${name}/`, root));
    for (const generated of ["data", "node_modules", "dist"]) {
      for (const path of tree.keys()) {
        assert.ok(!path.startsWith(`${generated}/`), `${name}/${path}`);
      }
    }
    const expected = exampleFiles(name);
    assert.deepEqual(
      [...tree.keys()].sort(),
      [...expected.keys()].sort(),
      `examples/${name}: the files differ from the generator's`,
    );
    for (const [path, content] of expected) {
      assert.equal(tree.get(path), content, `examples/${name}/${path}`);
    }
  }
});

Deno.test("--runtime writes that runtime's entry and configuration, with a package.json naming every package the files import, and no Deno-only file", () => {
  const entries: Record<string, string> = {
    bun: "server.ts",
    node: "server.ts",
    vercel_edge: "api/index.ts",
    cloudflare_workers: "worker.ts",
  };
  for (const [runtime, entry] of Object.entries(entries)) {
    for (const without of [[], modules()]) {
      const files = renderApp({
        runtime: runtime as typeof RUNTIMES[number],
        without,
      });
      assert.ok(files.has(entry), `${runtime}: ${entry}`);
      for (const deno of ["main.ts", "deno.json", "deno.lock", "testing.ts"]) {
        assert.ok(!files.has(deno), `${runtime} has no ${deno}`);
      }
      assert.ok(![...files.keys()].some((p) => p.endsWith("_test.ts")));
      assert.ok(files.has("views/mod.ts") && files.has("modules.ts"));
      const deps = JSON.parse(files.get("package.json")!).dependencies;
      assert.equal(
        deps["@portcullis/accounts"],
        `npm:@jsr/portcullis__accounts@^${VERSION}`,
      );
      assert.equal(
        deps.hono,
        JSON.parse(TEMPLATES["deno.json"]).imports.hono
          .replace(/^npm:hono@/, ""),
      );
      // A left-out method's package is not installed.
      assert.equal("@portcullis/totp" in deps, without.length === 0, runtime);
      const imported = new Set<string>();
      for (const [path, text] of files) {
        if (!path.endsWith(".ts")) continue;
        for (const m of text.matchAll(/from "(@?[^".][^"]*)"/g)) {
          if (/^(node|bun):/.test(m[1])) continue;
          const parts = m[1].split("/");
          imported.add(
            m[1].startsWith("@") ? parts.slice(0, 2).join("/") : parts[0],
          );
        }
      }
      assert.deepEqual(Object.keys(deps).sort(), [...imported].sort(), runtime);
      // The project's own test of the kit, run by `npm test`.
      const tests = runtime === "bun" ? "app.test.ts" : "app.test.mjs";
      assert.match(files.get(tests) ?? "", /runAccountsKit\(/, runtime);
      const { scripts } = JSON.parse(files.get("package.json")!);
      const command = runtime === "bun" ? "bun test" : `node --test ${tests}`;
      assert.ok(scripts.test.endsWith(command), `${runtime}: ${scripts.test}`);
    }
  }
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => renderApp({ runtime: "lambda" as any }),
    /No runtime "lambda": the runtimes are deno, bun/,
  );
});

Deno.test("the CLI takes --runtime and refuses an unknown one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-scaffold-" });
  const mod = new URL("packages/scaffold/mod.ts", root).pathname;
  try {
    const r = await run(
      ["run", "-A", mod, dir, "--runtime", "cloudflare_workers", "--no-oidc"],
      root.pathname,
    );
    assert.equal(r.code, 0, r.text);
    const written = await readTree(new URL(`file://${dir}/`));
    assert.ok(written.has("worker.ts") && written.has("wrangler.toml"));
    assert.ok(!written.has("deno.json") && !written.has("main.ts"));
    assert.ok(!written.has("modules/oidc.ts"));
    assert.match(r.text, /README\.md/);
    const bad = await run(
      ["run", "-A", mod, `${dir}/x`, "--runtime", "lambda"],
      root.pathname,
    );
    assert.equal(bad.code, 2);
    assert.match(
      bad.text,
      /--runtime <deno\|bun\|node\|vercel_edge\|cloudflare_workers>/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
