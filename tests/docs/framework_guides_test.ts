// Every framework guide runs as written: each file it spells out whole (a
// fenced block with `file=<path>`) is what tests/frameworks builds and
// serves, written over a copy of the example. Here, without a build: each
// such block is the example's own file, byte for byte, so the example a
// user copies and the guide a user reads are one.
import assert from "node:assert/strict";
import { guideFiles, ROOT } from "../frameworks/_support.ts";

const GUIDES: Record<string, string> = {
  "docs/frameworks/express.md": "examples/express",
  "docs/frameworks/hono.md": "examples/hono",
  "docs/frameworks/nextjs.md": "examples/nextjs",
  "docs/frameworks/sveltekit.md": "examples/sveltekit",
  "docs/frameworks/astro.md": "examples/astro",
  "docs/frameworks/elysia.md": "examples/elysia",
};

for (const [guide, example] of Object.entries(GUIDES)) {
  Deno.test(`${guide}: every file it spells out is ${example}'s own`, async () => {
    const files = await guideFiles(`${ROOT}/${guide}`);
    assert.ok(files.size > 0, `${guide} has no file= blocks`);
    for (const [path, text] of files) {
      const own = await Deno.readTextFile(`${ROOT}/${example}/${path}`);
      assert.equal(text, own, `${guide}'s ${path} differs from ${example}'s`);
    }
  });
}

Deno.test("a guide's file= block names each file once", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const page =
      "```ts ignore file=a.ts\nx\n```\n\n```ts ignore file=a.ts\ny\n```\n";
    await Deno.writeTextFile(`${dir}/g.md`, page);
    await assert.rejects(() => guideFiles(`${dir}/g.md`), /a\.ts twice/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
