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

Deno.test("deno doc --lint is clean on every published entry point", async () => {
  const config = JSON.parse(await Deno.readTextFile("deno.json"));
  const entries = Object.values(config.exports as Record<string, string>)
    .filter((path) => path.endsWith(".ts"));
  assert.ok(entries.length >= 10, `${entries.length} entries`);
  const r = await deno("doc", "--lint", ...entries);
  assert.ok(r.ok, r.out);
});
