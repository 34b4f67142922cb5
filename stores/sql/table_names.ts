/**
 * The table prefix rule and the names of every table and index the SQL
 * stores own, for one prefix.
 *
 * @module
 */
import type { SQLDialect } from "./dialect.ts";

/** Options shared by the SQL stores and `migrate`. */
export interface SQLStoreOptions {
  /**
   * Prepended to every table and index name, for a database that already
   * has a `users` table: `"auth_"` gives `auth_users` and
   * `auth_verification_tokens`. Letters, digits and `_`, at most 24
   * characters, not starting with a digit. Default `""`.
   */
  tablePrefix?: string;
  /**
   * The dialect, when detection from the drizzle object is not wanted or
   * fails (a wrapped or proxied database). Default: detected.
   */
  dialect?: SQLDialect;
}

/** The names of the tables and indexes for one prefix. */
export interface SQLTableNames {
  /** The users table, `<prefix>users`. */
  users: string;
  /** The unique index on the users' email, `<prefix>users_email_unique`. */
  usersEmailIndex: string;
  /** The single-use token table, `<prefix>verification_tokens`. */
  verificationTokens: string;
  /** The index on (subject, purpose) of the token table. */
  verificationTokensSubjectIndex: string;
}

/**
 * Checks a table prefix and answers it.
 *
 * @param tablePrefix The prefix.
 * @returns The prefix, unchanged.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 */
export function checkTablePrefix(tablePrefix: string): string {
  if (
    typeof tablePrefix !== "string" ||
    !/^(?:[A-Za-z_][A-Za-z0-9_]{0,23})?$/.test(tablePrefix)
  ) {
    throw new TypeError(
      `Table prefix must be letters, digits and "_", at most 24 characters, not starting with a digit: received "${tablePrefix}"`,
    );
  }
  return tablePrefix;
}

/**
 * Checks a table prefix and answers the users and token table names it
 * gives.
 *
 * @param tablePrefix The prefix; `""` by default.
 * @returns The names.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableNames } from "@portcullis/sql";
 * assert.equal(tableNames("auth_").users, "auth_users");
 * ```
 */
export function tableNames(tablePrefix = ""): SQLTableNames {
  const p = checkTablePrefix(tablePrefix);
  return {
    users: `${p}users`,
    usersEmailIndex: `${p}users_email_unique`,
    verificationTokens: `${p}verification_tokens`,
    verificationTokensSubjectIndex:
      `${p}verification_tokens_subject_purpose_idx`,
  };
}

/** The names of the lifecycle tables and indexes for one prefix. */
export interface SQLLifecycleTableNames {
  /** The security events table, `<prefix>auth_events`. */
  authEvents: string;
  /** The index on (subject, at) of the events table. */
  authEventsSubjectIndex: string;
}

/**
 * The lifecycle table names for a prefix (checked like `tableNames`).
 *
 * @param tablePrefix The prefix; `""` by default.
 * @returns The names.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { lifecycleTableNames } from "@portcullis/sql";
 * assert.equal(lifecycleTableNames("auth_").authEvents, "auth_auth_events");
 * ```
 */
export function lifecycleTableNames(tablePrefix = ""): SQLLifecycleTableNames {
  const p = checkTablePrefix(tablePrefix);
  return {
    authEvents: `${p}auth_events`,
    authEventsSubjectIndex: `${p}auth_events_subject_at_idx`,
  };
}

/** The names of the sign-in tables and indexes for one prefix. */
export interface SignInTableNames {
  /** OpenID Connect identities: (provider, provider subject) → user. */
  identities: string;
  /** The index on the identities' user id. */
  identitiesUserIndex: string;
  /** WebAuthn credentials. */
  passkeys: string;
  /** The index on the passkeys' user id. */
  passkeysUserIndex: string;
  /** One TOTP enrolment per user. */
  totp: string;
  /** Recovery codes, hashed. */
  recoveryCodes: string;
}

/**
 * The sign-in table names for a prefix (checked like `tableNames`).
 *
 * @param tablePrefix The table prefix; `""` by default.
 * @returns The names.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { signInTableNames } from "@portcullis/sql";
 * assert.equal(signInTableNames("auth_").passkeys, "auth_passkeys");
 * ```
 */
export function signInTableNames(tablePrefix = ""): SignInTableNames {
  const p = checkTablePrefix(tablePrefix);
  return {
    identities: `${p}identities`,
    identitiesUserIndex: `${p}identities_user_idx`,
    passkeys: `${p}passkeys`,
    passkeysUserIndex: `${p}passkeys_user_idx`,
    totp: `${p}totp_credentials`,
    recoveryCodes: `${p}recovery_codes`,
  };
}

/** The names of the access tables (API keys, bans) for one prefix. */
export interface AccessTableNames {
  /** Personal access tokens, hashed: `<prefix>api_keys`. */
  apiKeys: string;
  /** The index on the keys' user id. */
  apiKeysUserIndex: string;
  /** Accounts an operator banned: `<prefix>account_bans`. */
  accountBans: string;
}

/**
 * The access table names for a prefix (checked like `tableNames`).
 *
 * @param tablePrefix The table prefix; `""` by default.
 * @returns The names.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { accessTableNames } from "@portcullis/sql";
 * assert.equal(accessTableNames("auth_").apiKeys, "auth_api_keys");
 * ```
 */
export function accessTableNames(tablePrefix = ""): AccessTableNames {
  const p = checkTablePrefix(tablePrefix);
  return {
    apiKeys: `${p}api_keys`,
    apiKeysUserIndex: `${p}api_keys_user_idx`,
    accountBans: `${p}account_bans`,
  };
}
