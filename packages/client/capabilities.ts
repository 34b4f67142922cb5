/**
 * What the browser can do with passkeys, each feature-detected: WebAuthn
 * at all, autofill (conditional mediation on `get`), automatic upgrades
 * (conditional mediation on `create`, WebAuthn Level 3's
 * `getClientCapabilities()`) and the Signals API. A browser without a
 * feature answers `false`; none of these throws.
 *
 * @module
 */

/** `PublicKeyCredential` with the Level 3 statics, each possibly absent. */
export interface PublicKeyCredentialStatics {
  /** Whether autofill can offer passkeys. */
  isConditionalMediationAvailable?: () => Promise<boolean>;
  /** The client's capabilities (`conditionalCreate`, `signalAllAcceptedCredentials`, …). */
  getClientCapabilities?: () => Promise<Record<string, boolean | undefined>>;
  /** Tells the authenticator a credential is unknown to the server. */
  signalUnknownCredential?: (
    options: { rpId: string; credentialId: string },
  ) => Promise<void>;
  /** Tells the authenticator which of a user's credentials the server accepts. */
  signalAllAcceptedCredentials?: (
    options: {
      rpId: string;
      userId: string;
      allAcceptedCredentialIds: string[];
    },
  ) => Promise<void>;
  /** Tells the authenticator the user's current name and display name. */
  signalCurrentUserDetails?: (
    options: {
      rpId: string;
      userId: string;
      name: string;
      displayName: string;
    },
  ) => Promise<void>;
}

/**
 * The browser's `PublicKeyCredential`, or `null` where WebAuthn is missing
 * (an old browser, a server, a page that is not a secure context).
 *
 * @returns The constructor with its statics, or `null`.
 */
export function publicKeyCredential(): PublicKeyCredentialStatics | null {
  const g = globalThis as {
    PublicKeyCredential?: PublicKeyCredentialStatics;
    navigator?: { credentials?: unknown };
  };
  return typeof g.PublicKeyCredential === "function" &&
      g.navigator?.credentials !== undefined
    ? g.PublicKeyCredential
    : null;
}

/**
 * Whether this browser can use passkeys at all.
 *
 * @returns `true` when WebAuthn is there.
 *
 * @example Usage
 * ```ts
 * import { supportsPasskeys } from "@portcullis/client";
 * console.assert(typeof supportsPasskeys() === "boolean");
 * ```
 */
export function supportsPasskeys(): boolean {
  return publicKeyCredential() !== null;
}

/**
 * Whether autofill can offer passkeys (an input with
 * `autocomplete="username webauthn"` and a conditional `get`).
 *
 * @returns `true` when it can.
 */
export async function supportsAutofill(): Promise<boolean> {
  try {
    return await publicKeyCredential()?.isConditionalMediationAvailable?.() ===
      true;
  } catch {
    return false;
  }
}

/**
 * One of the client's capabilities (WebAuthn Level 3
 * `getClientCapabilities()`): `"conditionalCreate"`,
 * `"signalUnknownCredential"`, … `false` when the browser does not say.
 *
 * @param name The capability.
 * @returns Whether the browser has it.
 */
export async function hasCapability(name: string): Promise<boolean> {
  try {
    const caps = await publicKeyCredential()?.getClientCapabilities?.();
    return caps?.[name] === true;
  } catch {
    return false;
  }
}
