/**
 * The operator's console (`operatorConsole({ isOperator })`): pages and
 * JSON to find a user by email, see one user's account (address,
 * verification, sign-in methods, sessions, API keys, activity), ban and
 * unban with a reason, sign out one session or all, and act as the user
 * for a while (impersonation) with every step recorded.
 *
 * Who is an operator is the application's decision: `isOperator` is asked
 * on every console request, and only a literal `true` in time (the session
 * store's deadline) lets the request in; a predicate that throws, rejects
 * or hangs lets nobody in. To anyone else (anonymous, a user, an API key,
 * an operator acting as a user) every console path answers exactly what a
 * path no route has answers, 404 `not_found`, whatever the method: the
 * console does not reveal that it exists. An operator then confirms it is
 * them (the password, or a fresh re-authentication) at
 * `POST /console/confirm`; the confirmation holds for this session for
 * `confirmMinutes`. Every console form is a same-origin POST behind the
 * package's cross-origin protection.
 *
 * A ban signs the user out everywhere, refuses every sign-in method with
 * the answer a wrong password gets, stops their API keys (kept, and back
 * on an unban) and is recorded with its reason on both sides.
 *
 * An impersonation is a session of the user whose identity carries the
 * operator as its `actor` (RFC 8693's `act`): at most
 * `impersonationMinutes` (default 15), never renewed, never bound to a
 * device key or a DPoP key. It cannot change a password, an address, a
 * sign-in method or a key, nor delete the account, and it cannot act as
 * another operator. Every page shows a banner with the operator's name
 * and a button that ends it; every write made during it is recorded on the
 * user's side ("an operator acted on your account") and on the operator's.
 * Ending it (or its expiry) returns the browser to the operator's own
 * session.
 *
 * @module
 */
import { Hono } from "hono";
import { currentIdentity, errorResponse } from "@portcullis/auth";
import {
  SQLApiKeyStore,
  SQLBanStore,
  SQLIdentityStore,
  SQLPasskeyStore,
  SQLTotpStore,
  SQLUserDirectory,
} from "@portcullis/sql";
import type { AccountsEnv, AccountsModule } from "../module.ts";
import { handleWith } from "../handle.ts";
import {
  ConsoleGrants,
  type IsOperator,
  type Operator,
  operatorOf,
} from "./operator.ts";
import {
  ban,
  confirm,
  consoleHome,
  type ConsoleSettings,
  revokeAll,
  revokeSession,
  unban,
  userDetail,
  userDetailJson,
  usersList,
  usersListJson,
} from "./routes.ts";
import {
  afterImpersonatedRequest,
  dropParkedOnSignOut,
  endImpersonation,
  recordRefusedWrite,
  restoreOperator,
  startImpersonation,
} from "./impersonation.ts";

export type { IsOperator, OperatorCandidate } from "./operator.ts";

/** Options of {@linkcode operatorConsole}. */
export interface OperatorConsoleOptions {
  /**
   * Who is an operator: the application's predicate (a role in its own
   * table, a list of addresses, a policy it evaluates). Asked on every
   * console request; only a literal `true` within the session store's
   * deadline is yes. Require a verified address: an unverified account's
   * address belongs to nobody yet.
   */
  isOperator: IsOperator;
  /** How long an impersonation lasts, in minutes; default 15, at most 60. */
  impersonationMinutes?: number;
  /** How long an operator's confirmation holds, in minutes; default 10. */
  confirmMinutes?: number;
  /** Users per page; default 25, at most 100. */
  pageSize?: number;
}

function whole(name: string, n: number, max: number): number {
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new TypeError(
      `operatorConsole: ${name} must be a whole number from 1 to ${max}: received ${n}`,
    );
  }
  return n;
}

/** Whether a path belongs to the console (and so answers operators only). */
function consolePath(path: string): boolean {
  return path === "/console" || path.startsWith("/console/") ||
    path === "/api/console" || path.startsWith("/api/console/");
}

/**
 * The operator's console.
 *
 * @example Usage
 * ```ts ignore
 * import { accounts, operatorConsole, password } from "@portcullis/accounts";
 *
 * const operators = new Set(["ops@example.com"]);
 * const app = accounts({
 *   ...parts,
 *   modules: [
 *     password(),
 *     operatorConsole({ isOperator: (u) => u.verified && operators.has(u.email) }),
 *   ],
 * });
 * ```
 *
 * @param options The predicate and the time limits.
 * @returns The module.
 * @throws {TypeError} Without a predicate, or for a limit it cannot use.
 */
export function operatorConsole(
  options: OperatorConsoleOptions,
): AccountsModule {
  if (typeof options?.isOperator !== "function") {
    throw new TypeError(
      "operatorConsole needs isOperator: the application's decision of who is an operator, for example isOperator: (user) => user.verified && OPERATORS.has(user.email)",
    );
  }
  const impersonationMinutes = whole(
    "impersonationMinutes",
    options.impersonationMinutes ?? 15,
    60,
  );
  const confirmMinutes = whole(
    "confirmMinutes",
    options.confirmMinutes ?? 10,
    60,
  );
  const pageSize = whole("pageSize", options.pageSize ?? 25, 100);
  const isOperator = options.isOperator;
  return {
    name: "operator_console",
    setup(ctx) {
      const bans = new SQLBanStore(ctx.db);
      const settings: ConsoleSettings = {
        isOperator,
        impersonationMinutes,
        pageSize,
        grants: new ConsoleGrants(ctx, confirmMinutes),
        bans,
        directory: new SQLUserDirectory(ctx.db),
        keys: new SQLApiKeyStore(ctx.db),
        passkeys: new SQLPasskeyStore(ctx.db),
        totp: new SQLTotpStore(ctx.db),
        identities: new SQLIdentityStore(ctx.db),
        operators: new WeakMap<Request, Operator>(),
      };
      // The user and the operator of each impersonated request, as it began
      // (a sign-out in the route must not hide who acted).
      const acting = new WeakMap<
        Request,
        { subject: string; actor: string; expiresAt: number }
      >();
      // The impersonated requests whose write afterRoute recorded.
      const recorded = new WeakSet<Request>();
      const on = handleWith(ctx, settings);
      const routes = new Hono<AccountsEnv>();
      routes.get("/console", on(consoleHome));
      routes.post("/console/confirm", on(confirm));
      routes.get("/console/users", on(usersList));
      routes.get("/console/users/:id", on(userDetail));
      routes.post("/console/users/:id/ban", on(ban));
      routes.post("/console/users/:id/unban", on(unban));
      routes.post("/console/users/:id/sessions/revoke", on(revokeSession));
      routes.post("/console/users/:id/sessions/revoke-all", on(revokeAll));
      routes.post("/console/users/:id/impersonate", on(startImpersonation));
      routes.get("/api/console/users", on(usersListJson));
      routes.get("/api/console/users/:id", on(userDetailJson));
      routes.post("/impersonation/end", on(endImpersonation));
      return {
        routes,
        // A banned account signs in no way.
        refusesSignIn: async (subject) => (await bans.find(subject)) !== null,
        beforeRoute(req) {
          const url = req.url;
          const at = url.indexOf("/", url.indexOf("//") + 2);
          const path = at < 0 ? "/" : url.slice(at).split(/[?#]/, 1)[0];
          if (consolePath(path)) {
            // Everyone but an operator meets the 404 of a path no route
            // has, before any route, 405 or 415 could tell otherwise.
            return operatorOf(ctx, isOperator, req).then((operator) => {
              if (operator === null) {
                return errorResponse(req, 404, "not_found", "Nothing here");
              }
              settings.operators.set(req, operator);
              return null;
            });
          }
          const identity = currentIdentity(req);
          // An impersonation that ended without its button (it expired, or
          // its session was signed out): back to the operator's session.
          if (identity === null) return restoreOperator(ctx, req, path);
          if (identity.actor !== undefined) {
            acting.set(req, {
              subject: identity.subject,
              actor: identity.actor,
              expiresAt: identity.expiresAt,
            });
          }
          return null;
        },
        afterRoute(req, res) {
          const a = acting.get(req);
          if (a === undefined) return dropParkedOnSignOut(ctx, req, res);
          recorded.add(req);
          return afterImpersonatedRequest(ctx, req, res, a).then((out) =>
            dropParkedOnSignOut(ctx, req, out) ?? out
          );
        },
        // A write of an impersonation refused before its route (a body over
        // the caps, a cross-origin post, a device-bound registration, a
        // console path): recorded too, so no attempt goes unseen.
        answered(req, res) {
          const method = req.method;
          if (
            recorded.has(req) || method === "GET" || method === "HEAD" ||
            method === "OPTIONS"
          ) {
            return;
          }
          return recordRefusedWrite(ctx, req, res);
        },
      };
    },
  };
}
