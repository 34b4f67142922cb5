import assert from "node:assert/strict";
import { definePolicy } from "../../mod.ts";
import { evaluatePolicy, principal } from "../../lib/authz/mod.ts";
import type { Policy } from "../../mod.ts";

const owners = new Map([["n1", "alice"]]);
const notes = definePolicy<"view" | "edit">({
  before: (p) => (p?.id === "admin" ? true : null),
  can: (p, action, id) =>
    p !== null && (action === "view" || p.is(owners.get(id) ?? "")),
});

Deno.test("principal.is compares subject ids exactly", () => {
  const p = principal("alice");
  assert.equal(p.id, "alice");
  assert.equal(p.is("alice"), true);
  assert.equal(p.is("Alice"), false);
  assert.equal(p.is(""), false);
  assert.ok(Object.isFrozen(p));
});

Deno.test("item 38: a policy allows only on a literal true; before() decides first", async () => {
  assert.equal(
    await evaluatePolicy(notes, principal("alice"), "edit", "n1"),
    true,
  );
  assert.equal(
    await evaluatePolicy(notes, principal("bob"), "edit", "n1"),
    false,
  );
  assert.equal(
    await evaluatePolicy(notes, principal("bob"), "view", "n1"),
    true,
  );
  assert.equal(await evaluatePolicy(notes, null, "view", "n1"), false);
  assert.equal(
    await evaluatePolicy(notes, principal("admin"), "edit", "n1"),
    true,
  );
  const denyFirst = definePolicy<"x">({ before: () => false, can: () => true });
  assert.equal(
    await evaluatePolicy(denyFirst, principal("a"), "x", "1"),
    false,
  );
  const odd = definePolicy<"x">({
    before: () => "yes" as unknown as boolean,
    can: () => true,
  });
  assert.equal(
    await evaluatePolicy(odd, principal("a"), "x", "1"),
    false,
    "an unexpected before() value denies",
  );
  for (const value of [1, "true", {}, [], undefined, null]) {
    const p = definePolicy<"x">({ can: () => value as unknown as boolean });
    assert.equal(
      await evaluatePolicy(p, principal("a"), "x", "1"),
      false,
      String(value),
    );
  }
});

Deno.test("item 38: a policy that throws or rejects denies and reports the error; a throwing reporter changes nothing", async () => {
  const errors: unknown[] = [];
  const throws = definePolicy<"x">({
    can: () => {
      throw new Error("boom");
    },
  });
  const rejects = definePolicy<"x">({
    can: () => Promise.reject(new Error("later")),
  });
  const beforeThrows = definePolicy<"x">({
    before: () => {
      throw new Error("pre");
    },
    can: () => true,
  });
  for (const p of [throws, rejects, beforeThrows]) {
    assert.equal(
      await evaluatePolicy(p, principal("a"), "x", "1", (e) => errors.push(e)),
      false,
    );
  }
  assert.deepEqual(errors.map((e) => (e as Error).message), [
    "boom",
    "later",
    "pre",
  ]);
  assert.equal(
    await evaluatePolicy(throws, principal("a"), "x", "1", () => {
      throw new Error("reporter");
    }),
    false,
  );
});

Deno.test("a misspelt action is a type error", () => {
  // The lines below must not type-check; `deno check` runs over tests/.
  const p: Policy<"view" | "edit"> = notes;
  // @ts-expect-error "delete" is not an action of this policy
  evaluatePolicy(p, null, "delete", "n1");
  // @ts-expect-error "veiw" is a typo
  evaluatePolicy(p, null, "veiw", "n1");
  assert.ok(p);
});
