/**
 * Typed authorisation policies whose rules the application owns.
 *
 * @module
 */

/**
 * Who is asking: a subject id and a way to compare it. Policies receive
 * `null` for an anonymous request.
 */
export interface Principal {
  /** The subject id. */
  readonly id: string;
  /**
   * Compares this principal with a subject id.
   *
   * @param id Another subject id (an owner, say).
   * @returns Whether it is this principal.
   */
  is(id: string): boolean;
  /**
   * The actions this principal may perform at most, when it acts through a
   * credential limited to them (an API key's scopes); absent for a person.
   * {@linkcode evaluatePolicy} denies every other action before the policy
   * is asked, so a key cannot do what its scopes leave out even where its
   * owner could; a policy may read them for finer rules.
   */
  readonly scopes?: readonly string[];
  /**
   * Who acts as this principal when it is not the principal itself: an
   * operator impersonating the user (RFC 8693's `act`). A policy may refuse
   * what an operator should not do on a user's behalf.
   */
  readonly actor?: string;
}

/** What a `before` hook answers: decide (`true`/`false`) or pass (`null`). */
export type PolicyVerdict = boolean | null | undefined;

/**
 * A policy over an action union `A`, so a misspelt action is a type error.
 * `can` receives the principal (or `null`), the action and the id of the
 * object acted on. Only a `true` result allows; anything else, an exception
 * or a rejected promise denies (fail closed).
 *
 * @typeParam A The action names, for example `"view" | "edit"`.
 *
 * @example Usage
 * ```ts
 * import { definePolicy } from "@portcullis/auth";
 * const owners = new Map([["note_1", "user_1"]]);
 * const notes = definePolicy<"view" | "edit">({
 *   can(principal, action, id) {
 *     if (principal === null) return false;
 *     if (action === "view") return true;
 *     return principal.is(owners.get(id) ?? "");
 *   },
 * });
 * ```
 */
export interface Policy<A extends string> {
  /**
   * Optional first word, for rules that cut across actions (administrators):
   * `true` allows, `false` denies, `null`/`undefined` asks `can`.
   */
  before?(
    principal: Principal | null,
    action: A,
    id: string,
  ): PolicyVerdict | Promise<PolicyVerdict>;
  /** Whether `principal` may do `action` on the object `id`. */
  can(
    principal: Principal | null,
    action: A,
    id: string,
  ): boolean | Promise<boolean>;
}

/**
 * What `definePolicy` demands when its action type is missing (it would
 * default to `never`) or is all of `string` (a typo would then pass): an
 * impossible property whose name says what to write.
 */
export type ActionsNamed<A extends string> = [A] extends [never] ? {
    readonly "definePolicy needs its action names: definePolicy<'view' | 'edit'>({ can })":
      never;
  }
  : string extends A
    ? { readonly "definePolicy needs literal action names, not string": never }
  : unknown;

/**
 * Declares a policy; the identity function that fixes its action type. The
 * action names are required: `definePolicy({ can })` without them, or with
 * `string`, does not compile.
 *
 * @param policy The policy.
 * @returns The same policy.
 *
 * @example Usage
 * ```ts
 * import { definePolicy } from "@portcullis/auth";
 * const admin = definePolicy<"manage">({ can: (p) => p?.id === "root" });
 * ```
 */
export function definePolicy<A extends string = never>(
  policy: Policy<A> & ActionsNamed<A>,
): Policy<A> {
  return policy;
}

/** What a principal carries besides its id (see {@linkcode Principal}). */
export interface PrincipalOptions {
  /** The actions a limited credential (an API key) may perform. */
  scopes?: readonly string[];
  /** The operator acting as the principal. */
  actor?: string;
}

/**
 * Makes a principal of a subject id.
 *
 * @param id The subject id.
 * @param options The scopes of a limited credential, the actor.
 * @returns The principal.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { principal } from "@portcullis/auth/policies";
 * assert.equal(principal("user_1").is("user_1"), true);
 * assert.deepEqual(principal("user_1", { scopes: ["view"] }).scopes, ["view"]);
 * ```
 */
export function principal(
  id: string,
  options: PrincipalOptions = {},
): Principal {
  const is = (other: string) => other === id;
  const { scopes, actor } = options;
  if (scopes === undefined && actor === undefined) {
    return Object.freeze({ id, is });
  }
  return Object.freeze({
    id,
    is,
    ...(scopes === undefined ? {} : { scopes: Object.freeze([...scopes]) }),
    ...(actor === undefined ? {} : { actor }),
  });
}

/**
 * Evaluates a policy, failing closed: only a literal `true` allows. An
 * exception or rejection denies and is handed to `onError`. A principal
 * with `scopes` (an API key) is denied every action outside them before
 * the policy is asked.
 *
 * @param policy The policy.
 * @param who The principal, or `null` when anonymous.
 * @param action The action.
 * @param id The object's id.
 * @param onError Receives a policy's exception (for logs); never rethrown.
 * @returns Whether the action is allowed.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { definePolicy } from "@portcullis/auth";
 * import { evaluatePolicy, principal } from "@portcullis/auth/policies";
 * const p = definePolicy<"view">({ can: (who) => who !== null });
 * assert.equal(await evaluatePolicy(p, principal("u1"), "view", "n1"), true);
 * assert.equal(await evaluatePolicy(p, null, "view", "n1"), false);
 * ```
 */
export async function evaluatePolicy<A extends string>(
  policy: Policy<A>,
  who: Principal | null,
  action: NoInfer<A>,
  id: string,
  onError?: (error: unknown) => void,
): Promise<boolean> {
  if (who !== null && who.scopes !== undefined) {
    if (!Array.isArray(who.scopes) || !who.scopes.includes(action)) {
      return false;
    }
  }
  try {
    if (typeof policy.before === "function") {
      const verdict = await policy.before(who, action, id);
      if (verdict === true) return true;
      if (verdict === false) return false;
      if (verdict !== null && verdict !== undefined) return false;
    }
    return (await policy.can(who, action, id)) === true;
  } catch (error) {
    try {
      onError?.(error);
    } catch {
      // A failing reporter must not turn a denial into something else.
    }
    return false;
  }
}
