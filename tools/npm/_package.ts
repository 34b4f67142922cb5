/**
 * Builds one workspace package as an npm package folder: every module its
 * exports reach, as ESM JavaScript and a `.d.ts` beside it, and a
 * `package.json` whose `exports` mirror `deno.json` and whose dependencies
 * are the npm and workspace packages those modules import.
 *
 * - A relative import of `x.ts` becomes `x.js` (the `.d.ts` resolves beside
 *   it). A relative import that leaves the member's folder, or enters
 *   another member's, is an error: that file belongs to no package.
 * - `npm:name@range/sub`, directly or through the member's import map,
 *   becomes `name/sub`; `name` is a dependency at `range` when the emitted
 *   JavaScript imports it, and a peer dependency when only the types do
 *   (the user passes in their own instance, as with `@libsql/client`).
 * - A workspace package (`jsr:@portcullis/bytes@^0.3.0`) becomes
 *   `@portcullis/bytes`, a dependency or a peer dependency by the same rule,
 *   but for the workspace's root package, the core: `@portcullis/auth` is
 *   always a peer dependency, so that an application holds one copy of the
 *   core, whose classes, errors and sessions every package shares.
 * - Every other specifier but `node:` is an error.
 *
 * Types come from TypeScript's isolated declaration emit, which needs no
 * type checking and no dependency installed: the workspace's rule of
 * explicit types on exports (JSR's "no slow types") is what makes it
 * possible, with the one inference JSR makes and it does not (arithmetic on
 * number literals is a number: `_arithmetic.ts`). A file it cannot declare
 * is an error, never a warning.
 *
 * @module
 */
// deno-lint-ignore no-import-prefix -- named here, not in the workspace's import map, so that no task but this build downloads it (deno task installs every import-map dependency)
import ts from "npm:typescript@6.0.3";
import { assertArithmetic } from "./_arithmetic.ts";
import {
  findSpecifiers,
  parseRegistrySpecifier,
  replaceSpecifiers,
} from "./_specifiers.ts";
import { exportMap, type WorkspacePackage } from "../workspace.ts";

/** What a build of one package found wrong. */
export class BuildError extends Error {
  /**
   * @param pkg The package's name.
   * @param problems One line each.
   */
  constructor(readonly pkg: string, readonly problems: string[]) {
    super(`${pkg}: ${problems.join("; ")}`);
    this.name = "BuildError";
  }
}

/** The npm package written for one workspace package. */
export interface BuiltPackage {
  /** The workspace package it was built from. */
  source: WorkspacePackage;
  /** Where it was written. */
  dir: URL;
  /** Its `package.json`. */
  manifest: NpmManifest;
  /** How many modules it holds. */
  modules: number;
}

/** The `package.json` of a built package. */
export interface NpmManifest {
  /** The name, as on JSR. */
  name: string;
  /** The version, as in `deno.json`. */
  version: string;
  /** The license. */
  license: string;
  /** Always `"module"`. */
  type: "module";
  /** The `"."` export's JavaScript, for tools that read no `exports`. */
  main?: string;
  /** The `"."` export's types, likewise. */
  types?: string;
  /** Subpath → types and JavaScript (or a file, for a non-module export). */
  exports: Record<string, string | { types: string; default: string }>;
  /** Name → range: what the JavaScript imports. */
  dependencies?: Record<string, string>;
  /** Name → range: the core, and what only the types import. */
  peerDependencies?: Record<string, string>;
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  isolatedModules: true,
  newLine: ts.NewLineKind.LineFeed,
};
// The documentation lives in the `.d.ts`; the JavaScript goes without it.
const JS_OPTIONS: ts.CompilerOptions = {
  ...COMPILER_OPTIONS,
  removeComments: true,
};

const MODULE_OUTPUT: Record<string, [string, string]> = {
  ".ts": [".js", ".d.ts"],
  ".mts": [".mjs", ".d.mts"],
};

function extension(path: string): string {
  return /\.[^./]+$/.exec(path)?.[0] ?? "";
}

function withOutput(path: string, which: 0 | 1): string {
  const ext = extension(path);
  return path.slice(0, -ext.length) + MODULE_OUTPUT[ext][which];
}

/** A path relative to `from`'s folder, starting with `./` or `../`. */
function relative(from: string, to: string): string {
  const a = from.split("/").slice(0, -1);
  const b = to.split("/");
  let i = 0;
  while (i < a.length && i < b.length - 1 && a[i] === b[i]) i++;
  const up = a.length - i;
  return (up === 0 ? "./" : "../".repeat(up)) + b.slice(i).join("/");
}

/** The import-map target of a bare specifier, or `null`. */
function mapped(
  imports: Record<string, string>,
  specifier: string,
): string | null {
  if (specifier in imports) return imports[specifier];
  let best = "";
  for (const key of Object.keys(imports)) {
    if (
      key.endsWith("/") && specifier.startsWith(key) && key.length > best.length
    ) best = key;
  }
  return best === "" ? null : imports[best] + specifier.slice(best.length);
}

interface Dependency {
  range: string;
  /** Whether it is the workspace's root package (the core). */
  core: boolean;
  /** Whether the emitted JavaScript imports it (else only the types do). */
  runtime: boolean;
}

/** Where {@linkcode buildPackage} writes, and what it builds against. */
export interface PackageBuildOptions {
  /**
   * Every package of the workspace: to tell which imports are workspace
   * packages, and which folders belong to another member.
   */
  workspace: readonly WorkspacePackage[];
  /** An empty folder to write into. */
  outDir: URL;
  /** The root's `LICENSE`, written into packages without one of their own. */
  license: string;
}

/**
 * Builds one package.
 *
 * @param pkg The workspace package.
 * @param options The workspace, the folder to write into, the license.
 * @returns What was written.
 * @throws {BuildError} For anything the package cannot be built with.
 */
export async function buildPackage(
  pkg: WorkspacePackage,
  options: PackageBuildOptions,
): Promise<BuiltPackage> {
  const { workspace, outDir, license } = options;
  const { name, version } = pkg.config;
  const problems: string[] = [];
  const imports = pkg.config.imports ?? {};
  const workspaceNames = new Set(workspace.map((p) => p.config.name));
  const core = workspace.find((p) => p.dir === ".")?.config.name;
  // Folders of the other members, relative to this one: never entered.
  const foreign = workspace
    .filter((p) => p !== pkg && p.url.href.startsWith(pkg.url.href))
    .map((p) => p.url.href);
  const dependencies = new Map<string, Dependency>();
  // A rewritten bare specifier → the package it names.
  const packageOf = new Map<string, string>();

  /** The specifier to write for `specifier` in `file`, or `null` to keep it. */
  const rewrite = (file: string, specifier: string): string | null => {
    if (specifier.startsWith("node:")) return null;
    if (specifier.startsWith("./") || specifier.startsWith("../")) {
      const target = new URL(specifier, new URL(file, pkg.url));
      const path = target.href.slice(pkg.url.href.length);
      if (
        !target.href.startsWith(pkg.url.href) ||
        foreign.some((dir) => target.href.startsWith(dir))
      ) {
        problems.push(`${file} imports ${specifier}, outside the package`);
        return null;
      }
      if (!(extension(path) in MODULE_OUTPUT)) {
        problems.push(
          `${file} imports ${specifier}: only .ts and .mts modules can be built`,
        );
        return null;
      }
      queue.push(path);
      return relative(file, withOutput(path, 0));
    }
    const target = /^(npm|jsr):/.test(specifier)
      ? specifier
      : mapped(imports, specifier);
    const parsed = target === null ? null : parseRegistrySpecifier(target);
    if (parsed === null) {
      problems.push(
        `${file} imports ${specifier}, which is neither relative, node:, npm: nor a workspace package${
          target === null ? " (it is not in the import map)" : ` (${target})`
        }`,
      );
      return null;
    }
    if (parsed.name === name) {
      problems.push(
        `${file} imports its own package (${specifier}): import the file relatively`,
      );
      return null;
    }
    const isWorkspace = workspaceNames.has(parsed.name);
    if (parsed.registry === "jsr" && !isWorkspace) {
      problems.push(
        `${file} imports ${specifier} from JSR: only workspace packages can be`,
      );
      return null;
    }
    if (parsed.range === "") {
      problems.push(`${file} imports ${specifier} without a version range`);
      return null;
    }
    const known = dependencies.get(parsed.name);
    if (known && known.range !== parsed.range) {
      problems.push(
        `${parsed.name} is imported at two ranges: ${known.range} and ${parsed.range}`,
      );
    }
    if (!known) {
      dependencies.set(parsed.name, {
        range: parsed.range,
        core: parsed.name === core,
        runtime: false,
      });
    }
    const bare = parsed.subpath === ""
      ? parsed.name
      : `${parsed.name}/${parsed.subpath}`;
    packageOf.set(bare, parsed.name);
    return bare;
  };

  const exports = exportMap(pkg.config);
  const queue: string[] = [];
  const manifestExports: NpmManifest["exports"] = {};
  for (const [subpath, file] of Object.entries(exports)) {
    // A package's Deno entry (`./deno`: Deno KV, `npm:` drivers loaded on
    // demand) is for Deno alone and stays on JSR.
    if (subpath === "./deno") continue;
    const path = file.replace(/^\.\//, "");
    if (extension(path) in MODULE_OUTPUT) {
      queue.push(path);
      manifestExports[subpath] = {
        types: `./${withOutput(path, 1)}`,
        default: `./${withOutput(path, 0)}`,
      };
    } else {
      // A file exported as it is (the hashers' `.wasm`).
      const to = new URL(path, outDir);
      await Deno.mkdir(new URL(".", to), { recursive: true });
      await Deno.copyFile(new URL(path, pkg.url), to);
      manifestExports[subpath] = `./${path}`;
    }
  }

  const done = new Set<string>();
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (done.has(file)) continue;
    done.add(file);
    let text: string;
    try {
      text = await Deno.readTextFile(new URL(file, pkg.url));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      problems.push(`${file} does not exist`);
      continue;
    }
    const found = findSpecifiers(file, text);
    for (const at of found.computed) {
      problems.push(
        `${file}:${at}: import() of a computed specifier cannot be rewritten for npm`,
      );
    }
    const source = replaceSpecifiers(
      text,
      found.specifiers,
      (specifier) => rewrite(file, specifier),
    );
    const js = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: JS_OPTIONS,
      reportDiagnostics: true,
    });
    const dts = ts.transpileDeclaration(assertArithmetic(file, source), {
      fileName: file,
      compilerOptions: COMPILER_OPTIONS,
      reportDiagnostics: true,
    });
    for (const d of [...js.diagnostics ?? [], ...dts.diagnostics ?? []]) {
      const where = d.file && d.start !== undefined
        ? d.file.getLineAndCharacterOfPosition(d.start)
        : null;
      problems.push(
        `${file}${where ? `:${where.line + 1}:${where.character + 1}` : ""}: ${
          ts.flattenDiagnosticMessageText(d.messageText, " ")
        }`,
      );
    }
    // What the emitted JavaScript still imports is a runtime dependency.
    for (const { value } of findSpecifiers("x.js", js.outputText).specifiers) {
      const dep = dependencies.get(packageOf.get(value) ?? "");
      if (dep) dep.runtime = true;
    }
    for (
      const [which, text] of [[0, js.outputText], [1, dts.outputText]] as const
    ) {
      const to = new URL(withOutput(file, which), outDir);
      await Deno.mkdir(new URL(".", to), { recursive: true });
      await Deno.writeTextFile(to, text);
    }
  }
  if (problems.length > 0) throw new BuildError(name, problems);

  const manifest: NpmManifest = {
    name,
    version: version ?? "",
    license: pkg.config.license ?? "",
    type: "module",
  } as NpmManifest;
  const main = manifestExports["."];
  if (typeof main === "object") {
    manifest.main = main.default;
    manifest.types = main.types;
  }
  manifest.exports = manifestExports;
  const sorted = [...dependencies].sort(([a], [b]) => a.localeCompare(b));
  const deps = sorted.filter(([, d]) => !d.core && d.runtime);
  const peers = sorted.filter(([, d]) => d.core || !d.runtime);
  if (deps.length > 0) {
    manifest.dependencies = Object.fromEntries(
      deps.map(([n, d]) => [n, d.range]),
    );
  }
  if (peers.length > 0) {
    manifest.peerDependencies = Object.fromEntries(
      peers.map(([n, d]) => [n, d.range]),
    );
  }
  await Deno.writeTextFile(
    new URL("package.json", outDir),
    JSON.stringify(manifest, null, 2) + "\n",
  );
  await Deno.copyFile(
    new URL("README.md", pkg.url),
    new URL("README.md", outDir),
  );
  let ownLicense: string | null = null;
  try {
    ownLicense = await Deno.readTextFile(new URL("LICENSE", pkg.url));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await Deno.writeTextFile(new URL("LICENSE", outDir), ownLicense ?? license);
  return { source: pkg, dir: outDir, manifest, modules: done.size };
}
