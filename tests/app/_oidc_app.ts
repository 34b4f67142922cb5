/**
 * The reference app with OpenID Connect on, against a real OpenID Provider
 * (`oidc-provider`, its own process on 127.0.0.1), and the steps a browser
 * takes through it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Browser, startApp, type TestApp } from "./_harness.ts";
import { startOp, type TestOp } from "../support/oidc_op.ts";

const CLIENT_SECRET = "app-client-secret-0123456789-abcdefghijklmnop";

/**
 * Starts the app (TOTP on, passkeys as `passkeys` says) and its provider.
 *
 * @param passkeys `"on"` or `"off"` (default).
 * @returns The app, the provider, and `close`.
 */
export async function setupOidcApp(passkeys = "off"): Promise<
  { app: TestApp; op: TestOp; close(): Promise<void> }
> {
  let op: TestOp | undefined;
  const app = await startApp({}, {
    signInEnv: async (origin) => {
      op = await startOp({
        client_id: "portcullis-app",
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${origin}/login/oidc/local/callback`],
      });
      return {
        TOTP: "on",
        PASSKEYS: passkeys,
        OIDC_ISSUER: op.issuer,
        OIDC_CLIENT_ID: "portcullis-app",
        OIDC_CLIENT_SECRET: CLIENT_SECRET,
        OIDC_PROVIDER_ID: "local",
        OIDC_PROVIDER_NAME: "Local OP",
        OIDC_ALLOW_HTTP: "true",
      };
    },
  });
  return {
    app,
    op: op!,
    close: async () => {
      await app.close();
      await op!.close();
    },
  };
}

/**
 * Starts at the app (`start`, default the sign-in route), signs in at the
 * OP as `login`, and answers the callback path (not yet fetched).
 *
 * @param b The browser.
 * @param op The provider.
 * @param login `sub;email;email_verified` as the OP asserts it.
 * @param next Where to go afterwards.
 * @param start The app's route that sends the browser to the provider.
 * @returns The callback's path and query.
 */
export async function throughOp(
  b: Browser,
  op: TestOp,
  login: string,
  next = "/account",
  start = "/login/oidc/local",
): Promise<string> {
  const res = await b.fetch(`${start}?next=${encodeURIComponent(next)}`);
  assert.equal(res.status, 303);
  const location = res.headers.get("location")!;
  assert.ok(location.startsWith(op.issuer), location);
  assert.ok(b.cookies.has("__Host-oidc"), "state cookie");
  const callback = new URL(await op.signIn(location, login));
  return callback.pathname + callback.search;
}

/**
 * A signed-in browser confirms it is the user at the provider
 * (`/login/oidc/local/reauth`) and follows the callback.
 *
 * @param b The signed-in browser.
 * @param op The provider.
 * @param login The provider login to confirm with.
 * @returns The callback's response.
 */
export async function reauthThroughOp(
  b: Browser,
  op: TestOp,
  login: string,
): Promise<Response> {
  return await b.fetch(
    await throughOp(b, op, login, "/account", "/login/oidc/local/reauth"),
  );
}

/**
 * `GET /api/me` in this browser.
 *
 * @param b The browser.
 * @returns The status and, on 200, the body.
 */
export async function me(
  b: Browser,
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; body: any }> {
  const res = await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  return {
    status: res.status,
    body: res.status === 200 ? await res.json() : null,
  };
}
