// The shape of the workspace: the core reaches no npm package, every member
// is publishable to JSR, and the main entry stays small. The npm packages
// (`deno task npm`) are installed and run in tests/packages/npm_install_test.ts.
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);
const decoder = new TextDecoder();

async function run(
  cmd: string,
  args: string[],
  cwd: URL | string = root,
): Promise<{ ok: boolean; out: string }> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    ok: out.success,
    out: decoder.decode(out.stdout) + decoder.decode(out.stderr),
  };
}

interface MemberConfig {
  name?: string;
  version?: string;
  exports?: string | Record<string, string>;
  imports?: Record<string, string>;
  publish?: { exclude?: string[] };
  workspace?: string[];
}

async function config(dir: string): Promise<MemberConfig> {
  return JSON.parse(await Deno.readTextFile(new URL(`${dir}/deno.json`, root)));
}

const rootConfig = await config(".");
const members = [".", ...(rootConfig.workspace ?? [])];

async function packages(): Promise<[string, MemberConfig][]> {
  const out: [string, MemberConfig][] = [];
  for (const dir of members) {
    const c = await config(dir);
    if (c.name) out.push([dir, c]);
  }
  return out;
}

function exportFiles(c: MemberConfig): string[] {
  const exp = typeof c.exports === "string"
    ? { ".": c.exports }
    : c.exports ?? {};
  return Object.values(exp);
}

Deno.test("the core @portcullis/auth reaches no npm package from any of its exports", async () => {
  const files = exportFiles(rootConfig).filter((f) => f.endsWith(".ts"));
  assert.ok(files.length >= 8, `${files.length} entry points`);
  for (const file of files) {
    const r = await run(Deno.execPath(), ["info", "--json", file]);
    assert.ok(r.ok, r.out.slice(-500));
    const info = JSON.parse(r.out.slice(r.out.indexOf("{")));
    // `npmPackages` lists the whole lockfile: the modules are the graph.
    for (const m of info.modules as { specifier: string }[]) {
      // Local files, and the runtime's own modules (the Node adapter's
      // `node:http` types); never npm:, jsr: or a URL.
      assert.ok(
        m.specifier.startsWith("file://") || m.specifier.startsWith("node:"),
        `${file} reaches ${m.specifier}`,
      );
    }
  }
});

Deno.test("a control: a driver package's graph does reach npm (the check above can fail)", async () => {
  const r = await run(Deno.execPath(), [
    "info",
    "--json",
    "stores/upstash/mod.ts",
  ]);
  assert.ok(r.ok, r.out.slice(-500));
  const info = JSON.parse(r.out.slice(r.out.indexOf("{")));
  const modules = info.modules as { specifier: string }[];
  assert.ok(modules.some((m) => m.specifier.startsWith("npm:")));
});

Deno.test("every workspace package has a name, version, exports, a README and caret ranges", async () => {
  const list = await packages();
  assert.ok(list.length >= 8, `${list.length} packages`);
  for (const [dir, c] of list) {
    assert.match(c.name!, /^@portcullis\/[a-z-]+$/, dir);
    assert.equal(c.version, rootConfig.version, `${dir}: one version for all`);
    const files = exportFiles(c);
    assert.ok(files.length > 0, `${dir} exports something`);
    for (const f of files) await Deno.stat(new URL(`${dir}/${f}`, root));
    await Deno.stat(new URL(`${dir}/README.md`, root));
    assert.ok(c.publish?.exclude !== undefined, `${dir} has publish.exclude`);
    for (const [name, spec] of Object.entries(c.imports ?? {})) {
      if (!/^(npm|jsr):/.test(spec)) continue;
      assert.match(
        spec,
        /@\^\d/,
        `${dir}: ${name} should be a caret range: ${spec}`,
      );
    }
  }
});

Deno.test("issue 30: the packages share one base64url codec (@portcullis/bytes): no package carries a codec of its own", async () => {
  for (const pkg of ["totp", "passkeys", "hashers"]) {
    for await (const e of Deno.readDir(new URL(`packages/${pkg}/`, root))) {
      if (!e.isFile || !e.name.endsWith(".ts")) continue;
      const text = await Deno.readTextFile(
        new URL(`packages/${pkg}/${e.name}`, root),
      );
      assert.doesNotMatch(
        text,
        /function (?:to|from)Base64|function (?:en|de)code(?:Base64|Phc)|function timingSafeEqual/,
        `packages/${pkg}/${e.name} has a codec of its own`,
      );
    }
  }
  const { encodeBase64Url, decodeBase64Url } = await import(
    "../packages/bytes/mod.ts"
  );
  assert.equal(encodeBase64Url(new Uint8Array([251, 255])), "-_8");
  assert.equal(decodeBase64Url("-_9"), null);
});

Deno.test("mod.ts exports at most 45 names", async () => {
  const r = await run(Deno.execPath(), ["doc", "--json", "mod.ts"]);
  assert.ok(r.ok, r.out.slice(-500));
  const doc = JSON.parse(r.out.slice(r.out.indexOf("{")));
  const mod = Object.values(
    doc.nodes as Record<string, { symbols: { name: string }[] }>,
  )[0];
  const names = new Set(mod.symbols.map((symbol) => symbol.name));
  assert.ok(names.has("SessionManager") && names.has("identityMiddleware"));
  assert.ok(names.size <= 45, `${names.size} names: ${[...names].join(", ")}`);
  for (
    const internal of [
      "signToken",
      "verifyToken",
      "issueSession",
      "revokeIdentity",
    ]
  ) {
    assert.ok(!names.has(internal), `${internal} is not on the main entry`);
  }
});

Deno.test("deno publish --dry-run passes for every package of the workspace", async () => {
  for (const [dir, c] of await packages()) {
    const r = await run(
      Deno.execPath(),
      ["publish", "--dry-run", "--allow-dirty"],
      new URL(`${dir}/`, root),
    );
    assert.ok(r.ok, `${c.name}: ${r.out.slice(-3000)}`);
    assert.ok(
      r.out.includes(`${c.name}@${c.version}`),
      `${c.name} was checked`,
    );
  }
});

Deno.test("deno doc --lint passes for every package, over all of its exports", async () => {
  const all = await packages();
  for (const [dir, c] of all) {
    const files = exportFiles(c).filter((f) => /\.(ts|js)$/.test(f));
    // A type a workspace package this one depends on exports is public
    // (documented with that package): those entry points are read too,
    // and only this package's own declarations are reported on.
    const deps = all.filter(([, d]) =>
      d.name !== c.name && d.name! in (c.imports ?? {})
    ).flatMap(([depDir, d]) =>
      exportFiles(d).filter((f) => /\.(ts|js)$/.test(f)).map((f) =>
        new URL(`${depDir}/${f.replace(/^\.\//, "")}`, root).pathname
      )
    );
    const r = await run(
      Deno.execPath(),
      ["doc", "--lint", ...files, ...deps],
      new URL(`${dir}/`, root),
    );
    assert.ok(r.ok, `${c.name}: ${r.out.slice(-3000)}`);
  }
});
