// The body of PasswordAuthenticator.login, kept apart so the class stays
// one screenful: throttle, then the same work for known and unknown emails.
import type { CredentialStore } from "./credential_store.ts";
import { normalizeEmail } from "./normalize_email.ts";
import type {
  LoginOptions,
  LoginResult,
  PasswordThrottle,
} from "./password_authenticator_types.ts";
import type { PasswordHasher } from "./password_hasher.ts";
import type { PasswordPolicy } from "./password_policy.ts";

export interface LoginParts {
  credentials: CredentialStore;
  hasher: PasswordHasher;
  policy: PasswordPolicy;
  throttle: PasswordThrottle | undefined;
  dummyHash: () => Promise<string>;
}

const INVALID = Object.freeze({ kind: "invalid" as const });
// No normalised email contains a space: input that is not an address
// shares this one counter.
const INVALID_ACCOUNT = "(not an address)";

/**
 * Whether a stored hash stands for a password. An empty one, or one that
 * starts with `!` or `*` (as a locked entry in /etc/shadow), marks an
 * account without a password: no hasher accepts it, and no login reaches a
 * hasher with it.
 */
export function holdsPassword(stored: string): boolean {
  return typeof stored === "string" && stored !== "" &&
    stored[0] !== "!" && stored[0] !== "*";
}

export async function passwordLogin(
  parts: LoginParts,
  email: string,
  password: string,
  options: LoginOptions,
): Promise<LoginResult> {
  let normalized: string | null;
  try {
    normalized = normalizeEmail(email);
  } catch {
    normalized = null; // throttled under one shared name, then refused
  }
  const address = options.address ?? "unknown";
  if (parts.throttle !== undefined) {
    const decision = await parts.throttle.attempt(
      normalized ?? INVALID_ACCOUNT,
      address,
    );
    if (!decision.allowed) {
      return {
        kind: "throttled",
        retryAfterSeconds: Math.max(1, decision.retryAfterSeconds ?? 1),
      };
    }
  }
  if (normalized === null) return INVALID;
  if (!parts.policy.fits(password)) return INVALID;
  const user = await parts.credentials.findByEmail(normalized);
  // An account without a password (made by a provider sign-in) spends the
  // same one hash as an unknown email: its marker would fail at once, and
  // the time saved would tell that the address has an account.
  if (user === null || !holdsPassword(user.passwordHash)) {
    await parts.hasher.verify(password, await parts.dummyHash());
    return INVALID;
  }
  if (!(await parts.hasher.verify(password, user.passwordHash))) {
    return INVALID;
  }
  let current = user.passwordHash;
  if (parts.hasher.needsRehash(user.passwordHash)) {
    try {
      const fresh = await parts.hasher.hash(password);
      if (
        await parts.credentials.updatePasswordHash(
          user.id,
          fresh,
          user.passwordHash,
        )
      ) current = fresh;
    } catch {
      // The login itself succeeded; the upgrade is retried next time.
    }
  }
  if (parts.throttle !== undefined) {
    await parts.throttle.succeeded(normalized, address).catch(() => {});
  }
  const credentials = parts.credentials;
  return {
    kind: "ok",
    subject: user.id,
    stillCurrent: async () =>
      (await credentials.findById(user.id))?.passwordHash === current,
  };
}
