/**
 * Test support for the framework examples (SvelteKit, Astro, Elysia): how
 * an example installs portcullis from this checkout, is built and started
 * by its framework's own commands, and the HTTP scenario every example
 * serves.
 *
 * JSR is not reachable from the build machines and portcullis is not on
 * npm, so the core is packed into an npm tarball by `deno pack` (the same
 * build tests/packages_test.ts proves installs and runs on Node) and
 * installed beside the example's own dependencies: `npm ci` from the
 * example's committed package-lock.json, then the tarball with
 * `npm install --no-save`, so neither file changes. The tarball is packed
 * once per run: its name carries a digest of the core's sources, so the
 * three test files (each in its own worker) share it.
 *
 * A registry that cannot be reached prints `SKIPPED:`; under `CI=true`
 * every failure to install, build or start fails the test.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ROOT } from "../conformance/_import_map.ts";
import {
  freePort,
  randomSecret,
  type ServerProcess,
  spawnServer,
  waitForHttp,
} from "../conformance/_runner.ts";
import { inCI, missing } from "../support/services.ts";

export { ROOT };

const decoder = new TextDecoder();
const npm = Deno.build.os === "windows" ? "npm.cmd" : "npm";
const NETWORK = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET/;

/** One command's outcome and its output (stdout and stderr). */
interface Ran {
  ok: boolean;
  out: string;
  ms: number;
}

/**
 * Runs a command to its end.
 *
 * @param cmd The command and its arguments.
 * @param cwd The working directory.
 * @param env Variables added to the current ones.
 * @returns Whether it succeeded, what it printed, how long it took.
 */
export async function run(
  cmd: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Ran> {
  const started = performance.now();
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    ok: out.success,
    out: decoder.decode(out.stdout) + decoder.decode(out.stderr),
    ms: performance.now() - started,
  };
}

/** A digest of everything `deno pack` puts into the core's tarball. */
async function coreDigest(): Promise<string> {
  const parts: string[] = [];
  const walk = async (dir: string) => {
    const entries = [];
    for await (const e of Deno.readDir(`${ROOT}/${dir}`)) entries.push(e);
    entries.sort((a, b) => a.name < b.name ? -1 : 1);
    for (const e of entries) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(rel);
      else parts.push(rel, await Deno.readTextFile(`${ROOT}/${rel}`));
    }
  };
  for (const file of ["deno.json", "mod.ts", "README.md"]) {
    parts.push(file, await Deno.readTextFile(`${ROOT}/${file}`));
  }
  await walk("lib");
  const hash = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(parts.join("\0")),
  );
  return Array.from(new Uint8Array(hash).slice(0, 8))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The core's npm tarball, packed by `deno pack` once for these sources.
 *
 * @returns The tarball's path.
 */
export async function coreTarball(): Promise<string> {
  const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/portcullis-frameworks`;
  await Deno.mkdir(dir, { recursive: true });
  const path = `${dir}/portcullis-auth-${await coreDigest()}.tgz`;
  try {
    await Deno.stat(path);
    return path;
  } catch {
    // Not packed yet for these sources.
  }
  const partial = `${path}.${crypto.randomUUID()}.partial`;
  const packed = await run([
    Deno.execPath(),
    "pack",
    "--allow-dirty",
    "--output",
    partial,
  ], ROOT);
  assert.ok(packed.ok, `deno pack failed:\n${packed.out.slice(-3000)}`);
  await Deno.rename(partial, path); // atomic: another worker may race
  return path;
}

/** What {@linkcode prepareExample} measured. */
export interface Prepared {
  /** The example's folder. */
  dir: string;
  /** Milliseconds of `npm ci` plus the tarball's install. */
  installMs: number;
  /** Milliseconds of the type check (`npm run check`: tsc over the sources). */
  checkMs: number;
  /** Milliseconds of the build (0 when there is none). */
  buildMs: number;
}

/**
 * Installs an example's pinned dependencies (`npm ci`) and the core's
 * tarball into its folder, type-checks it (its `check` script: the typed
 * locals and context against the tarball's declarations), then runs its
 * build command.
 *
 * @param name The folder under examples/.
 * @param build The framework's build command, or `null`.
 * @param env Variables for the build (Astro reads the origin it trusts).
 * @returns What was measured, or `null` when the registry is unreachable
 * outside CI (the test is then skipped with `SKIPPED:`).
 */
export async function prepareExample(
  name: string,
  build: string[] | null,
  env: Record<string, string> = {},
): Promise<Prepared | null> {
  const dir = `${ROOT}/examples/${name}`;
  const tarball = await coreTarball();
  const flags = ["--no-audit", "--no-fund"];
  // --prefer-offline: what the lock names and npm's cache holds is not
  // revalidated against the registry (the lock pins the integrity anyway).
  const ci = await run([npm, "ci", "--prefer-offline", ...flags], dir);
  const added = ci.ok
    ? await run([npm, "install", "--no-save", ...flags, tarball], dir)
    : ci;
  if (!added.ok) {
    if (NETWORK.test(added.out) && !inCI) {
      missing(`npm registry unreachable: ${added.out.slice(-300)}`);
      return null;
    }
    assert.fail(`npm could not install ${name}:\n${added.out.slice(-3000)}`);
  }
  const installMs = ci.ms + added.ms;
  const checked = await run([npm, "run", "check"], dir, env);
  assert.ok(checked.ok, `npm run check failed:\n${checked.out.slice(-4000)}`);
  const checkMs = checked.ms;
  if (build === null) return { dir, installMs, checkMs, buildMs: 0 };
  const built = await run(build, dir, env);
  assert.ok(built.ok, `${build.join(" ")} failed:\n${built.out.slice(-4000)}`);
  return { dir, installMs, checkMs, buildMs: built.ms };
}

/**
 * Removes what an install and a build left in an example's folder
 * (`node_modules`, the build output, the frameworks' generated types), so
 * the checkout is as clean as before: other tests walk examples/.
 *
 * @param name The folder under examples/.
 */
export async function cleanExample(name: string): Promise<void> {
  for (
    const left of ["node_modules", "build", "dist", ".svelte-kit", ".astro"]
  ) {
    await Deno.remove(`${ROOT}/examples/${name}/${left}`, { recursive: true })
      .catch(() => {});
  }
}

/** A started example server. */
export interface Started {
  /** Its origin, `http://127.0.0.1:<port>`. */
  base: string;
  /** The process (its output, and `stop()`, which kills it by PID). */
  server: ServerProcess;
}

/**
 * Starts an example's server on a free port and waits until it answers.
 *
 * @param cmd The framework's start command.
 * @param dir The example's folder.
 * @param env Extra variables; `PORT`, `HOST`, `AUTH_SECRET`, `APP_ORIGIN`
 * (portcullis) and `ORIGIN` (SvelteKit's adapter-node) are set here.
 * @returns The server.
 */
export async function startExample(
  cmd: string[],
  dir: string,
  env: Record<string, string> = {},
): Promise<Started> {
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnServer(cmd, {
    PORT: String(port),
    HOST: "127.0.0.1",
    AUTH_SECRET: randomSecret(),
    APP_ORIGIN: base,
    ORIGIN: base,
    ...env,
  }, dir);
  let exited = false;
  server.child.status.then(() => exited = true);
  const up = await waitForHttp(`${base}/login`, 60_000, () => !exited);
  if (!up) {
    await server.stop();
    assert.fail(`${cmd.join(" ")} did not answer:\n${server.output()}`);
  }
  return { base, server };
}

const PASSWORD = "correct horse battery staple";

/** One request of the scenario. */
interface Call {
  method?: string;
  json?: unknown;
  form?: Record<string, string>;
  cookie?: string;
  bearer?: string;
  /** `browser` sends `Accept: text/html`, `api` (default) JSON. */
  as?: "browser" | "api";
  headers?: Record<string, string>;
}

/** The `name=value` part of a response's session cookie, or `""`. */
function sessionCookie(res: Response): string {
  const line = res.headers.getSetCookie().find((c) => /session=/.test(c));
  return line?.split(";")[0] ?? "";
}

/**
 * The HTTP scenario every framework example serves, through its own build
 * and start commands: register (form and JSON), log in (form and JSON),
 * the protected page (browser → 303 to /login, API → 401), the protected
 * API by cookie and by Bearer, a cross-site POST refused with 403 (a JSON
 * one, which the frameworks' own form-only origin checks let through, so
 * the 403 is portcullis's; and a form one), one policy check (a non-owner
 * editing a note → 403), and logout then the old cookie and token refused.
 *
 * Routes: `POST /register`, `/login`, `/logout` (forms: 303 with the
 * cookie set or cleared), `POST /api/register` (201 `{subject, token,
 * expiresAt}`), `POST /api/login` (200 `{token, expiresAt}`),
 * `POST /api/logout` (204), `GET /account` (protected page),
 * `GET /api/me` (`{subject, email}`), `POST /api/notes` (201 `{id}`),
 * `PUT /api/notes/:id` (owner 200, others 403).
 *
 * @param base The server's origin.
 * @returns How many checks ran.
 */
export async function runScenario(base: string): Promise<number> {
  let checks = 0;
  const call = async (path: string, c: Call = {}): Promise<Response> => {
    const headers: Record<string, string> = {
      accept: c.as === "browser"
        ? "text/html,application/xhtml+xml"
        : "application/json",
    };
    let body: string | undefined;
    if (c.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(c.json);
    } else if (c.form !== undefined) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(c.form).toString();
    }
    const method = c.method ?? (body === undefined ? "GET" : "POST");
    // A browser sends its origin with every POST: same-origin here.
    if (method !== "GET") headers.origin = base;
    if (c.cookie) headers.cookie = c.cookie;
    if (c.bearer) headers.authorization = `Bearer ${c.bearer}`;
    Object.assign(headers, c.headers);
    const res = await fetch(base + path, {
      method,
      headers,
      body,
      redirect: "manual",
    });
    checks++;
    return res;
  };
  const expect = async (res: Response, status: number, what: string) => {
    const text = await res.text();
    assert.equal(res.status, status, `${what}: ${text.slice(0, 500)}`);
    return text;
  };

  // Register by form: 303 home with the session cookie.
  const alice = `alice-${crypto.randomUUID()}@example.com`;
  const reg = await call("/register", {
    form: { email: alice, password: PASSWORD },
    as: "browser",
  });
  await expect(reg, 303, "form registration");
  assert.equal(reg.headers.get("location"), "/");
  assert.match(sessionCookie(reg), /^__Host-session=v1\./);

  // Register by JSON: 201 with the token; a taken email is 409.
  const bob = `bob-${crypto.randomUUID()}@example.com`;
  const regJson = await call("/api/register", {
    json: { email: bob, password: PASSWORD },
  });
  const created = JSON.parse(await expect(regJson, 201, "JSON registration"));
  assert.equal(typeof created.subject, "string");
  assert.match(created.token, /^v1\./);
  assert.ok(created.expiresAt > Date.now() / 1000);
  const taken = await call("/api/register", {
    json: { email: bob, password: PASSWORD },
  });
  await expect(taken, 409, "taken email");

  // Log in by form: a wrong password is 401, the right one 303 to `next`.
  const wrong = await call("/login", {
    form: { email: alice, password: "not the password" },
    as: "browser",
  });
  await expect(wrong, 401, "form login, wrong password");
  assert.equal(sessionCookie(wrong), "");
  const formLogin = await call("/login?next=%2Faccount", {
    form: { email: alice, password: PASSWORD },
    as: "browser",
  });
  await expect(formLogin, 303, "form login");
  assert.equal(formLogin.headers.get("location"), "/account");
  const aliceCookie = sessionCookie(formLogin);
  assert.match(aliceCookie, /^__Host-session=v1\./);
  assert.match(formLogin.headers.getSetCookie().join("\n"), /HttpOnly/);

  // Log in by JSON: the real shape of signIn's answer.
  const jsonLogin = await call("/api/login", {
    json: { email: bob, password: PASSWORD },
  });
  const bobSession = JSON.parse(await expect(jsonLogin, 200, "JSON login"));
  assert.match(bobSession.token, /^v1\./);
  assert.equal(typeof bobSession.expiresAt, "number");
  const badJson = await call("/api/login", {
    json: { email: bob, password: "not the password" },
  });
  await expect(badJson, 401, "JSON login, wrong password");

  // The protected page: browser → 303 to /login?next=, API → 401.
  const page = await call("/account", { as: "browser" });
  await expect(page, 303, "protected page, anonymous browser");
  assert.equal(page.headers.get("location"), "/login?next=%2Faccount");
  const pageApi = await call("/account");
  await expect(pageApi, 401, "protected page, anonymous API client");
  // Other spellings of the protected path never serve the page anonymously.
  for (const path of ["/account/", "/%61ccount", "/ACCOUNT", "/account?x=1"]) {
    const variant = await call(path, { as: "browser" });
    const text = await variant.text();
    assert.ok(
      variant.status !== 200 || !text.includes("Your account"),
      `${path} served the protected page anonymously`,
    );
  }
  const pageIn = await call("/account", {
    as: "browser",
    cookie: aliceCookie,
  });
  assert.ok(
    (await expect(pageIn, 200, "protected page, signed in")).includes(alice),
    "the page shows the signed-in email",
  );

  // The protected API: by cookie, by Bearer, anonymous, a forged token.
  const byCookie = await call("/api/me", { cookie: aliceCookie });
  const me = JSON.parse(await expect(byCookie, 200, "/api/me by cookie"));
  assert.equal(me.email, alice);
  const byBearer = await call("/api/me", { bearer: bobSession.token });
  const bobMe = JSON.parse(await expect(byBearer, 200, "/api/me by Bearer"));
  assert.deepEqual(bobMe, { subject: created.subject, email: bob });
  await expect(await call("/api/me"), 401, "/api/me anonymous");
  const forged = await call("/api/me", {
    bearer: bobSession.token.slice(0, -2) +
      (bobSession.token.endsWith("AA") ? "BA" : "AA"),
  });
  await expect(forged, 401, "/api/me with a forged token");
  const spoofed = await call("/api/me", {
    headers: { "x-user-id": created.subject },
  });
  await expect(spoofed, 401, "/api/me with an x-user-id header only");

  // A cross-site POST is refused: a JSON one (the frameworks' own origin
  // checks look at forms only, so this 403 is portcullis's) and a form one.
  const crossJson = await call("/api/notes", {
    json: { text: "forged" },
    cookie: aliceCookie,
    headers: {
      origin: "https://evil.example",
      "sec-fetch-site": "cross-site",
    },
  });
  const refused = await expect(crossJson, 403, "cross-site JSON POST");
  assert.equal(JSON.parse(refused).error, "cross_origin_rejected");
  const crossForm = await call("/logout", {
    form: {},
    cookie: aliceCookie,
    as: "browser",
    headers: {
      origin: "https://evil.example",
      "sec-fetch-site": "cross-site",
    },
  });
  await expect(crossForm, 403, "cross-site form POST");
  const stillIn = await call("/api/me", { cookie: aliceCookie });
  await expect(stillIn, 200, "the forged logout changed nothing");

  // One policy: the owner edits the note, another user gets 403.
  const note = await call("/api/notes", {
    json: { text: "alice's" },
    cookie: aliceCookie,
    headers: { "sec-fetch-site": "same-origin" },
  });
  const { id } = JSON.parse(await expect(note, 201, "create a note"));
  const other = await call(`/api/notes/${id}`, {
    method: "PUT",
    json: { text: "bob was here" },
    bearer: bobSession.token,
  });
  await expect(other, 403, "a non-owner edits the note");
  const owner = await call(`/api/notes/${id}`, {
    method: "PUT",
    json: { text: "alice's, edited" },
    cookie: aliceCookie,
  });
  assert.equal(
    JSON.parse(await expect(owner, 200, "the owner edits the note")).text,
    "alice's, edited",
  );
  const anonymousNote = await call("/api/notes", { json: { text: "x" } });
  await expect(anonymousNote, 401, "an anonymous note");

  // Logout by form: 303 to /login, the cookie cleared; the old cookie is
  // refused from then on. Logout by Bearer: 204, the token refused.
  const logout = await call("/logout", {
    form: {},
    cookie: aliceCookie,
    as: "browser",
  });
  await expect(logout, 303, "form logout");
  assert.equal(logout.headers.get("location"), "/login");
  assert.match(logout.headers.getSetCookie().join("\n"), /Max-Age=0/);
  const after = await call("/api/me", { cookie: aliceCookie });
  await expect(after, 401, "the old cookie after logout");
  const afterPage = await call("/account", {
    as: "browser",
    cookie: aliceCookie,
  });
  await expect(afterPage, 303, "the protected page after logout");
  const bearerOut = await call("/api/logout", {
    method: "POST",
    bearer: bobSession.token,
  });
  await expect(bearerOut, 204, "Bearer logout");
  const bobAfter = await call("/api/me", { bearer: bobSession.token });
  await expect(bobAfter, 401, "the old token after logout");
  return checks;
}

/**
 * Prints one line of figures for the report.
 *
 * @param name The framework.
 * @param prepared Install and build times.
 * @param startMs Milliseconds until the server answered.
 * @param scenarioMs Milliseconds of the scenario.
 * @param checks Requests the scenario made.
 */
export function report(
  name: string,
  prepared: Prepared,
  startMs: number,
  scenarioMs: number,
  checks: number,
): void {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    `${name}: install ${s(prepared.installMs)}, type check ${
      s(prepared.checkMs)
    }, build ${s(prepared.buildMs)}, start ${s(startMs)}, scenario ${
      s(scenarioMs)
    } (${checks} requests)`,
  );
}
