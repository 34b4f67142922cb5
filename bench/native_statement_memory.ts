/**
 * What grows under `@libsql/client` on Deno: RSS per query for the native
 * statement paths, in one process, with a forced full GC every 10,000
 * queries and the event loop turned every 100 (so finalizers can run).
 *
 * ```sh
 * deno run -A --v8-flags=--expose-gc bench/native_statement_memory.ts
 * deno run -A --v8-flags=--expose-gc bench/native_statement_memory.ts --seconds 30 --modes client,prepare_all
 * ```
 *
 * Modes (each a fresh `:memory:` database of 200 users, one lookup by id
 * per query):
 *
 * - `client`: `@libsql/client` `execute` (what drizzle and the stores do:
 *   a new native statement and a native row cursor per query);
 * - `prepare_all`: libsql-js directly, `prepare` + `all` per query;
 * - `reused_all`: one statement prepared once, `all` per query (a native
 *   row cursor per query, no new statement);
 * - `reused_get`: one statement prepared once, `get` per query (no native
 *   object per query);
 * - `node_sqlite`: `node:sqlite`, one statement prepared once (what
 *   `packages/accounts/deno/_node_sqlite.ts` does).
 *
 * Prints RSS at the end of the first and the last quarter and the growth
 * per query between them; a figure near 0 is a plateau.
 *
 * @module
 */
import { createClient } from "@libsql/client";
import Database from "libsql";
import { DatabaseSync } from "node:sqlite";
import { flags, machineNote } from "./_app_load.ts";

const args = flags(Deno.args);
const seconds = Number(args.seconds ?? 20);
const modes = (args.modes ??
  "client,prepare_all,reused_all,reused_get,node_sqlite").split(",");
// deno-lint-ignore no-explicit-any
const gc = (globalThis as any).gc as (() => void) | undefined;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");

const SELECT = "SELECT id, email FROM users WHERE id = ?";
const CREATE = "CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT)";
const INSERT = "INSERT INTO users VALUES (?, ?)";

function rss(): number {
  return Deno.memoryUsage().rss / 1048576;
}

async function lookups(mode: string): Promise<(id: string) => unknown> {
  switch (mode) {
    case "client": {
      const client = createClient({ url: ":memory:" });
      await client.execute(CREATE);
      for (let i = 0; i < 200; i++) {
        await client.execute({ sql: INSERT, args: [`u${i}`, `u${i}@x`] });
      }
      return (id) => client.execute({ sql: SELECT, args: [id] });
    }
    case "node_sqlite": {
      const db = new DatabaseSync(":memory:");
      db.exec(CREATE);
      const insert = db.prepare(INSERT);
      for (let i = 0; i < 200; i++) insert.run(`u${i}`, `u${i}@x`);
      const select = db.prepare(SELECT);
      return (id) => select.all(id);
    }
    default: {
      const db = new Database(":memory:");
      db.exec(CREATE);
      for (let i = 0; i < 200; i++) {
        db.prepare(INSERT).run(`u${i}`, `u${i}@x`);
      }
      const select = db.prepare(SELECT);
      if (mode === "prepare_all") return (id) => db.prepare(SELECT).all(id);
      if (mode === "reused_all") return (id) => select.all(id);
      if (mode === "reused_get") return (id) => select.get(id);
      throw new Error(`unknown mode ${mode}`);
    }
  }
}

async function run(mode: string) {
  const lookup = await lookups(mode);
  const t0 = performance.now();
  const marks: { t: number; n: number; rss: number }[] = [];
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    await new Promise((r) => setTimeout(r, 0));
    for (let k = 0; k < 100; k++) await lookup(`u${n++ % 200}`);
    if (n % 10_000 === 0) {
      gc!();
      marks.push({ t: performance.now() - t0, n, rss: rss() });
    }
  }
  const a = marks[Math.floor(marks.length / 4)];
  const b = marks[marks.length - 1];
  return {
    mode,
    queries: n,
    from: a.rss,
    to: b.rss,
    bytesPerQuery: ((b.rss - a.rss) * 1048576) / (b.n - a.n),
  };
}

if (Deno.args.includes("--child")) {
  console.log(JSON.stringify(await run(modes[0])));
  Deno.exit(0);
}

console.log(
  `\n${seconds} s per mode, forced GC every 10,000 queries. ${machineNote()}.\n`,
);
console.log(
  "| mode | queries | RSS after the first quarter → end (MiB) | bytes per query after the first quarter |",
);
console.log("| --- | --- | --- | --- |");
for (const mode of modes) {
  // Each mode in its own process, so one's garbage is not the next's RSS.
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL(import.meta.url).pathname,
      "--child",
      "--modes",
      mode,
      "--seconds",
      String(seconds),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const r = JSON.parse(new TextDecoder().decode(out.stdout).trim());
  console.log(
    `| ${r.mode} | ${r.queries} | ${r.from.toFixed(1)} → ${r.to.toFixed(1)} | ${
      r.bytesPerQuery.toFixed(0)
    } |`,
  );
}
