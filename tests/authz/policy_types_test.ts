// Packages finding 5: a policy defined without its action names is a
// compile error, not a Policy<string> that lets a misspelt action through.
// `deno test` type-checks this file: each @ts-expect-error must meet an
// error, or the check fails.
import assert from "node:assert/strict";
import { definePolicy } from "../../mod.ts";

Deno.test("definePolicy needs literal action names (checked by the compiler)", () => {
  const notes = definePolicy<"view" | "edit">({ can: () => true });
  // @ts-expect-error a misspelt action is a type error
  void notes.can(null, "veiw", "n1");
  // @ts-expect-error no action names: does not compile
  const untyped = definePolicy({ can: () => true });
  // @ts-expect-error string is not a set of action names
  const stringly = definePolicy<string>({ can: () => true });
  assert.equal(typeof untyped.can, "function");
  assert.equal(typeof stringly.can, "function");
});
