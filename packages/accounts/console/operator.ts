/**
 * Who may use the operator's console: the application's predicate, asked
 * under a deadline and failing closed, and the operator's confirmation (a
 * re-check of their password) that every console route needs.
 *
 * @module
 */
import { currentIdentity } from "@portcullis/auth";
import type { ModuleContext } from "../context.ts";

/** The signed-in user the application's predicate is asked about. */
export interface OperatorCandidate {
  /** The subject id. */
  subject: string;
  /** The email address. */
  email: string;
  /** Whether the address is proven. */
  verified: boolean;
}

/**
 * The application's decision: whether this user is an operator. Only a
 * literal `true` is yes; an exception, a rejection or no answer within the
 * session store's deadline is no.
 */
export type IsOperator = (
  user: OperatorCandidate,
) => boolean | Promise<boolean>;

/** An operator the console let in, for the request's routes. */
export interface Operator extends OperatorCandidate {
  /** The session the operator is signed in with (its id). */
  jti: string;
  /** When that session began, unix milliseconds. */
  issuedAt: number;
  /** When its token expires, unix seconds. */
  expiresAt: number;
  /** Whether it is bound to a device key (DBSC). */
  deviceBound: boolean;
}

/**
 * Asks the predicate: `true` or `false` as it answered (only a literal
 * `true` is yes), or `"unknown"` when it threw, rejected or did not answer
 * within the session store's deadline (logged). Callers fail closed: an
 * unknown requester is no operator, an unknown target is one.
 *
 * @param ctx The app (its deadline and log).
 * @param isOperator The predicate.
 * @param user Who is asked about.
 * @returns The answer.
 */
export async function askIsOperator(
  ctx: ModuleContext,
  isOperator: IsOperator,
  user: OperatorCandidate,
): Promise<boolean | "unknown"> {
  const ms = ctx.sessions.storeTimeoutMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const answer = await Promise.race([
      Promise.resolve().then(() => isOperator({ ...user })),
      new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), ms);
      }),
    ]);
    if (answer === "late") {
      ctx.log(`operator console: isOperator did not answer within ${ms} ms`);
      return "unknown";
    }
    return answer === true;
  } catch (error) {
    ctx.log(
      `operator console: isOperator threw (${(error as Error)?.message})`,
    );
    return "unknown";
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The request's operator: a person signed in with a session of their own
 * (no API key, no operator acting as someone else) whom the predicate
 * calls an operator; `null` otherwise.
 *
 * @param ctx The app.
 * @param isOperator The predicate.
 * @param req The request.
 * @returns The operator, or `null`.
 */
export async function operatorOf(
  ctx: ModuleContext,
  isOperator: IsOperator,
  req: Request,
): Promise<Operator | null> {
  const identity = currentIdentity(req);
  if (
    identity === null || identity.apiKey !== undefined ||
    identity.actor !== undefined
  ) {
    return null;
  }
  const user = await ctx.credentials.findById(identity.subject);
  if (user === null) return null;
  const candidate = {
    subject: user.id,
    email: user.email,
    verified: user.verifiedAt > 0,
  };
  // Only a literal true in time: a failing predicate lets nobody in.
  if ((await askIsOperator(ctx, isOperator, candidate)) !== true) return null;
  return {
    ...candidate,
    jti: identity.jti,
    issuedAt: identity.issuedAt,
    expiresAt: identity.expiresAt,
    deviceBound: identity.binding === "device",
  };
}

const GRANT_PREFIX = "portcullis:console:";

/**
 * The operator's confirmations: a re-check of the password (or a fresh
 * re-authentication) at `POST /console/confirm` lets this session use the
 * console for a while, kept in the key-value store under the session's id
 * (so it serves a cookie and a Bearer session alike, and dies with the
 * session).
 */
export class ConsoleGrants {
  #ctx: ModuleContext;
  #ms: number;

  /**
   * Makes the grants.
   *
   * @param ctx The app.
   * @param minutes How long a confirmation lasts.
   */
  constructor(ctx: ModuleContext, minutes: number) {
    this.#ctx = ctx;
    this.#ms = minutes * 60_000;
  }

  /**
   * Records a confirmation of this session.
   *
   * @param operator The operator who confirmed.
   * @returns Until when it holds, unix milliseconds.
   */
  async grant(operator: Operator): Promise<number> {
    const until = this.#ctx.now() + this.#ms;
    await this.#ctx.kv.put(GRANT_PREFIX + operator.jti, String(until), {
      ttlSeconds: Math.ceil(this.#ms / 1000),
    });
    return until;
  }

  /**
   * Whether this session confirmed lately.
   *
   * @param operator The operator.
   * @returns `true` while the confirmation holds.
   */
  async holds(operator: Operator): Promise<boolean> {
    const [value] = await this.#ctx.kv.getMany([GRANT_PREFIX + operator.jti]);
    return value !== null && Number(value) > this.#ctx.now();
  }
}
