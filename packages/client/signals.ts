/**
 * The WebAuthn Signals API (Level 3): telling the user's passkey provider
 * what the server knows, so that it hides a passkey the server no longer
 * accepts and shows the user's current address. Each call is
 * feature-detected and never throws: a browser without the API loses
 * nothing, and the answer says whether the signal was given.
 *
 * @module
 */
import { publicKeyCredential } from "./capabilities.ts";

/** Who a signal is about: the relying party and the user's WebAuthn id. */
export interface SignalUser {
  /** The relying party id (`example.com`). */
  rpId: string;
  /** The user handle, base64url (the `user.id` the passkey was made with). */
  userId: string;
}

async function call(
  name:
    | "signalUnknownCredential"
    | "signalAllAcceptedCredentials"
    | "signalCurrentUserDetails",
  options: unknown,
): Promise<boolean> {
  const pkc = publicKeyCredential() as Record<string, unknown> | null;
  const fn = pkc?.[name];
  if (typeof fn !== "function") return false;
  try {
    await (fn as (o: unknown) => Promise<void>).call(pkc, options);
    return true;
  } catch {
    return false;
  }
}

/**
 * Tells the passkey provider that the server does not know a credential
 * (a sign-in with it was refused as unknown): it may hide or remove it.
 *
 * @param rpId The relying party id.
 * @param credentialId The credential id, base64url.
 * @returns Whether the browser took the signal.
 *
 * @example Usage
 * ```ts
 * import { signalUnknownCredential } from "@portcullis/client";
 * await signalUnknownCredential("example.com", "AAEC"); // false outside a browser
 * ```
 */
export function signalUnknownCredential(
  rpId: string,
  credentialId: string,
): Promise<boolean> {
  return call("signalUnknownCredential", { rpId, credentialId });
}

/**
 * Tells the passkey provider every credential of the user the server
 * accepts: the others (a passkey removed on the account page) may go.
 *
 * @param user The relying party and the user.
 * @param credentialIds The accepted credential ids, base64url.
 * @returns Whether the browser took the signal.
 */
export function signalAllAcceptedCredentials(
  user: SignalUser,
  credentialIds: readonly string[],
): Promise<boolean> {
  return call("signalAllAcceptedCredentials", {
    rpId: user.rpId,
    userId: user.userId,
    allAcceptedCredentialIds: [...credentialIds],
  });
}

/**
 * Tells the passkey provider the user's current name (after an email
 * change, the new address).
 *
 * @param user The relying party and the user.
 * @param name The account name (the address).
 * @param displayName The name to show; default `name`.
 * @returns Whether the browser took the signal.
 */
export function signalCurrentUserDetails(
  user: SignalUser,
  name: string,
  displayName: string = name,
): Promise<boolean> {
  return call("signalCurrentUserDetails", {
    rpId: user.rpId,
    userId: user.userId,
    name,
    displayName,
  });
}
