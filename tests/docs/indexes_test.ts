// The indexes list every package: README.md's package table and
// docs/README.md's name each package of the workspace (issue 31: the method
// packages and @portcullis/next were missing), and name nothing else.
import assert from "node:assert/strict";
import { workspacePackages } from "../../tools/workspace.ts";

const root = new URL("../../", import.meta.url);
const names = (await workspacePackages(root)).map((p) => p.config.name)
  .filter((name): name is string => typeof name === "string").sort();

for (const page of ["README.md", "docs/README.md"]) {
  Deno.test(`${page}'s package table lists every package of the workspace`, async () => {
    const text = await Deno.readTextFile(new URL(page, root));
    const listed = [
      ...text.matchAll(/^\| `(@portcullis\/[a-z-]+)` +\|/gm),
    ].map((m) => m[1]).sort();
    assert.deepEqual(listed, names);
  });
}
