/**
 * The examples run as copied: each folder under examples/ (except the
 * reference app) is copied out of the repository and started on its
 * runtime, then driven over HTTP. The minimal examples (hono) serve
 * register, a taken email, a wrong password, login, `/me` by Bearer token
 * and by cookie, a cross-site POST, logout, the logged-out token refused,
 * and repeated failures throttled; the runtime examples the scaffold
 * generates (bun, node, deno_deploy, vercel_edge, cloudflare_workers: the
 * whole app over `@portcullis/accounts`) serve the accounts' contract:
 * register, a taken email, bad input, a wrong password, login, `/api/me`,
 * a cross-site POST, a note, a page rendered from the project's views, a
 * mailed link logged, logout and the logged-out token refused.
 *
 * `@portcullis/*` resolve to this checkout, because JSR (where the copies'
 * `jsr:@portcullis/…` and `npm:@jsr/portcullis__…` names point) is not
 * reachable from the build machines:
 *
 * - Deno examples (deno_deploy, magic_link; hono in tests/frameworks): the copy's deno.json with
 *   its `@portcullis/*` entries replaced by this checkout's files, every
 *   other entry kept; then the copy's own `deno task start`.
 * - npm examples (bun, node, vercel_edge, cloudflare_workers): type-checked
 *   by `deno check` against the same local map plus their package.json
 *   dependencies, then bundled by esbuild with `@portcullis/*` mapped to
 *   this checkout (npm packages from the repository's node_modules, which
 *   tests/run_all.ts installs from tests/conformance/npm_packages.json), and
 *   run: Bun on the sources (`bun run src/server.ts`, the packages linked into
 *   node_modules as an install would), the Edge Function in Vercel's
 *   `edge-runtime` against the Upstash bridge (to a private `redis-server`)
 *   and the libSQL HTTP bridge, the Worker
 *   in workerd (Miniflare) with a KV namespace, a D1 database and
 *   production's PBKDF2 cap (tests/conformance/_workers_pbkdf2_cap.ts), so
 *   its passwords are hashed in the imported WebAssembly module.
 * - The Node example: bundled by esbuild as its `npm run build` does (npm
 *   packages external, from the repository's node_modules; `@portcullis/*`
 *   from this checkout), then Node on the bundle.
 *
 * The npm projects' own tests (`npm test`, the security kit) run in
 * tests/project_tests_test.ts. A runtime or service that is missing prints
 * `SKIPPED:`, and fails under `CI=true`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import {
  bundle,
  linkPackageForBun,
  npmImports,
  ROOT,
  stopBundler,
  workspacePackages,
} from "./conformance/_import_map.ts";
import {
  freePort,
  randomSecret,
  scratchDir,
  type ServerProcess,
  spawnServer,
  waitForHttp,
} from "./conformance/_runner.ts";
import { missing } from "./support/services.ts";
import { requireRedisBinaries, startRedis } from "./support/redis_servers.ts";
import { startUpstashBridge } from "./support/upstash_bridge.ts";
import { startLibsqlHttpBridge } from "./support/libsql_http_bridge.ts";

const EXAMPLES = `${ROOT}/examples`;
const PASSWORD = "correct horse battery staple";

/** `@portcullis/<name>[/<subpath>]` → this checkout's file, for every export. */
function localPortcullis(): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pkg of workspacePackages) {
    for (const [sub, file] of Object.entries(pkg.exports)) {
      map[pkg.name + sub.slice(1)] = pathToFileURL(file).href;
    }
  }
  return map;
}

/**
 * The import map a copy runs with: its own entries, `@portcullis/*`
 * replaced by this checkout, and the npm entries the packages' own
 * deno.json files carry (a copy outside the workspace resolves the
 * packages' imports through its own map).
 */
function localImportMap(own: Record<string, string>): Record<string, string> {
  const kept = Object.fromEntries(
    Object.entries(own).filter(([name]) => !name.startsWith("@portcullis/")),
  );
  return { ...npmImports, ...kept, ...localPortcullis() };
}

/** Copies an example folder (no data, no node_modules) into `dir`. */
async function copyExample(name: string, dir: string): Promise<string> {
  const to = `${dir}/${name}`;
  const walk = async (from: string, into: string) => {
    await Deno.mkdir(into, { recursive: true });
    for await (const entry of Deno.readDir(from)) {
      if (["data", "node_modules", "dist", "vendor"].includes(entry.name)) {
        continue;
      }
      if (entry.isDirectory) {
        await walk(`${from}/${entry.name}`, `${into}/${entry.name}`);
      } else {await Deno.copyFile(
          `${from}/${entry.name}`,
          `${into}/${entry.name}`,
        );}
    }
  };
  await walk(`${EXAMPLES}/${name}`, to);
  return to;
}

/**
 * Rewrites a copied Deno example's deno.json to this checkout, then
 * type-checks, formats and lints the copy with it (the repository's own
 * config leaves examples/hono out: its `hono` would be downloaded on the
 * reference app's first start).
 */
async function pointDenoJsonHere(copy: string): Promise<void> {
  const config = JSON.parse(await Deno.readTextFile(`${copy}/deno.json`));
  config.imports = localImportMap(config.imports ?? {});
  await Deno.writeTextFile(`${copy}/deno.json`, JSON.stringify(config));
  // The repository's resolutions, so that the copy loads what CI pinned.
  await Deno.copyFile(`${ROOT}/tests/deno.lock`, `${copy}/deno.lock`);
  await run([Deno.execPath(), "check", "main.ts"], copy);
  await run([
    Deno.execPath(),
    "fmt",
    "--check",
    "--ignore=deno.json,deno.lock",
  ], copy);
  await run([Deno.execPath(), "lint"], copy);
}

/** An npm example's dependencies as Deno import-map entries. */
function npmDependencies(pkg: { dependencies?: Record<string, string> }) {
  const map: Record<string, string> = {};
  for (const [name, range] of Object.entries(pkg.dependencies ?? {})) {
    if (range.startsWith("npm:@jsr/")) continue; // @portcullis/*: local
    map[name] = `npm:${name}@${range}`;
    map[`${name}/`] = `npm:/${name}@${range}/`;
  }
  return map;
}

async function run(cmd: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `${cmd.join(" ")} failed:\n${text.slice(-3000)}`);
  return text;
}

async function post(base: string, path: string, init: {
  json?: unknown;
  bearer?: string;
  cookie?: string;
  headers?: Record<string, string>;
} = {}): Promise<Response> {
  const headers: Record<string, string> = {
    accept: "application/json",
    ...init.headers,
  };
  if (init.json !== undefined) headers["content-type"] = "application/json";
  if (init.bearer) headers.authorization = `Bearer ${init.bearer}`;
  if (init.cookie) headers.cookie = init.cookie;
  return await fetch(base + path, {
    method: "POST",
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
}

async function me(
  base: string,
  path: string,
  auth: { bearer?: string; cookie?: string },
): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (auth.bearer) headers.authorization = `Bearer ${auth.bearer}`;
  if (auth.cookie) headers.cookie = auth.cookie;
  return await fetch(base + path, { headers });
}

/**
 * The accounts' contract as every generated runtime example serves it
 * (JSON for the API, HTML from the project's views): register, a taken
 * email, bad input, a wrong password, login, `/api/me`, a cross-site post
 * refused, a note (the project's own module), the login page from the
 * project's `views/`, a mailed link logged (no mail API configured), and
 * logout.
 */
async function driveAccountsFlow(
  base: string,
  output?: () => string,
): Promise<void> {
  const email = `ex-${crypto.randomUUID()}@example.com`;
  const reg = await post(base, "/register", {
    json: { email, password: PASSWORD },
  });
  assert.equal(reg.status, 201, await reg.clone().text());
  const created = await reg.json();
  assert.equal(typeof created.subject, "string");
  const taken = await post(base, "/register", {
    json: { email, password: PASSWORD },
  });
  assert.equal(taken.status, 409);
  await taken.body?.cancel();
  const bad = await post(base, "/register", { json: { email: "x" } });
  assert.equal(bad.status, 422);
  await bad.body?.cancel();
  const wrong = await post(base, "/login", {
    json: { email, password: "not the password" },
  });
  assert.equal(wrong.status, 401);
  await wrong.body?.cancel();
  const forged = await post(base, "/login", {
    json: { email, password: PASSWORD },
    headers: { "sec-fetch-site": "cross-site" },
  });
  assert.equal(forged.status, 403, "a cross-site post is refused");
  await forged.body?.cancel();
  const login = await post(base, "/login", {
    json: { email: email.toUpperCase(), password: PASSWORD },
  });
  assert.equal(login.status, 200);
  const { token } = await login.json();
  const who = await me(base, "/api/me", { bearer: token });
  assert.equal(who.status, 200);
  assert.equal((await who.json()).email, email);
  const anonymous = await me(base, "/api/me", {});
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
  // The project's own module: unverified accounts write no notes.
  const note = await post(base, "/api/notes", {
    json: { text: "hello" },
    bearer: token,
  });
  assert.equal(note.status, 403);
  await note.body?.cancel();
  // A page from the project's views, framed by its layout.
  const page = await fetch(`${base}/login`, {
    headers: { accept: "text/html" },
  });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<h1>Log in<\/h1>/);
  // Without a mail API the verification link is logged.
  if (output) {
    let logged = false;
    for (let i = 0; i < 100 && !logged; i++) {
      logged = output().includes(`[mail not sent] to=${email} `);
      if (!logged) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(logged, "the verification link was logged");
  }
  const out = await post(base, "/logout", { bearer: token });
  assert.equal(out.status, 204);
  await out.body?.cancel();
  const revoked = await me(base, "/api/me", { bearer: token });
  assert.equal(revoked.status, 401, "the logged-out token is refused");
  await revoked.body?.cancel();
}

/** Starts a server process, waits for it, runs `fn`, stops it. */
async function withServer(
  server: ServerProcess,
  base: string,
  fn: () => Promise<void>,
): Promise<void> {
  let exited = false;
  server.child.status.then(() => exited = true);
  try {
    const up = await waitForHttp(base + "/", 60_000, () => !exited);
    assert.ok(
      up,
      `the example did not start:\n${server.output().slice(-3000)}`,
    );
    await fn();
  } catch (error) {
    console.log(server.output().slice(-3000));
    throw error;
  } finally {
    await server.stop();
  }
}

function denoEnv(port: number): Record<string, string> {
  return {
    AUTH_SECRET: randomSecret(),
    APP_ORIGIN: `http://127.0.0.1:${port}`,
    PORT: String(port),
  };
}

Deno.test("examples/deno_deploy (the generated Deno project) runs as copied: deno task start, then the accounts' contract", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-deno_deploy-" });
  try {
    const copy = await copyExample("deno_deploy", dir);
    await pointDenoJsonHere(copy);
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = spawnServer(
      [Deno.execPath(), "task", "start"],
      { ...denoEnv(port), COOKIE_SECURE: "false" },
      copy,
    );
    await withServer(
      server,
      base,
      () => driveAccountsFlow(base, server.output),
    );
    const db = await Deno.stat(`${copy}/data/app.db`);
    assert.ok(db.size > 0, "users went to ./data/app.db");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/magic_link runs as copied: a mailed link signs in, /api/me, logout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-magic_link-" });
  try {
    const copy = await copyExample("magic_link", dir);
    await pointDenoJsonHere(copy);
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const email = "seeded@example.com";
    const server = spawnServer(
      [Deno.execPath(), "task", "start"],
      { ...denoEnv(port), SEED_USERS: email },
      copy,
    );
    await withServer(server, base, async () => {
      const asked = await post(base, "/magic-link", { json: { email } });
      assert.equal(asked.status, 202);
      await asked.body?.cancel();
      // Without RESEND_API_KEY the link is logged: read it from the output.
      let link: string | undefined;
      for (let i = 0; i < 100 && link === undefined; i++) {
        link = server.output().match(/\[mail not sent\] to=\S+ link=(\S+)/)
          ?.[1];
        if (link === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(link, "the link was mailed (logged)");
      const token = new URL(link).searchParams.get("token")!;
      const landing = await fetch(`${base}/magic-link/callback?token=${token}`);
      assert.equal(landing.status, 200);
      assert.equal(
        landing.headers.get("set-cookie"),
        null,
        "GET signs nobody in",
      );
      await landing.body?.cancel();
      const signedIn = await post(base, "/magic-link/callback", {
        json: { token },
      });
      assert.equal(signedIn.status, 200);
      const session = await signedIn.json();
      const who = await me(base, "/api/me", { bearer: session.token });
      assert.equal(who.status, 200);
      assert.equal((await who.json()).email, email);
      const again = await post(base, "/magic-link/callback", {
        json: { token },
      });
      assert.equal(again.status, 400, "a link works once");
      await again.body?.cancel();
      const out = await post(base, "/logout", { bearer: session.token });
      assert.equal(out.status, 204);
      await out.body?.cancel();
      const after = await me(base, "/api/me", { bearer: session.token });
      assert.equal(after.status, 401);
      await after.body?.cancel();
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** The entry files of each npm example, type-checked by Deno. */
const NPM_EXAMPLES: Record<string, string[]> = {
  bun: ["server.ts"],
  node: ["server.ts"],
  vercel_edge: ["api/index.ts"],
  cloudflare_workers: ["worker.ts"],
};

/** The package names an example's sources import (not `node:`, not relative). */
async function importedPackages(dir: string): Promise<Set<string>> {
  const names = new Set<string>();
  const stack = [dir];
  while (stack.length > 0) {
    const at = stack.pop()!;
    for await (const entry of Deno.readDir(at)) {
      const path = `${at}/${entry.name}`;
      if (entry.isDirectory) stack.push(path);
      else if (entry.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(path);
        for (
          const m of text.matchAll(/(?:from|import)\s*\(?\s*"([^".][^"]*)"/g)
        ) {
          if (/^(node|bun):/.test(m[1])) continue;
          const parts = m[1].split("/");
          names.add(
            m[1].startsWith("@") ? parts.slice(0, 2).join("/") : parts[0],
          );
        }
      }
    }
  }
  return names;
}

async function checkNpmExample(
  dir: string,
  name: string,
  entries: string[],
): Promise<void> {
  const copy = await copyExample(name, dir);
  const pkg = JSON.parse(await Deno.readTextFile(`${copy}/package.json`));
  const deps = Object.keys(pkg.dependencies ?? {});
  for (const imported of await importedPackages(copy)) {
    assert.ok(
      deps.includes(imported),
      `${name}: imports ${imported}, which package.json does not list`,
    );
  }
  assert.ok(deps.includes("@portcullis/auth"), `${name}: @portcullis/auth`);
  for (const [dep, range] of Object.entries(pkg.dependencies)) {
    if (dep.startsWith("@portcullis/")) {
      assert.match(
        range as string,
        new RegExp(`^npm:@jsr/portcullis__${dep.slice(12)}@\\^`),
        `${name}: ${dep} is the JSR npm-compatibility package`,
      );
    }
  }
  // Deno reads the import map, not package.json (whose @jsr names it
  // would try to download).
  await Deno.remove(`${copy}/package.json`);
  await Deno.writeTextFile(
    `${copy}/deno.json`,
    JSON.stringify({
      imports: localImportMap(npmDependencies(pkg)),
      nodeModulesDir: "none",
    }),
  );
  await Deno.copyFile(`${ROOT}/tests/deno.lock`, `${copy}/deno.lock`);
  await run([Deno.execPath(), "check", ...entries], copy);
  // Formatting and lint too (the repository's config excludes these
  // folders, since its import map cannot resolve their npm names).
  await run([
    Deno.execPath(),
    "fmt",
    "--check",
    "--ignore=deno.json,deno.lock",
  ], copy);
  await run([Deno.execPath(), "lint"], copy);
}

Deno.test("the npm examples type-check against this checkout with their package.json dependencies, and pass fmt and lint", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-npm-check-" });
  try {
    // Two at a time: type-checking is CPU-bound and the machine is shared.
    const queue = Object.entries(NPM_EXAMPLES);
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        await checkNpmExample(dir, next[0], next[1]);
      }
    };
    await Promise.all([worker(), worker()]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no example imports outside its own folder", async () => {
  for await (const example of Deno.readDir(EXAMPLES)) {
    if (!example.isDirectory || example.name === "app") continue;
    const stack = [`${EXAMPLES}/${example.name}`];
    while (stack.length > 0) {
      const dir = stack.pop()!;
      for await (const entry of Deno.readDir(dir)) {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory) stack.push(path);
        else if (/\.(ts|js|mjs|toml|json)$/.test(entry.name)) {
          const text = await Deno.readTextFile(path);
          const depth = path.slice(EXAMPLES.length + 1).split("/").length - 1;
          // A relative import may climb at most to the example's own root.
          for (const m of text.matchAll(/["']((?:\.\.\/)+)/g)) {
            assert.ok(
              m[1].length / 3 < depth,
              `${path} reaches outside its folder: ${m[0]}`,
            );
          }
        }
      }
    }
  }
});

async function nodeOnPath(): Promise<boolean> {
  try {
    const out = await new Deno.Command("node", { args: ["--version"] })
      .output();
    return out.success;
  } catch {
    return false;
  }
}

function nodeModulesReady(what: string): boolean {
  try {
    Deno.statSync(`${ROOT}/node_modules/${what}`);
    return true;
  } catch {
    return false;
  }
}

Deno.test("examples/node runs as built: esbuild as its npm run build, then Node on the bundle, and the accounts' contract", async () => {
  if (!(await nodeOnPath())) {
    missing("node is not on PATH");
    return;
  }
  const dir = await scratchDir("example-node");
  try {
    const copy = await copyExample("node", dir);
    const pkg = JSON.parse(await Deno.readTextFile(`${copy}/package.json`));
    assert.match(pkg.scripts.build, /^esbuild server\.ts --bundle/);
    assert.equal(pkg.scripts.start, "node dist/server.mjs");
    // What `npm run build` does, with @portcullis/* from this checkout.
    await bundle({
      entry: `${copy}/server.ts`,
      outfile: `${copy}/dist/server.mjs`,
      format: "esm",
      platform: "node",
      externalPackages: true,
    });
    await stopBundler();
    const port = freePort();
    const server = spawnServer(["node", "dist/server.mjs"], {
      ...denoEnv(port),
      HOST: "127.0.0.1",
    }, copy);
    const base = `http://127.0.0.1:${port}`;
    await withServer(
      server,
      base,
      () => driveAccountsFlow(base, server.output),
    );
    const db = await Deno.stat(`${copy}/data/app.db`);
    assert.ok(db.size > 0, "users and sessions went to ./data/app.db");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/bun runs as copied: bun run server.ts, then the accounts' contract", async () => {
  const bun = `${ROOT}/node_modules/.bin/bun`;
  if (!nodeModulesReady(".bin/bun")) {
    missing(
      "Bun is not installed in node_modules (tests/run_all.ts installs it)",
    );
    return;
  }
  await linkPackageForBun();
  const dir = await scratchDir("example-bun");
  try {
    const copy = await copyExample("bun", dir);
    const port = freePort();
    const server = spawnServer([bun, "run", "--no-install", "server.ts"], {
      ...denoEnv(port),
      HOST: "127.0.0.1",
    }, copy);
    const base = `http://127.0.0.1:${port}`;
    await withServer(
      server,
      base,
      () => driveAccountsFlow(base, server.output),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/vercel_edge runs as copied in Vercel's edge-runtime: Upstash and Turso over HTTP", async () => {
  if (!nodeModulesReady("edge-runtime")) {
    missing("npm edge-runtime is not installed (tests/run_all.ts installs it)");
    return;
  }
  if (!(await nodeOnPath())) {
    missing("node is not on PATH");
    return;
  }
  // A private Redis: the function sees no client address (no x-real-ip),
  // so its registrations count under one key, which a shared Redis would
  // keep across runs until the hour's limit refused them.
  if (!(await requireRedisBinaries())) return;
  const dir = await scratchDir("example-edge");
  const redisServer = await startRedis();
  const redis = startUpstashBridge({ redisPort: redisServer.port });
  const turso = await startLibsqlHttpBridge();
  try {
    const copy = await copyExample("vercel_edge", dir);
    // edge-runtime delivers fetch events, as Vercel does to the function.
    await Deno.writeTextFile(
      `${copy}/_edge_host_entry.ts`,
      `import handler from "./api/index.ts";
addEventListener("fetch", (e: any) => e.respondWith(handler(e.request)));
`,
    );
    await bundle({
      entry: `${copy}/_edge_host_entry.ts`,
      outfile: `${copy}/dist/edge.js`,
      format: "iife",
      platform: "browser",
      conditions: ["edge-light", "worker", "browser"],
    });
    await stopBundler();
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = spawnServer(
      ["node", `${ROOT}/tests/conformance/edge_host.mjs`, "dist/edge.js"],
      {
        PORT: String(port),
        EDGE_ENV: JSON.stringify({
          AUTH_SECRET: randomSecret(),
          APP_ORIGIN: base,
          UPSTASH_REDIS_REST_URL: redis.url,
          UPSTASH_REDIS_REST_TOKEN: redis.token,
          DATABASE_URL: turso.url,
          DATABASE_AUTH_TOKEN: turso.token,
        }),
      },
      copy,
    );
    await withServer(
      server,
      base,
      () => driveAccountsFlow(base, server.output),
    );
    assert.ok(turso.stats().statements > 0, "users went to Turso (the bridge)");
    assert.ok(
      redis.stats().commands > 0,
      "sessions went to Upstash (the bridge)",
    );
  } finally {
    await redis.close();
    await turso.close();
    await redisServer.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/cloudflare_workers runs as copied in workerd: KV, D1 and the imported PBKDF2 WebAssembly module", async () => {
  const { Miniflare } = await import("miniflare");
  const dir = await scratchDir("example-workers");
  try {
    const copy = await copyExample("cloudflare_workers", dir);
    const wrangler = await Deno.readTextFile(`${copy}/wrangler.toml`);
    assert.match(wrangler, /main = "worker.ts"/);
    assert.match(wrangler, /binding = "AUTH_KV"/);
    assert.match(wrangler, /binding = "DB"/);
    assert.doesNotMatch(wrangler, /\[alias\]/, "no repository-only aliases");
    // Production's PBKDF2 cap first (local workerd does not enforce it), so
    // the Worker's hasher must take its imported WebAssembly route.
    await Deno.writeTextFile(
      `${copy}/_capped_entry.ts`,
      `import { refusals } from ${
        JSON.stringify(`${ROOT}/tests/conformance/_workers_pbkdf2_cap.ts`)
      };
import worker from "./worker.ts";
export default {
  fetch(req: Request, env: never, ctx: unknown): Promise<Response> {
    if (new URL(req.url).pathname === "/__pbkdf2-cap") {
      return Promise.resolve(Response.json(refusals));
    }
    return worker.fetch(req, env, ctx);
  },
};
`,
    );
    await bundle({
      entry: `${copy}/_capped_entry.ts`,
      outfile: `${copy}/dist/worker.js`,
      format: "esm",
      platform: "browser",
      conditions: ["workerd", "worker", "browser"],
      loader: { ".wasm": "copy" }, // as wrangler: a compiled module
    });
    await stopBundler();
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const mf = new Miniflare({
      modules: true,
      scriptPath: `${copy}/dist/worker.js`,
      modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
      compatibilityDate: "2025-09-01",
      host: "127.0.0.1",
      port,
      kvNamespaces: ["AUTH_KV"],
      d1Databases: ["DB"],
      bindings: { AUTH_SECRET: randomSecret(), APP_ORIGIN: base },
    });
    try {
      try {
        await mf.ready;
      } catch (error) {
        missing(`workerd could not start: ${(error as Error).message}`);
        return;
      }
      await driveAccountsFlow(base);
      const cap = await (await fetch(`${base}/__pbkdf2-cap`)).json();
      assert.ok(
        cap.count >= 1,
        "WebCrypto refused 600000 iterations and the WebAssembly route hashed",
      );
    } finally {
      await mf.dispose().catch(() => {});
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
