/**
 * One inference the isolated declaration emit lacks and Deno's type
 * extraction for JSR has: arithmetic on number literals is a `number`.
 * `export const TTL_MS = 15 * 60 * 1000;` publishes to JSR as it is, and
 * TypeScript's `transpileDeclaration` refuses it ("Variable must have an
 * explicit type annotation"). Before the declarations are emitted, each such
 * expression is asserted `as number`, which is its type in full TypeScript
 * too; the JavaScript is emitted from the source as written.
 *
 * @module
 */
// deno-lint-ignore no-import-prefix -- named here, not in the workspace's import map, so that no task but this build downloads it (deno task installs every import-map dependency)
import ts from "npm:typescript@6.0.3";

const ARITHMETIC = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.PlusToken,
  ts.SyntaxKind.MinusToken,
  ts.SyntaxKind.AsteriskToken,
  ts.SyntaxKind.AsteriskAsteriskToken,
  ts.SyntaxKind.SlashToken,
  ts.SyntaxKind.PercentToken,
  ts.SyntaxKind.LessThanLessThanToken,
  ts.SyntaxKind.GreaterThanGreaterThanToken,
  ts.SyntaxKind.GreaterThanGreaterThanGreaterThanToken,
  ts.SyntaxKind.AmpersandToken,
  ts.SyntaxKind.BarToken,
  ts.SyntaxKind.CaretToken,
]);

/** Whether an expression is made of number literals and arithmetic only. */
function numeric(node: ts.Expression): boolean {
  if (ts.isNumericLiteral(node)) return true;
  if (ts.isParenthesizedExpression(node)) return numeric(node.expression);
  if (ts.isPrefixUnaryExpression(node)) {
    return (node.operator === ts.SyntaxKind.MinusToken ||
      node.operator === ts.SyntaxKind.PlusToken ||
      node.operator === ts.SyntaxKind.TildeToken) && numeric(node.operand);
  }
  return ts.isBinaryExpression(node) &&
    ARITHMETIC.has(node.operatorToken.kind) && numeric(node.left) &&
    numeric(node.right);
}

/**
 * The source with each arithmetic expression of number literals asserted
 * `as number`, for the declaration emit only.
 *
 * @param fileName The file's name.
 * @param text Its text.
 * @returns The text to emit declarations from.
 */
export function assertArithmetic(fileName: string, text: string): string {
  const source = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    true,
  );
  const spans: [number, number][] = [];
  const visit = (node: ts.Node): void => {
    // An enum member's value must stay a constant expression.
    if (ts.isEnumDeclaration(node)) return;
    if (ts.isBinaryExpression(node) && numeric(node)) {
      spans.push([node.getStart(source), node.getEnd()]);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  let out = "";
  let at = 0;
  for (const [start, end] of spans) {
    out += `${text.slice(at, start)}((${text.slice(start, end)}) as number)`;
    at = end;
  }
  return out + text.slice(at);
}
