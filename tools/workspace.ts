/**
 * The workspace's packages, read from the root `deno.json`: the root package
 * (`@portcullis/auth`) and every `workspace` member whose `deno.json` has a
 * `name`. The npm build (`tools/npm/build.ts`), the version check
 * (`tools/versions.ts`) and their tests read the workspace through this file,
 * so a member added to `workspace` is picked up without editing them.
 *
 * @module
 */

/** The part of a member's `deno.json` the tools read. */
export interface MemberConfig {
  /** The package's name (`@portcullis/sql`); members without one are not packages. */
  name?: string;
  /** The package's version. */
  version?: string;
  /** The license's SPDX identifier. */
  license?: string;
  /** Subpath → file, or one file for `"."`. */
  exports?: string | Record<string, string>;
  /** The member's import map. */
  imports?: Record<string, string>;
  /** The root's member folders. */
  workspace?: string[];
}

/** One package of the workspace. */
export interface WorkspacePackage {
  /** The member's folder relative to the root: `"."`, `"stores/sql"`. */
  dir: string;
  /** The folder as a URL, with a trailing slash. */
  url: URL;
  /** Its `deno.json`. */
  config: MemberConfig & { name: string };
}

/**
 * Reads a member's `deno.json`.
 *
 * @param dir The member's folder, as a URL with a trailing slash.
 * @returns The parsed configuration.
 */
export async function readConfig(dir: URL): Promise<MemberConfig> {
  return JSON.parse(await Deno.readTextFile(new URL("deno.json", dir)));
}

/**
 * Every member folder of the workspace, the root first, named or not.
 *
 * @param root The repository's root, as a URL with a trailing slash.
 * @returns Folders relative to the root (`"."`, `"stores/sql"`, …).
 */
export async function memberDirs(root: URL): Promise<string[]> {
  const config = await readConfig(root);
  return [
    ".",
    ...(config.workspace ?? []).map((dir) =>
      dir.replace(/^\.\//, "").replace(/\/$/, "")
    ),
  ];
}

/**
 * The workspace's packages: the root and every member with a `name`.
 *
 * @param root The repository's root, as a URL with a trailing slash.
 * @returns The packages, the root first, then in `workspace` order.
 */
export async function workspacePackages(
  root: URL,
): Promise<WorkspacePackage[]> {
  const out: WorkspacePackage[] = [];
  for (const dir of await memberDirs(root)) {
    const url = dir === "." ? root : new URL(`${dir}/`, root);
    const config = await readConfig(url);
    if (config.name) {
      out.push({ dir, url, config: config as WorkspacePackage["config"] });
    }
  }
  return out;
}

/**
 * A package's exports as a map, whichever form `deno.json` uses.
 *
 * @param config The member's configuration.
 * @returns Subpath (`"."`, `"./sessions"`) → file (`"./mod.ts"`).
 */
export function exportMap(config: MemberConfig): Record<string, string> {
  if (typeof config.exports === "string") return { ".": config.exports };
  return { ...config.exports };
}
