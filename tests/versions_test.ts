// One version everywhere: `deno task versions` (tools/versions.ts) passes on
// this checkout, and on a copy where a package, a pin, the scaffold or the
// CHANGELOG's head disagrees it names each disagreement and exits 1.
import assert from "node:assert/strict";
import { memberDirs } from "../tools/workspace.ts";

const root = new URL("../", import.meta.url);
const decoder = new TextDecoder();

async function versions(
  args: string[],
): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    out: decoder.decode(out.stdout) + decoder.decode(out.stderr),
  };
}

const version: string = JSON.parse(
  await Deno.readTextFile(new URL("deno.json", root)),
).version;

Deno.test("deno task versions: every package, pin, the scaffold and the CHANGELOG's head agree", async () => {
  const r = await versions(["task", "versions"]);
  assert.equal(r.code, 0, r.out);
  assert.match(
    r.out,
    new RegExp(`Versions agree: ${version.replaceAll(".", "\\.")} \\(\\d+ `),
  );
  const head = (await Deno.readTextFile(new URL("CHANGELOG.md", root)))
    .split("\n").find((line) => line.startsWith("## "));
  assert.match(head!, new RegExp(`^## ${version.replaceAll(".", "\\.")} — `));
});

/** Copies what tools/versions.ts reads into a scratch checkout. */
async function copyCheckout(to: string): Promise<void> {
  const copy = async (path: string) => {
    const target = `${to}/${path}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), {
      recursive: true,
    });
    await Deno.copyFile(new URL(path, root), target);
  };
  for (const path of ["CHANGELOG.md", "README.md"]) await copy(path);
  for (const dir of await memberDirs(root)) {
    await copy(dir === "." ? "deno.json" : `${dir}/deno.json`);
  }
  await copy("packages/scaffold/_templates.ts");
  for await (const entry of Deno.readDir(new URL("examples/", root))) {
    for (const file of ["deno.json", "package.json"]) {
      const path = `examples/${entry.name}/${file}`;
      try {
        await copy(path);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
  }
}

async function edit(
  file: string,
  from: string | RegExp,
  to: string,
): Promise<void> {
  const text = await Deno.readTextFile(file);
  const next = text.replace(from, to);
  assert.notEqual(next, text, `${file}: nothing to replace`);
  await Deno.writeTextFile(file, next);
}

Deno.test("deno task versions names each disagreement and exits 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-versions-" });
  try {
    await copyCheckout(dir);
    const copied = await versions([
      "run",
      "--allow-read",
      "tools/versions.ts",
      "--root",
      dir,
    ]);
    assert.equal(copied.code, 0, `the copy agrees first: ${copied.out}`);

    await edit(
      `${dir}/packages/totp/deno.json`,
      `"version": "${version}"`,
      `"version": "9.9.9"`,
    );
    await edit(
      `${dir}/stores/sql/deno.json`,
      `"jsr:@portcullis/auth@^${version}"`,
      `"jsr:@portcullis/auth@^0.1.0"`,
    );
    await edit(
      `${dir}/packages/scaffold/_templates.ts`,
      `export const VERSION = "${version}";`,
      `export const VERSION = "0.1.0";`,
    );
    const r = await versions([
      "run",
      "--allow-read",
      "tools/versions.ts",
      "--root",
      dir,
    ]);
    assert.equal(r.code, 1, r.out);
    assert.match(
      r.out,
      /packages\/totp\/deno\.json: @portcullis\/totp is at 9\.9\.9/,
    );
    assert.match(
      r.out,
      /stores\/sql\/deno\.json: @portcullis\/auth is pinned at \^0\.1\.0/,
    );
    assert.match(r.out, /_templates\.ts: VERSION is 0\.1\.0/);
    assert.doesNotMatch(r.out, /packages\/oidc/, "only what disagrees");

    // A CHANGELOG whose head names another version: every package disagrees.
    await edit(`${dir}/CHANGELOG.md`, /^## \d+\.\d+\.\d+ — /m, "## 9.0.0 — ");
    const head = await versions([
      "run",
      "--allow-read",
      "tools/versions.ts",
      "--root",
      dir,
    ]);
    assert.equal(head.code, 1);
    assert.match(head.out, /the CHANGELOG's head names 9\.0\.0/);
    assert.match(
      head.out,
      /deno\.json: @portcullis\/auth is at .* \(expected 9\.0\.0\)/,
    );

    // A head that names no version at all.
    await edit(`${dir}/CHANGELOG.md`, /^## 9\.0\.0 — .*$/m, "## Unreleased");
    const none = await versions([
      "run",
      "--allow-read",
      "tools/versions.ts",
      "--root",
      dir,
    ]);
    assert.equal(none.code, 1);
    assert.match(
      none.out,
      /CHANGELOG\.md: the first heading "## Unreleased" names no version/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
