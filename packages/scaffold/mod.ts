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
 * file's name is a `-` in its flag). A file that exists is never
 * overwritten: `--force` keeps each one that differs and writes the
 * scaffold's version beside it as `<file>.new`;
 * `--package <spec>` changes where `@portcullis/auth` comes from (a `jsr:`
 * specifier, or the path of a local checkout). `--runtime <name>` writes
 * another runtime's entry and configuration instead of Deno's
 * (`bun`, `node`, `vercel_edge`, `cloudflare_workers`: {@linkcode RUNTIMES}).
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
  type Runtime,
  RUNTIMES,
} from "./generate.ts";

export {
  DEFAULT_PACKAGE,
  modules,
  projectConfig,
  type ProjectOptions,
  renderApp,
  type RenderOptions,
  type Runtime,
  RUNTIMES,
} from "./generate.ts";

/** Options of {@linkcode scaffold}. */
export interface ScaffoldOptions extends RenderOptions, ProjectOptions {
  /**
   * Go on when files exist and differ from what the scaffold would write:
   * each such file is kept as it is, and the scaffold's version is written
   * beside it as `<file>.new`, to compare and merge by hand. Default
   * `false`: nothing is written then. Never overwrites a file.
   */
  force?: boolean;
}

/** What {@linkcode scaffold} did, by path relative to the project. */
export interface ScaffoldResult {
  /** The files written (they did not exist). */
  written: string[];
  /** The files that exist with the very content the scaffold writes: left alone. */
  unchanged: string[];
  /**
   * The files that exist with another content (an edit of yours, or an
   * older scaffold's): kept, and the scaffold's version written to
   * `<file>.new` beside each (with `force`).
   */
  proposed: string[];
}

/**
 * Writes the app and its `deno.json` into `dir` (created if needed). A
 * file that exists is never overwritten: one with the same content is left
 * alone; one that differs stops the scaffold before it writes anything, or,
 * with `force`, is kept while the scaffold's version goes to `<file>.new`
 * beside it.
 *
 * @param dir The project directory.
 * @param options The modules left out, the package and `force`.
 * @returns What was written, left alone and proposed.
 * @throws {Error} When a file exists with other content and `force` is not
 * set (nothing is written then; the message names the files).
 */
export async function scaffold(
  dir: string,
  options: ScaffoldOptions = {},
): Promise<ScaffoldResult> {
  const files = renderApp(options);
  const deno = (options.runtime ?? "deno") === "deno";
  if (!deno && options.package !== undefined) {
    throw new Error(
      "--package applies to the Deno runtime: an npm runtime's package.json names JSR's npm packages",
    );
  }
  if (deno) files.set("deno.json", projectConfig(options));
  const root = dir.replace(/\/+$/, "") || ".";
  const result: ScaffoldResult = { written: [], unchanged: [], proposed: [] };
  const plan: [string, string][] = [];
  const differing: string[] = [];
  for (const [path, content] of files) {
    const existing = await readIfExists(`${root}/${path}`);
    if (existing === null) plan.push([path, content]);
    else if (existing === content) result.unchanged.push(path);
    else {
      differing.push(path);
      plan.push([`${path}.new`, content]);
    }
  }
  if (differing.length > 0 && !options.force) {
    throw new Error(
      `These files exist and differ from what the scaffold writes, so nothing was written: ${
        differing.join(", ")
      }. Run again with --force to keep them and write the scaffold's version of each beside it as <file>.new`,
    );
  }
  for (const [path, content] of plan) {
    const target = `${root}/${path}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), {
      recursive: true,
    });
    await Deno.writeTextFile(target, content);
    if (path.endsWith(".new") && differing.includes(path.slice(0, -4))) {
      result.proposed.push(path.slice(0, -4));
    } else result.written.push(path);
  }
  return result;
}

async function readIfExists(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

function usage(): never {
  const flags = modules().map((name) => `[--no-${flagOf(name)}]`).join(" ");
  console.error(
    `Usage: deno run -A jsr:@portcullis/scaffold <dir> ${flags} [--runtime <${
      RUNTIMES.join("|")
    }>] [--force] [--package <jsr: specifier or local path>]`,
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
    else if (a === "--runtime" || a.startsWith("--runtime=")) {
      const value = a === "--runtime" ? args[++i] : a.slice(10);
      if (!RUNTIMES.includes(value as Runtime)) usage();
      options.runtime = value as Runtime;
    } else if (a === "--package") options.package = args[++i] ?? usage();
    else if (a.startsWith("--package=")) options.package = a.slice(10);
    else if (a.startsWith("-") || dir !== undefined) usage();
    else dir = a;
  }
  if (dir === undefined) usage();
  options.without = without;
  try {
    const { written, unchanged, proposed } = await scaffold(dir, options);
    console.log(
      `Wrote ${written.length} files to ${dir}${
        unchanged.length > 0
          ? ` (${unchanged.length} already there, unchanged)`
          : ""
      }.`,
    );
    if (proposed.length > 0) {
      console.log(
        `These files differ from the scaffold's and were kept; its version of each is beside it as <file>.new, to compare and merge:\n${
          proposed.map((p) => `  ${p} -> ${p}.new`).join("\n")
        }`,
      );
    }
    const runtime = options.runtime ?? "deno";
    console.log(
      runtime === "deno"
        ? `Next: cd ${dir} && deno task start   (tests: deno task test; package: ${
          options.package ?? DEFAULT_PACKAGE
        })`
        : `Next: cd ${dir}, then see README.md to install and run it on ${runtime}`,
    );
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    Deno.exit(1);
  }
}

if (import.meta.main) await main(Deno.args);
