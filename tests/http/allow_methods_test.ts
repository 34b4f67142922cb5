import assert from "node:assert/strict";
import { allowMethods, compose } from "../../mod.ts";

Deno.test("ASVS 3.5.3: safe methods never reach a handler marked as mutating", async () => {
  const hits: string[] = [];
  const handler = compose([allowMethods("POST", "DELETE")], (req) => {
    hits.push(req.method);
    return new Response("changed");
  });
  for (const method of ["GET", "HEAD", "OPTIONS", "PUT", "PATCH"]) {
    const res = await handler(new Request("https://example.com/x", { method }));
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get("allow"), "POST, DELETE");
  }
  for (const method of ["POST", "DELETE"]) {
    assert.equal(
      (await handler(new Request("https://example.com/x", { method }))).status,
      200,
    );
  }
  assert.deepEqual(hits, ["POST", "DELETE"]);
});

Deno.test("allowMethods refuses mixed safe and unsafe methods, lower case and none", () => {
  assert.throws(() => allowMethods("GET", "POST"), /mixes safe and unsafe/);
  assert.throws(() => allowMethods("post"), TypeError);
  assert.throws(() => allowMethods(), TypeError);
  assert.ok(allowMethods("GET", "HEAD"));
});
