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
 * bound before no longer resolves); it is not a sign-in method, so
 * `SIGN_IN_METHODS=off` leaves it on. The module mounts no route.
 *
 * @module
 */
import type { AppModule } from "../../module.ts";
import { settingsOf } from "../../module.ts";
import { envFlag } from "../../sign_in_methods.ts";

/** What the DPoP module's setup read: only whether it is on. */
export interface DpopSettings {
  /** Server nonces (RFC 9449 §8, §9); always on in the app. */
  readonly nonce: true;
}

/** The DPoP module: `dpop` options for the identity middleware. */
export const dpop: AppModule<DpopSettings> = {
  name: "dpop",
  setup: ({ env }) => envFlag(env, "DPOP", true) ? { nonce: true } : null,
  identityOptions(ctx) {
    const settings = settingsOf(ctx, dpop);
    if (settings === null) return {};
    return {
      dpop: { store: ctx.kv, nonce: settings.nonce, now: ctx.now },
    };
  },
};
