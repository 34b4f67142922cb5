// An accessibility audit of the page a browser test has open: axe-core
// (npm `axe-core`) evaluated in the page through the DevTools protocol (so
// the app's Content-Security-Policy, which allows no inline script, stays
// in force), run for WCAG 2.1 A and AA and axe's best practices.
import axe from "axe-core";
import type { Page } from "playwright-core";

/** The rule sets the audit runs. */
export const AXE_TAGS: readonly string[] = [
  "wcag2a",
  "wcag2aa",
  "wcag21a",
  "wcag21aa",
  "best-practice",
];

/** One finding, as a line a person reads in a failed assertion. */
export type Finding = string;

/** axe-core's own source (its CommonJS build exports it as `source`). */
const SOURCE = (axe as unknown as { source: string }).source;

/**
 * Runs axe-core on the page as it is now (elements hidden, such as a
 * closed `<details>`, are not audited: open them first to audit them).
 *
 * @param page The page.
 * @returns One line per rule broken and element: `rule (impact): target`.
 */
export async function audit(page: Page): Promise<Finding[]> {
  if (!(await page.evaluate("typeof window.axe === 'object'"))) {
    await page.evaluate(SOURCE);
  }
  const tags = JSON.stringify(AXE_TAGS);
  // A string, run in the page: Deno's type check has no DOM.
  const violations = await page.evaluate(`(async () => {
    const result = await window.axe.run(document, {
      runOnly: { type: "tag", values: ${tags} },
      resultTypes: ["violations"],
    });
    return result.violations.flatMap((v) =>
      v.nodes.map((n) => v.id + " (" + v.impact + "): " + n.target.join(" ") +
        " — " + v.help)
    );
  })()`) as string[];
  return violations;
}
