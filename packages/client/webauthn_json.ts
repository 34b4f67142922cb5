/**
 * WebAuthn's JSON forms in the browser: creation and request options as
 * the server sends them (challenge and ids base64url) made into what
 * `navigator.credentials` takes, and the credential it answers made into
 * JSON for the server (`RegistrationResponseJSON`,
 * `AuthenticationResponseJSON` of the WebAuthn Level 3 specification).
 * Where the browser has its own (`PublicKeyCredential.parseCreationOptionsFromJSON`,
 * `toJSON()`), the same shapes come out either way.
 *
 * @module
 */
import { decodeBase64Url, encodeBase64Url } from "@portcullis/bytes";

/**
 * A credential as the browser answers it (`PublicKeyCredential`): the part
 * this module reads, declared here so that the package needs no DOM
 * typings.
 */
export interface BrowserCredential {
  /** The credential id, base64url. */
  readonly id: string;
  /** The credential id's bytes. */
  readonly rawId: ArrayBuffer;
  /** The authenticator's answer. */
  readonly response: {
    readonly clientDataJSON: ArrayBuffer;
    readonly attestationObject?: ArrayBuffer;
    readonly authenticatorData?: ArrayBuffer;
    readonly signature?: ArrayBuffer;
    readonly userHandle?: ArrayBuffer | null;
    getTransports?(): string[];
    getPublicKeyAlgorithm?(): number;
    getPublicKey?(): ArrayBuffer | null;
    getAuthenticatorData?(): ArrayBuffer;
  };
  /** `platform` or `cross-platform`, when the browser says. */
  readonly authenticatorAttachment?: string | null;
  /** Extension outputs. */
  getClientExtensionResults(): unknown;
}

/** A credential descriptor with its id as bytes, as the browser takes it. */
export interface CredentialDescriptor {
  /** The credential id. */
  id: Uint8Array<ArrayBuffer>;
  /** Always `"public-key"`. */
  type: "public-key";
  /** How the authenticator can be reached. */
  transports?: string[];
}

/** Creation options as `navigator.credentials.create({ publicKey })` takes them. */
export type CreationOptions =
  & Omit<CreationOptionsJSON, "challenge" | "user" | "excludeCredentials">
  & {
    /** The challenge's bytes. */
    challenge: Uint8Array<ArrayBuffer>;
    /** The user, its id as bytes. */
    user: { id: Uint8Array<ArrayBuffer>; name: string; displayName: string };
    /** Credentials not to make again. */
    excludeCredentials?: CredentialDescriptor[];
  };

/** Request options as `navigator.credentials.get({ publicKey })` takes them. */
export type RequestOptions =
  & Omit<RequestOptionsJSON, "challenge" | "allowCredentials">
  & {
    /** The challenge's bytes. */
    challenge: Uint8Array<ArrayBuffer>;
    /** Credentials allowed; none for a discoverable sign-in. */
    allowCredentials?: CredentialDescriptor[];
  };

/** A credential descriptor as JSON (`allowCredentials`, `excludeCredentials`). */
export interface CredentialDescriptorJSON {
  /** The credential id, base64url. */
  id: string;
  /** Always `"public-key"`. */
  type: "public-key";
  /** How the authenticator can be reached. */
  transports?: string[];
}

/** Creation options as the server sends them (`PublicKeyCredentialCreationOptionsJSON`). */
export interface CreationOptionsJSON {
  /** The single-use challenge, base64url. */
  challenge: string;
  /** The relying party. */
  rp: { id?: string; name: string };
  /** The user: id base64url, name and display name. */
  user: { id: string; name: string; displayName: string };
  /** The algorithms the server accepts. */
  pubKeyCredParams: { type: "public-key"; alg: number }[];
  /** Milliseconds the ceremony may take. */
  timeout?: number;
  /** Credentials the user has already (not to be made again). */
  excludeCredentials?: CredentialDescriptorJSON[];
  /** Which authenticator, and whether the key is discoverable. */
  authenticatorSelection?: {
    authenticatorAttachment?: string;
    residentKey?: string;
    requireResidentKey?: boolean;
    userVerification?: string;
  };
  /** The attestation wanted. */
  attestation?: string;
  /** Extensions. */
  extensions?: Record<string, unknown>;
}

/** Request options as the server sends them (`PublicKeyCredentialRequestOptionsJSON`). */
export interface RequestOptionsJSON {
  /** The single-use challenge, base64url. */
  challenge: string;
  /** The relying party id. */
  rpId?: string;
  /** Milliseconds the ceremony may take. */
  timeout?: number;
  /** Credentials allowed; none for a discoverable sign-in. */
  allowCredentials?: CredentialDescriptorJSON[];
  /** Whether user verification is required. */
  userVerification?: string;
  /** Extensions. */
  extensions?: Record<string, unknown>;
}

/** A new credential as JSON (`RegistrationResponseJSON`). */
export interface RegistrationResponseJSON {
  /** The credential id, base64url. */
  id: string;
  /** The same, base64url. */
  rawId: string;
  /** Always `"public-key"`. */
  type: "public-key";
  /** The authenticator's answer. */
  response: {
    clientDataJSON: string;
    attestationObject: string;
    authenticatorData?: string;
    transports?: string[];
    publicKeyAlgorithm?: number;
    publicKey?: string;
  };
  /** `platform` or `cross-platform`, when the browser says. */
  authenticatorAttachment?: string;
  /** Extension outputs. */
  clientExtensionResults: Record<string, unknown>;
}

/** An assertion as JSON (`AuthenticationResponseJSON`). */
export interface AuthenticationResponseJSON {
  /** The credential id, base64url. */
  id: string;
  /** The same, base64url. */
  rawId: string;
  /** Always `"public-key"`. */
  type: "public-key";
  /** The authenticator's answer. */
  response: {
    clientDataJSON: string;
    authenticatorData: string;
    signature: string;
    userHandle?: string;
  };
  /** `platform` or `cross-platform`, when the browser says. */
  authenticatorAttachment?: string;
  /** Extension outputs. */
  clientExtensionResults: Record<string, unknown>;
}

function bytes(text: string, what: string): Uint8Array<ArrayBuffer> {
  const decoded = decodeBase64Url(text);
  if (decoded === null) {
    throw new TypeError(`${what} must be base64url: received "${text}"`);
  }
  return new Uint8Array(decoded);
}

function b64(buffer: ArrayBuffer | ArrayBufferView): string {
  return encodeBase64Url(
    buffer instanceof ArrayBuffer
      ? new Uint8Array(buffer)
      : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength),
  );
}

function descriptors(
  list: CredentialDescriptorJSON[] | undefined,
): CredentialDescriptor[] | undefined {
  return list?.map((d) => ({
    id: bytes(d.id, "A credential id"),
    type: "public-key",
    transports: d.transports,
  }));
}

/**
 * Creation options for `navigator.credentials.create({ publicKey })`.
 *
 * @param options The server's JSON.
 * @returns The options with their bytes decoded.
 * @throws {TypeError} When the challenge or an id is not base64url.
 *
 * @example Usage
 * ```ts
 * import { creationOptionsFromJSON } from "@portcullis/client";
 * const o = creationOptionsFromJSON({
 *   challenge: "AAEC", rp: { name: "Example" },
 *   user: { id: "dTE", name: "a@example.com", displayName: "a@example.com" },
 *   pubKeyCredParams: [{ type: "public-key", alg: -7 }],
 * });
 * console.assert(o.challenge.length === 3);
 * ```
 */
export function creationOptionsFromJSON(
  options: CreationOptionsJSON,
): CreationOptions {
  return {
    ...options,
    challenge: bytes(options.challenge, "The challenge"),
    user: { ...options.user, id: bytes(options.user.id, "The user id") },
    excludeCredentials: descriptors(options.excludeCredentials),
  };
}

/**
 * Request options for `navigator.credentials.get({ publicKey })`.
 *
 * @param options The server's JSON.
 * @returns The options with their bytes decoded.
 * @throws {TypeError} When the challenge or an id is not base64url.
 *
 * @example Usage
 * ```ts
 * import { requestOptionsFromJSON } from "@portcullis/client";
 * const o = requestOptionsFromJSON({ challenge: "AAEC", rpId: "example.com" });
 * console.assert(o.rpId === "example.com");
 * ```
 */
export function requestOptionsFromJSON(
  options: RequestOptionsJSON,
): RequestOptions {
  return {
    ...options,
    challenge: bytes(options.challenge, "The challenge"),
    allowCredentials: descriptors(options.allowCredentials),
  };
}

function attachment(credential: BrowserCredential): string | undefined {
  const a = credential.authenticatorAttachment;
  return a === "platform" || a === "cross-platform" ? a : undefined;
}

/**
 * A new credential (from `navigator.credentials.create`) as JSON.
 *
 * @param credential What the browser answered.
 * @returns The JSON the server verifies.
 */
export function registrationToJSON(
  credential: BrowserCredential,
): RegistrationResponseJSON {
  const r = credential.response;
  const optional = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch {
      return undefined;
    }
  };
  const publicKey = optional(() => r.getPublicKey?.() ?? null);
  const authData = optional(() => r.getAuthenticatorData?.());
  return {
    id: credential.id,
    rawId: b64(credential.rawId),
    type: "public-key",
    response: {
      clientDataJSON: b64(r.clientDataJSON),
      attestationObject: b64(r.attestationObject ?? new ArrayBuffer(0)),
      authenticatorData: authData ? b64(authData) : undefined,
      transports: optional(() => r.getTransports?.()),
      publicKeyAlgorithm: optional(() => r.getPublicKeyAlgorithm?.()),
      publicKey: publicKey ? b64(publicKey) : undefined,
    },
    authenticatorAttachment: attachment(credential),
    clientExtensionResults: credential.getClientExtensionResults() as Record<
      string,
      unknown
    >,
  };
}

/**
 * An assertion (from `navigator.credentials.get`) as JSON.
 *
 * @param credential What the browser answered.
 * @returns The JSON the server verifies.
 */
export function authenticationToJSON(
  credential: BrowserCredential,
): AuthenticationResponseJSON {
  const r = credential.response;
  return {
    id: credential.id,
    rawId: b64(credential.rawId),
    type: "public-key",
    response: {
      clientDataJSON: b64(r.clientDataJSON),
      authenticatorData: b64(r.authenticatorData ?? new ArrayBuffer(0)),
      signature: b64(r.signature ?? new ArrayBuffer(0)),
      userHandle: r.userHandle ? b64(r.userHandle) : undefined,
    },
    authenticatorAttachment: attachment(credential),
    clientExtensionResults: credential.getClientExtensionResults() as Record<
      string,
      unknown
    >,
  };
}
