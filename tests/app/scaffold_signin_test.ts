/**
 * The scaffold's `deno.json` for a subset of modules: every package is
 * mapped by default (from JSR, or to a local checkout), and an import that
 * only left-out modules use leaves with them, while one any kept file uses
 * stays.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  modules,
  projectConfig,
  renderApp,
} from "../../packages/scaffold/mod.ts";
import { TEMPLATES, VERSION } from "../../packages/scaffold/_templates.ts";
import { specifiersOf } from "../../packages/scaffold/_modules.ts";

Deno.test("by default the project has every sign-in method and maps its packages", () => {
  const config = JSON.parse(projectConfig());
  assert.equal(
    config.imports["@portcullis/totp"],
    `jsr:@portcullis/totp@^${VERSION}`,
  );
  assert.equal(
    config.imports["@portcullis/oidc"],
    `jsr:@portcullis/oidc@^${VERSION}`,
  );
  assert.equal(
    config.imports["@portcullis/passkeys/"],
    `jsr:/@portcullis/passkeys@^${VERSION}/`,
  );
  // From JSR each package brings its own npm dependencies.
  assert.equal(config.imports.otpauth, undefined);
  const local = JSON.parse(projectConfig({ package: "/repo" }));
  assert.equal(
    local.imports["@portcullis/passkeys/browser-script"],
    "file:///repo/packages/passkeys/browser_script.ts",
  );
  assert.deepEqual(
    Object.keys(JSON.parse(TEMPLATES["deno.json"]).imports),
    Object.keys(config.imports),
  );
});

/** The import-map keys the bare specifiers of some files go through. */
function keysUsedBy(
  files: Iterable<[string, string]>,
  imports: Record<string, string>,
): Set<string> {
  const out = new Set<string>();
  for (const [, source] of files) {
    for (const s of specifiersOf(source)) {
      if (s in imports) out.add(s);
      const prefix = Object.keys(imports).filter((k) =>
        k.endsWith("/") && s.startsWith(k)
      ).sort((a, b) => b.length - a.length)[0];
      if (prefix) out.add(prefix);
    }
  }
  return out;
}

Deno.test("leaving modules out drops the imports only they used, and keeps every import a written file uses", () => {
  const all = JSON.parse(TEMPLATES["deno.json"]).imports;
  const subsets = [
    ...modules().map((m) => [m]),
    modules(),
    modules().filter((m) => m !== "verification"),
  ];
  for (const without of subsets) {
    const kept = JSON.parse(projectConfig({ without })).imports;
    const written = renderApp({ without });
    const used = keysUsedBy(written, all);
    const usedByAny = keysUsedBy(
      Object.entries(TEMPLATES).filter(([p]) => p !== "deno.json"),
      all,
    );
    for (const key of Object.keys(all)) {
      // Kept: what a written file uses, and what no template uses at all.
      const expected = used.has(key) || !usedByAny.has(key);
      assert.equal(key in kept, expected, `${key} without ${without}`);
    }
    for (const key of ["@portcullis/auth", "@portcullis/sql", "hono"]) {
      assert.ok(key in kept, key);
    }
  }
});
