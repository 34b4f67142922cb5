/**
 * `docs/http_contract.md` cannot drift from the app: every method and path
 * its tables list is a route of the app's Hono instance (read from
 * `app.routes`, what every module mounted) and is routed over HTTP
 * (neither the router's 404 nor a 405), and every route of the app is
 * listed. The app runs with every sign-in method on, OpenID Connect
 * against the real provider.
 *
 * @module
 */
import assert from "node:assert/strict";
import { setupOidcApp } from "./_oidc_app.ts";
import { EVERY_MODULE, startApp } from "./_harness.ts";

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const DOC = new URL("../../docs/http_contract.md", import.meta.url);

/** The `METHOD path` pairs the page's tables list (query strings dropped). */
async function documented(): Promise<Set<string>> {
  const out = new Set<string>();
  const text = await Deno.readTextFile(DOC);
  for (const line of text.split("\n")) {
    if (!line.startsWith("|") || /^\|\s*-/.test(line)) continue;
    const first = line.split("|")[1].trim();
    const methods = first.split(/[\s,]+/).filter((w) => METHODS.has(w));
    const paths = [...first.matchAll(/`(\/[^`]*)`/g)].map((m) =>
      m[1].replace(/\?.*$/, "")
    );
    for (const method of methods) {
      for (const path of paths) out.add(`${method} ${path}`);
    }
  }
  return out;
}

async function served(): Promise<Set<string>> {
  await using app = await startApp({}, { signInEnv: EVERY_MODULE });
  return new Set(app.routes.map((r) => `${r.method} ${r.path}`));
}

Deno.test("docs/http_contract.md lists every route of the app, and nothing else", async () => {
  const doc = await documented();
  const table = await served();
  assert.ok(doc.size > 40, `only ${doc.size} rows parsed`);
  assert.deepEqual(
    [...table].filter((r) => !doc.has(r)).sort(),
    [],
    "routes the app serves that the page does not list",
  );
  assert.deepEqual(
    [...doc].filter((r) => !table.has(r)).sort(),
    [],
    "rows of the page that are no route of the app",
  );
  // The rule for bodies of the wrong type is part of the contract.
  assert.match(
    await Deno.readTextFile(DOC),
    /\| any POST, PUT with a body \|[^\n]*\| 415/,
  );
});

Deno.test("every method and path docs/http_contract.md lists is routed by the running app (no router 404, no 405)", async () => {
  const { app, close } = await setupOidcApp("on");
  try {
    const params: Record<string, string> = {
      ":id": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      ":provider": "local",
    };
    for (const row of [...await documented()].sort()) {
      const [method, pattern] = row.split(" ");
      const path = pattern.replace(/:[a-z]+/g, (p) => params[p]);
      const res = await fetch(new URL(path, app.origin), {
        method,
        headers: {
          accept: "application/json",
          ...(method === "GET" || method === "DELETE"
            ? {}
            : { "content-type": "application/json" }),
        },
        body: method === "GET" || method === "DELETE" ? undefined : "{}",
        redirect: "manual",
      });
      const text = await res.text();
      assert.notEqual(res.status, 405, `${row}: 405`);
      // The operator's console answers anyone but an operator what a path no
      // route has answers (the page says so); the first test proves its
      // routes are the app's.
      if (/^\/(api\/)?console(\/|$)/.test(pattern)) {
        assert.equal(res.status, 404, `${row}: hidden from non-operators`);
        continue;
      }
      assert.ok(
        !(res.status === 404 && text.includes('"message":"Nothing here"')),
        `${row}: not routed (${text})`,
      );
    }
    // And the probe can fail: a path the page does not list is not routed,
    // and a method a route lacks answers 405 with its Allow header.
    const missing = await fetch(new URL("/account/nothing", app.origin), {
      headers: { accept: "application/json" },
    });
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /Nothing here/);
    const wrong = await fetch(new URL("/register", app.origin), {
      method: "DELETE",
    });
    await wrong.body?.cancel();
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "GET, HEAD, POST");
  } finally {
    await close();
  }
});
