// The first start (`deno task start`) downloads only what the reference app
// imports: Deno fetches every npm package of the lockfile it is given, so the
// start task gets a lockfile of its own (examples/app/deno.lock) that holds
// the app's module graph and nothing else. bench/first_start.ts measures the
// download on an empty cache; these tests keep the lockfile honest.
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);
const APP_LOCK = "examples/app/deno.lock";
const MAIN = "examples/app/main.ts";

interface Info {
  npmPackages?: Record<string, unknown>;
}

async function startGraph(): Promise<{ ok: boolean; info: Info; err: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", `--lock=${APP_LOCK}`, "--frozen", MAIN],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  return {
    ok: out.success,
    info: out.success ? JSON.parse(text) : {},
    err: new TextDecoder().decode(out.stderr),
  };
}

function names(packages: Iterable<string>): Set<string> {
  // "@scope/name@1.2.3" or "name@1.2.3_peer@4" → the package name.
  return new Set(
    [...packages].map((p) => p.slice(0, p.indexOf("@", 1))),
  );
}

Deno.test("the start task resolves the app from its own lockfile", async () => {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("deno.json", root)),
  );
  assert.match(config.tasks.start, new RegExp(`--lock=${APP_LOCK}`));
  const { ok, err } = await startGraph();
  assert.ok(ok, `the app's graph is not in ${APP_LOCK} (frozen): ${err}`);
});

Deno.test("the app's lockfile holds exactly the npm packages the app imports", async () => {
  const { ok, info, err } = await startGraph();
  assert.ok(ok, err);
  const graph = Object.keys(info.npmPackages ?? {}).sort();
  const lock = JSON.parse(await Deno.readTextFile(new URL(APP_LOCK, root)));
  const locked = Object.keys(lock.npm ?? {}).sort();
  // Anything more in the lockfile would be downloaded on the first start.
  assert.deepEqual(locked, graph);
});

Deno.test("the first start downloads no driver or hasher the app does not use", async () => {
  const { ok, info, err } = await startGraph();
  assert.ok(ok, err);
  const reached = names(Object.keys(info.npmPackages ?? {}));
  for (
    const unused of [
      "@libsql/client", // a local start opens SQLite through node:sqlite
      "libsql",
      "@redis/client",
      "@upstash/redis",
      "hash-wasm",
      "bcryptjs",
      "@types/node",
    ]
  ) {
    assert.ok(!reached.has(unused), `the app's start reaches ${unused}`);
  }
  // A control: the check sees the packages the app does import.
  assert.ok(reached.has("drizzle-orm"));
});
