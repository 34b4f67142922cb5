// The npm build (tools/npm/build.ts) on small workspaces of its own: a
// member added to `workspace` is built without editing the build, its
// imports become npm specifiers and (peer) dependencies at the import map's
// ranges, and what it cannot build correctly stops it with a message.
import assert from "node:assert/strict";

const BUILD = new URL("../../tools/npm/build.ts", import.meta.url).pathname;
const decoder = new TextDecoder();

/** Writes files (path → text; objects as JSON) under a new folder. */
async function workspace(files: Record<string, unknown>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-npm-build-" });
  for (const [path, content] of Object.entries(files)) {
    const file = `${dir}/${path}`;
    await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(
      file,
      typeof content === "string" ? content : JSON.stringify(content),
    );
  }
  return dir;
}

async function build(root: string): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      BUILD,
      "--root",
      root,
      "--out",
      `${root}/dist`,
      "--no-pack",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    out: decoder.decode(out.stdout) + decoder.decode(out.stderr),
  };
}

const CORE = {
  "LICENSE": "MIT License (the root's)\n",
  "README.md": "# core\n",
  "deno.json": {
    name: "@portcullis/auth",
    version: "0.3.0",
    license: "MIT",
    exports: { ".": "./mod.ts", "./extra": "./lib/extra.ts" },
    workspace: ["./packages/helper", "./packages/newcomer", "./examples/demo"],
  },
  // Another workspace package, which the newcomer uses.
  "packages/helper/README.md": "# helper\n",
  "packages/helper/deno.json": {
    name: "@portcullis/helper",
    version: "0.3.0",
    exports: { ".": "./mod.ts" },
  },
  "packages/helper/mod.ts": `/** Two. */\nexport const TWO: number = 2;\n`,
  "mod.ts": `export { extra } from "./lib/extra.ts";\n`,
  "lib/extra.ts":
    `/** One. */\nexport function extra(): number {\n  return 1;\n}\n`,
  // A member without a name is no package.
  "examples/demo/deno.json": { imports: {} },
};

Deno.test("a member added to the workspace is built with its imports rewritten and declared", async () => {
  const root = await workspace({
    ...CORE,
    "packages/newcomer/README.md": "# newcomer\n",
    "packages/newcomer/deno.json": {
      name: "@portcullis/newcomer",
      version: "0.3.0",
      license: "MIT",
      exports: { ".": "./mod.ts", "./asset": "./data/asset.bin" },
      imports: {
        "@portcullis/auth": "jsr:@portcullis/auth@^0.3.0",
        "@portcullis/auth/": "jsr:/@portcullis/auth@^0.3.0/",
        "@portcullis/helper": "jsr:@portcullis/helper@^0.3.0",
        "left-pad": "npm:left-pad@^1.3.0",
        "shapes/": "npm:/some-shapes@^2.1.0/",
      },
    },
    "packages/newcomer/data/asset.bin": "bytes",
    "packages/newcomer/mod.ts": `import pad from "left-pad";
import type { Shape } from "shapes/square";
import { extra } from "@portcullis/auth/extra";
import { TWO } from "@portcullis/helper";
// deno-lint-ignore no-import-prefix
import { hash } from "npm:bcryptjs@^3.0.3";

/** A padded number. */
export function padded(shape: Shape): string {
  return pad(String(extra() + TWO), 3) + hash + String(shape);
}

/** Loads the rest later. */
export function later(): Promise<unknown> {
  return import("./_later.ts");
}
`,
    // Arithmetic on number literals, which JSR's type extraction takes as a
    // number and TypeScript's isolated declarations do not.
    "packages/newcomer/_later.ts": `export const LATER_MS = 15 * 60 * 1000;
export const LIMITS = { perHour: { max: 5, windowSeconds: 60 * 60 } };
export enum Flag { A = 1 << 2 }
`,
  });
  try {
    const r = await build(root);
    assert.equal(r.code, 0, r.out);
    assert.doesNotMatch(r.out, /warn/i);
    assert.match(r.out, /@portcullis\/newcomer@0\.3\.0: 2 modules/);
    assert.doesNotMatch(r.out, /demo/);
    const dir = `${root}/dist/newcomer`;
    const manifest = JSON.parse(await Deno.readTextFile(`${dir}/package.json`));
    assert.deepEqual(manifest, {
      name: "@portcullis/newcomer",
      version: "0.3.0",
      license: "MIT",
      type: "module",
      main: "./mod.js",
      types: "./mod.d.ts",
      exports: {
        ".": { types: "./mod.d.ts", default: "./mod.js" },
        "./asset": "./data/asset.bin",
      },
      // What the JavaScript imports, another workspace package too…
      dependencies: {
        "@portcullis/helper": "^0.3.0",
        "bcryptjs": "^3.0.3",
        "left-pad": "^1.3.0",
      },
      // …and the core, and what only the types import.
      peerDependencies: {
        "@portcullis/auth": "^0.3.0",
        "some-shapes": "^2.1.0",
      },
    });
    const js = await Deno.readTextFile(`${dir}/mod.js`);
    assert.match(js, /from "left-pad"/);
    assert.match(js, /from "bcryptjs"/);
    assert.match(js, /from "@portcullis\/auth\/extra"/);
    assert.match(js, /import\("\.\/_later\.js"\)/);
    assert.doesNotMatch(js, /npm:|jsr:|\.ts"|some-shapes/);
    const dts = await Deno.readTextFile(`${dir}/mod.d.ts`);
    assert.match(dts, /import type \{ Shape \} from "some-shapes\/square"/);
    assert.match(dts, /export declare function padded\(shape: Shape\): string/);
    assert.equal(await Deno.readTextFile(`${dir}/data/asset.bin`), "bytes");
    assert.match(
      await Deno.readTextFile(`${dir}/_later.js`),
      /LATER_MS = 15 \* 60 \* 1000;/,
    );
    const later = await Deno.readTextFile(`${dir}/_later.d.ts`);
    assert.match(later, /export declare const LATER_MS: number;/);
    assert.match(later, /windowSeconds: number;/);
    assert.match(later, /A = 4/);
    // A member without a LICENSE of its own gets the root's.
    assert.equal(
      await Deno.readTextFile(`${dir}/LICENSE`),
      "MIT License (the root's)\n",
    );
    const core = JSON.parse(
      await Deno.readTextFile(`${root}/dist/auth/package.json`),
    );
    assert.deepEqual(Object.keys(core.exports), [".", "./extra"]);
    assert.equal(core.dependencies, undefined);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("what cannot be built for npm stops the build, each problem named", async () => {
  const root = await workspace({
    ...CORE,
    "packages/newcomer/README.md": "# newcomer\n",
    "packages/newcomer/deno.json": {
      name: "@portcullis/newcomer",
      version: "0.3.0",
      exports: { ".": "./mod.ts" },
      imports: { "@portcullis/auth": "jsr:@portcullis/auth@^0.3.0" },
    },
    "packages/newcomer/mod.ts": `import "nowhere";
import { extra } from "../../lib/extra.ts";
// deno-lint-ignore no-import-prefix
import "jsr:@std/assert@^1.0.0";
// deno-lint-ignore no-import-prefix
import "npm:left-pad";
// deno-lint-ignore no-import-prefix
import "jsr:@portcullis/newcomer@^0.3.0";

/** Inferred: isolated declarations need the return type. */
export function inferred() {
  return extra();
}

/** Computed: the build can neither follow nor rewrite it. */
export function computed(name: string): Promise<unknown> {
  return import(name);
}
`,
  });
  try {
    const r = await build(root);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /npm build failed/);
    for (
      const problem of [
        /newcomer: mod\.ts imports nowhere, .*not in the import map/,
        /newcomer: mod\.ts imports \.\.\/\.\.\/lib\/extra\.ts, outside the package/,
        /newcomer: mod\.ts imports jsr:@std\/assert@\^1\.0\.0 from JSR/,
        /newcomer: mod\.ts imports npm:left-pad without a version range/,
        /newcomer: mod\.ts imports its own package \(jsr:@portcullis\/newcomer@\^0\.3\.0\)/,
        /newcomer: mod\.ts:11:17: Function must have an explicit return type/,
        /newcomer: mod\.ts:\d+:10: import\(\) of a computed specifier/,
      ]
    ) assert.match(r.out, problem);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
