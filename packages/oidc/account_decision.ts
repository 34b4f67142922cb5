/**
 * What to do with a provider's identity: the account-linking rule.
 *
 * @module
 */
import type { OidcIdentity } from "./oidc_client.ts";

/** What the application does after a provider signed a user in. */
export type AccountDecision =
  /** The identity is linked: sign that user in. */
  | { kind: "signIn"; subject: string }
  /** A signed-in user links the identity to their own account. */
  | { kind: "link"; subject: string }
  /** No account has this email: create one and link the identity. */
  | { kind: "create"; email: string }
  /**
   * An account with this email exists and the provider says it verified
   * the email: link only after the user proves that account's password.
   */
  | { kind: "confirmLink"; subject: string }
  /** Refused, with the reason. */
  | {
    kind: "refuse";
    reason:
      | "email_missing"
      | "email_unverified"
      | "linked_elsewhere"
      | "account_unverified";
  };

/** What {@linkcode decideAccount} looks at. */
export interface AccountFacts {
  /** What the provider asserted. */
  identity: OidcIdentity;
  /** The user the identity is linked to, or `null`. */
  linkedSubject: string | null;
  /** The user signed in on this browser, or `null`. */
  currentSubject: string | null;
  /**
   * Whether the signed-in user's address is verified; absent reads as
   * `false` (an unverified account gains no sign-in method).
   */
  currentVerified?: boolean;
  /** The user whose (normalised) email equals the provider's, or `null`. */
  userWithEmail: string | null;
  /**
   * Whether that user's address is verified; absent reads as `false`.
   */
  userWithEmailVerified?: boolean;
}

/**
 * Decides, never silently linking by email, and holding the invariant that
 * only a party that has proven control of an address owns a credential on
 * its account: an identity that is not yet linked joins an existing
 * account only when the user is signed in to it **and** that account's
 * address is verified, or when the provider asserts `email_verified`, the
 * account's address is verified, **and** the user then proves the
 * account's password (the "dangerous email linking" that lets whoever
 * controls a provider account take over a local one is refused). A
 * provider email that is not verified (`email_verified` false or absent)
 * never creates an account nor links to one by that address
 * (`email_unverified`); an unverified account gains no provider
 * (`account_unverified`: verify the address first).
 *
 * @param facts The identity and what the application knows.
 * @returns The decision.
 *
 * @example Usage
 * ```ts
 * import { decideAccount } from "@portcullis/oidc";
 * const d = decideAccount({
 *   identity: { provider: "op", subject: "s1", email: "a@example.com", emailVerified: true },
 *   linkedSubject: null, currentSubject: null,
 *   userWithEmail: "user_1", userWithEmailVerified: true,
 * });
 * console.assert(d.kind === "confirmLink");
 * ```
 */
export function decideAccount(facts: AccountFacts): AccountDecision {
  const { identity, linkedSubject, currentSubject, userWithEmail } = facts;
  if (linkedSubject !== null) {
    if (currentSubject !== null && currentSubject !== linkedSubject) {
      return { kind: "refuse", reason: "linked_elsewhere" };
    }
    return { kind: "signIn", subject: linkedSubject };
  }
  if (currentSubject !== null) {
    return facts.currentVerified === true
      ? { kind: "link", subject: currentSubject }
      : { kind: "refuse", reason: "account_unverified" };
  }
  if (identity.email === null) {
    return { kind: "refuse", reason: "email_missing" };
  }
  if (identity.emailVerified !== true) {
    return { kind: "refuse", reason: "email_unverified" };
  }
  if (userWithEmail !== null) {
    return facts.userWithEmailVerified === true
      ? { kind: "confirmLink", subject: userWithEmail }
      : { kind: "refuse", reason: "account_unverified" };
  }
  return { kind: "create", email: identity.email };
}
