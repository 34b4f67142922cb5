/**
 * Test support shared by the conformance runners: what the sign-in methods
 * beside the password need before the app starts. A real OpenID Provider
 * (`oidc-provider`, tests/support/oidc_op.ts) on 127.0.0.1 with one client
 * whose callback is the app's, and the settings the entries hand to the
 * modules' `setup` (the `mod.ts` of each folder under examples/app/methods/),
 * as a deployment sets them in its environment or bindings.
 *
 * @module
 */
import { startOp, type TestOp } from "../support/oidc_op.ts";

/** The provider id in the app's URLs (`/login/oidc/<id>`). */
export const OIDC_PROVIDER_ID = "local";

/** What the runner hands the contract's sign-in rows (signin_contract.ts). */
export interface SignInOptions {
  /** The app's `AUTH_SECRET`. */
  secret: string;
  /** The OpenID Provider the app was configured with, or `null`. */
  op: TestOp | null;
  /** Why the provider could not start, when `op` is `null`. */
  opError: string | null;
}

/** One answer as the contract reads it (see `contract.ts`). */
export interface Reply {
  /** The status. */
  status: number;
  /** The headers. */
  headers: Headers;
  /** The body. */
  text: string;
  /** The body, parsed. */
  // deno-lint-ignore no-explicit-any
  json: () => any;
}

/** What the sign-in rows borrow from the contract's run. */
export interface SignInContext extends SignInOptions {
  /** Where the app listens (its `APP_ORIGIN`). */
  base: string;
  /** Sends one request (see `contract.ts`). */
  call: (
    method: string,
    path: string,
    o?: {
      json?: unknown;
      form?: Record<string, string>;
      bearer?: string;
      cookie?: string;
      headers?: Record<string, string>;
      sameOrigin?: boolean;
    },
  ) => Promise<Reply>;
  /** Runs and tallies one check. */
  check: (name: string, fn: () => Promise<void>) => Promise<void>;
  /** Reports a service that is missing (a failure under CI). */
  missing: (why: string) => Promise<void>;
  /** A fresh address of this run. */
  email: (who: string) => string;
  /** The password the contract registers with. */
  password: string;
  /** Verifies a registered address through its mailed link. */
  verify: (email: string) => Promise<void>;
}

/** What a runner starts for the sign-in methods, and hands to the contract. */
export interface SignInServices {
  /** Settings for the entry: `TOTP`, `PASSKEYS`, `OIDC_*`. */
  env: Record<string, string>;
  /** The OpenID Provider, or `null` when it could not start. */
  op: TestOp | null;
  /** Why the provider could not start, or `null`. */
  opError: string | null;
  /** Stops the provider. */
  close(): Promise<void>;
}

/**
 * Starts the OpenID Provider for an app at `appOrigin` and answers the
 * settings that turn TOTP, passkeys and OpenID Connect on.
 *
 * @param appOrigin The app's origin (`APP_ORIGIN`): the provider accepts
 * its callback only.
 * @returns The services; `op` is `null` (and OIDC left off) when the
 * provider could not start, which the contract reports.
 */
export async function startSignInServices(
  appOrigin: string,
): Promise<SignInServices> {
  const env: Record<string, string> = { TOTP: "on", PASSKEYS: "on" };
  const clientSecret = crypto.randomUUID() + crypto.randomUUID();
  try {
    const op = await startOp({
      client_id: "portcullis-conformance",
      client_secret: clientSecret,
      redirect_uris: [
        `${appOrigin}/login/oidc/${OIDC_PROVIDER_ID}/callback`,
      ],
    });
    Object.assign(env, {
      OIDC_ISSUER: op.issuer,
      OIDC_CLIENT_ID: "portcullis-conformance",
      OIDC_CLIENT_SECRET: clientSecret,
      OIDC_PROVIDER_ID,
      OIDC_PROVIDER_NAME: "Local OP",
      // The provider is plain HTTP on 127.0.0.1, for this run only.
      OIDC_ALLOW_HTTP: "true",
    });
    return { env, op, opError: null, close: () => op.close() };
  } catch (error) {
    return {
      env,
      op: null,
      opError: (error as Error).message,
      close: () => Promise.resolve(),
    };
  }
}

/**
 * The header line a runner prints about the sign-in methods.
 *
 * @param services What {@linkcode startSignInServices} answered.
 * @returns One line.
 */
export function signInAbout(services: SignInServices): string {
  const oidc = services.op
    ? `OpenID Connect against oidc-provider at ${services.op.issuer}`
    : `OpenID Connect off (the provider did not start: ${services.opError})`;
  return `sign-in methods: TOTP, passkeys (headless Chromium, virtual authenticator), ${oidc}`;
}
