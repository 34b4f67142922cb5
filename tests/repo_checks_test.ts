// The quick repository checks of `deno task check` (fmt, lint, doc lint of
// the main entry), run with the suite so CI refuses what review would.
import assert from "node:assert/strict";

async function deno(...args: string[]): Promise<{ ok: boolean; out: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  return { ok: out.success, out: text.slice(-2000) };
}

Deno.test("deno fmt --check is clean", async () => {
  const r = await deno("fmt", "--check");
  assert.ok(r.ok, r.out);
});

Deno.test("deno lint is clean", async () => {
  const r = await deno("lint");
  assert.ok(r.ok, r.out);
});

Deno.test("deno doc --lint is clean on every published entry point of every package", async () => {
  const root = JSON.parse(await Deno.readTextFile("deno.json"));
  const entries: string[] = [];
  for (const dir of [".", ...root.workspace as string[]]) {
    const c = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`));
    if (!c.name) continue;
    const exp = typeof c.exports === "string" ? { ".": c.exports } : c.exports;
    for (const path of Object.values(exp as Record<string, string>)) {
      if (path.endsWith(".ts")) {
        entries.push(`${dir}/${path.replace(/^\.\//, "")}`);
      }
    }
  }
  assert.ok(entries.length >= 15, `${entries.length} entries`);
  const r = await deno("doc", "--lint", ...entries);
  assert.ok(r.ok, r.out);
});
