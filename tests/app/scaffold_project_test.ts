/**
 * A generated project as its owner lives with it: the views are the
 * project's (a changed copy changes the page, while the rules still hold,
 * since they are the package's), and an upgrade of the package reaches the
 * project without regenerating it (a build of `@portcullis/accounts` with
 * one rule changed, put in place of the package by the project's import
 * map alone, changes what the project answers).
 *
 * Each test writes a project (pointing at this checkout), adds one probe
 * test file that drives it through its own `testing.ts`, and runs it with
 * `deno test` inside the project.
 *
 * @module
 */
import assert from "node:assert/strict";
import { projectConfig, scaffold } from "../../packages/scaffold/mod.ts";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

async function denoTest(dir: string, file: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--unstable-kv", file],
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", DENO_NO_PACKAGE_JSON: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  return { ok: out.success, text };
}

/** Every file of a project but `deno.json`, path → text. */
async function tree(dir: string, prefix = ""): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of Deno.readDir(`${dir}/${prefix}`)) {
    const rel = prefix + e.name;
    if (e.isDirectory) {
      for (const [k, v] of await tree(dir, `${rel}/`)) out.set(k, v);
    } else if (rel !== "deno.json" && rel !== "deno.lock") {
      out.set(rel, await Deno.readTextFile(`${dir}/${rel}`));
    }
  }
  return out;
}

const VIEW_PROBE = `import assert from "node:assert/strict";
import { startTestApp } from "./testing.ts";

Deno.test("the login page is this project's, the rules the package's", async () => {
  const { call, close } = await startTestApp();
  const html = { headers: { accept: "text/html" } };
  const page = await call("GET", "/login", undefined, undefined, html);
  assert.equal(page.res.status, 200);
  assert.match(page.text, /<h1>Welcome back to Example<\\/h1>/);
  assert.doesNotMatch(page.text, /<h1>Log in<\\/h1>/);
  // A refused sign-in renders the same copy, and the package's rule holds:
  // an unknown email and a wrong password get the same page.
  await call("POST", "/register", {
    email: "a@example.com",
    password: "correct horse battery",
  });
  const wrong = await call("POST", "/login", {
    email: "a@example.com",
    password: "wrong password",
  }, undefined, { form: true, ...html });
  const unknown = await call("POST", "/login", {
    email: "b@example.com",
    password: "wrong password",
  }, undefined, { form: true, ...html });
  assert.equal(wrong.res.status, 401);
  assert.match(wrong.text, /<h1>Welcome back to Example<\\/h1>/);
  assert.equal(
    unknown.text.replace("b@example.com", "a@example.com"),
    wrong.text,
  );
  // A cross-site post is still refused, whatever the views say.
  const forged = await call("POST", "/login", {
    email: "a@example.com",
    password: "correct horse battery",
  }, undefined, { headers: { "sec-fetch-site": "cross-site" } });
  assert.equal(forged.res.status, 403);
  close();
});
`;

Deno.test("a project's copy of a view changes its page, while the rules stay in the package", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-views-" });
  try {
    await scaffold(dir, { package: root });
    const path = `${dir}/views/auth/login.ts`;
    const login = await Deno.readTextFile(path);
    assert.match(login, /<h1>Log in<\/h1>/);
    assert.match(login, /^\/\/ Copied from packages\/accounts\/views\/auth/);
    await Deno.writeTextFile(
      path,
      login.replace("<h1>Log in</h1>", "<h1>Welcome back to Example</h1>"),
    );
    await Deno.writeTextFile(`${dir}/view_probe_test.ts`, VIEW_PROBE);
    const r = await denoTest(dir, "view_probe_test.ts");
    assert.ok(r.ok, r.text.slice(-4000));
    assert.match(r.text, /1 passed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const UPGRADE_PROBE = `import assert from "node:assert/strict";
import { startTestApp } from "./testing.ts";

Deno.test("a note of 5000 characters", async () => {
  const { call, verifiedUser, close } = await startTestApp();
  const owner = await verifiedUser("o@example.com", "correct horse battery");
  const note = await call(
    "POST",
    "/api/notes",
    { text: "x".repeat(5000) },
    owner.token,
  );
  assert.equal(note.res.status, Number(Deno.env.get("EXPECT")));
  close();
});
`;

/**
 * A "release" of portcullis next to this checkout: every file linked to
 * the checkout's, but `packages/accounts` a copy whose body cap is 2 KiB
 * instead of 16 KiB (one rule changed).
 */
async function nextRelease(at: string): Promise<void> {
  await Deno.mkdir(`${at}/packages`, { recursive: true });
  for await (const e of Deno.readDir(root)) {
    if (e.name !== "packages") {
      await Deno.symlink(`${root}/${e.name}`, `${at}/${e.name}`);
    }
  }
  for await (const e of Deno.readDir(`${root}/packages`)) {
    if (e.name !== "accounts") {
      await Deno.symlink(
        `${root}/packages/${e.name}`,
        `${at}/packages/${e.name}`,
      );
    }
  }
  const copy = async (from: string, to: string) => {
    await Deno.mkdir(to, { recursive: true });
    for await (const e of Deno.readDir(from)) {
      if (e.isDirectory) await copy(`${from}/${e.name}`, `${to}/${e.name}`);
      else await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
    }
  };
  await copy(`${root}/packages/accounts`, `${at}/packages/accounts`);
  const file = `${at}/packages/accounts/request_body.ts`;
  const source = await Deno.readTextFile(file);
  const changed = source.replace(
    "export const MAX_BODY_BYTES = 16 * 1024;",
    "export const MAX_BODY_BYTES = 2 * 1024;",
  );
  assert.notEqual(changed, source, "the rule to change is where it was");
  await Deno.writeTextFile(file, changed);
}

Deno.test("a generated project takes a changed rule by upgrading the package, without regenerating", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-upgrade-" });
  try {
    const app = `${dir}/app`;
    await scaffold(app, { package: root });
    await Deno.writeTextFile(`${app}/upgrade_probe_test.ts`, UPGRADE_PROBE);
    Deno.env.set("EXPECT", "201");
    const before = await denoTest(app, "upgrade_probe_test.ts");
    assert.ok(before.ok, `today's package: ${before.text.slice(-3000)}`);

    // The upgrade: the project's import map points at the next release;
    // not one other file of the project changes.
    await nextRelease(`${dir}/next`);
    const files = await tree(app);
    const config = JSON.parse(await Deno.readTextFile(`${app}/deno.json`));
    config.imports = JSON.parse(projectConfig({ package: `${dir}/next` }))
      .imports;
    await Deno.writeTextFile(`${app}/deno.json`, JSON.stringify(config));
    Deno.env.set("EXPECT", "413");
    const after = await denoTest(app, "upgrade_probe_test.ts");
    assert.ok(after.ok, `the next release: ${after.text.slice(-3000)}`);
    assert.deepEqual(await tree(app), files, "no file but deno.json changed");
  } finally {
    Deno.env.delete("EXPECT");
    await Deno.remove(dir, { recursive: true });
  }
});
