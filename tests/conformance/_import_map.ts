/**
 * Test support: the workspace's packages and import maps, read once from
 * the root deno.json and its members' deno.json files, so the bundlers
 * (esbuild for Node, Vercel Edge, Workers and the examples) and the Bun
 * link resolve the same names Deno does.
 *
 * - `@portcullis/auth`, `@portcullis/sql`, … and their subpaths (also as
 *   `jsr:` specifiers) map to the files named in each member's `exports`
 *   (the package itself, as a user's install would).
 * - An import-map name of any member or of tests/import_map.json
 *   (`drizzle-orm/libsql`, `@libsql/client/web`, `hono`) or an `npm:` specifier
 *   (`npm:esbuild@0.28.2`) maps to the bare npm package name, which
 *   node_modules resolves (tests/conformance/npm_packages.json installs the
 *   versions the members' ranges allow).
 *
 * @module
 */
import * as esbuild from "esbuild";

/** The repository root (where deno.json is). */
export const ROOT: string = new URL("../../", import.meta.url).pathname
  .replace(/\/$/, "");

interface DenoJson {
  name?: string;
  version?: string;
  exports?: string | Record<string, string>;
  imports?: Record<string, string>;
  workspace?: string[];
}

/** One named workspace member: a package as its users import it. */
export interface WorkspacePackage {
  /** The package name, such as `@portcullis/sql`. */
  name: string;
  /** The member's directory (absolute). */
  dir: string;
  /** Its exports: subpath (`.`, `./tokens`) to absolute file path. */
  exports: Record<string, string>;
}

function readJson(path: string): DenoJson {
  return JSON.parse(Deno.readTextFileSync(path));
}

/** The root deno.json, parsed. */
export const denoJson: DenoJson = readJson(`${ROOT}/deno.json`);

function memberDirs(): string[] {
  return [
    ROOT,
    ...(denoJson.workspace ?? []).map((m) =>
      `${ROOT}/${m.replace(/^\.\//, "").replace(/\/$/, "")}`
    ),
  ];
}

/** Every named member of the workspace (the core and the driver packages). */
export const workspacePackages: WorkspacePackage[] = memberDirs().flatMap(
  (dir) => {
    const config = readJson(`${dir}/deno.json`);
    if (!config.name) return [];
    const raw = typeof config.exports === "string"
      ? { ".": config.exports }
      : config.exports ?? {};
    const exports: Record<string, string> = {};
    for (const [sub, file] of Object.entries(raw)) {
      exports[sub] = `${dir}/${file.replace(/^\.\//, "")}`;
    }
    return [{ name: config.name, dir, exports }];
  },
);

/**
 * The npm import-map entries of every member (`drizzle-orm/`, `hono`,
 * `@libsql/client`, …), merged: the members pin the same ranges.
 */
export const npmImports: Record<string, string> = Object.fromEntries(
  [
    ...memberDirs().map((dir) => `${dir}/deno.json`),
    // tests/ is no workspace member: its npm packages have their own map.
    `${ROOT}/tests/import_map.json`,
  ].flatMap((path) =>
    Object.entries(readJson(path).imports ?? {}).filter(([, value]) =>
      value.startsWith("npm:")
    )
  ),
);

/**
 * Strips `npm:` and the version from an npm specifier:
 * `npm:@libsql/client@0.18.0/web` → `@libsql/client/web`.
 *
 * @param spec The specifier after `npm:`.
 * @returns The bare name with its subpath.
 */
export function bareNpmName(spec: string): string {
  const s = spec.replace(/^npm:\/?/, "");
  const m = s.match(/^(@[^/@]+\/[^/@]+|[^/@]+)(?:@[^/]*)?(\/.*)?$/);
  if (!m) return s;
  return m[1] + (m[2] ?? "");
}

/**
 * The file a workspace package name resolves to.
 *
 * @param spec A specifier such as `@portcullis/auth/tokens` or
 * `jsr:@portcullis/sql@^0.3.0`.
 * @returns The absolute path, or `null` when no member exports it.
 */
export function workspaceFile(spec: string): string | null {
  const bare = spec.replace(/^jsr:\/?/, "").replace(
    /^(@[^/@]+\/[^/@]+)@[^/]*/,
    "$1",
  );
  for (const pkg of workspacePackages) {
    if (bare === pkg.name || bare.startsWith(pkg.name + "/")) {
      return pkg.exports["." + bare.slice(pkg.name.length)] ?? null;
    }
  }
  return null;
}

/**
 * Maps a specifier as written in the sources to what node_modules knows.
 *
 * @param spec The import specifier.
 * @returns `{ file }` for a file of a workspace package (absolute path),
 * `{ pkg }` for an npm package name, or `null` for anything else.
 */
export function mapSpecifier(
  spec: string,
): { file: string } | { pkg: string } | null {
  const file = workspaceFile(spec);
  if (file !== null) return { file };
  if (spec.startsWith("npm:")) return { pkg: bareNpmName(spec) };
  const exact = npmImports[spec];
  if (exact !== undefined) return { pkg: bareNpmName(exact) };
  for (const [key, value] of Object.entries(npmImports)) {
    if (key.endsWith("/") && spec.startsWith(key)) {
      return { pkg: bareNpmName(value) + spec.slice(key.length) };
    }
  }
  return null;
}

/**
 * An esbuild plugin that resolves deno.json's names: this package's own
 * subpaths to its files, import-map and `npm:` names to node_modules
 * packages (bundled, or left as imports when `externalPackages` is set).
 *
 * @param options `externalPackages`: leave npm packages for the runtime to
 * load from node_modules (Node), instead of bundling them (edge, Workers).
 * @returns The plugin.
 */
export function denoImportMapPlugin(
  options: { externalPackages?: boolean } = {},
): esbuild.Plugin {
  return {
    name: "deno-import-map",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === "deno-import-map") return undefined;
        if (args.path.startsWith("node:")) {
          return { path: args.path, external: true };
        }
        const mapped = mapSpecifier(args.path);
        if (mapped === null) return undefined;
        if ("file" in mapped) return { path: mapped.file };
        if (options.externalPackages) {
          return { path: mapped.pkg, external: true };
        }
        const resolved = await build.resolve(mapped.pkg, {
          kind: args.kind,
          resolveDir: ROOT,
          pluginData: "deno-import-map",
        });
        if (resolved.errors.length > 0) {
          return { errors: resolved.errors };
        }
        return { path: resolved.path, sideEffects: resolved.sideEffects };
      });
    },
  };
}

/** Options of {@linkcode bundle}. */
export interface BundleOptions {
  /** The entry file (absolute, or relative to the repository root). */
  entry: string;
  /** Where to write the bundle. */
  outfile: string;
  /** `esm` (Node, Workers) or `iife` (a classic script, Vercel's edge-runtime). */
  format: "esm" | "iife";
  /** `node` for Node; `browser` for edge runtimes. */
  platform: "node" | "browser";
  /** Leave npm packages as imports (Node with node_modules). */
  externalPackages?: boolean;
  /** Extra package.json conditions, such as `workerd` or `edge-light`. */
  conditions?: string[];
  /** Compile-time constants. */
  define?: Record<string, string>;
  /** esbuild loaders by extension, such as `{ ".wasm": "copy" }`. */
  loader?: Record<string, esbuild.Loader>;
}

/**
 * Bundles one entry with esbuild and the import-map plugin.
 *
 * @param options See {@linkcode BundleOptions}.
 * @returns The bundle's size in bytes.
 */
export async function bundle(options: BundleOptions): Promise<number> {
  const entry = options.entry.startsWith("/")
    ? options.entry
    : `${ROOT}/${options.entry}`;
  const result = await esbuild.build({
    entryPoints: [entry],
    outfile: options.outfile,
    bundle: true,
    format: options.format,
    platform: options.platform,
    target: "es2022",
    conditions: options.conditions,
    define: options.define,
    loader: options.loader,
    plugins: [denoImportMapPlugin({
      externalPackages: options.externalPackages,
    })],
    logLevel: "error",
    metafile: true,
    absWorkingDir: ROOT,
  });
  let bytes = 0;
  for (const out of Object.values(result.metafile!.outputs)) bytes += out.bytes;
  return bytes;
}

/** Stops esbuild's service so the process can exit. */
export async function stopBundler(): Promise<void> {
  await esbuild.stop();
}

/** Where bundles and scratch files go: under node_modules, never committed. */
export const SCRATCH: string =
  `${ROOT}/node_modules/.cache/portcullis-conformance`;

/**
 * Makes `node_modules/<name>` for every workspace package the way an
 * install would: a package.json whose `exports` are its deno.json's, and
 * links to the member's files. Bun then resolves `@portcullis/auth`,
 * `@portcullis/sql`, … exactly as in a user's project. Idempotent.
 */
export async function linkPackageForBun(): Promise<void> {
  for (const pkg of workspacePackages) {
    const dir = `${ROOT}/node_modules/${pkg.name}`;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.mkdir(dir, { recursive: true });
    // The core's package is the root: link only its sources.
    const names = pkg.dir === ROOT
      ? ["mod.ts", "lib"]
      : [...Deno.readDirSync(pkg.dir)].map((e) => e.name).filter((n) =>
        n !== "deno.json" && n !== "node_modules"
      );
    for (const name of names) {
      await Deno.symlink(`${pkg.dir}/${name}`, `${dir}/${name}`);
    }
    const exports: Record<string, string> = {};
    for (const [sub, file] of Object.entries(pkg.exports)) {
      exports[sub] = "./" + file.slice(pkg.dir.length + 1);
    }
    const manifest = {
      name: pkg.name,
      private: true,
      type: "module",
      description: "Linked by tests/conformance for Bun; not committed",
      exports,
    };
    await Deno.writeTextFile(
      `${dir}/package.json`,
      JSON.stringify(manifest, null, 2) + "\n",
    );
  }
}
