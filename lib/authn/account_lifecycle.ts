/**
 * The account's lifecycle: the events every sign-in method takes part in,
 * and the one object an application calls for each.
 *
 * Each method (the password, provider identities, passkeys, TOTP) brings a
 * {@linkcode AccountLifecyclePart}; {@linkcode accountLifecycle} composes
 * them, so the application calls the lifecycle once per event and no
 * method can be left out by one route. The invariant the parts hold: only
 * a party that has proven control of an address can own a credential on
 * the account of that address.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import type { CredentialStore } from "./credential_store.ts";

/**
 * How the address was proven:
 * - `verification`: the verification link was redeemed (`POST /verify`),
 *   by a browser that also holds the account (its signed-in session, or
 *   its password typed on the confirmation page);
 * - `disowned`: the verification link was redeemed with "this wasn't me":
 *   the address's owner proves it and disowns whatever someone else set up;
 * - `passwordReset`: a password-reset link was redeemed (the new password
 *   is written right after the event);
 * - `emailChange`: an email-change link was confirmed, proving the new
 *   address for the account's owner, who asked for it after a re-check.
 */
export type AddressProofKind =
  | "verification"
  | "disowned"
  | "passwordReset"
  | "emailChange";

/** The address of an account was proven (at the moment a link is redeemed). */
export interface AddressProven {
  /** The account (subject id). */
  readonly subject: string;
  /** How it was proven. */
  readonly kind: AddressProofKind;
  /** Unix milliseconds of the proof. */
  readonly at: number;
  /**
   * Unix milliseconds of the account's earlier proof, `0` when the address
   * was never proven before. Every credential that exists at the **first**
   * proof was added by a party nobody checked: each part removes them
   * ({@linkcode isFirstProof}). An account proven before keeps its
   * credentials, which only a party that had proven the address could add.
   */
  readonly verifiedBefore: number;
  /**
   * Whether the password stays: `true` when the prover showed it (the
   * same party holds both), or when the proof writes a new one itself
   * (`passwordReset`); `false` for `disowned`.
   */
  readonly keepPassword: boolean;
}

/**
 * One sign-in method's part in the account's lifecycle. Each call removes
 * what it must and answers how many credentials it removed; a store that
 * cannot be reached throws, and the composed lifecycle then fails the whole
 * event (fail closed). Parts must be idempotent: an event is retried whole.
 */
export interface AccountLifecyclePart {
  /** The method's name, in errors and in the event's outcome (`"passkeys"`). */
  readonly method: string;
  /**
   * `true` for the part that holds the account record itself (the
   * password's credential store): it runs after every other part has
   * succeeded, so a deletion that fails half-way keeps the account (and
   * its password) for the retry.
   */
  readonly holdsAccount?: boolean;
  /**
   * The address was proven: remove the credentials a party that had not
   * proven it added: every one on the first proof
   * ({@linkcode isFirstProof}), none afterwards.
   *
   * @param event What was proven, when and how.
   * @returns How many credentials were removed.
   */
  addressProven(event: AddressProven): Promise<number>;
  /**
   * Whether the account holds a second factor of this method (a TOTP
   * secret turned on, a passkey): the password rule asks it (NIST SP
   * 800-63B-4 §3.1.1.2: 15 characters for a password that is the only
   * factor, 8 with a second one). Leave it out for a method that is no
   * second factor (a provider identity, a sign-in link). A store that
   * cannot be reached throws; the composed question then answers `false`,
   * the stricter rule.
   *
   * @param subject The account.
   * @returns `true` when the account has one.
   */
  hasSecondFactor?(subject: string): Promise<boolean>;
  /**
   * The account is being deleted: remove every credential of the method.
   *
   * @param subject The account.
   * @returns How many credentials were removed.
   */
  accountDeleted(subject: string): Promise<number>;
}

/** What an event removed, by method. */
export interface LifecycleOutcome {
  /** Credentials removed, by the part's `method`. */
  readonly removed: Readonly<Record<string, number>>;
  /** The sum of `removed`. */
  readonly total: number;
}

/** Every method's parts, composed: call once per event. */
export interface AccountLifecycle {
  /** The methods, in the order their parts run. */
  readonly methods: readonly string[];
  /**
   * The address was proven: every part runs (the account's own part last).
   *
   * @param event What was proven.
   * @returns What each part removed.
   * @throws {AuthError} `STORE_UNAVAILABLE` when a part failed; the other
   * parts still ran. Do not record the proof (stamp the account verified):
   * nothing was granted, and the event can be retried.
   */
  addressProven(event: AddressProven): Promise<LifecycleOutcome>;
  /**
   * The account is deleted: every method part removes its credentials,
   * then, only when all succeeded, the account's own part removes the
   * account.
   *
   * @param subject The account.
   * @returns What each part removed.
   * @throws {AuthError} `STORE_UNAVAILABLE` when a part failed; the other
   * method parts still ran, the account itself is kept for the retry.
   */
  accountDeleted(subject: string): Promise<LifecycleOutcome>;
  /**
   * Whether the account has a second factor: any part's
   * `hasSecondFactor` answers `true`. A part that throws counts as `false`
   * (the stricter password rule; fail closed).
   *
   * @param subject The account.
   * @param options `except`: a method left out of the question, to ask
   * whether a second factor remains once that method's is removed.
   * @returns `true` when one of the (other) methods holds one.
   */
  hasSecondFactor(
    subject: string,
    options?: { except?: string },
  ): Promise<boolean>;
}

/**
 * Composes the sign-in methods' parts into one lifecycle. Exactly one part
 * must hold the account (the password's, {@linkcode passwordLifecyclePart}),
 * and method names must be distinct, else a `TypeError` at start-up.
 *
 * Failures fail closed: every method part runs even when one throws (so
 * each reachable store drops what it must), then the event throws
 * `AuthError` `STORE_UNAVAILABLE` naming the methods that failed, and the
 * account's own part does not run: a deletion keeps the account row (and
 * the password) for the retry, a proof is not recorded.
 *
 * @param parts Each enabled method's part, the account's one among them.
 * @returns The lifecycle.
 * @throws {TypeError} When no part or several parts hold the account, or a
 * method name repeats.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryCredentialStore } from "@portcullis/auth";
 * import {
 *   accountLifecycle,
 *   type AccountLifecyclePart,
 *   passwordLifecyclePart,
 * } from "@portcullis/auth/passwords";
 *
 * const credentials = new MemoryCredentialStore();
 * await credentials.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
 * const keys = new Map([["k1", { subject: "u1", createdAt: 5 }]]);
 * const keysPart: AccountLifecyclePart = {
 *   method: "keys",
 *   addressProven: () => Promise.resolve(0),
 *   accountDeleted: async (subject) => {
 *     let n = 0;
 *     for (const [id, k] of keys) if (k.subject === subject && keys.delete(id)) n++;
 *     return n;
 *   },
 * };
 * const lifecycle = accountLifecycle([passwordLifecyclePart(credentials), keysPart]);
 * const out = await lifecycle.accountDeleted("u1");
 * assert.deepEqual(out.removed, { keys: 1, password: 1 });
 * assert.equal(await credentials.findById("u1"), null);
 * ```
 */
export function accountLifecycle(
  parts: readonly AccountLifecyclePart[],
): AccountLifecycle {
  const holders = parts.filter((p) => p.holdsAccount === true);
  if (holders.length !== 1) {
    throw new TypeError(
      `accountLifecycle needs exactly one part that holds the account (passwordLifecyclePart): received ${holders.length}`,
    );
  }
  const names = new Set<string>();
  for (const p of parts) {
    if (names.has(p.method)) {
      throw new TypeError(
        `accountLifecycle takes each method once: received "${p.method}" twice`,
      );
    }
    names.add(p.method);
  }
  const methodParts = parts.filter((p) => p.holdsAccount !== true);
  const account = holders[0];
  const ordered = [...methodParts, account];

  async function run(
    event: string,
    call: (part: AccountLifecyclePart) => Promise<number>,
  ): Promise<LifecycleOutcome> {
    const removed: Record<string, number> = {};
    const settled = await Promise.allSettled(methodParts.map(call));
    const failed: string[] = [];
    let cause: unknown;
    settled.forEach((s, i) => {
      if (s.status === "fulfilled") removed[methodParts[i].method] = s.value;
      else {
        failed.push(methodParts[i].method);
        cause ??= s.reason;
      }
    });
    if (failed.length > 0) {
      throw new AuthError(
        "STORE_UNAVAILABLE",
        `Account lifecycle "${event}" failed for: ${failed.join(", ")}`,
        { reason: "failed", cause },
      );
    }
    try {
      removed[account.method] = await call(account);
    } catch (error) {
      throw new AuthError(
        "STORE_UNAVAILABLE",
        `Account lifecycle "${event}" failed for: ${account.method}`,
        { reason: "failed", cause: error },
      );
    }
    const total = Object.values(removed).reduce((a, b) => a + b, 0);
    return { removed, total };
  }

  return {
    methods: ordered.map((p) => p.method),
    addressProven: (event) =>
      run("addressProven", (p) => p.addressProven(event)),
    accountDeleted: (subject) =>
      run("accountDeleted", (p) => p.accountDeleted(subject)),
    async hasSecondFactor(subject, options = {}) {
      const asked = parts.filter((p) =>
        p.hasSecondFactor !== undefined && p.method !== options.except
      );
      const answers = await Promise.allSettled(
        asked.map((p) => p.hasSecondFactor!(subject)),
      );
      return answers.some((a) => a.status === "fulfilled" && a.value === true);
    },
  };
}

/** Options of {@linkcode passwordLifecyclePart}. */
export interface PasswordLifecyclePartOptions {
  /**
   * The stored value of "no password", which no hasher accepts (it must
   * begin with `!`, as a locked entry in `/etc/shadow`); default
   * `"!no-password"`.
   */
  noPassword?: string;
}

/**
 * The password's part, which also holds the account record: when the
 * address is proven with `keepPassword: false` (someone disowned the
 * registration) the password hash becomes "no password", so whoever set it
 * can no longer sign in with it; on deletion the account record itself is
 * removed (in SQL its foreign keys cascade to every other method's rows).
 *
 * @param credentials The credential store.
 * @param options The "no password" value.
 * @returns The part (`method: "password"`, `holdsAccount: true`).
 * @throws {TypeError} When `noPassword` does not begin with `!`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryCredentialStore } from "@portcullis/auth";
 * import { passwordLifecyclePart } from "@portcullis/auth/passwords";
 *
 * const credentials = new MemoryCredentialStore();
 * await credentials.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
 * const part = passwordLifecyclePart(credentials);
 * await part.addressProven({ subject: "u1", kind: "disowned", at: 10, verifiedBefore: 0, keepPassword: false });
 * assert.equal((await credentials.findById("u1"))?.passwordHash, "!no-password");
 * ```
 */
export function passwordLifecyclePart(
  credentials: CredentialStore,
  options: PasswordLifecyclePartOptions = {},
): AccountLifecyclePart {
  const noPassword = options.noPassword ?? "!no-password";
  if (!noPassword.startsWith("!")) {
    throw new TypeError(
      `noPassword must begin with "!" so that no hasher accepts it: received "${noPassword}"`,
    );
  }
  return {
    method: "password",
    holdsAccount: true,
    async addressProven(event) {
      if (event.keepPassword) return 0;
      const user = await credentials.findById(event.subject);
      if (user === null || user.passwordHash.startsWith("!")) return 0;
      return await credentials.updatePasswordHash(
          event.subject,
          noPassword,
          user.passwordHash,
        )
        ? 1
        : 0;
    },
    async accountDeleted(subject) {
      return await credentials.deleteUser(subject) ? 1 : 0;
    },
  };
}

/**
 * Whether a method's part removes its credentials when the address is
 * proven: on the first proof (the account was never verified) every
 * credential that exists was added before it by a party nobody checked
 * (an unverified account gains no method, so the set cannot grow before
 * the proof is recorded); an account proven before keeps them.
 *
 * @param event The event.
 * @returns `true` when the part removes every credential of the account.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { isFirstProof } from "@portcullis/auth/passwords";
 * assert.equal(isFirstProof({ subject: "u1", kind: "verification", at: 9, verifiedBefore: 0, keepPassword: true }), true);
 * assert.equal(isFirstProof({ subject: "u1", kind: "passwordReset", at: 9, verifiedBefore: 4, keepPassword: true }), false);
 * ```
 */
export function isFirstProof(event: AddressProven): boolean {
  return event.verifiedBefore <= 0;
}
