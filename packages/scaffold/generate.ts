/**
 * Renders the reference app for a new project: the files, the variant
 * without email verification, and the project's `deno.json`.
 *
 * @module
 */
import { PACKAGE_EXPORTS, TEMPLATES, VERSION } from "./_templates.ts";

/**
 * Which sign-in methods beside the password the project includes; each
 * defaults to `true`. A method left out loses its package import, its
 * construction in `sign_in_setup.ts` and its npm dependencies; its routes
 * stay and answer 404, as when it is switched off by configuration.
 */
export interface SignInMethodOptions {
  /** TOTP as a second factor (`@portcullis/totp`). */
  totp?: boolean;
  /** OpenID Connect sign-in (`@portcullis/oidc`). */
  oidc?: boolean;
  /** Passkeys (`@portcullis/passkeys`). */
  passkeys?: boolean;
}

/** The npm packages each sign-in method's package needs. */
const METHOD_NPM: Record<keyof SignInMethodOptions, string[]> = {
  totp: ["otpauth", "qrcode-generator"],
  oidc: ["oauth4webapi"],
  passkeys: ["@simplewebauthn/server"],
};

/** Options of {@linkcode renderApp}. */
export interface RenderOptions extends SignInMethodOptions {
  /**
   * Include email verification (`GET /verify`, `POST /verify/resend`, the
   * email view, `requireVerified` on notes); default `true`. `false` writes
   * the basic flow.
   */
  verification?: boolean;
}

/** Options of {@linkcode projectConfig}. */
export interface ProjectOptions extends SignInMethodOptions {
  /**
   * Where `@portcullis/auth` comes from: a `jsr:` specifier (default
   * `jsr:@portcullis/auth@^<version>`), or a local checkout (an absolute path
   * or a `file:` URL of the repository's root) for development.
   */
  package?: string;
}

/** The default package specifier written into new projects. */
export const DEFAULT_PACKAGE: string = `jsr:@portcullis/auth@^${VERSION}`;

const BEGIN = "// [verification] begin";
const END = "// [verification] end";
const VERIFICATION_ONLY = new Set([
  "routes/verify.ts",
  "views/emails/verify_email.ts",
]);

/**
 * The app's files for a new project, by relative path.
 *
 * With verification, the files are the templates as they are (the markers
 * `// [verification] begin` / `end` stay as comments). Without it, the
 * verification-only files are left out and every marked region is removed.
 *
 * @param options Which variant.
 * @returns Path → content, sorted by path.
 * @throws {Error} When a template's markers do not pair up.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderApp } from "./generate.ts";
 * const files = renderApp({ verification: false });
 * assert.equal(files.has("app.ts"), true);
 * files.has("routes/verify.ts"); // false
 * ```
 */
export function renderApp(options: RenderOptions = {}): Map<string, string> {
  const verification = options.verification ?? true;
  const out = new Map<string, string>();
  const modules = [
    ...(verification ? [] : ["verification"]),
    ...leftOut(options),
  ];
  for (const path of Object.keys(TEMPLATES).sort()) {
    if (!verification && VERIFICATION_ONLY.has(path)) continue;
    if (path === "deno.json") continue; // projectConfig() writes it
    // A module left out: its folder, and its lines in modules.ts.
    if (modules.some((m) => path.startsWith(`methods/${m}/`))) continue;
    let source = TEMPLATES[path];
    if (path === "modules.ts") {
      for (const m of modules) source = withoutModule(source, m);
    }
    if (!verification) source = withoutRegions(path, source);
    for (const method of leftOut(options)) {
      source = withoutRegions(path, source, method);
    }
    out.set(path, source);
  }
  return out;
}

/**
 * `modules.ts` without one module: its import and its entry in the list.
 *
 * @param source The file.
 * @param name The module's folder under `methods/`.
 * @returns The file without it.
 */
function withoutModule(source: string, name: string): string {
  const from = `"./methods/${name}/mod.ts";`;
  const line = source.split("\n").find((l) => l.endsWith(from));
  const binding = line?.match(/^import \{ (\w+) \}/)?.[1];
  if (line === undefined || binding === undefined) return source;
  return source.split("\n").filter((l) =>
    l !== line && l.trim() !== `${binding},`
  ).join("\n");
}

/**
 * The generated project's `deno.json`: the app's own, whose imports name
 * the packages on JSR, or, for a local checkout, the same names mapped to
 * the checkout's files.
 *
 * @param options Where the packages come from.
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
  // A method left out loses its package and the npm packages only it needs.
  for (const method of leftOut(options)) {
    for (const name of Object.keys(config.imports)) {
      const pkg = name.replace(/\/$/, "");
      if (
        pkg === `@portcullis/${method}` ||
        pkg.startsWith(`@portcullis/${method}/`) ||
        METHOD_NPM[method].includes(pkg)
      ) delete config.imports[name];
    }
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

function withoutRegions(
  path: string,
  source: string,
  name = "verification",
): string {
  const begin = name === "verification" ? BEGIN : `// [${name}] begin`;
  const end = name === "verification" ? END : `// [${name}] end`;
  const kept: string[] = [];
  let inside = false;
  for (const line of source.split("\n")) {
    const t = line.trim();
    if (t === begin) {
      if (inside) throw new Error(`Nested ${name} region in ${path}`);
      inside = true;
    } else if (t === end) {
      if (!inside) throw new Error(`Unopened ${name} region in ${path}`);
      inside = false;
    } else if (!inside) kept.push(line);
  }
  if (inside) throw new Error(`Unclosed ${name} region in ${path}`);
  return kept.join("\n");
}

/** The sign-in methods the options leave out. */
function leftOut(options: SignInMethodOptions): (keyof SignInMethodOptions)[] {
  return (["totp", "oidc", "passkeys"] as const).filter((m) =>
    options[m] === false
  );
}
