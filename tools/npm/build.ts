/**
 * `deno task npm`: builds every package of the workspace for npm, from the
 * same source as JSR, into `dist/npm/` (git-ignored):
 *
 * - `dist/npm/<name>/`: one folder per package (`auth`, `sql`, `totp`, …),
 *   ESM JavaScript with a `.d.ts` beside each module and a `package.json`
 *   (see `tools/npm/_package.ts` for what goes into it);
 * - `dist/npm/portcullis-<name>-<version>.tgz`: each folder packed by
 *   `npm pack`, as `npm publish` would upload it.
 *
 * The packages are the root and every `workspace` member of `deno.json` with
 * a `name`: a new member is built without editing this file. Anything that
 * cannot be built correctly stops the build with a message and exit code 1;
 * the build prints no warnings.
 *
 * Usage: `deno task npm [--out <folder>] [--no-pack] [--root <workspace>]`.
 * Publish: `npm publish dist/npm/<tarball>` for each (the core first).
 *
 * @module
 */
import { BuildError, buildPackage, type BuiltPackage } from "./_package.ts";
import { workspacePackages } from "../workspace.ts";

const ROOT = new URL("../../", import.meta.url);

/** Options of {@linkcode buildAll}. */
export interface BuildOptions {
  /** The workspace's root. Default: this checkout. */
  root?: URL;
  /** Where to write; emptied first. Default: `dist/npm/` of the root. */
  out?: URL;
  /** Whether to `npm pack` each package too. Default `true`. */
  pack?: boolean;
}

/** What {@linkcode buildAll} wrote. */
export interface BuildResult {
  /** Every package built. */
  packages: BuiltPackage[];
  /** Package name → its tarball, when packed. */
  tarballs: Map<string, URL>;
}

/**
 * Builds (and packs) every package of the workspace.
 *
 * @param options Where to write, and whether to pack.
 * @returns What was written.
 * @throws {BuildError} When a package cannot be built.
 * @throws {Error} When `npm pack` fails or warns.
 */
export async function buildAll(
  options: BuildOptions = {},
): Promise<BuildResult> {
  const root = options.root ?? ROOT;
  const out = options.out ?? new URL("dist/npm/", root);
  await Deno.remove(out, { recursive: true }).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  await Deno.mkdir(out, { recursive: true });
  const license = await Deno.readTextFile(new URL("LICENSE", root));
  const workspace = await workspacePackages(root);
  const packages: BuiltPackage[] = [];
  const problems: BuildError[] = [];
  for (const pkg of workspace) {
    const dir = new URL(`${pkg.config.name.replace(/^@[^/]+\//, "")}/`, out);
    await Deno.mkdir(dir);
    try {
      packages.push(
        await buildPackage(pkg, { workspace, outDir: dir, license }),
      );
    } catch (error) {
      if (!(error instanceof BuildError)) throw error;
      problems.push(error);
    }
  }
  if (problems.length > 0) {
    throw new BuildError(
      "npm build",
      problems.flatMap((e) => e.problems.map((line) => `${e.pkg}: ${line}`)),
    );
  }
  const tarballs = new Map<string, URL>();
  if (options.pack ?? true) {
    const npm = await new Deno.Command("npm", {
      args: [
        "pack",
        "--json",
        "--pack-destination",
        out.pathname,
        ...packages.map((p) => p.dir.pathname),
      ],
      cwd: out,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(npm.stdout);
    const stderr = new TextDecoder().decode(npm.stderr);
    // npm reports what it would change or distrust in a manifest as a warning.
    if (!npm.success || /\bwarn/i.test(stderr)) {
      throw new Error(`npm pack failed or warned:\n${stderr}${stdout}`);
    }
    const packed = JSON.parse(stdout) as { name: string; filename: string }[];
    for (const { name, filename } of packed) {
      tarballs.set(name, new URL(filename, out));
    }
  }
  return { packages, tarballs };
}

function describe(deps: Record<string, string> | undefined): string {
  return Object.entries(deps ?? {}).map(([n, r]) => `${n}@${r}`).join(", ") ||
    "none";
}

/** A folder argument as a URL with a trailing slash. */
function folder(path: string): URL {
  return new URL(path.replace(/\/?$/, "/"), `file://${Deno.cwd()}/`);
}

if (import.meta.main) {
  const args = [...Deno.args];
  const option = (name: string) => {
    const at = args.indexOf(name);
    return at >= 0 && args[at + 1] ? folder(args[at + 1]) : undefined;
  };
  const root = option("--root") ?? ROOT;
  const shown = (url: URL) =>
    url.pathname.startsWith(root.pathname)
      ? url.pathname.slice(root.pathname.length)
      : url.pathname;
  try {
    const { packages, tarballs } = await buildAll({
      root,
      out: option("--out"),
      pack: !args.includes("--no-pack"),
    });
    for (const { manifest, modules, dir } of packages) {
      console.log(
        `${manifest.name}@${manifest.version}: ${modules} module${
          modules === 1 ? "" : "s"
        } → ${shown(tarballs.get(manifest.name) ?? dir)}\n  dependencies: ${
          describe(manifest.dependencies)
        }\n  peerDependencies: ${describe(manifest.peerDependencies)}`,
      );
    }
  } catch (error) {
    console.error(
      error instanceof BuildError
        ? `npm build failed:\n  ${error.problems.join("\n  ")}`
        : (error as Error).message,
    );
    Deno.exit(1);
  }
}
