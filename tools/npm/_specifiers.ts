/**
 * Module specifiers in TypeScript and JavaScript source, found with the
 * TypeScript parser (never a regular expression, so a specifier in a
 * comment or a string is never taken for an import): static imports and
 * re-exports, `import("…")` calls, `import("…")` types and
 * `import x = require("…")`.
 *
 * @module
 */
// deno-lint-ignore no-import-prefix -- named here, not in the workspace's import map, so that no task but this build downloads it (deno task installs every import-map dependency)
import ts from "npm:typescript@6.0.3";

/** One specifier and where its text is. */
export interface FoundSpecifier {
  /** The specifier, unquoted. */
  value: string;
  /** Where its string literal starts in the text, quote included. */
  start: number;
  /** Where its string literal ends in the text, quote included. */
  end: number;
}

/** What {@linkcode findSpecifiers} finds in one file. */
export interface FoundSpecifiers {
  /** Every literal specifier, in source order. */
  specifiers: FoundSpecifier[];
  /**
   * `import(expression)` calls whose specifier is computed: the build can
   * neither follow nor rewrite them. Each entry is a `line:column` position.
   */
  computed: string[];
}

function literal(node: ts.Node | undefined): node is ts.StringLiteralLike {
  return node !== undefined &&
    (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node));
}

/**
 * Lists the module specifiers of one source file.
 *
 * @param fileName The file's name (its extension picks the parser).
 * @param text The file's text.
 * @returns The specifiers, and the computed dynamic imports.
 */
export function findSpecifiers(
  fileName: string,
  text: string,
): FoundSpecifiers {
  const source = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    true,
  );
  const specifiers: FoundSpecifier[] = [];
  const computed: string[] = [];
  const add = (node: ts.StringLiteralLike) =>
    specifiers.push({
      value: node.text,
      start: node.getStart(source),
      end: node.getEnd(),
    });
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      literal(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier);
    } else if (
      ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) &&
      literal(node.argument.literal)
    ) {
      add(node.argument.literal);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      literal(node.moduleReference.expression)
    ) {
      add(node.moduleReference.expression);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword
    ) {
      const [first] = node.arguments;
      if (literal(first)) add(first);
      else {
        const { line, character } = source.getLineAndCharacterOfPosition(
          node.getStart(source),
        );
        computed.push(`${line + 1}:${character + 1}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { specifiers, computed };
}

/**
 * Replaces specifiers in a text.
 *
 * @param text The file's text.
 * @param found The specifiers {@linkcode findSpecifiers} found in it.
 * @param replace The new specifier for an old one, or `null` to keep it.
 * @returns The text with each replaced specifier double-quoted.
 */
export function replaceSpecifiers(
  text: string,
  found: readonly FoundSpecifier[],
  replace: (specifier: string) => string | null,
): string {
  let out = "";
  let at = 0;
  for (const { value, start, end } of found) {
    const next = replace(value);
    if (next === null) continue;
    out += text.slice(at, start) + JSON.stringify(next);
    at = end;
  }
  return out + text.slice(at);
}

/** A registry specifier taken apart. */
export interface RegistrySpecifier {
  /** `"npm"` or `"jsr"`. */
  registry: "npm" | "jsr";
  /** The package's name: `drizzle-orm`, `@portcullis/auth`. */
  name: string;
  /** The version range (`^0.45.4`), or `""` when the specifier has none. */
  range: string;
  /** The path inside the package without its leading slash, or `""`. */
  subpath: string;
}

/**
 * Takes an `npm:` or `jsr:` specifier apart:
 * `npm:/drizzle-orm@^0.45.4/sqlite-core` → `drizzle-orm`, `^0.45.4`,
 * `sqlite-core`.
 *
 * @param specifier The specifier.
 * @returns Its parts, or `null` for any other kind of specifier.
 */
export function parseRegistrySpecifier(
  specifier: string,
): RegistrySpecifier | null {
  const m = /^(npm|jsr):\/?((?:@[^/@]+\/)?[^/@]+)(?:@([^/]*))?(?:\/(.*))?$/
    .exec(specifier);
  if (m === null) return null;
  return {
    registry: m[1] as "npm" | "jsr",
    name: m[2],
    range: m[3] ?? "",
    subpath: m[4] ?? "",
  };
}
