/**
 * The gates that ask the application: a verified address, a policy's
 * decision. Each answer comes within the session store's deadline, or the
 * gate fails closed (503).
 *
 * @module
 */
import { evaluatePolicy, type Policy, principal } from "../authz/policy.ts";
import { Deadline } from "../kv/deadline.ts";
import type { SessionManager } from "../session/session_manager.ts";
import {
  type IdentityContext,
  identityOf,
  type RequestState,
  requestStates,
} from "./_request_state.ts";
import { errorResponse, storeUnavailable } from "../_common/error_response.ts";
import { notInstalled, requireAuthenticated } from "./gates.ts";

/**
 * The gate for actions that need a verified email: 401 when not signed in,
 * 403 when the account is not verified, 503 when the check fails or does
 * not answer within the session store's deadline (`storeTimeoutMs`).
 * Needs `isVerified` in the options of `identityMiddleware`.
 *
 * @param req The request.
 * @returns A response to send, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const denied = await requireVerified(req);
 * if (denied) return denied;
 * ```
 */
export async function requireVerified(req: Request): Promise<Response | null> {
  const denied = requireAuthenticated(req);
  if (denied !== null) return denied;
  const state = requestStates.get(req)!;
  const check = state.context.isVerified;
  if (check === undefined) {
    state.context.emit({
      type: "misconfigured",
      message:
        "requireVerified needs isVerified in the options of identityMiddleware",
    });
    return errorResponse(
      req,
      500,
      "misconfigured",
      "Verification check is not configured",
    );
  }
  let verified: boolean;
  try {
    const answer = check(identityOf(state)!.subject, req);
    // A check that never settles must not hold the request: it gets the
    // store's deadline, and past it the gate answers 503.
    verified = (typeof (answer as Promise<boolean>)?.then === "function"
      ? await deadlineOf(state.context).guard(
        Promise.resolve(answer),
        (e) =>
          late(e, "isVerified", state.context.manager),
      )
      : answer) === true;
  } catch (error) {
    state.context.emit({ type: "verification_check_failed", error });
    return storeUnavailable(req);
  }
  return verified
    ? null
    : errorResponse(req, 403, "unverified", "Verify your email address first");
}

/**
 * Asks a policy whether the request's principal may do `action` on `id`.
 * Fails closed: a policy that throws or rejects denies (and the error goes
 * to the event hook), and so does one that has not answered within the
 * session store's deadline (`storeTimeoutMs`).
 *
 * @param req The request.
 * @param policy The policy.
 * @param action One of the policy's actions (a misspelling is a type error).
 * @param id The object's id.
 * @returns `true` when allowed.
 *
 * @example Usage
 * ```ts ignore
 * if (await allows(req, notes, "edit", note.id)) { ... }
 * ```
 */
export async function allows<A extends string>(
  req: Request,
  policy: Policy<A>,
  action: NoInfer<A>,
  id: string,
): Promise<boolean> {
  const state = requestStates.get(req);
  if (state === undefined || state.session.kind === "unavailable") {
    return false;
  }
  return (await decide(state, policy, action, id)) === "allow";
}

/**
 * A policy's answer under the store's deadline: `late` when it has not
 * answered in time (reported as a `policy_error`); it never holds the
 * request longer.
 */
async function decide<A extends string>(
  state: RequestState,
  policy: Policy<A>,
  action: A,
  id: string,
): Promise<"allow" | "deny" | "late"> {
  const identity = identityOf(state);
  const report = (error: unknown) =>
    state.context.emit({ type: "policy_error", error });
  try {
    const allowed = await deadlineOf(state.context).guard(
      evaluatePolicy(
        policy,
        identity === null ? null : principal(identity.subject, {
          scopes: identity.apiKey?.scopes,
          actor: identity.actor,
        }),
        action,
        id,
        report,
      ),
      (e) => late(e, "The policy", state.context.manager),
    );
    return allowed ? "allow" : "deny";
  } catch (error) {
    // evaluatePolicy never rejects: only the deadline gets here.
    try {
      report(error);
    } catch {
      // A failing reporter changes no answer.
    }
    return "late";
  }
}

/** One deadline per session manager: its `storeTimeoutMs`. */
const deadlines = new WeakMap<SessionManager, Deadline>();

function deadlineOf(context: IdentityContext): Deadline {
  let deadline = deadlines.get(context.manager);
  if (deadline === undefined) {
    deadline = new Deadline(context.manager.storeTimeoutMs);
    deadlines.set(context.manager, deadline);
  }
  return deadline;
}

/** The error a check gets past its deadline, naming what did not answer. */
function late(error: unknown, what: string, manager: SessionManager): unknown {
  if (!(error instanceof Error) || error.name !== "DeadlineExceeded") {
    return error;
  }
  const out = new Error(
    `${what} did not answer within ${manager.storeTimeoutMs} ms (storeTimeoutMs)`,
  );
  out.name = "DeadlineExceeded";
  return out;
}

/**
 * The policy gate: 403 when the policy denies (or throws), 503 when the
 * session store could not be asked or the policy has not answered within
 * the store's deadline (`storeTimeoutMs`); `null` to go on.
 *
 * @param req The request.
 * @param policy The policy.
 * @param action One of the policy's actions.
 * @param id The object's id.
 * @returns A response to send, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const denied = await authorize(req, notes, "edit", id);
 * if (denied) return denied;
 * ```
 */
export async function authorize<A extends string>(
  req: Request,
  policy: Policy<A>,
  action: NoInfer<A>,
  id: string,
): Promise<Response | null> {
  const state = requestStates.get(req);
  if (state === undefined) return notInstalled(req);
  if (state.session.kind === "unavailable") return storeUnavailable(req);
  const decision = await decide(state, policy, action, id);
  if (decision === "late") {
    return errorResponse(
      req,
      503,
      "policy_unavailable",
      "The permission check did not answer in time, try again shortly",
      { "retry-after": "5" },
    );
  }
  return decision === "allow"
    ? null
    : errorResponse(req, 403, "forbidden", "You are not allowed to do this");
}
