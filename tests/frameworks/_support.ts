/**
 * What every framework test needs: this checkout's packages as npm
 * tarballs (`deno task npm`, once per run), an example copied out and its
 * dependencies installed from its lockfile plus those tarballs, a server started by the
 * framework's own command on a free port and stopped by its PID. The HTTP
 * scenario every mount passes is in `_flows.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { inCI, missing } from "../support/services.ts";

/** The checkout's root, without a trailing slash. */
export const ROOT: string = new URL("../../", import.meta.url).pathname
  .replace(/\/$/, "");

const decoder = new TextDecoder();

/** The outcome of {@linkcode run}. */
export interface RunResult {
  /** Whether the command exited with 0. */
  ok: boolean;
  /** Standard output and error, joined. */
  out: string;
  /** How long it took, in milliseconds. */
  ms: number;
}

/**
 * Runs a command to its end.
 *
 * @param cmd The program.
 * @param args Its arguments.
 * @param options The working directory and extra environment variables.
 * @returns Its outcome.
 */
export async function run(
  cmd: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<RunResult> {
  const started = performance.now();
  const out = await new Deno.Command(cmd, {
    args,
    cwd: options.cwd ?? ROOT,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    ok: out.success,
    out: decoder.decode(out.stdout) + decoder.decode(out.stderr),
    ms: Math.round(performance.now() - started),
  };
}

let built: Promise<Record<string, string>> | undefined;

/** A digest of everything the npm build reads, so test files share one build. */
async function sourceDigest(): Promise<string> {
  const parts: string[] = [];
  const walk = async (dir: string) => {
    const entries = [...Deno.readDirSync(dir)].sort((a, b) =>
      a.name < b.name ? -1 : 1
    );
    for (const entry of entries) {
      if (["node_modules", "dist", "data", ".git"].includes(entry.name)) {
        continue;
      }
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (/\.(ts|json|md|wasm|txt)$|^LICENSE$/.test(entry.name)) {
        parts.push(path, await Deno.readTextFile(path));
      }
    }
  };
  for (const dir of ["lib", "packages", "stores", "tools"]) {
    await walk(`${ROOT}/${dir}`);
  }
  for (const file of ["mod.ts", "deno.json", "LICENSE"]) {
    parts.push(file, await Deno.readTextFile(`${ROOT}/${file}`));
  }
  const hash = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(parts.join("\0")),
  );
  return [...new Uint8Array(hash).slice(0, 8)]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Builds this checkout's packages for npm (`deno task npm`, as they are
 * published), once per change of their sources: the build lands in a
 * folder of the system's temporary directory named by a digest of the
 * sources, which every framework test file (each in an isolate of its own)
 * then shares.
 *
 * @returns Package name without the scope (`auth`, `accounts`, `next`, …)
 * → its tarball.
 * @throws {Error} When the build fails.
 */
export function packPortcullis(): Promise<Record<string, string>> {
  built ??= (async () => {
    const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
    const dir = `${tmp}/portcullis-npm-${await sourceDigest()}`;
    let done = false;
    try {
      await Deno.stat(`${dir}/.done`);
      done = true;
    } catch {
      // not built yet
    }
    if (!done) {
      const scratch = await Deno.makeTempDir({ prefix: "portcullis-npm-" });
      const r = await run(Deno.execPath(), ["task", "npm", "--out", scratch]);
      if (!r.ok) {
        await Deno.remove(scratch, { recursive: true }).catch(() => {});
        throw new Error(`deno task npm failed: ${r.out.slice(-3000)}`);
      }
      await Deno.writeTextFile(`${scratch}/.done`, "");
      // Another test file may have finished first: either copy serves.
      await Deno.rename(scratch, dir).catch(async () => {
        await Deno.remove(scratch, { recursive: true }).catch(() => {});
      });
    }
    const out: Record<string, string> = {};
    for await (const entry of Deno.readDir(dir)) {
      const name = entry.name.match(/^portcullis-(.+)-\d+\.\d+\.\d+.*\.tgz$/)
        ?.[1];
      if (entry.isFile && name) out[name] = `${dir}/${entry.name}`;
    }
    return out;
  })();
  return built;
}

/** What an example that mounts `@portcullis/accounts` installs. */
export const ACCOUNTS_PACKAGES: string[] = [
  "auth",
  "bytes",
  "common-passwords",
  "sql",
  "libsql-kv",
  "accounts",
  "totp",
  "passkeys",
];

/** An example copied out of the checkout with its dependencies installed. */
export interface PreparedExample {
  /** Whether everything installed (`false` only outside CI: skipped). */
  ok: boolean;
  /** The copy's folder. */
  dir: string;
  /** How long the copy and the installs took, in milliseconds. */
  ms: number;
  /** Removes the copy. */
  remove(): Promise<void>;
}

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (["node_modules", ".next", "dist", "data"].includes(entry.name)) {
      continue;
    }
    if (entry.isDirectory) {
      await copyTree(`${from}/${entry.name}`, `${to}/${entry.name}`);
    } else if (entry.isFile) {
      await Deno.copyFile(`${from}/${entry.name}`, `${to}/${entry.name}`);
    }
  }
}

/**
 * The files a framework guide spells out whole: each fenced block whose
 * info string names a `file=<path>` (relative to the example's folder),
 * such as ` ```js ignore file=server.mjs `. A path given twice is refused.
 *
 * @param path The guide's Markdown file.
 * @returns Path → the block's text.
 * @throws {Error} When a path appears twice.
 */
export async function guideFiles(path: string): Promise<Map<string, string>> {
  const text = await Deno.readTextFile(path);
  const files = new Map<string, string>();
  const fence = /^```[^\n]*\bfile=(\S+)[^\n]*\n([\s\S]*?)^```$/gm;
  for (const m of text.matchAll(fence)) {
    if (files.has(m[1])) throw new Error(`${path} gives ${m[1]} twice`);
    files.set(m[1], m[2]);
  }
  return files;
}

/**
 * Copies `examples/<name>` out of the checkout (as a user would copy it;
 * no `node_modules`, no build output), installs its pinned dependencies
 * with `npm ci` from its committed lockfile, then this checkout's tarballs
 * without saving them. With `guide`, the guide's files
 * ({@linkcode guideFiles}) are written over the copy first, so the build
 * runs the guide as written. A failed install fails the test under `CI=true`;
 * elsewhere it prints `SKIPPED:` and answers `ok: false`.
 *
 * @param name The example's folder under `examples/`.
 * @param members The packages to add, by name without the scope (`auth`,
 * `accounts`, …; see {@linkcode ACCOUNTS_PACKAGES}).
 * @returns The prepared copy.
 */
export async function prepareExample(
  name: string,
  members: string[],
  options: { guide?: string } = {},
): Promise<PreparedExample> {
  const tarballs = await packPortcullis();
  const started = performance.now();
  const dir = await Deno.makeTempDir({ prefix: `portcullis-${name}-` });
  const remove = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  await copyTree(`${ROOT}/examples/${name}`, dir);
  if (options.guide) {
    // The guide runs as written: its files are what gets built and served.
    const files = await guideFiles(`${ROOT}/${options.guide}`);
    assert.ok(files.size > 0, `${options.guide} has no file= blocks`);
    for (const [path, text] of files) {
      const target = `${dir}/${path}`;
      await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), {
        recursive: true,
      });
      await Deno.writeTextFile(target, text);
    }
  }
  const npm = async (args: string[]) => {
    // --prefer-offline: what the lockfile pins and the cache holds is
    // taken from the cache without asking the registry again.
    const r = await run("npm", [
      ...args,
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
    ], { cwd: dir }).catch((error: Error) => ({
      ok: false,
      out: `npm could not run: ${error.message}`,
      ms: 0,
    }));
    if (!r.ok) {
      const why = `npm ${args[0]} failed for examples/${name}: ${
        r.out.slice(-1500)
      }`;
      if (inCI) {
        await remove();
        assert.fail(why);
      }
      missing(why);
    }
    return r.ok;
  };
  let ok = await npm(["ci"]);
  ok &&= await npm([
    "install",
    "--no-save",
    ...members.map((m) => {
      const tarball = tarballs[m];
      if (tarball === undefined) throw new Error(`no npm package "${m}"`);
      return tarball;
    }),
  ]);
  return { ok, dir, ms: Math.round(performance.now() - started), remove };
}

/**
 * A free TCP port on 127.0.0.1.
 *
 * @returns The port.
 */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * A random `AUTH_SECRET` (48 bytes, base64).
 *
 * @returns The secret.
 */
export function randomSecret(): string {
  return btoa(
    String.fromCharCode(...crypto.getRandomValues(new Uint8Array(48))),
  );
}

/** A server started by {@linkcode startServer}. */
export interface Server {
  /** Its process id. */
  pid: number;
  /** Whatever it printed so far. */
  output(): string;
  /** Stops it and every process it started, by PID. */
  stop(): Promise<void>;
}

/** The child processes of `pid`, and theirs, read from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  try {
    for (const entry of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      try {
        const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
        const ppid = Number(
          stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1],
        );
        const list = children.get(ppid) ?? [];
        list.push(Number(entry.name));
        children.set(ppid, list);
      } catch {
        // the process ended meanwhile
      }
    }
  } catch {
    return []; // no /proc: only the direct child is stopped
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/**
 * Starts a server and waits until `url` answers (any status).
 *
 * @param cmd The program and its arguments.
 * @param options The folder, the environment, the URL to poll, how long.
 * @returns The server.
 * @throws {Error} When it exits or does not answer in time (with its output).
 */
export async function startServer(
  cmd: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    url: string;
    timeoutMs?: number;
  },
): Promise<Server> {
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  let exited = false;
  child.status.then(() => exited = true);
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) text += decoder.decode(chunk);
  };
  const pumped = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const server: Server = {
    pid: child.pid,
    output: () => text,
    async stop() {
      // SIGTERM first; a server still draining keep-alive connections
      // after 3 seconds gets SIGKILL.
      const pids = [...descendants(child.pid).reverse(), child.pid];
      const signal = (name: Deno.Signal) => {
        for (const pid of pids) {
          try {
            Deno.kill(pid, name);
          } catch {
            // already gone
          }
        }
      };
      signal("SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((r) => {
        timer = setTimeout(() => r("late"), 3000);
      });
      if (await Promise.race([child.status, late]) === "late") {
        signal("SIGKILL");
      }
      clearTimeout(timer);
      await child.status;
      await pumped.catch(() => {});
    },
  };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline && !exited) {
    try {
      const res = await fetch(options.url, { redirect: "manual" });
      await res.body?.cancel();
      return server;
    } catch {
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  await server.stop();
  throw new Error(
    `${cmd.join(" ")} did not answer ${options.url}: ${text.slice(-2000)}`,
  );
}
