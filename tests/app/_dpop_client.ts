/**
 * A DPoP client of the reference app for its tests over HTTP: proofs made
 * by hand (`tests/session/_dpop_proofs.ts`) for the sign-ins, the app's
 * nonce, and a client of oauth4webapi for requests with a token.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as oauth from "oauth4webapi";
import { api, type TestApp } from "./_harness.ts";
import { ath, makeProof, type ProofKey } from "../session/_dpop_proofs.ts";

/** The password the app tests register with. */
export const PASSWORD = "correct horse battery";

/** The app's clock in seconds: the proofs' `iat` (the test moves it). */
export const seconds = (app: TestApp) => Math.floor(app.now() / 1000);

/** A proof for one request, by hand. */
export async function proof(
  app: TestApp,
  key: ProofKey,
  method: string,
  path: string,
  extra: { nonce?: string; token?: string; iat?: number } = {},
): Promise<string> {
  return await makeProof(key, {
    jti: crypto.randomUUID(),
    htm: method,
    htu: new URL(path, app.origin).href,
    iat: extra.iat ?? seconds(app),
    ...(extra.nonce === undefined ? {} : { nonce: extra.nonce }),
    ...(extra.token === undefined ? {} : { ath: await ath(extra.token) }),
  });
}

/** `POST /login` as JSON with a proof of `key` (and `nonce`, when given). */
export async function loginWithProof(
  app: TestApp,
  key: ProofKey,
  email: string,
  nonce?: string,
) {
  return await api(app.origin, "POST", "/login", {
    email,
    password: PASSWORD,
  }, {
    dpop: await proof(
      app,
      key,
      "POST",
      "/login",
      nonce === undefined ? {} : { nonce },
    ),
  });
}

/** The nonce the app hands out: the answer to a proof without one. */
export async function nonceOf(app: TestApp, key: ProofKey): Promise<string> {
  const res = await loginWithProof(app, key, "nobody@example.com");
  assert.equal(res.status, 401);
  assert.equal(res.body.error, "use_dpop_nonce");
  const nonce = res.headers.get("dpop-nonce");
  assert.ok(nonce !== null && nonce.length > 0);
  return nonce;
}

/** A JSON sign-in with a proof of `key` (and the app's current nonce). */
export async function dpopLogin(
  app: TestApp,
  key: ProofKey,
  email: string,
): Promise<{ token: string; headers: Headers }> {
  const nonce = await nonceOf(app, key);
  const res = await loginWithProof(app, key, email, nonce);
  assert.equal(res.status, 200, String(res.body.error));
  assert.equal(typeof res.body.token, "string");
  assert.equal(res.body.tokenType, "DPoP");
  return { token: res.body.token as string, headers: res.headers };
}

/**
 * A client of oauth4webapi holding `key`: its clock set to the app's (the
 * test's clock is not the wall clock), and one helper that sends a request
 * with the DPoP scheme and a fresh proof, retrying once on
 * `use_dpop_nonce` as the library's documentation has it. `retries` counts
 * those retries.
 */
export function dpopClient(app: TestApp, key: ProofKey) {
  const client: oauth.Client = {
    client_id: "app-test",
    [oauth.clockSkew]: seconds(app) - Math.floor(Date.now() / 1000),
  };
  const handle = oauth.DPoP(client, key.pair);
  const state = { retries: 0 };
  const send = (token: string, method: string, path: string, body?: unknown) =>
    oauth.protectedResourceRequest(
      token,
      method,
      new URL(path, app.origin),
      new Headers({
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      }),
      body === undefined ? null : JSON.stringify(body),
      { DPoP: handle, [oauth.allowInsecureRequests]: true },
    );
  const request = async (
    token: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Response> => {
    try {
      return await send(token, method, path, body);
    } catch (err) {
      if (oauth.isDPoPNonceError(err)) {
        state.retries++;
        try {
          return await send(token, method, path, body);
        } catch (again) {
          if (again instanceof oauth.WWWAuthenticateChallengeError) {
            return again.response;
          }
          throw again;
        }
      }
      // Any other challenge (a refused token or proof): its answer.
      if (err instanceof oauth.WWWAuthenticateChallengeError) {
        return err.response;
      }
      throw err;
    }
  };
  return { request, state };
}

/** The answer's status, its body dropped. */
export async function status(res: Response): Promise<number> {
  await res.body?.cancel();
  return res.status;
}
