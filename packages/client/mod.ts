/**
 * The browser side of portcullis: typed calls for `@portcullis/accounts`'
 * JSON routes and the passkeys module's WebAuthn ceremonies (sign-up with
 * a passkey, sign-in, autofill, confirmation, recovery, automatic upgrade),
 * the WebAuthn Signals API, and the feature detection each needs. No
 * dependency beyond portcullis's own byte codec; runs in any browser, a
 * single-page app, or a Next.js client component. The passkeys module's
 * pages use it (their served script is built from it).
 *
 * @example Usage
 * ```ts ignore
 * import { PortcullisClient, supportsAutofill } from "@portcullis/client";
 * const client = new PortcullisClient();
 * if (await supportsAutofill()) {
 *   const result = await client.signInWithPasskey({ autofill: true });
 *   if (result.ok) location.assign(result.data.next ?? "/");
 * }
 * ```
 *
 * @module
 */
export {
  type ClientError,
  type ClientResult,
  type Me,
  PortcullisClient,
  type PortcullisClientOptions,
  type SessionAnswer,
} from "./portcullis_client.ts";
export {
  hasCapability,
  publicKeyCredential,
  type PublicKeyCredentialStatics,
  supportsAutofill,
  supportsPasskeys,
} from "./capabilities.ts";
export {
  signalAllAcceptedCredentials,
  signalCurrentUserDetails,
  signalUnknownCredential,
  type SignalUser,
} from "./signals.ts";
export {
  type AuthenticationResponseJSON,
  authenticationToJSON,
  type BrowserCredential,
  type CreationOptions,
  creationOptionsFromJSON,
  type CreationOptionsJSON,
  type CredentialDescriptor,
  type CredentialDescriptorJSON,
  type RegistrationResponseJSON,
  registrationToJSON,
  type RequestOptions,
  requestOptionsFromJSON,
  type RequestOptionsJSON,
} from "./webauthn_json.ts";
