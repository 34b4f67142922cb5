/**
 * Events the HTTP glue reports, for logs and metrics.
 *
 * @module
 */

/**
 * Something a deployment wants to know about. Events never carry a token,
 * a secret or a password.
 */
export type AuthEvent =
  | { type: "store_unavailable"; error: unknown }
  | { type: "cross_origin_rejected"; method: string; path: string }
  | { type: "policy_error"; error: unknown }
  | { type: "verification_check_failed"; error: unknown }
  | { type: "misconfigured"; message: string }
  | { type: "dpop_proof_refused"; reason: string; path: string };

/**
 * The default event hook: problems go to `console.error` as one line, with
 * no stack and no request data. A store failure is logged by the error's
 * name and code only: drivers echo the failed command in their messages,
 * and those carry session ids and subject ids (key names), which stay out
 * of logs.
 *
 * @param event The event.
 *
 * @example Usage
 * ```ts
 * import { logAuthEvent } from "@portcullis/auth/http";
 * logAuthEvent({ type: "misconfigured", message: "AUTH_SECRET is not set" });
 * ```
 */
export function logAuthEvent(event: AuthEvent): void {
  if (
    event.type === "cross_origin_rejected" ||
    event.type === "dpop_proof_refused"
  ) return;
  const detail = event.type === "store_unavailable"
    ? kindOf(event.error)
    : "error" in event
    ? (event.error instanceof Error ? event.error.message : String(event.error))
    : event.message;
  console.error(`portcullis: ${event.type}: ${detail}`);
}

/** An error's name and code, never its message. */
function kindOf(error: unknown): string {
  if (!(error instanceof Error)) return "the store failed";
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" || typeof code === "number"
    ? `${error.name} (${code})`
    : error.name;
}
