/**
 * What a new user's first `deno task start` downloads: a fresh clone of this
 * repository, an empty `DENO_DIR`, the README's start command, and once the
 * app answers `GET /` with 200:
 * - `downloadMiB`: the bytes fetched from the npm registry (each package's
 *   tarball, as the registry sizes it, plus the package documents Deno kept);
 * - `cacheMiB`: the whole cache on disk (unpacked packages, V8 code caches);
 * - `npmUnpackedMiB`: the unpacked packages alone.
 * Also reports whether Deno printed its "ignored build scripts" warning box.
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
const kib = async (path: string) =>
  Number((await sh("du", ["-sk", path])).split("\t")[0]);
const size = await kib(cache);
const npmDir = `${cache}/npm/registry.npmjs.org`;
const packages: string[] = [];
for await (const e of Deno.readDir(npmDir)) packages.push(e.name);

/** Every `name@version` unpacked in the cache, and the documents' bytes. */
async function cached(): Promise<{ versions: string[]; documents: number }> {
  const versions: string[] = [];
  let documents = 0;
  const walk = async (dir: string, name: string) => {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name === "registry.json") {
        documents += (await Deno.stat(`${dir}/${e.name}`)).size;
      } else if (e.isDirectory && /^\d/.test(e.name)) {
        versions.push(`${name}@${e.name.replace(/_\d+$/, "")}`);
      } else if (e.isDirectory && name === "") {
        await walk(`${dir}/${e.name}`, e.name);
      } else if (e.isDirectory && name.startsWith("@") && !name.includes("/")) {
        await walk(`${dir}/${e.name}`, `${name}/${e.name}`);
      }
    }
  };
  await walk(npmDir, "");
  return { versions, documents };
}

/** The tarball's size as the registry answers it. */
async function tarballBytes(version: string): Promise<number> {
  const at = version.lastIndexOf("@");
  const name = version.slice(0, at);
  const url = `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${
    version.slice(at + 1)
  }.tgz`;
  const res = await fetch(url, { method: "HEAD" });
  await res.body?.cancel();
  return Number(res.headers.get("content-length") ?? 0);
}

const { versions, documents } = await cached();
let tarballs = 0;
for (const v of versions) tarballs += await tarballBytes(v);
const mib = (bytes: number) => Number((bytes / 1024 / 1024).toFixed(1));
const text = output.join("");
console.log(
  JSON.stringify(
    {
      answered: status,
      seconds: Number(seconds.toFixed(1)),
      downloadMiB: mib(tarballs + documents),
      cacheMiB: mib(size * 1024),
      npmUnpackedMiB: mib((await kib(npmDir)) * 1024),
      warningBox: /Ignored build scripts|╭/.test(text),
      npmPackages: packages.sort(),
    },
    null,
    2,
  ),
);
await Deno.remove(scratch, { recursive: true });
