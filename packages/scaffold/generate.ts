/**
 * Renders the reference app for a new project: its files with the modules
 * (sign-in methods) chosen, and the project's `deno.json`.
 *
 * @module
 */
import {
  NPM_VERSIONS,
  PACKAGE_EXPORTS,
  RUNTIME_TEMPLATES,
  TEMPLATES,
  VERSION,
  VIEW_ENTRIES,
} from "./_templates.ts";
import { VIEW_COPIES, VIEWS_INDEX, viewsIndex } from "./_views.ts";
import {
  moduleOf,
  MODULES_FILE,
  optionalModules,
  specifiersOf,
  withoutModules,
} from "./_modules.ts";

/** The runtimes a project can be written for. */
export const RUNTIMES = [
  "deno",
  "bun",
  "node",
  "vercel_edge",
  "cloudflare_workers",
] as const;

/** One of {@linkcode RUNTIMES}. */
export type Runtime = typeof RUNTIMES[number];

/**
 * The files only the Deno project has: its entry, its configuration and
 * its tests (which run under `deno test`).
 */
const DENO_ONLY = new Set([
  "main.ts",
  "deno.json",
  "deno.lock",
  ".gitignore",
  "testing.ts",
]);

/** Options of {@linkcode renderApp}: which modules the project has. */
export interface RenderOptions {
  /**
   * The runtime whose entry and configuration are written: `"deno"` (the
   * default: `main.ts`, `deno.json`, the project's tests), `"bun"`
   * (`server.ts`), `"node"` (`server.ts`, built by esbuild),
   * `"vercel_edge"` (`api/index.ts`, `vercel.json`) or
   * `"cloudflare_workers"` (`worker.ts`, `wrangler.toml`); the npm
   * runtimes get a `package.json` naming every package the project's files
   * import.
   */
  runtime?: Runtime;
  /**
   * The modules to leave out, by their file's name under `modules/`
   * (`"verification"`, `"magic_link"`, `"totp"`, …; {@linkcode modules}
   * lists them). Their files are not written, and `modules.ts` lists the
   * rest. Default: none, every module is in.
   */
  without?: readonly string[];
}

/** Options of {@linkcode projectConfig}. */
export interface ProjectOptions extends RenderOptions {
  /**
   * Where `@portcullis/auth` comes from: a `jsr:` specifier (default
   * `jsr:@portcullis/auth@^<version>`), or a local checkout (an absolute path
   * or a `file:` URL of the repository's root) for development.
   */
  package?: string;
}

/** The default package specifier written into new projects. */
export const DEFAULT_PACKAGE: string = `jsr:@portcullis/auth@^${VERSION}`;

const SOURCES: ReadonlyMap<string, string> = new Map(
  Object.entries(TEMPLATES).filter(([path]) => path !== "deno.json"),
);

/** The module each copied view belongs to, by the project's path. */
const VIEW_MODULE: ReadonlyMap<string, string | null> = new Map(
  VIEW_COPIES.map((c) => [c.path, c.module]),
);

/**
 * The modules a project may leave out: every file under `modules/` that
 * no other part of the app imports. The password and DPoP-bound API
 * sessions are listed in `modules.ts` itself: every project has them.
 *
 * @returns Their names, sorted.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { modules } from "./generate.ts";
 * assert.ok(modules().includes("verification"));
 * assert.ok(!modules().includes("password"));
 * assert.ok(!modules().includes("dpop"));
 * ```
 */
export function modules(): string[] {
  return optionalModules(SOURCES);
}

/**
 * The app's files for a new project, by relative path: every template but
 * the files of the modules left out (their code under `modules/` and their
 * views under `views/`), `modules.ts` listing the rest and `views/mod.ts`
 * the views the project has.
 *
 * @param options Which modules to leave out.
 * @returns Path → content, sorted by path.
 * @throws {Error} When a name in `without` is no optional module.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderApp } from "./generate.ts";
 * const files = renderApp({ without: ["verification"] });
 * assert.equal(files.has("main.ts"), true);
 * assert.equal(files.has("modules/verification.ts"), false);
 * ```
 */
export function renderApp(options: RenderOptions = {}): Map<string, string> {
  const without = leftOut(options);
  const out = new Map<string, string>();
  for (const path of [...SOURCES.keys()].sort()) {
    const name = moduleOf(path) ?? VIEW_MODULE.get(path) ?? null;
    if (name !== null && without.has(name)) continue;
    const source = SOURCES.get(path)!;
    out.set(
      path,
      path === MODULES_FILE ? withoutModules(source, without) : source,
    );
  }
  if (without.size > 0 && out.has(VIEWS_INDEX)) {
    out.set(
      VIEWS_INDEX,
      viewsIndex(VIEW_ENTRIES, new Set(out.keys()), VERSION),
    );
  }
  const runtime = runtimeOf(options);
  if (runtime === "deno") return out;
  // An npm runtime: the shared files, its own, and its package.json.
  for (const path of [...out.keys()]) {
    if (DENO_ONLY.has(path) || path.endsWith("_test.ts")) out.delete(path);
  }
  const own = RUNTIME_TEMPLATES[runtime];
  for (const [path, text] of Object.entries(own)) {
    if (path !== "package.json") out.set(path, text);
  }
  out.set("package.json", packageJson(own["package.json"], out));
  return new Map([...out].sort(([a], [b]) => a < b ? -1 : 1));
}

/**
 * The generated project's `deno.json`: the app's own, whose imports name
 * the packages on JSR, or, for a local checkout, the same names mapped to
 * the checkout's files. An import that only left-out modules use (a
 * method's package) is left out with them.
 *
 * @param options Where the packages come from, and the modules left out.
 * @returns The JSON text.
 *
 * @example Usage
 * ```ts
 * import { projectConfig } from "@portcullis/scaffold";
 * import assert from "node:assert/strict";
 *
 * const imports = JSON.parse(projectConfig()).imports;
 * assert.match(imports["@portcullis/auth"], /^jsr:@portcullis\/auth@\^/);
 * const local = JSON.parse(projectConfig({ package: "/src/portcullis" })).imports;
 * assert.equal(local["@portcullis/auth"], "file:///src/portcullis/mod.ts");
 * ```
 */
export function projectConfig(options: ProjectOptions = {}): string {
  const config = JSON.parse(TEMPLATES["deno.json"]);
  const spec = options.package ?? DEFAULT_PACKAGE;
  const without = leftOut(options);
  // An import only the left-out modules use goes with them.
  if (without.size > 0) {
    const kept = new Set<string>();
    const dropped = new Set<string>();
    for (const [path, source] of SOURCES) {
      const name = moduleOf(path);
      const into = name !== null && without.has(name) ? dropped : kept;
      for (const specifier of specifiersOf(source)) {
        const key = importKey(config.imports, specifier);
        if (key !== null) into.add(key);
      }
    }
    for (const key of dropped) if (!kept.has(key)) delete config.imports[key];
  }
  if (spec !== DEFAULT_PACKAGE) {
    config.imports = localImports(config.imports, spec);
  }
  return JSON.stringify(config, null, 2) + "\n";
}

/** Maps each `@portcullis/*` import to a checkout or another registry. */
function localImports(
  imports: Record<string, string>,
  spec: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  const registry = spec.startsWith("jsr:") || spec.startsWith("npm:");
  const root = spec.startsWith("file:")
    ? spec.replace(/\/?$/, "/")
    : `file://${spec.replace(/\/?$/, "/")}`;
  for (const [name, value] of Object.entries(imports)) {
    const pkg = name.replace(/\/$/, "");
    const exports = PACKAGE_EXPORTS[pkg];
    if (exports === undefined) {
      out[name] = value;
    } else if (registry) {
      out[name] = value.replace(
        /^jsr:/,
        spec.startsWith("npm:") ? "npm:" : "jsr:",
      );
    } else if (name.endsWith("/")) {
      // A prefix import: one entry per subpath of the package.
      for (const [sub, file] of Object.entries(exports)) {
        if (sub !== ".") out[`${pkg}${sub.slice(1)}`] = root + file;
      }
    } else {
      out[name] = root + exports["."];
    }
  }
  return out;
}

/** The import-map key a bare specifier resolves through, or `null`. */
function importKey(
  imports: Record<string, string>,
  specifier: string,
): string | null {
  if (specifier in imports) return specifier;
  let best: string | null = null;
  for (const key of Object.keys(imports)) {
    if (
      key.endsWith("/") && specifier.startsWith(key) &&
      key.length > (best?.length ?? 0)
    ) best = key;
  }
  return best;
}

/** The runtime the options name, checked. */
function runtimeOf(options: RenderOptions): Runtime {
  const runtime = options.runtime ?? "deno";
  if (!RUNTIMES.includes(runtime)) {
    throw new Error(
      `No runtime ${JSON.stringify(runtime)}: the runtimes are ${
        RUNTIMES.join(", ")
      }`,
    );
  }
  return runtime;
}

/**
 * A runtime's package.json: its template with `dependencies` naming every
 * package the project's files import (`@portcullis/*` as JSR's npm
 * packages, pinned at this version), sorted.
 */
function packageJson(
  template: string,
  files: ReadonlyMap<string, string>,
): string {
  const pkg = JSON.parse(template);
  const deps: Record<string, string> = { ...pkg.dependencies };
  for (const [path, source] of files) {
    if (!path.endsWith(".ts")) continue;
    for (const specifier of specifiersOf(source)) {
      if (/^(\.|\/|node:|bun:|npm:|jsr:)/.test(specifier)) continue;
      const parts = specifier.split("/");
      const name = specifier.startsWith("@")
        ? parts.slice(0, 2).join("/")
        : parts[0];
      if (name.startsWith("@portcullis/")) {
        deps[name] = `npm:@jsr/portcullis__${
          name.slice("@portcullis/".length)
        }@^${VERSION}`;
      } else if (NPM_VERSIONS[name] !== undefined) {
        deps[name] = NPM_VERSIONS[name];
      } else {
        throw new Error(`${path} imports ${name}, whose version is unknown`);
      }
    }
  }
  pkg.dependencies = Object.fromEntries(
    Object.entries(deps).sort(([a], [b]) => a < b ? -1 : 1),
  );
  // The dependencies before the devDependencies, as npm writes them.
  const { devDependencies, ...rest } = pkg;
  const out = devDependencies === undefined
    ? rest
    : { ...rest, devDependencies };
  return JSON.stringify(out, null, 2) + "\n";
}

/** The modules the options leave out, checked. */
function leftOut(options: RenderOptions): Set<string> {
  const without = new Set(options.without ?? []);
  const optional = modules();
  for (const name of without) {
    if (!optional.includes(name)) {
      throw new Error(
        `No optional module ${JSON.stringify(name)}: the optional modules are ${
          optional.join(", ")
        }`,
      );
    }
  }
  return without;
}
