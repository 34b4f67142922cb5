/**
 * DPoP-bound API sessions (RFC 9449): an API client that signs in with a
 * `DPoP` proof (`POST /login` or `POST /register` as JSON) gets a token
 * bound to the proof's key, usable only as `Authorization: DPoP <token>`
 * with a fresh proof by that key, so a token copied off the client is
 * useless. Server nonces are on: a proof without the current nonce is
 * answered 401 `use_dpop_nonce` with the nonce in `DPoP-Nonce`, and the
 * client retries with it. Proofs' `jti`s are recorded in the app's
 * key-value store, so a replayed proof is refused on every instance.
 *
 * Only requests that carry a `DPoP` proof or use the DPoP scheme are
 * affected: browsers and plain Bearer clients are answered as before.
 * `DPOP=off` turns it off (a `DPoP` header is then ignored, and a token
 * bound before no longer resolves: a project's configuration leaves the
 * module out); it is not a sign-in method, so `SIGN_IN_METHODS=off` leaves
 * it on. The module mounts no route.
 *
 * @module
 */
import type { AccountsModule } from "./module.ts";

/**
 * The DPoP module: `dpop` options for the identity middleware, with server
 * nonces and the proofs' `jti`s in the app's key-value store.
 *
 * @example Usage
 * ```ts ignore
 * accounts({ ...parts, modules: [password(), dpop()] });
 * ```
 *
 * @returns The module.
 */
export function dpop(): AccountsModule {
  return {
    name: "dpop",
    setup: (ctx) => ({
      identityOptions: {
        dpop: { store: ctx.kv, nonce: true, now: ctx.now },
      },
    }),
  };
}
