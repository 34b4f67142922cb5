/**
 * The npm packages, tested the way users install them: `deno task npm`
 * builds every package of the workspace (and `npm pack`s it), then
 *
 * - each tarball's `package.json` mirrors its `deno.json` and declares every
 *   package its files import (`@portcullis/auth` a peer of the packages that
 *   import it);
 * - `npm install` of the tarballs into a fresh Node project: `tsc` (strict,
 *   `nodenext` and `bundler` resolution, third-party declaration files aside)
 *   type-checks a server and every export, every export imports on Node with
 *   the names the source exports, and the server registers, logs in and
 *   reads `/me`;
 * - `bun add` of the tarballs into a fresh Bun project: every export imports
 *   and the same server runs as it is.
 *
 * The installs fetch the npm dependencies from the registry (with npm's and
 * Bun's caches). Outside CI an unreachable registry or a missing Bun prints
 * `SKIPPED:`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { inCI, missing } from "../support/services.ts";
import {
  exportMap,
  type WorkspacePackage,
  workspacePackages,
} from "../../tools/workspace.ts";
import {
  findSpecifiers,
  parseRegistrySpecifier,
} from "../../tools/npm/_specifiers.ts";

const ROOT = new URL("../../", import.meta.url);
const CONSUMER = new URL("npm_consumer/", import.meta.url);
const decoder = new TextDecoder();
/** What a fresh TypeScript project gets from `npm install typescript`. */
const TYPESCRIPT = "typescript@7.0.2";
/** The Node types of the Node the project runs on (20). */
const NODE_TYPES = "@types/node@^20";

interface Result {
  ok: boolean;
  out: string;
  ms: number;
}

async function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Result> {
  const started = performance.now();
  try {
    const out = await new Deno.Command(cmd, {
      args,
      cwd,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    return {
      ok: out.success,
      out: decoder.decode(out.stdout) + decoder.decode(out.stderr),
      ms: Math.round(performance.now() - started),
    };
  } catch (error) {
    return {
      ok: false,
      out: `${cmd} could not run: ${(error as Error).message}`,
      ms: 0,
    };
  }
}

const scratch = await Deno.makeTempDir({ prefix: "portcullis-npm-" });
addEventListener("unload", () => {
  try {
    Deno.removeSync(scratch, { recursive: true });
  } catch {
    // already gone
  }
});
const workspace = await workspacePackages(ROOT);

interface Manifest {
  name: string;
  version: string;
  type?: string;
  exports: Record<string, string | { types: string; default: string }>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

interface Build {
  /** The task's output. */
  out: string;
  ms: number;
  /** Package name → its built folder. */
  dirs: Map<string, string>;
  /** Package name → its manifest. */
  manifests: Map<string, Manifest>;
  /** Every tarball. */
  tarballs: string[];
}

let building: Promise<Build> | undefined;

/** Runs `deno task npm` into the scratch folder, once. */
function build(): Promise<Build> {
  building ??= (async () => {
    const out = `${scratch}/dist`;
    const r = await run(
      Deno.execPath(),
      ["task", "npm", "--out", out],
      ROOT.pathname,
    );
    assert.ok(r.ok, `deno task npm failed:\n${r.out.slice(-3000)}`);
    const dirs = new Map<string, string>();
    const manifests = new Map<string, Manifest>();
    const tarballs: string[] = [];
    for await (const entry of Deno.readDir(out)) {
      if (entry.isFile && entry.name.endsWith(".tgz")) {
        tarballs.push(`${out}/${entry.name}`);
      } else if (entry.isDirectory) {
        const dir = `${out}/${entry.name}`;
        const manifest = JSON.parse(
          await Deno.readTextFile(`${dir}/package.json`),
        ) as Manifest;
        dirs.set(manifest.name, dir);
        manifests.set(manifest.name, manifest);
      }
    }
    return { out: r.out, ms: r.ms, dirs, manifests, tarballs: tarballs.sort() };
  })();
  return building;
}

/** Every file under a folder, relative to it. */
async function filesOf(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(`${dir}/${prefix}`)) {
    const rel = prefix + entry.name;
    if (entry.isDirectory) out.push(...await filesOf(dir, `${rel}/`));
    else out.push(rel);
  }
  return out;
}

/** The package a bare specifier names: `drizzle-orm/x` → `drizzle-orm`. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** The range the member's source gives an npm package, or `null`. */
function sourceRange(pkg: WorkspacePackage, name: string): string | null {
  for (const target of Object.values(pkg.config.imports ?? {})) {
    const parsed = parseRegistrySpecifier(target);
    if (parsed?.name === name) return parsed.range;
  }
  return null;
}

Deno.test("deno task npm builds and packs every package of the workspace, with no warning", async () => {
  const { out, ms, manifests, tarballs } = await build();
  console.log(`deno task npm: ${ms} ms`);
  assert.doesNotMatch(out, /warn|could not|error/i, out);
  assert.ok(workspace.length >= 13, `${workspace.length} packages`);
  assert.deepEqual(
    [...manifests.keys()].sort(),
    workspace.map((p) => p.config.name).sort(),
    "one npm package per workspace package",
  );
  assert.equal(tarballs.length, workspace.length);
  for (const { config } of workspace) {
    const slug = config.name.replace("@", "").replace("/", "-");
    assert.ok(
      tarballs.some((t) => t.endsWith(`/${slug}-${config.version}.tgz`)),
      `${config.name}@${config.version} has a tarball: ${tarballs.join(", ")}`,
    );
  }
});

Deno.test("each npm package.json mirrors its deno.json and declares every package its files import", async () => {
  const { dirs, manifests } = await build();
  const core = workspace.find((p) => p.dir === ".")!.config.name;
  for (const pkg of workspace) {
    const { name, version } = pkg.config;
    const manifest = manifests.get(name)!;
    const dir = dirs.get(name)!;
    assert.equal(manifest.version, version, name);
    assert.equal(manifest.type, "module", name);
    // exports: the same subpaths; modules as JavaScript with types beside.
    // A package's Deno entry (`./deno`) stays on JSR.
    const exports = Object.fromEntries(
      Object.entries(exportMap(pkg.config)).filter(([s]) => s !== "./deno"),
    );
    assert.deepEqual(Object.keys(manifest.exports), Object.keys(exports), name);
    for (const [subpath, file] of Object.entries(exports)) {
      const target = manifest.exports[subpath];
      if (file.endsWith(".ts")) {
        const base = file.replace(/\.ts$/, "");
        assert.deepEqual(target, {
          types: `${base}.d.ts`,
          default: `${base}.js`,
        }, `${name} ${subpath}`);
        await Deno.stat(`${dir}/${base}.js`);
        await Deno.stat(`${dir}/${base}.d.ts`);
      } else {
        assert.equal(target, file, `${name} ${subpath}`);
        await Deno.stat(`${dir}/${file}`);
      }
    }
    const deps = manifest.dependencies ?? {};
    const peers = manifest.peerDependencies ?? {};
    // Every package a built file names is declared, at the source's range.
    const named = new Map<string, "js" | "types">();
    const files = await filesOf(dir);
    for (const file of files) {
      assert.ok(
        !/\.[mc]?tsx?$/.test(file) || file.endsWith(".d.ts"),
        `${name}: ${file} is TypeScript source`,
      );
      if (!/\.(js|d\.ts)$/.test(file)) continue;
      const text = await Deno.readTextFile(`${dir}/${file}`);
      for (const { value } of findSpecifiers(file, text).specifiers) {
        assert.doesNotMatch(value, /^(npm|jsr):|\.ts$/, `${name}: ${file}`);
        if (value.startsWith(".") || value.startsWith("node:")) {
          if (value.startsWith(".")) {
            // A relative import names a file of the package.
            const target = new URL(value, `file://${dir}/${file}`).pathname;
            const dts = target.replace(/\.js$/, ".d.ts");
            await Deno.stat(file.endsWith(".d.ts") ? dts : target);
          }
          continue;
        }
        const dep = packageName(value);
        if (file.endsWith(".js") || !named.has(dep)) {
          named.set(dep, file.endsWith(".js") ? "js" : "types");
        }
      }
    }
    for (const [dep, where] of named) {
      // The core is a peer of every package that imports it; any other
      // package is a dependency when the JavaScript imports it.
      if (dep === core || where === "types") {
        assert.ok(dep in peers, `${name} imports ${dep}: a peer dependency`);
      } else {
        assert.ok(dep in deps, `${name} imports ${dep}: a dependency`);
      }
      const range = deps[dep] ?? peers[dep];
      const expected = sourceRange(pkg, dep);
      if (expected !== null) assert.equal(range, expected, `${name}: ${dep}`);
      if (workspace.some((p) => p.config.name === dep)) {
        assert.equal(range, `^${version}`, `${name}: ${dep}`);
      }
    }
    // …and nothing more.
    assert.deepEqual(
      [...Object.keys(deps), ...Object.keys(peers)].sort(),
      [...named.keys()].sort(),
      `${name} declares exactly what it imports`,
    );
  }
  // The two the issue found undeclared, and the core's zero dependencies.
  for (const name of ["@portcullis/next", "@portcullis/totp"]) {
    const v = manifests.get(name)!.version;
    assert.equal(
      manifests.get(name)!.peerDependencies?.["@portcullis/auth"],
      `^${v}`,
      name,
    );
  }
  const coreManifest = manifests.get(core)!;
  assert.equal(coreManifest.dependencies, undefined);
  assert.equal(coreManifest.peerDependencies, undefined);
});

/** Every export as a specifier, with whether it is a module. */
function specifiers(manifests: Map<string, Manifest>): [string, boolean][] {
  const out: [string, boolean][] = [];
  for (const manifest of manifests.values()) {
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      out.push([
        manifest.name + subpath.slice(1),
        typeof target === "object",
      ]);
    }
  }
  return out.sort(([a], [b]) => a.localeCompare(b));
}

/**
 * A script that imports every export and prints, for each, its sorted
 * names (or, for a file export, its size).
 */
function importsScript(manifests: Map<string, Manifest>): string {
  return `import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";
const out = {};
for (const [specifier, isModule] of ${JSON.stringify(specifiers(manifests))}) {
  out[specifier] = isModule
    ? Object.keys(await import(specifier)).sort()
    : statSync(fileURLToPath(import.meta.resolve(specifier))).size;
}
console.log(JSON.stringify(out));
`;
}

/** What each export holds when Deno imports the source. */
async function sourceExports(): Promise<Record<string, string[] | number>> {
  const out: Record<string, string[] | number> = {};
  for (const pkg of workspace) {
    for (const [subpath, file] of Object.entries(exportMap(pkg.config))) {
      if (subpath === "./deno") continue; // Deno's own entry stays on JSR
      const url = new URL(file, pkg.url);
      out[pkg.config.name + subpath.slice(1)] = file.endsWith(".ts")
        ? Object.keys(await import(url.href)).sort()
        : (await Deno.stat(url)).size;
    }
  }
  return out;
}

/** `import * as` of every module export, so tsc reads every `.d.ts`. */
function everyExport(manifests: Map<string, Manifest>): string {
  const modules = specifiers(manifests).filter(([, isModule]) => isModule);
  return modules.map(([s], i) => `import * as m${i} from "${s}";\n`).join("") +
    `export const modules: object[] = [${
      modules.map((_, i) => `m${i}`).join(", ")
    }];\n`;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * Starts the consumer's server, then registers, logs in and reads `/me`
 * over HTTP, and stops it by its PID.
 */
async function exerciseServer(
  cmd: string,
  args: string[],
  cwd: string,
): Promise<void> {
  const port = freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = new Deno.Command(cmd, {
    args,
    cwd,
    env: {
      PORT: String(port),
      AUTH_SECRET: btoa(
        String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))),
      ),
      DATABASE_FILE: `${cwd}/app.db`,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += decoder.decode(chunk);
  };
  const pumped = Promise.all([pump(child.stdout), pump(child.stderr)]);
  let exited = false;
  child.status.then(() => exited = true);
  try {
    const deadline = Date.now() + 30_000;
    while (!output.includes("listening") && !exited && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(output.includes("listening"), `no start: ${output}`);
    const post = (path: string, body: unknown) =>
      fetch(`${origin}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", origin },
        body: JSON.stringify(body),
      });
    const me = (authorization?: string) =>
      fetch(`${origin}/me`, {
        headers: authorization ? { authorization } : {},
      });
    const email = "ada@example.com";
    const password = "correct horse battery staple";

    let res = await post("/register", { email, password });
    const { subject } = await res.json();
    assert.equal(res.status, 201, output);
    assert.match(subject, /^[\w-]{16,}$/);
    res = await post("/register", { email, password });
    assert.equal(res.status, 409);
    await res.body?.cancel();
    res = await post("/login", { email, password: "wrong horse" });
    assert.equal(res.status, 401);
    await res.body?.cancel();
    res = await post("/login", { email, password });
    const login = await res.json();
    assert.equal(res.status, 200);
    assert.equal(login.subject, subject);
    res = await me(`Bearer ${login.token}`);
    assert.deepEqual(await res.json(), { subject, email });
    assert.equal(res.status, 200);
    res = await me();
    assert.equal(res.status, 401);
    await res.body?.cancel();
    res = await me(`Bearer ${login.token.slice(0, -2)}xx`);
    assert.equal(res.status, 401);
    await res.body?.cancel();
  } finally {
    if (!exited) child.kill("SIGTERM");
    await child.status;
    await pumped.catch(() => {});
  }
}

/** The tarball `npm pack` names for a package. */
function tarballOf(build: Build, name: string): string {
  const { version } = build.manifests.get(name)!;
  const file = `${name.replace("@", "").replace("/", "-")}-${version}.tgz`;
  return build.tarballs.find((t) => t.endsWith(`/${file}`))!;
}

/**
 * A fresh project: `package.json` (with `extra` fields) and the consumer's
 * files.
 */
async function freshProject(
  dir: string,
  build: Build,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/package.json`,
    JSON.stringify({
      name: "consumer",
      private: true,
      type: "module",
      ...extra,
    }),
  );
  for (const file of ["server.ts", "types.ts"]) {
    await Deno.copyFile(new URL(file, CONSUMER), `${dir}/${file}`);
  }
  await Deno.writeTextFile(
    `${dir}/exports.ts`,
    everyExport(build.manifests),
  );
  await Deno.writeTextFile(
    `${dir}/imports.mjs`,
    importsScript(build.manifests),
  );
}

/** The drivers the server imports, at the ranges our packages ask. */
function drivers(build: Build): string[] {
  const sql = build.manifests.get("@portcullis/sql")!;
  const kv = build.manifests.get("@portcullis/libsql-kv")!;
  return [
    `drizzle-orm@${sql.dependencies!["drizzle-orm"]}`,
    `@libsql/client@${kv.peerDependencies!["@libsql/client"]}`,
  ];
}

/** tsc's errors outside third-party declaration files. */
function ownErrors(out: string): string[] {
  const errors: string[] = [];
  for (const line of out.split("\n")) {
    if (!/error TS\d+/.test(line)) continue;
    const file = /^(.*?)\(\d+,\d+\)/.exec(line)?.[1] ?? "";
    // Another package's own .d.ts files (drizzle-orm's do not pass
    // skipLibCheck: false) are theirs; ours and the project's are checked.
    const thirdParty = /(^|\/)node_modules\//.test(file) &&
      !/(^|\/)node_modules\/@portcullis\//.test(file);
    if (!thirdParty) errors.push(line);
  }
  return errors;
}

const TSCONFIGS: Record<string, Record<string, unknown>> = {
  // What `tsc --init` writes for Node, plus Node's types; emits server.js.
  nodenext: {
    module: "nodenext",
    moduleResolution: "nodenext",
    target: "es2022",
    types: ["node"],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    moduleDetection: "force",
    skipLibCheck: false,
    outDir: "out",
  },
  // A bundler's project (Vite, Next.js, esbuild).
  bundler: {
    module: "esnext",
    moduleResolution: "bundler",
    target: "es2022",
    lib: ["es2022", "dom", "dom.iterable"],
    types: ["node"],
    strict: true,
    skipLibCheck: false,
    noEmit: true,
  },
};

Deno.test("npm install of the tarballs into a fresh Node project: tsc is clean, every export loads, and a server registers, logs in and reads /me", async (t) => {
  const built = await build();
  const dir = `${scratch}/node`;
  await freshProject(dir, built);
  const install = await run("npm", [
    "install",
    "--no-audit",
    "--no-fund",
    "--prefer-offline",
    ...built.tarballs,
    ...drivers(built),
    TYPESCRIPT,
    NODE_TYPES,
  ], dir);
  console.log(`npm install: ${install.ms} ms`);
  if (!install.ok) {
    if (
      !inCI && /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT/.test(install.out)
    ) {
      missing(`npm registry unreachable: ${install.out.slice(-300)}`);
      return;
    }
    assert.fail(install.out.slice(-3000));
  }
  // npm found every dependency and peer dependency declared and satisfied.
  const ls = await run("npm", ["ls", "--all"], dir);
  assert.ok(ls.ok, ls.out.slice(-3000));

  for (const [name, options] of Object.entries(TSCONFIGS)) {
    await t.step(`tsc, strict, moduleResolution ${name}`, async () => {
      await Deno.writeTextFile(
        `${dir}/tsconfig.${name}.json`,
        JSON.stringify({
          compilerOptions: options,
          files: ["server.ts", "types.ts", "exports.ts"],
        }),
      );
      const tsc = await run(
        `${dir}/node_modules/.bin/tsc`,
        ["-p", `tsconfig.${name}.json`],
        dir,
      );
      console.log(`tsc (${name}): ${tsc.ms} ms`);
      assert.deepEqual(ownErrors(tsc.out), [], tsc.out.slice(-3000));
      assert.ok(
        tsc.ok || /error TS/.test(tsc.out),
        `tsc failed without an error: ${tsc.out}`,
      );
    });
  }

  await t.step(
    "every export imports on Node with the names of the source",
    async () => {
      const node = await run("node", ["imports.mjs"], dir);
      assert.ok(node.ok, node.out);
      assert.deepEqual(JSON.parse(node.out), await sourceExports());
    },
  );

  await t.step(
    "the server (compiled by tsc) registers, logs in and reads /me on Node",
    async () => {
      await Deno.stat(`${dir}/out/server.js`);
      const started = performance.now();
      await exerciseServer("node", ["out/server.js"], dir);
      console.log(`Node server: ${Math.round(performance.now() - started)} ms`);
    },
  );
});

Deno.test("bun add of the tarballs into a fresh Bun project: every export loads, and the same server registers, logs in and reads /me", async (t) => {
  const bun = new URL("node_modules/.bin/bun", ROOT).pathname;
  const version = await run(bun, ["--version"], ROOT.pathname);
  if (!version.ok) {
    missing(
      `Bun is not installed (deno task test installs it): ${version.out}`,
    );
    return;
  }
  const built = await build();
  const dir = `${scratch}/bun`;
  // Where one of our packages depends on another (`@portcullis/totp` on
  // `@portcullis/bytes`), npm takes the tarball added beside it, and Bun
  // asks the registry, where the version is not yet: the project points
  // each name at its tarball, as the registry will serve it.
  await freshProject(dir, built, {
    overrides: Object.fromEntries(
      [...built.manifests.keys()].map((name) => [
        name,
        `file:${tarballOf(built, name)}`,
      ]),
    ),
  });
  const add = await run(
    bun,
    ["add", ...built.tarballs, ...drivers(built)],
    dir,
  );
  console.log(`bun add: ${add.ms} ms`);
  if (!add.ok) {
    if (
      !inCI && /ConnectionRefused|ENOTFOUND|EAI_AGAIN|network/i.test(add.out)
    ) {
      missing(`npm registry unreachable: ${add.out.slice(-300)}`);
      return;
    }
    assert.fail(add.out.slice(-3000));
  }
  const manifest = JSON.parse(await Deno.readTextFile(`${dir}/package.json`));
  for (const name of built.manifests.keys()) {
    assert.ok(name in manifest.dependencies, `bun added ${name}`);
  }

  await t.step(
    "every export imports on Bun with the names of the source",
    async () => {
      const r = await run(bun, ["imports.mjs"], dir);
      assert.ok(r.ok, r.out);
      assert.deepEqual(JSON.parse(r.out), await sourceExports());
    },
  );

  await t.step(
    "the server (TypeScript as it is) registers, logs in and reads /me on Bun",
    async () => {
      const started = performance.now();
      await exerciseServer(bun, ["server.ts"], dir);
      console.log(`Bun server: ${Math.round(performance.now() - started)} ms`);
    },
  );
});
