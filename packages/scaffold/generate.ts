/**
 * Renders the reference app for a new project: its files with the modules
 * (sign-in methods) chosen, and the project's `deno.json`.
 *
 * @module
 */
import {
  PACKAGE_EXPORTS,
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

/** Options of {@linkcode renderApp}: which modules the project has. */
export interface RenderOptions {
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
  return out;
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
