/**
 * The project's optional modules as the generator sees them: each file
 * `modules/<name>.ts` configures one module of `@portcullis/accounts` (or
 * of a method's package), `modules.ts` is the only file that names them
 * all, and a module nothing else imports can be left out by not writing its
 * file and writing `modules.ts` without it.
 *
 * @module
 */

/** Where the modules' files are, relative to the project's root. */
export const METHODS_DIR = "modules/";
/** The composition point: the one file that lists every module. */
export const MODULES_FILE = "modules.ts";

/**
 * Files under `modules/` every project keeps (none today: the password and
 * DPoP-bound API sessions are listed in `modules.ts` itself, since every
 * project has them and `DPOP=off` turns the latter off at run time).
 */
export const ALWAYS_IN: ReadonlySet<string> = new Set<string>();

/** The module (file name under `modules/`, without `.ts`) a path belongs to, or `null`. */
export function moduleOf(path: string): string | null {
  if (!path.startsWith(METHODS_DIR) || !path.endsWith(".ts")) return null;
  const rest = path.slice(METHODS_DIR.length, -3);
  return rest.length > 0 && !rest.includes("/") ? rest : null;
}

/** Every optional module file of the templates, by name, sorted. */
export function moduleNames(paths: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const path of paths) {
    const name = moduleOf(path);
    if (name !== null) out.add(name);
  }
  return [...out].sort();
}

/** Every module specifier a source file names (imports, re-exports, `import()`). */
export function specifiersOf(source: string): string[] {
  const out: string[] = [];
  const pattern =
    /(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])([^"'\n]+)\1|^\s*import\s+(["'])([^"'\n]+)\3/gm;
  for (const m of source.matchAll(pattern)) out.push(m[2] ?? m[4]);
  return out;
}

/**
 * A relative specifier resolved against the importing file's path, as a
 * path from the project's root; `null` for a bare or absolute one.
 */
export function resolveRelative(
  from: string,
  specifier: string,
): string | null {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return null;
  const parts = from.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

/**
 * The modules the generator can leave out: those no file outside their
 * own file imports, `modules.ts` aside, and that are not
 * {@linkcode ALWAYS_IN}. A module another part of the app imports is
 * always in.
 *
 * @param files The templates, path → source.
 * @returns The optional modules' names, sorted.
 */
export function optionalModules(files: ReadonlyMap<string, string>): string[] {
  const required = new Set<string>();
  for (const [path, source] of files) {
    if (path === MODULES_FILE || !path.endsWith(".ts")) continue;
    const own = moduleOf(path);
    for (const specifier of specifiersOf(source)) {
      const target = resolveRelative(path, specifier);
      const name = target === null ? null : moduleOf(target);
      if (name !== null && name !== own) required.add(name);
    }
  }
  return moduleNames(files.keys()).filter((name) =>
    !required.has(name) && !ALWAYS_IN.has(name)
  );
}

/**
 * `modules.ts` without some modules: each one's import declaration goes,
 * and so does every use of the names it imported (an element of the
 * modules' list, on its own line or inline).
 *
 * @param source The full `modules.ts`.
 * @param leftOut The modules to leave out.
 * @returns The source for the subset.
 * @throws {Error} When a left-out module's import is not found, or one of
 * its names is still used after the rewrite (the file no longer has the
 * shape this function knows: one import per module, names used only as
 * list elements).
 */
export function withoutModules(
  source: string,
  leftOut: Iterable<string>,
): string {
  let out = source;
  for (const name of leftOut) {
    const declaration = new RegExp(
      `^import\\s+(?:type\\s+)?([^;]*?)\\s+from\\s+["']\\./${METHODS_DIR}${name}\\.ts["'];?[^\\S\\n]*\\n`,
      "gm",
    );
    const bindings: string[] = [];
    out = out.replace(declaration, (_all, clause: string) => {
      bindings.push(...bindingsOf(clause));
      return "";
    });
    if (bindings.length === 0) {
      throw new Error(
        `${MODULES_FILE} has no import of ./${METHODS_DIR}${name}.ts`,
      );
    }
    for (const binding of bindings) {
      const b = escape(binding);
      out = out
        // An element on a line of its own (with a trailing comment, if
        // any): `name,` or a spread call `...name(env),`.
        .replace(
          new RegExp(
            `^[^\\S\\n]*(?:\\.\\.\\.)?${b}(?:\\([^()\\n]*\\))?,?[^\\S\\n]*(//[^\\n]*)?\\n`,
            "gm",
          ),
          "",
        )
        // An element inline: `a, b, c` or `[b]`.
        .replace(new RegExp(`\\b${b}\\b\\s*,\\s*`, "g"), "")
        .replace(new RegExp(`,\\s*\\b${b}\\b`, "g"), "")
        .replace(new RegExp(`\\[\\s*${b}\\s*\\]`, "g"), "[]");
      if (new RegExp(`\\b${b}\\b`).test(stripComments(out))) {
        throw new Error(
          `${MODULES_FILE} still uses ${binding} of the left-out module ${name}`,
        );
      }
    }
  }
  return out;
}

/** The local names an import clause binds. */
function bindingsOf(clause: string): string[] {
  const out: string[] = [];
  const named = /\{([^}]*)\}/.exec(clause);
  if (named) {
    for (const part of named[1].split(",")) {
      const words = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/);
      const local = words[words.length - 1].trim();
      if (local) out.push(local);
    }
  }
  const rest = clause.replace(/\{[^}]*\}/, "").replace(/,/g, " ").trim();
  const star = /\*\s+as\s+(\w+)/.exec(rest);
  if (star) out.push(star[1]);
  else if (/^[\w$]+$/.test(rest)) out.push(rest);
  return out;
}

function escape(text: string): string {
  return text.replace(/[$]/g, "\\$");
}

function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/[^\n]*/g, "");
}
