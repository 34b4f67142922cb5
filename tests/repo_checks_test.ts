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

Deno.test("published code calls nothing Node 20 lacks (Promise.withResolvers, Array.fromAsync, Object.groupBy, Map.groupBy): the npm packages run on Node 20", async () => {
  const missing =
    /\b(Promise\.withResolvers|Array\.fromAsync|(?:Object|Map)\.groupBy)\b/;
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        if (entry.name !== "node_modules") await walk(path);
      } else if (
        /\.tsx?$/.test(entry.name) && !/_test\.tsx?$/.test(entry.name)
      ) {
        const lines = (await Deno.readTextFile(path)).split("\n");
        lines.forEach((line, i) => {
          if (missing.test(line) && !/^\s*(\/\/|\*)/.test(line)) {
            found.push(`${path}:${i + 1}: ${line.trim()}`);
          }
        });
      }
    }
  };
  for (const dir of ["lib", "stores", "packages"]) await walk(dir);
  assert.deepEqual(found, []);
});
