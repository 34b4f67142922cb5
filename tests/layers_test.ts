// docs/architecture.md: lib/authn, lib/session and lib/authz never import one
// another, the rooms beside them import no layer, and importing mod.ts loads
// no driver. Walks the real import graph.
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const LAYERS = ["authn", "session", "authz"] as const;
/**
 * The folders of each layer: the binding room (lib/binding: sessions bound
 * to a key) is part of the session layer (docs/architecture.md).
 */
const LAYER_OF: Record<string, string> = {
  authn: "authn",
  session: "session",
  binding: "session",
  authz: "authz",
};
const IMPORT =
  /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;

/** Every import that crosses from one layer into another, under `root`. */
export async function layerViolations(root: string): Promise<string[]> {
  const bad: string[] = [];
  for (const [folder, layer] of Object.entries(LAYER_OF)) {
    const base = join(root, "lib", folder);
    for await (const file of walk(base)) {
      const text = await Deno.readTextFile(file);
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3];
        if (!spec.startsWith(".")) continue;
        const target = relative(
          join(root, "lib"),
          resolve(dirname(file), spec),
        );
        const top = target.split("/")[0];
        const other = LAYER_OF[top];
        // A layer imports no other layer; the binding room, part of the
        // session layer, not the HTTP glue either.
        if (
          (other !== undefined && other !== layer) ||
          (folder === "binding" && top === "http")
        ) {
          bad.push(`${relative(root, file)} -> ${spec}`);
        }
      }
    }
  }
  return bad;
}

/**
 * The rooms beside the layers that any layer may import (key-value backends,
 * secrets, signed tokens, the shared codec, throttling, single-use tokens,
 * the event log): they import no layer and not lib/http, so importing one
 * never reaches into another layer (docs/architecture.md).
 */
export const NEUTRAL_ROOMS = [
  "kv",
  "secrets",
  "tokens",
  "_common",
  "throttle",
  "verification",
  "events",
] as const;

/** Every import from a neutral room into a layer or lib/http, under `root`. */
export async function neutralViolations(root: string): Promise<string[]> {
  const bad: string[] = [];
  for (const room of NEUTRAL_ROOMS) {
    const base = join(root, "lib", room);
    for await (const file of walk(base)) {
      const text = await Deno.readTextFile(file);
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3];
        if (!spec.startsWith(".")) continue;
        const top = relative(join(root, "lib"), resolve(dirname(file), spec))
          .split("/")[0];
        if ([...Object.keys(LAYER_OF), "http"].includes(top)) {
          bad.push(`${relative(root, file)} -> ${spec}`);
        }
      }
    }
  }
  return bad;
}

async function* walk(dir: string): AsyncGenerator<string> {
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch {
    return;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walk(p);
    else if (/\.(ts|tsx|js|mjs)$/.test(e.name)) yield p;
  }
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

Deno.test("docs/architecture.md: no layer imports another", async () => {
  for (const layer of LAYERS) {
    assert.ok(
      (await Array.fromAsync(walk(join(root, "lib", layer)))).length > 0,
      `lib/${layer} has files`,
    );
  }
  assert.deepEqual(await layerViolations(root), []);
});

Deno.test("docs/architecture.md: the rooms beside the layers (lib/kv, lib/secrets, lib/tokens, lib/_common, lib/throttle, lib/verification, lib/events) import no layer", async () => {
  for (const room of NEUTRAL_ROOMS) {
    assert.ok(
      (await Array.fromAsync(walk(join(root, "lib", room)))).length > 0,
      `lib/${room} has files`,
    );
  }
  assert.deepEqual(await neutralViolations(root), []);
});

Deno.test("the neutral-room check catches a room importing a layer", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "lib", "tokens"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, "lib/tokens/bad.ts"),
      'import { x } from "../session/session_manager.ts";\nimport { y } from "../kv/memory_kv.ts";\n',
    );
    assert.deepEqual(await neutralViolations(dir), [
      "lib/tokens/bad.ts -> ../session/session_manager.ts",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * The import cycles among the files under `dirs` (relative imports outside
 * comments, type imports included), each as the chain of files that closes
 * it.
 */
export async function importCycles(
  root: string,
  dirs: string[],
): Promise<string[][]> {
  const edges = new Map<string, string[]>();
  for (const dir of dirs) {
    for await (const file of walk(join(root, dir))) {
      if (file.includes("node_modules")) continue;
      // Code only: the lines of comments (examples import their own file).
      const text = (await Deno.readTextFile(file)).split("\n")
        .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line)).join("\n");
      const targets: string[] = [];
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3];
        if (spec.startsWith(".")) targets.push(resolve(dirname(file), spec));
      }
      edges.set(file, targets);
    }
  }
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      if (!edges.has(next)) continue;
      if (state.get(next) === "open") {
        cycles.push(
          [...path.slice(path.indexOf(next)), next].map((f) =>
            relative(root, f)
          ),
        );
      } else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...edges.keys()].sort()) {
    if (!state.has(file)) visit(file);
  }
  return cycles;
}

Deno.test("no import cycle among the library's files (lib/, stores/, packages/)", async () => {
  assert.deepEqual(
    await importCycles(root, ["lib", "stores", "packages"]),
    [],
  );
});

Deno.test("the cycle check catches a fixture's circle (as stores/sql/migrations.ts and lifecycle_migrations.ts once were)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "stores/sql"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, "stores/sql/migrations.ts"),
      'import { b } from "./lifecycle_migrations.ts";\nexport const a = 1;\n',
    );
    await Deno.writeTextFile(
      join(dir, "stores/sql/lifecycle_migrations.ts"),
      'import type { a } from "./migrations.ts";\nexport const b = 2;\n',
    );
    await Deno.writeTextFile(
      join(dir, "stores/sql/mod.ts"),
      'export * from "./migrations.ts";\n',
    );
    assert.deepEqual(await importCycles(dir, ["stores"]), [[
      "stores/sql/lifecycle_migrations.ts",
      "stores/sql/migrations.ts",
      "stores/sql/lifecycle_migrations.ts",
    ]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the layer check catches a violating fixture", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const layer of LAYERS) {
      await Deno.mkdir(join(dir, "lib", layer), { recursive: true });
    }
    await Deno.writeTextFile(
      join(dir, "lib/session/token.ts"),
      "export const x = 1;\n",
    );
    await Deno.writeTextFile(
      join(dir, "lib/authz/ok.ts"),
      'import { y } from "./other.ts";\nimport type { Z } from "../auth_error.ts";\n',
    );
    await Deno.writeTextFile(
      join(dir, "lib/authn/bad.ts"),
      'import { x } from "../session/token.ts";\nexport type { T } from "../authz/ok.ts";\nconst m = await import("../session/token.ts");\n',
    );
    assert.deepEqual((await layerViolations(dir)).sort(), [
      "lib/authn/bad.ts -> ../authz/ok.ts",
      "lib/authn/bad.ts -> ../session/token.ts",
      "lib/authn/bad.ts -> ../session/token.ts",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("docs/architecture.md: importing mod.ts loads no driver or hashing library (drizzle, libSQL, Upstash, postgres, mysql2, bcrypt, argon2)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", join(root, "mod.ts")],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout));
  const specifiers: string[] = info.modules.map((m: { specifier: string }) =>
    m.specifier
  );
  const npm = specifiers.filter((s) =>
    s.startsWith("npm:") || !s.startsWith("file:")
  );
  for (
    const driver of [
      "drizzle",
      "libsql",
      "upstash",
      "postgres",
      "mysql",
      "pglite",
      "bcrypt",
      "hash-wasm",
      "noble",
    ]
  ) {
    assert.ok(
      !npm.some((s) => s.includes(driver)),
      `${driver} in ${npm.join(", ")}`,
    );
  }
  assert.ok(!specifiers.some((s) => s.includes("/stores/")), "no store file");
});

Deno.test("docs/architecture.md: the binding room is part of the session layer: it imports neither authn, authz nor lib/http, and they do not import it", async () => {
  assert.ok(
    (await Array.fromAsync(walk(join(root, "lib/binding")))).length > 0,
  );
  const dir = await Deno.makeTempDir();
  try {
    for (const d of ["binding", "authn", "session"]) {
      await Deno.mkdir(join(dir, "lib", d), { recursive: true });
    }
    await Deno.writeTextFile(
      join(dir, "lib/binding/bad.ts"),
      'import { a } from "../http/gates.ts";\nimport { b } from "../authn/x.ts";\nimport { c } from "../session/session_manager.ts";\n',
    );
    await Deno.writeTextFile(
      join(dir, "lib/authn/bad.ts"),
      'import { d } from "../binding/dpop_proof.ts";\n',
    );
    await Deno.writeTextFile(
      join(dir, "lib/session/fine.ts"),
      'import { e } from "../binding/bound_sessions.ts";\n',
    );
    assert.deepEqual((await layerViolations(dir)).sort(), [
      "lib/authn/bad.ts -> ../binding/dpop_proof.ts",
      "lib/binding/bad.ts -> ../authn/x.ts",
      "lib/binding/bad.ts -> ../http/gates.ts",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
