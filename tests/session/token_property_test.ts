// Property tests for the parsers of outside input: tokens, cookies and
// Authorization headers (docs/architecture.md, "How it is proven"). Under CI the mutation property runs
// at least 100,000 cases.
import assert from "node:assert/strict";
import fc from "fast-check";
import { compose, currentUser, identityMiddleware } from "../../mod.ts";
import { inCI } from "../support/services.ts";
import { makeManager } from "./_helpers.ts";

const MUTATION_RUNS = inCI ? 100_000 : 5_000;

Deno.test(`item 20 property: no mutation of a valid token resolves (${MUTATION_RUNS} cases)`, async () => {
  const { sessions } = makeManager({ cacheSize: 0 });
  const tokens = await Promise.all(
    ["alice", "bob", "user_with_a_longer_subject_1234567890"].map((s) =>
      sessions.issue(s)
    ),
  );
  const chars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ |%\u00e9";
  const mutation = fc.oneof(
    // replace one character
    fc.record({
      kind: fc.constant("replace" as const),
      at: fc.nat(),
      c: fc.constantFrom(...chars),
    }),
    // insert one character
    fc.record({
      kind: fc.constant("insert" as const),
      at: fc.nat(),
      c: fc.constantFrom(...chars),
    }),
    // delete a run
    fc.record({
      kind: fc.constant("delete" as const),
      at: fc.nat(),
      n: fc.integer({ min: 1, max: 8 }),
    }),
    // truncate or extend
    fc.record({
      kind: fc.constant("truncate" as const),
      n: fc.integer({ min: 1, max: 60 }),
    }),
    fc.record({
      kind: fc.constant("extend" as const),
      tail: fc.string({ minLength: 1, maxLength: 8 }),
    }),
    // flip a bit of one decoded byte of a segment
    fc.record({
      kind: fc.constant("swapSegments" as const),
      a: fc.integer({ min: 0, max: 3 }),
      b: fc.integer({ min: 0, max: 3 }),
    }),
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...tokens), mutation, async (token, m) => {
      let out = token;
      switch (m.kind) {
        case "replace": {
          const i = m.at % token.length;
          out = token.slice(0, i) + m.c + token.slice(i + 1);
          break;
        }
        case "insert": {
          const i = m.at % (token.length + 1);
          out = token.slice(0, i) + m.c + token.slice(i);
          break;
        }
        case "delete": {
          const i = m.at % token.length;
          out = token.slice(0, i) + token.slice(i + m.n);
          break;
        }
        case "truncate":
          out = token.slice(0, -m.n);
          break;
        case "extend":
          out = token + m.tail;
          break;
        case "swapSegments": {
          const parts = token.split(".");
          [parts[m.a], parts[m.b]] = [parts[m.b], parts[m.a]];
          out = parts.join(".");
          break;
        }
      }
      if (out === token) return;
      assert.equal(await sessions.resolve(out), null, out);
    }),
    { numRuns: MUTATION_RUNS },
  );
});

Deno.test("item 26 property: random bytes in Cookie and Authorization never throw and never authenticate", async () => {
  const { sessions } = makeManager();
  const valid = await sessions.issue("alice");
  const handler = compose(
    [identityMiddleware(sessions, { onEvent: () => {} })],
    (req) => new Response(currentUser(req) ?? "anonymous"),
  );
  // Header values: any bytes but NUL, CR and LF (those cannot be sent at all).
  const headerValue = fc.uint8Array({ maxLength: 300 }).map((bytes) =>
    String.fromCharCode(...bytes.filter((b) => b !== 0 && b !== 10 && b !== 13))
  );
  const around = fc.oneof(
    headerValue,
    headerValue.map((v) => `__Host-session=${v}`),
    headerValue.map((v) => `Bearer ${v}`),
  );
  await fc.assert(
    fc.asyncProperty(
      around,
      around,
      fc.constantFrom("GET", "POST"),
      async (cookie, authorization, method) => {
        const headers = new Headers();
        headers.set("cookie", cookie);
        if (authorization !== "") headers.set("authorization", authorization);
        const res = await handler(
          new Request("https://example.com/", { method, headers }),
        );
        assert.ok(res.status === 200 || res.status === 403, String(res.status));
        if (res.status === 200) assert.equal(await res.text(), "anonymous");
        else await res.body?.cancel();
      },
    ),
    { numRuns: inCI ? 20_000 : 3_000 },
  );
  // The same handler does authenticate a real token, so the property can fail.
  const ok = await handler(
    new Request("https://example.com/", {
      headers: { cookie: `__Host-session=${valid}` },
    }),
  );
  assert.equal(await ok.text(), "alice");
});

Deno.test("huge and non-ASCII headers answer 401, never 500", async () => {
  const { sessions } = makeManager();
  const { makeApp } = await import("../http/_app.ts");
  const { handler } = makeApp(sessions);
  for (
    const headers of [
      { cookie: "__Host-session=" + "A".repeat(100_000) },
      { authorization: "Bearer " + "A".repeat(100_000) },
      { authorization: "Bearer \u00ff\u00fe" },
      { cookie: "__Host-session=%ZZ%00" },
      { authorization: "Bearer %E0%A4%A" },
    ] as Record<string, string>[]
  ) {
    const res = await handler(
      new Request("https://example.com/me", { headers }),
    );
    assert.equal(res.status, 401, JSON.stringify(headers).slice(0, 60));
  }
});
