/**
 * Renders the reference app for a new project: the files, the variant
 * without email verification, and the project's `deno.json`.
 *
 * @module
 */
import { NPM_IMPORTS, TEMPLATES, VERSION } from "./_templates.ts";

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
 * import { renderApp } from "./generate.ts";
 * const files = renderApp({ verification: false });
 * files.has("app.ts"); // true
 * files.has("routes/verify.ts"); // false
 * ```
 */
export function renderApp(options: RenderOptions = {}): Map<string, string> {
  const verification = options.verification ?? true;
  const out = new Map<string, string>();
  for (const path of Object.keys(TEMPLATES).sort()) {
    if (!verification && VERIFICATION_ONLY.has(path)) continue;
    let source = rewriteImports(TEMPLATES[path]);
    if (!verification) source = withoutRegions(path, source);
    for (const method of leftOut(options)) {
      source = withoutRegions(path, source, method);
    }
    out.set(path, source);
  }
  return out;
}

/**
 * Maps imports that reach into this repository (`../../mod.ts`,
 * `../../lib/…`, `../../stores/sql.ts`) to the package's specifiers, so an
 * app written inside the repository works in a project of its own.
 *
 * @param source A module's text.
 * @returns The text with those specifiers replaced.
 *
 * @example Usage
 * ```ts
 * import { rewriteImports } from "./generate.ts";
 * rewriteImports('import { x } from "../../lib/a/b.ts";'); // 'import { x } from "@portcullis/auth";'
 * ```
 */
export function rewriteImports(source: string): string {
  return source
    .replace(
      /(["'])(?:\.\.\/)+stores\/sql\.ts\1/g,
      '"@portcullis/auth/stores/sql"',
    )
    .replace(
      /(["'])(?:\.\.\/)+(?:mod\.ts|lib\/[\w/.-]+\.ts)\1/g,
      '"@portcullis/auth"',
    );
}

/**
 * The new project's `deno.json`: import map, tasks and Deno KV.
 *
 * @param options Where the package comes from.
 * @returns The file's text.
 *
 * @example Usage
 * ```ts
 * import { projectConfig } from "./generate.ts";
 * JSON.parse(projectConfig()).imports["@portcullis/auth"]; // "jsr:@portcullis/auth@^0.1.0"
 * ```
 */
export function projectConfig(options: ProjectOptions = {}): string {
  const spec = options.package ?? DEFAULT_PACKAGE;
  let main: string;
  let sql: string;
  let common: string;
  // The sign-in packages sit next to the core (`@portcullis/totp`, …).
  let signIn: (name: string, sub?: string) => string;
  if (spec.startsWith("jsr:") || spec.startsWith("npm:")) {
    main = spec;
    sql = `${spec}/stores/sql`;
    common = `${spec}/passwords/common`;
    signIn = (name, sub) =>
      spec.replace("@portcullis/auth", `@portcullis/${name}`) +
      (sub ? `/${sub}` : "");
  } else {
    const root = spec.startsWith("file:")
      ? spec.replace(/\/?$/, "/")
      : `file://${spec.replace(/\/?$/, "/")}`;
    main = `${root}mod.ts`;
    sql = `${root}stores/sql.ts`;
    common = `${root}lib/authn/common_password_check.ts`;
    signIn = (name, sub) =>
      `${root}packages/${name}/${sub ? sub.replace(/-/g, "_") : "mod"}.ts`;
  }
  const without = leftOut(options);
  const signInImports: Record<string, string> = {};
  if (!without.includes("totp")) {
    signInImports["@portcullis/totp"] = signIn("totp");
  }
  if (!without.includes("oidc")) {
    signInImports["@portcullis/oidc"] = signIn("oidc");
  }
  if (!without.includes("passkeys")) {
    signInImports["@portcullis/passkeys"] = signIn("passkeys");
    signInImports["@portcullis/passkeys/browser-script"] = signIn(
      "passkeys",
      "browser-script",
    );
  }
  const unused = new Set(without.flatMap((m) => METHOD_NPM[m]));
  const npm = Object.fromEntries(
    Object.entries(NPM_IMPORTS).filter(([name]) => !unused.has(name)),
  );
  const config = {
    tasks: {
      start: "deno run -A main.ts",
      test: "deno test -A",
    },
    imports: {
      "@portcullis/auth": main,
      "@portcullis/auth/stores/sql": sql,
      "@portcullis/auth/passwords/common": common,
      ...signInImports,
      ...npm,
    },
    unstable: ["kv"],
    exclude: ["data/"],
  };
  return JSON.stringify(config, null, 2) + "\n";
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
