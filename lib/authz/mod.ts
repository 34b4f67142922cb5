/**
 * Policies beyond `definePolicy`: evaluating one outside a request (jobs,
 * tests), making a principal from a subject id, and the helper types.
 *
 * @example Usage
 * ```ts
 * import { definePolicy } from "@portcullis/auth";
 * import { evaluatePolicy, principal } from "@portcullis/auth/policies";
 * import assert from "node:assert/strict";
 *
 * const owners = new Map([["note_1", "user_1"]]);
 * const notes = definePolicy<"view" | "edit">({
 *   can: (who, action, id) =>
 *     who !== null && (action === "view" || who.is(owners.get(id) ?? "")),
 * });
 * assert.equal(await evaluatePolicy(notes, principal("user_1"), "edit", "note_1"), true);
 * assert.equal(await evaluatePolicy(notes, principal("user_2"), "edit", "note_1"), false);
 * assert.equal(await evaluatePolicy(notes, null, "view", "note_1"), false);
 * ```
 *
 * @module
 */
export {
  type ActionsNamed,
  evaluatePolicy,
  type PolicyVerdict,
  principal,
  type PrincipalOptions,
} from "./policy.ts";
