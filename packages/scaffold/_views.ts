/**
 * The views a generated project owns: which default page or mail of
 * `@portcullis/accounts` (or of a method's package) becomes which file of
 * the project, and to which module it belongs. The copies are made from the
 * packages' own files by `_build_templates.ts` (into `examples/app/views/`),
 * never kept by hand; `views/mod.ts`, the index the project passes to
 * `accounts()` as `views`, is written by {@linkcode viewsIndex} for the
 * modules a project has.
 *
 * @module
 */

/** One copied view file. */
export interface ViewCopy {
  /** The package's file, relative to the repository's root. */
  source: string;
  /** The project's file, relative to the project's root. */
  path: string;
  /** The optional module it belongs to (a file under `modules/`), or `null` for every project. */
  module: string | null;
}

/** Where the copies go in a project. */
export const VIEWS_DIR = "views/";
/** The project's index of its views. */
export const VIEWS_INDEX = "views/mod.ts";

const A = "packages/accounts/views/";

/** Every view file a project may own, in the order of the package's registry. */
export const VIEW_COPIES: readonly ViewCopy[] = [
  ...[
    "auth/layout.ts",
    "auth/field.ts",
    "auth/home.ts",
    "auth/login.ts",
    "auth/register.ts",
    "auth/account.ts",
    "auth/account_sections.ts",
    "auth/reauth.ts",
    "auth/message.ts",
    "auth/forgot_password.ts",
    "auth/reset_password.ts",
    "auth/confirm_email_change.ts",
    "emails/email_content.ts",
    "emails/reset_password.ts",
    "emails/change_email.ts",
    "style.ts",
  ].map((f) => ({ source: A + f, path: VIEWS_DIR + f, module: null })),
  ...[
    ["auth/confirm_verify.ts", "verification"],
    ["auth/verification_status.ts", "verification"],
    ["emails/verify_email.ts", "verification"],
    ["auth/magic_link.ts", "magic_link"],
    ["emails/magic_link.ts", "magic_link"],
    ["auth/api_keys.ts", "api_keys"],
    ["auth/console.ts", "operator_console"],
  ].map(([f, module]) => ({ source: A + f, path: VIEWS_DIR + f, module })),
  ...["totp", "passkeys", "oidc"].map((m) => ({
    source: `packages/${m}/accounts/views.ts`,
    path: `${VIEWS_DIR}auth/${m}.ts`,
    module: m,
  })),
];

/** The files of the package's views folder a copy reaches through its public entry. */
const THROUGH_ENTRY = ["html.ts", "device_name.ts"];

/**
 * A package's view as the project's own file: the same source, with a first
 * line saying where it came from, and its imports of the package's
 * internals (`../html.ts`, `../device_name.ts`) taken from the public entry
 * `@portcullis/accounts/views`.
 *
 * @param source The package file's text.
 * @param copy Which copy it is.
 * @param version The package's version.
 * @returns The project's file.
 * @throws {Error} When the file imports a relative path that is neither
 * another copy nor reachable through the public entry.
 */
export function copyView(
  source: string,
  copy: ViewCopy,
  version: string,
): string {
  const fromDir = copy.source.slice(0, copy.source.lastIndexOf("/") + 1);
  const body = source.replace(
    /(\bfrom\s*)(["'])(\.{1,2}\/[^"'\n]+)\2/g,
    (all, from: string, quote: string, specifier: string) => {
      const target = join(fromDir, specifier);
      if (VIEW_COPIES.some((c) => c.source === target)) return all;
      if (
        target.startsWith(A) && THROUGH_ENTRY.includes(target.slice(A.length))
      ) {
        return `${from}${quote}@portcullis/accounts/views${quote}`;
      }
      throw new Error(
        `${copy.source} imports ${specifier}, which is not copied`,
      );
    },
  );
  return `// Copied from ${copy.source} (portcullis ${version}) by the scaffold: this file is yours to change.\n${body}`;
}

function join(dir: string, specifier: string): string {
  const parts = dir.split("/").filter((p) => p !== "");
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

/** One entry of the views' registry: its key, the export and the copy that holds it. */
export interface ViewEntry {
  /** The key in `AccountViews` (`"login"`), or `"emails.<key>"` for a mail. */
  key: string;
  /** The exported name in the copy (`"loginPage"`). */
  name: string;
  /** The project's file that exports it. */
  path: string;
}

/**
 * The project's `views/mod.ts` for the view files it has.
 *
 * @param entries The registry (the build step reads it from the package's
 * `defaultViews`).
 * @param paths The project's view files.
 * @param version The package's version.
 * @returns The source.
 */
export function viewsIndex(
  entries: readonly ViewEntry[],
  paths: ReadonlySet<string>,
  version: string,
): string {
  const kept = entries.filter((e) => paths.has(e.path));
  const byFile = new Map<string, string[]>();
  for (const e of kept) {
    const names = byFile.get(e.path) ?? [];
    if (!names.includes(e.name)) names.push(e.name);
    byFile.set(e.path, names);
  }
  const imports = [...byFile].sort(([a], [b]) => a < b ? -1 : 1).map(
    ([path, names]) => {
      const from = `"./${path.slice(VIEWS_DIR.length)}"`;
      const sorted = [...names].sort((a, b) =>
        a.toLowerCase() < b.toLowerCase() ? -1 : 1
      );
      const line = `import { ${sorted.join(", ")} } from ${from};`;
      return line.length <= 80
        ? line
        : `import {\n${sorted.map((n) => `  ${n},\n`).join("")}} from ${from};`;
    },
  );
  const item = (key: string, name: string, indent: string) =>
    `${indent}${key === name ? key : `${key}: ${name}`},\n`;
  const pages = kept.filter((e) => !e.key.startsWith("emails."))
    .map((e) => item(e.key, e.name, "  ")).join("");
  const mails = kept.filter((e) => e.key.startsWith("emails."))
    .map((e) => item(e.key.slice("emails.".length), e.name, "    ")).join("");
  return `/**
 * This project's pages and mails, which \`main.ts\` passes to \`accounts()\`
 * as \`views\`. Each file under \`views/\` began as a copy of a default of
 * \`@portcullis/accounts\` ${version} (or of a sign-in method's package), written by
 * the scaffold: change them as you like. The rules (what a page may show,
 * which link a mail carries, every check) stay in the packages, so an
 * upgrade brings their fixes without touching these files; the changelog's
 * "Views" part of each release says what changed in the defaults.
 *
 * @module
 */
import type { ViewOverrides } from "@portcullis/accounts/views";
${imports.join("\n")}

/** Every page and mail of this project, by its name in \`AccountViews\`. */
export const views: ViewOverrides = {
${pages}${mails === "" ? "" : `  emails: {\n${mails}  },\n`}};
`;
}
