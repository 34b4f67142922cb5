/**
 * The DPoP rows of the HTTP contract (RFC 9449, on in the reference app),
 * run by `contract.ts` against every runtime's entry: the nonce, a bound
 * token that works only with proofs by its key, a replayed proof refused
 * through the entry's own store, and a token minted again over DPoP still
 * bound to the same key.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { LifecycleContext } from "./lifecycle_contract.ts";
import {
  ath,
  es256Key,
  makeProof,
  type ProofKey,
} from "../session/_dpop_proofs.ts";

/** What the DPoP rows borrow from the contract's run. */
export interface DpopContext
  extends Pick<LifecycleContext, "call" | "check" | "email" | "password"> {
  /** The app's base URL, which the proofs' `htu` names. */
  base: string;
}

/**
 * Runs the DPoP rows.
 *
 * @param c The contract's helpers.
 */
export async function runDpopContract(c: DpopContext): Promise<void> {
  const { call, check } = c;
  const who = c.email("dpop");
  const state = { key: null as ProofKey | null, token: "", nonce: "" };

  /** A proof by `key` for one request (with the nonce and `ath` given). */
  const proof = async (
    key: ProofKey,
    method: string,
    path: string,
    token?: string,
  ) =>
    await makeProof(key, {
      jti: crypto.randomUUID(),
      htm: method,
      htu: c.base + path,
      iat: Math.floor(Date.now() / 1000),
      ...(state.nonce === "" ? {} : { nonce: state.nonce }),
      ...(token === undefined ? {} : { ath: await ath(token) }),
    });
  /** A request under the DPoP scheme with a fresh proof by `key`. */
  const signed = async (
    key: ProofKey,
    method: string,
    path: string,
    token: string,
  ) => bound(method, path, token, await proof(key, method, path, token));
  /** A request under the DPoP scheme, with `dpop` as its proof. */
  const bound = (method: string, path: string, token: string, dpop: string) =>
    call(method, path, {
      headers: { authorization: `DPoP ${token}`, dpop },
    });

  await check(
    "DPoP: a JSON sign-in with a proof meets the nonce (401 use_dpop_nonce), then gets a token without a cookie",
    async () => {
      const reg = await call("POST", "/register", {
        json: { email: who, password: c.password },
      });
      assert.equal(reg.status, 201, reg.text);
      const key = await es256Key();
      const login = async () =>
        await call("POST", "/login", {
          json: { email: who, password: c.password },
          headers: { dpop: await proof(key, "POST", "/login") },
        });
      const first = await login();
      assert.equal(first.status, 401, first.text);
      assert.equal(first.json().error, "use_dpop_nonce");
      assert.match(
        first.headers.get("www-authenticate") ?? "",
        /^DPoP error="use_dpop_nonce"/,
      );
      state.nonce = first.headers.get("dpop-nonce") ?? "";
      assert.notEqual(state.nonce, "", "a DPoP-Nonce header");
      const signedIn = await login();
      assert.equal(signedIn.status, 200, signedIn.text);
      assert.deepEqual(signedIn.headers.getSetCookie(), []);
      state.token = signedIn.json().token;
      state.key = key;
    },
  );

  await check(
    "DPoP: the token works with a fresh proof by its key (GET /api/me, listed as bound); as Bearer, without a proof or with another key: 401",
    async () => {
      const { key, token } = state;
      assert.ok(key, "signed in");
      const me = await signed(key, "GET", "/api/me", token);
      assert.equal(me.status, 200, me.text);
      assert.equal(me.json().email, who);
      const list = await signed(key, "GET", "/api/sessions", token);
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(
        list.json().sessions.filter((s: { current: boolean }) => s.current)
          .map((s: { bound: boolean }) => s.bound),
        [true],
      );
      const asBearer = await call("GET", "/api/me", { bearer: token });
      assert.equal(asBearer.status, 401);
      // Issue 27 docs item 2 (RFC 9449 §7.2): the error with the scheme
      // used, a DPoP challenge beside it.
      assert.match(
        asBearer.headers.get("www-authenticate") ?? "",
        /^Bearer realm="portcullis", error="invalid_token", DPoP algs="[A-Za-z0-9 ]+"$/,
      );
      const bare = await call("GET", "/api/me", {
        headers: { authorization: `DPoP ${token}` },
      });
      assert.equal(bare.status, 401);
      assert.match(
        bare.headers.get("www-authenticate") ?? "",
        /^DPoP error="invalid_dpop_proof"/,
      );
      const thief = await es256Key();
      const stolen = await signed(thief, "GET", "/api/me", token);
      assert.equal(stolen.status, 401, stolen.text);
    },
  );

  await check(
    "DPoP: a proof sent twice is refused the second time (401 invalid_dpop_proof)",
    async () => {
      const { key, token } = state;
      assert.ok(key, "signed in");
      const once = await proof(key, "GET", "/api/me", token);
      assert.equal((await bound("GET", "/api/me", token, once)).status, 200);
      const again = await bound("GET", "/api/me", token, once);
      assert.equal(again.status, 401, again.text);
      assert.match(
        again.headers.get("www-authenticate") ?? "",
        /^DPoP error="invalid_dpop_proof"/,
      );
    },
  );

  await check(
    "DPoP: POST /account/sessions/revoke-others over DPoP answers a token bound to the same key; the old one is revoked",
    async () => {
      const { key, token } = state;
      assert.ok(key, "signed in");
      const path = "/account/sessions/revoke-others";
      const r = await call("POST", path, {
        json: {},
        headers: {
          authorization: `DPoP ${token}`,
          dpop: await proof(key, "POST", path, token),
        },
      });
      assert.equal(r.status, 200, r.text);
      const fresh: string = r.json().token;
      assert.notEqual(fresh, token);
      assert.equal(
        (await call("GET", "/api/me", { bearer: fresh })).status,
        401,
        "not a Bearer token",
      );
      const me = await signed(key, "GET", "/api/me", fresh);
      assert.equal(me.status, 200, me.text);
      const old = await signed(key, "GET", "/api/me", token);
      assert.equal(old.status, 401);
    },
  );
}
