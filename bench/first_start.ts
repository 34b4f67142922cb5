/**
 * What a new user's first `deno task start` downloads: a fresh clone of this
 * repository, an empty `DENO_DIR`, the README's start command, and the size
 * of the cache once the app answers `GET /` with 200. Also reports whether
 * Deno printed its "ignored build scripts" warning box.
 *
 * Usage: `deno run -A bench/first_start.ts` (needs the npm registry).
 *
 * @module
 */

const root = new URL("../", import.meta.url).pathname;
const scratch = await Deno.makeTempDir({ prefix: "portcullis-first-start-" });
const cache = `${scratch}/deno_dir`;
const clone = `${scratch}/clone`;

async function sh(cmd: string, args: string[], cwd?: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped" })
    .output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed`);
  return new TextDecoder().decode(out.stdout);
}

await sh("git", ["clone", "-q", root, clone]);
const port = 18_000 + Math.floor(Math.random() * 1000);
const child = new Deno.Command(Deno.execPath(), {
  args: ["task", "start"],
  cwd: clone,
  env: { DENO_DIR: cache, PORT: String(port) },
  stdout: "piped",
  stderr: "piped",
}).spawn();
const output: string[] = [];
const decoder = new TextDecoder();
for (const stream of [child.stdout, child.stderr]) {
  (async () => {
    for await (const chunk of stream) output.push(decoder.decode(chunk));
  })();
}
const started = performance.now();
let status = 0;
while (performance.now() - started < 180_000) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    await res.body?.cancel();
    status = res.status;
    if (status === 200) break;
  } catch {
    // not listening yet
  }
  await new Promise((r) => setTimeout(r, 500));
}
const seconds = (performance.now() - started) / 1000;
child.kill("SIGTERM");
await child.status;
const size = (await sh("du", ["-sk", cache])).split("\t")[0];
const npmDir = `${cache}/npm/registry.npmjs.org`;
const packages: string[] = [];
for await (const e of Deno.readDir(npmDir)) packages.push(e.name);
const text = output.join("");
console.log(
  JSON.stringify(
    {
      answered: status,
      seconds: Number(seconds.toFixed(1)),
      downloadMiB: Number((Number(size) / 1024).toFixed(1)),
      warningBox: /Ignored build scripts|╭/.test(text),
      npmPackages: packages.sort(),
    },
    null,
    2,
  ),
);
await Deno.remove(scratch, { recursive: true });
