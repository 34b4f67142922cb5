/**
 * The generated npm projects' own tests, run as their users run them:
 * examples/{bun,node,vercel_edge,cloudflare_workers} (the scaffold's output)
 * are copied out of the repository, their `@portcullis/*` dependencies
 * pointed at this checkout's npm build (`deno task npm`: the tarballs
 * `npm publish` would upload; JSR's npm packages are not reachable from the
 * build machines), installed by `npm install`, and `npm test` run: Bun's
 * `bun test` on `server.ts`, Node's build then `node --test` on the bundle,
 * the Edge Function in Vercel's `edge-runtime` (its stores: a private
 * `redis-server` behind the Upstash REST bridge, and the libSQL HTTP bridge
 * for Turso), the Worker under `wrangler dev` (workerd). Each must pass with
 * the security kit's checks run (a passed count above zero, none failed).
 * Then the Bun project with a rule broken on purpose
 * (`minPasswordLength: 8`, a password alone of 8 characters) must fail its
 * `npm test`, naming the check.
 *
 * The installs fetch the other npm dependencies from the registry (with
 * npm's cache). Bun is the one tests/run_all.ts installs into node_modules.
 * A missing Node, Bun, `redis-server` or registry prints `SKIPPED:`, and
 * fails under `CI=true`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { inCI, missing } from "./support/services.ts";
import { requireRedisBinaries, startRedis } from "./support/redis_servers.ts";
import { startUpstashBridge } from "./support/upstash_bridge.ts";
import { startLibsqlHttpBridge } from "./support/libsql_http_bridge.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const BIN = `${ROOT}node_modules/.bin`;
const decoder = new TextDecoder();

interface Run {
  ok: boolean;
  out: string;
  seconds: number;
}

async function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Run> {
  const started = performance.now();
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    env: { ...env, PATH: `${BIN}:${Deno.env.get("PATH")}` },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output().catch((error) => ({
    success: false,
    stdout: new TextEncoder().encode(`${cmd}: ${error.message}`),
    stderr: new Uint8Array(),
  }));
  return {
    ok: out.success,
    out: decoder.decode(out.stdout) + decoder.decode(out.stderr),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}

/** The kit's summary line in a test run's output, or `null`. */
function kitSummary(out: string): { passed: number; failed: number } | null {
  const m = out.match(/security kit: (\d+) passed, (\d+) failed/);
  return m ? { passed: Number(m[1]), failed: Number(m[2]) } : null;
}

/** Copies an example (no node_modules, dist or data) into `dir`. */
async function copyExample(name: string, dir: string): Promise<string> {
  const to = `${dir}/${name}`;
  const walk = async (from: string, into: string) => {
    await Deno.mkdir(into, { recursive: true });
    for await (const entry of Deno.readDir(from)) {
      if (["data", "node_modules", "dist"].includes(entry.name)) continue;
      if (entry.isDirectory) {
        await walk(`${from}/${entry.name}`, `${into}/${entry.name}`);
      } else {await Deno.copyFile(
          `${from}/${entry.name}`,
          `${into}/${entry.name}`,
        );}
    }
  };
  await walk(`${ROOT}examples/${name}`, to);
  return to;
}

/**
 * Points a copy's `@portcullis/*` at the tarballs, every dependency of one
 * of them at its tarball too (npm `overrides`), and installs it.
 */
async function install(copy: string, tarballs: Map<string, string>) {
  const pkg = JSON.parse(await Deno.readTextFile(`${copy}/package.json`));
  for (const name of Object.keys(pkg.dependencies)) {
    if (!name.startsWith("@portcullis/")) continue;
    assert.ok(tarballs.has(name), `${name} was built`);
    pkg.dependencies[name] = `file:${tarballs.get(name)}`;
  }
  pkg.overrides = Object.fromEntries(
    [...tarballs].map(([name, file]) => [name, `file:${file}`]),
  );
  await Deno.writeTextFile(`${copy}/package.json`, JSON.stringify(pkg));
  return await run("npm", [
    "install",
    "--no-audit",
    "--no-fund",
    "--prefer-offline",
  ], copy);
}

/**
 * Breaks a rule on purpose in the Bun project (a password alone of 8
 * characters, where the kit expects 15), and expects its `npm test` to fail
 * on that check.
 */
async function breakARule(copy: string): Promise<void> {
  const server = await Deno.readTextFile(`${copy}/server.ts`);
  const broken = server.replace(
    "\n  views,\n});",
    "\n  views,\n  minPasswordLength: 8,\n});",
  );
  assert.notEqual(broken, server, "server.ts was changed");
  await Deno.writeTextFile(`${copy}/server.ts`, broken);
  const tested = await run("npm", ["test"], copy);
  console.log(`bun, a rule broken: npm test ${tested.seconds} s`);
  assert.ok(!tested.ok, `npm test passed a broken rule\n${tested.out}`);
  assert.ok(kitSummary(tested.out)!.failed >= 1, tested.out.slice(-3000));
  assert.match(tested.out, /FAIL - registration with a password alone/);
}

async function available(cmd: string): Promise<boolean> {
  return (await run(cmd, ["--version"], ROOT)).ok;
}

/**
 * The Edge Function's stores, fresh: a private Redis behind the Upstash
 * bridge, and the libSQL HTTP bridge (a new database).
 */
async function edgeStores() {
  const redis = await startRedis();
  const upstash = startUpstashBridge({ redisPort: redis.port });
  const turso = await startLibsqlHttpBridge();
  return {
    env: {
      UPSTASH_REDIS_REST_URL: upstash.url,
      UPSTASH_REDIS_REST_TOKEN: upstash.token,
      DATABASE_URL: turso.url,
      DATABASE_AUTH_TOKEN: turso.token,
    },
    used: () => upstash.stats().commands > 0 && turso.stats().statements > 0,
    async close() {
      await upstash.close();
      await turso.close();
      await redis.kill();
    },
  };
}

Deno.test("the npm projects' own tests: npm test in examples/{bun,node,vercel_edge,cloudflare_workers} runs the security kit and passes; a rule broken on purpose fails it", async () => {
  if (!(await available("node"))) return void missing("node is not on PATH");
  if (!(await available("bun"))) {
    return void missing("Bun is not in node_modules (tests/run_all.ts)");
  }
  if (!(await requireRedisBinaries())) return;
  const stores = await edgeStores();
  const dir = await Deno.makeTempDir({ prefix: "portcullis-project-tests-" });
  try {
    const built = await run(
      Deno.execPath(),
      ["task", "npm", "--out", `${dir}/npm`],
      ROOT,
    );
    assert.ok(built.ok, built.out.slice(-3000));
    console.log(`deno task npm: ${built.seconds} s`);
    const tarballs = new Map<string, string>();
    for await (const entry of Deno.readDir(`${dir}/npm`)) {
      if (!entry.isDirectory) continue;
      const manifest = JSON.parse(
        await Deno.readTextFile(`${dir}/npm/${entry.name}/package.json`),
      );
      const file = `${
        manifest.name.slice(1).replace("/", "-")
      }-${manifest.version}.tgz`;
      tarballs.set(manifest.name, `${dir}/npm/${file}`);
    }
    // The installs at once (they wait on the network); the kits two at a
    // time, since each hashes at full strength and a throttle's Retry-After
    // is short: on a loaded machine a check could outlive it.
    const projects = ["vercel_edge", "bun", "node", "cloudflare_workers"];
    const copies = await Promise.all(projects.map(async (name) => {
      const copy = await copyExample(name, dir);
      const installed = await install(copy, tarballs);
      console.log(`${name}: npm install ${installed.seconds} s`);
      if (installed.ok) return copy;
      const offline = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT/;
      if (!inCI && offline.test(installed.out)) {
        return missing(`npm registry: ${installed.out.slice(-300)}`);
      }
      assert.fail(`${name}: npm install\n${installed.out.slice(-3000)}`);
    }));
    if (copies.includes(false)) return;
    const queue = projects.map((name, i) => [name, copies[i] as string]);
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [name, copy] = next;
        const env = name === "vercel_edge" ? stores.env : {};
        const tested = await run("npm", ["test"], copy, env);
        console.log(`${name}: npm test ${tested.seconds} s`);
        assert.ok(tested.ok, `${name}: npm test\n${tested.out.slice(-4000)}`);
        const summary = kitSummary(tested.out);
        assert.ok(summary, `${name}: no summary\n${tested.out.slice(-3000)}`);
        assert.ok(summary.passed > 0, `${name}: the kit's checks ran`);
        assert.equal(summary.failed, 0, name);
        if (name === "bun") await breakARule(copy);
      }
    };
    await Promise.all([worker(), worker()]);
    assert.ok(stores.used(), "the Edge Function used Upstash and Turso");
  } finally {
    await stores.close();
    await Deno.remove(dir, { recursive: true });
  }
});
