/**
 * The scaffold generator: writes the reference app (register, login,
 * logout, email verification, account page, notes API, views, mailer,
 * schema, tests) into a directory.
 *
 * ```sh
 * deno run -A jsr:@portcullis/scaffold my-app
 * deno run -A jsr:@portcullis/scaffold my-app --no-verification --no-oidc
 * cd my-app && deno task start
 * ```
 *
 The flows themselves (and every rule that keeps an account safe) are in
 * the versioned package `@portcullis/accounts`; the project holds its
 * configuration, its entry, its own module (the notes API) and its tests.
 * Each optional module is configured in a file `modules/<name>.ts`, and the
 * project's `modules.ts` lists the ones it has. `--no-<name>` leaves one
 * out (its file is not written, `modules.ts` does not list it, and the
 * imports only it used leave `deno.json`): `--no-verification`,
 * `--no-magic-link`, `--no-totp`, `--no-oidc`, `--no-passkeys`,
 * `--no-device-bound`, as {@linkcode modules} lists them (a `_` in a
 * file's name is a `-` in its flag). `--force` overwrites existing files;
 * `--package <spec>` changes where `@portcullis/auth` comes from (a `jsr:`
 * specifier, or the path of a local checkout).
 *
 * @example Usage
 * ```ts ignore
 * import { scaffold } from "@portcullis/scaffold";
 * await scaffold("my-app", { without: ["oidc", "passkeys"] });
 * ```
 *
 * @module
 */
import {
  DEFAULT_PACKAGE,
  modules,
  projectConfig,
  type ProjectOptions,
  renderApp,
  type RenderOptions,
} from "./generate.ts";

export {
  DEFAULT_PACKAGE,
  modules,
  projectConfig,
  type ProjectOptions,
  renderApp,
  type RenderOptions,
} from "./generate.ts";

/** Options of {@linkcode scaffold}. */
export interface ScaffoldOptions extends RenderOptions, ProjectOptions {
  /** Overwrite files that exist; default `false`. */
  force?: boolean;
}

/**
 * Writes the app into `dir` (created if needed), plus a `deno.json` when
 * the directory has none.
 *
 * @param dir The project directory.
 * @param options The modules left out, the package and `force`.
 * @returns The paths written, relative to `dir`.
 * @throws {Error} When a file exists and `force` is not set (nothing is
 * written then).
 */
export async function scaffold(
  dir: string,
  options: ScaffoldOptions = {},
): Promise<string[]> {
  const files = renderApp(options);
  const root = dir.replace(/\/+$/, "") || ".";
  const configPath = `${root}/deno.json`;
  const writeConfig = !(await exists(configPath));
  if (!options.force) {
    const clashes: string[] = [];
    for (const path of files.keys()) {
      if (await exists(`${root}/${path}`)) clashes.push(path);
    }
    if (clashes.length > 0) {
      throw new Error(
        `Refusing to overwrite existing files (use --force): ${
          clashes.join(", ")
        }`,
      );
    }
  }
  const written: string[] = [];
  for (const [path, content] of files) {
    const target = `${root}/${path}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), {
      recursive: true,
    });
    await Deno.writeTextFile(target, content);
    written.push(path);
  }
  if (writeConfig) {
    await Deno.writeTextFile(configPath, projectConfig(options));
    written.push("deno.json");
  }
  return written;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

function usage(): never {
  const flags = modules().map((name) => `[--no-${flagOf(name)}]`).join(" ");
  console.error(
    `Usage: deno run -A jsr:@portcullis/scaffold <dir> ${flags} [--force] [--package <jsr: specifier or local path>]`,
  );
  Deno.exit(2);
}

/** A module's flag: its folder's name with `-` for `_`. */
function flagOf(name: string): string {
  return name.replaceAll("_", "-");
}

async function main(args: string[]): Promise<void> {
  let dir: string | undefined;
  const options: ScaffoldOptions = {};
  const optional = new Map(modules().map((name) => [flagOf(name), name]));
  const without: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const module = a.startsWith("--no-") ? optional.get(a.slice(5)) : null;
    if (module) without.push(module);
    else if (a === "--force") options.force = true;
    else if (a === "--package") options.package = args[++i] ?? usage();
    else if (a.startsWith("--package=")) options.package = a.slice(10);
    else if (a.startsWith("-") || dir !== undefined) usage();
    else dir = a;
  }
  if (dir === undefined) usage();
  options.without = without;
  try {
    const written = await scaffold(dir, options);
    console.log(`Wrote ${written.length} files to ${dir}.`);
    console.log(
      `Next: cd ${dir} && deno task start   (tests: deno task test; package: ${
        options.package ?? DEFAULT_PACKAGE
      })`,
    );
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    Deno.exit(1);
  }
}

if (import.meta.main) await main(Deno.args);
