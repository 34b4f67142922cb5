/**
 * The API keys module (`apiKeys()`): personal access tokens a signed-in
 * user creates on `/account` or over JSON, for a script or a CI job. A key
 * has a name, an expiry (a default, and a maximum the app sets) and scopes
 * (a subset of the app's policy actions); it is shown once and only its
 * SHA-256 is stored (`SQLApiKeyStore`, found by its id). Sent as
 * `Authorization: Bearer <key>`, it resolves through the identity
 * middleware to its owner's identity with `apiKey` set: the policy gates
 * refuse every action outside its scopes, and the account's own routes (a
 * password, an address, a passkey, TOTP, keys, the deletion) refuse it
 * outright. The format (`pc_<id>_<secret><checksum>`) is documented in
 * `@portcullis/auth/sessions`' `mintApiKey`.
 *
 * Where keys stand in the account's lifecycle:
 * - deleting the account deletes its keys;
 * - the first proof of the address removes any key made before it (an
 *   unverified account cannot make one anyway);
 * - a password reset revokes every key (the reset is how an owner takes an
 *   account back: a key an intruder made must die with their sessions);
 * - a password change, "sign out everywhere" and an email change keep the
 *   keys (they are not sessions; the owner revokes them on `/account`);
 * - a ban stops every key at once (the store refuses a banned owner's
 *   keys), and an unban brings them back.
 *
 * @module
 */
import { Hono } from "hono";
import { ApiKeys } from "@portcullis/auth/sessions";
import { SQLApiKeyStore } from "@portcullis/sql";
import type { AccountsEnv, AccountsModule } from "../module.ts";
import { handleWith, signedIn, signedInOwner } from "../handle.ts";
import { limit } from "../context.ts";
import { tooManyRequests } from "../respond.ts";
import { currentIdentity } from "@portcullis/auth";
import {
  checkKeySettings,
  createKeyForm,
  createKeyJson,
  keyRows,
  type KeySettings,
  listKeys,
  revokeKey,
  revokeKeyForm,
} from "./routes.ts";

/** Options of {@linkcode apiKeys}. */
export interface ApiKeysModuleOptions {
  /**
   * The policy actions a key may be given: the app's (those its policies
   * take, such as `"notes:read"`). A key gets a subset its owner picks.
   * Letters, digits and `:._-`, starting with a letter, at most 64
   * characters each.
   */
  scopes: readonly string[];
  /**
   * The keys' prefix, so that secret scanners can tell the app's keys:
   * 2 to 10 lowercase letters and digits; default `pc`.
   */
  prefix?: string;
  /** The lifetime of a key whose owner picks none, in days; default 30. */
  defaultDays?: number;
  /** The longest lifetime the app allows, in days; default 365. */
  maxDays?: number;
  /** The most keys one user may hold; default 25. */
  maxPerUser?: number;
  /**
   * The requests one key may make per window, through the throttle (a
   * sliding window in the key-value store); past it, 429 with
   * `Retry-After`. Default 600 a minute.
   */
  requestLimit?: { max: number; windowSeconds: number };
  /**
   * How stale "last used" may be, in seconds; default 60: a key's use is
   * written at most once a minute per process, never once per request.
   */
  usageIntervalSeconds?: number;
}

/**
 * The API keys module.
 *
 * @example Usage
 * ```ts ignore
 * import { accounts, apiKeys, password } from "@portcullis/accounts";
 *
 * const app = accounts({
 *   ...parts,
 *   modules: [password(), apiKeys({ scopes: ["notes:read", "notes:write"] })],
 * });
 * ```
 *
 * @param options The scopes a key may have, its lifetimes and limits.
 * @returns The module.
 * @throws {TypeError} For scopes, a prefix or lifetimes it cannot use.
 */
export function apiKeys(options: ApiKeysModuleOptions): AccountsModule {
  const settings0 = checkKeySettings(options);
  return {
    name: "api_keys",
    setup(ctx) {
      const store = new SQLApiKeyStore(ctx.db);
      const keys = new ApiKeys({
        store,
        prefix: options.prefix,
        now: ctx.now,
        timeoutMs: ctx.sessions.storeTimeoutMs,
        usageIntervalSeconds: options.usageIntervalSeconds,
        onError: ctx.log,
      });
      const settings: KeySettings = { ...settings0, store, keys };
      const on = handleWith(ctx, settings);
      const routes = new Hono<AccountsEnv>();
      // Reading the list: a person (an operator acting as the user may
      // look); every change: the owner in person, never a key.
      routes.get("/api/keys", signedIn, on(listKeys));
      routes.post("/api/keys", signedInOwner, on(createKeyJson));
      routes.delete("/api/keys/:id", signedInOwner, on(revokeKey));
      routes.post("/account/keys", signedInOwner, on(createKeyForm));
      routes.post("/account/keys/revoke", signedInOwner, on(revokeKeyForm));
      const rule = settings.requestLimit;
      return {
        routes,
        identityOptions: { apiKeys: keys },
        lifecycle: [{
          method: "api_keys",
          async addressProven(event) {
            if (event.verifiedBefore <= 0) {
              return await store.removeAllFor(event.subject);
            }
            if (event.kind === "passwordReset") {
              // Not "set up before the proof": revoked as part of taking
              // the account back, and recorded as such.
              const n = await store.removeAllFor(event.subject);
              if (n > 0) {
                await ctx.events.emit(
                  "api_key_revoked",
                  event.subject,
                  undefined,
                  {
                    detail: `password reset: ${n} key${n === 1 ? "" : "s"}`,
                  },
                );
              }
            }
            return 0;
          },
          accountDeleted: (subject) => store.removeAllFor(subject),
        }],
        // Each key's requests go through the throttle.
        beforeRoute(req) {
          const id = currentIdentity(req)?.apiKey?.id;
          if (id === undefined) return null;
          return ctx.limiter.take([limit("api-key", id, rule)]).then((wait) =>
            wait > 0 ? tooManyRequests(req, wait) : null
          );
        },
        async accountSection(_req, user) {
          return ctx.views.apiKeys({
            keys: keyRows(ctx, await store.listFor(user.subject)),
            scopes: settings.scopes,
            defaultDays: settings.defaultDays,
            maxDays: settings.maxDays,
            passwordless: !user.password,
            canCreate: user.verified,
          });
        },
      };
    },
  };
}
