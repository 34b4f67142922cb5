// The login throttle's counters (private): their keys, and what they read as.
import { counterKey, int } from "./_counter.ts";
import type { ThrottleDecision } from "./login_throttle_types.ts";

/** The store keys of one attempt's counters. */
export interface Keys {
  account: string;
  accountLast: string;
  accountReset: string;
  pair: string;
  pairLast: string;
  address: string;
}

/** The failure counts an attempt is judged by. */
export interface Counts {
  account: number;
  accountLast: number;
  pair: number;
  pairLast: number;
}

/** The keys of the counters of (account, address); hashed, no email in them. */
export async function loginKeys(
  prefix: string,
  account: string,
  address: string,
): Promise<Keys> {
  const [acct, pair, addr] = await Promise.all([
    counterKey(prefix, "login-account", account),
    counterKey(prefix, "login-pair", account, address),
    counterKey(prefix, "login-address", address),
  ]);
  return {
    account: acct,
    accountLast: `${acct}:last`,
    accountReset: `${acct}:reset`,
    pair,
    pairLast: `${pair}:last`,
    address: addr,
  };
}

/** The counts as read; a pair whose last failure came before the account's reset is clean. */
export function countsOf(
  a: string | null,
  aLast: string | null,
  aReset: string | null,
  p: string | null,
  pLast: string | null,
): Counts {
  const resetAt = int(aReset);
  const pairLast = int(pLast);
  const stale = resetAt > 0 && pairLast <= resetAt;
  return {
    account: int(a),
    accountLast: int(aLast),
    pair: stale ? 0 : int(p),
    pairLast: stale ? 0 : pairLast,
  };
}

/** A refusal, waiting at least a second. */
export function refuse(
  seconds: number,
  reason: "address" | "delay" | "hardStop",
): ThrottleDecision {
  return {
    allowed: false,
    retryAfterSeconds: Math.max(1, Math.ceil(seconds)),
    reason,
  };
}
