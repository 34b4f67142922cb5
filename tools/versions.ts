/**
 * `deno task versions`: checks that the workspace names one version
 * everywhere, prints every place that disagrees and exits 1, or prints one
 * line and exits 0. The version is the one `CHANGELOG.md`'s first heading
 * names (`## 0.3.0 — unreleased` while it is being prepared,
 * `## 0.3.0 — 2026-12-15` once released); then:
 *
 * - every package of the workspace (the root and each named `workspace`
 *   member) has that `version` in its `deno.json`;
 * - every pin of a portcullis package (`jsr:@portcullis/auth@^0.3.0`,
 *   `npm:@jsr/portcullis__sql@^0.3.0`) in the workspace members' and the
 *   examples' `deno.json` and `package.json`, in `README.md` and in `docs/`
 *   is `^<version>`;
 * - the scaffold writes that version: its `VERSION` and the pins of the
 *   `deno.json` it generates.
 *
 * Usage: `deno task versions [--root <checkout>]`.
 *
 * @module
 */
import { memberDirs, workspacePackages } from "./workspace.ts";

/** What {@linkcode checkVersions} found. */
export interface VersionReport {
  /** The version the CHANGELOG's head names, or `null` when it names none. */
  version: string | null;
  /** One line per disagreement: `file: what (found …, expected …)`. */
  problems: string[];
  /** How many versions and pins were compared. */
  checked: number;
}

/** The heading format: a version, an em dash, `unreleased` or a date. */
const HEAD = /^## (\d+\.\d+\.\d+) — (unreleased|\d{4}-\d{2}-\d{2})$/;

/** A pinned portcullis package in any text: `…@portcullis/x@range`. */
const PIN =
  /(?:(?:jsr|npm):\/?@portcullis\/|npm:@jsr\/portcullis__)([a-z0-9-]+)@([^/"'\s`)]+)/g;

async function readOptional(url: URL): Promise<string | null> {
  try {
    return await Deno.readTextFile(url);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

async function filesUnder(dir: URL, suffix: string): Promise<string[]> {
  const out: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return out;
    throw error;
  }
  for (const entry of entries) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    if (entry.isDirectory) {
      for (
        const f of await filesUnder(new URL(`${entry.name}/`, dir), suffix)
      ) {
        out.push(`${entry.name}/${f}`);
      }
    } else if (entry.name.endsWith(suffix)) out.push(entry.name);
  }
  return out.sort();
}

/**
 * Compares every version and pin of a checkout.
 *
 * @param root The checkout's root, as a URL with a trailing slash.
 * @returns The version, the disagreements, and how much was compared.
 */
export async function checkVersions(root: URL): Promise<VersionReport> {
  const problems: string[] = [];
  let checked = 0;

  const changelog = await readOptional(new URL("CHANGELOG.md", root)) ?? "";
  const heading = changelog.split("\n").find((line) => line.startsWith("## "));
  const head = heading === undefined ? null : HEAD.exec(heading);
  const version = head?.[1] ?? null;
  if (head === null) {
    problems.push(
      `CHANGELOG.md: the first heading ${
        JSON.stringify(heading ?? "(none)")
      } names no version (expected "## X.Y.Z — unreleased" or "## X.Y.Z — YYYY-MM-DD")`,
    );
  }
  const expected = version ?? "(the CHANGELOG's version)";

  for (const { dir, config } of await workspacePackages(root)) {
    checked++;
    if (config.version !== version) {
      problems.push(
        `${dir === "." ? "" : `${dir}/`}deno.json: ${config.name} is at ${
          config.version ?? "no version"
        } (expected ${expected})`,
      );
    }
  }

  // Every file that may pin a portcullis package.
  const files = new Set<string>();
  for (const dir of await memberDirs(root)) {
    files.add(dir === "." ? "deno.json" : `${dir}/deno.json`);
  }
  for (const f of await filesUnder(new URL("examples/", root), ".json")) {
    if (/(^|\/)(deno|package)\.json$/.test(f)) files.add(`examples/${f}`);
  }
  files.add("README.md");
  for (const f of await filesUnder(new URL("docs/", root), ".md")) {
    files.add(`docs/${f}`);
  }
  const pinned = `^${expected}`;
  const checkPins = (file: string, text: string) => {
    for (const [, name, range] of text.matchAll(PIN)) {
      checked++;
      if (range !== pinned) {
        problems.push(
          `${file}: @portcullis/${name} is pinned at ${range} (expected ${pinned})`,
        );
      }
    }
  };
  for (const file of [...files].sort()) {
    const text = await readOptional(new URL(file, root));
    if (text !== null) checkPins(file, text);
  }

  // The scaffold's own version and the deno.json it writes into projects.
  const members = await memberDirs(root);
  if (members.includes("packages/scaffold")) {
    const file = "packages/scaffold/_templates.ts";
    const templates = await import(new URL(file, root).href) as {
      VERSION: string;
      TEMPLATES: Record<string, string>;
    };
    checked++;
    if (templates.VERSION !== version) {
      problems.push(
        `${file}: VERSION is ${templates.VERSION} (expected ${expected}; run deno run -A packages/scaffold/_build_templates.ts)`,
      );
    }
    checkPins(
      `${file} (the generated deno.json)`,
      templates.TEMPLATES["deno.json"],
    );
  }
  // A prefix entry (`"@portcullis/auth/"`) repeats its package's pin.
  return { version, problems: [...new Set(problems)], checked };
}

if (import.meta.main) {
  const at = Deno.args.indexOf("--root");
  const root = at >= 0
    ? new URL(Deno.args[at + 1].replace(/\/?$/, "/"), `file://${Deno.cwd()}/`)
    : new URL("../", import.meta.url);
  const { version, problems, checked } = await checkVersions(root);
  if (problems.length > 0) {
    console.error(
      `Versions disagree (the CHANGELOG's head names ${version ?? "none"}):`,
    );
    for (const line of problems) console.error(`  ${line}`);
    Deno.exit(1);
  }
  console.log(
    `Versions agree: ${version} (${checked} versions and pins: packages, CHANGELOG.md, the scaffold, examples, docs)`,
  );
}
