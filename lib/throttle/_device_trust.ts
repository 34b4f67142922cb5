// The login throttle's trusted devices (private): reads device tokens
// against the store, counts their failures and mints them.
import { bump, counterKey, whole } from "./_counter.ts";
import type { ThrottleStore } from "./throttle_store.ts";
import {
  type DeviceToken,
  type DeviceTokenClaims,
  type DeviceTokenSigner,
  type DeviceTrustOptions,
  mintDeviceToken,
  newDeviceId,
  readDeviceToken,
} from "./device_token.ts";

/** A device a valid, still trusted token names, with its store keys. */
export interface TrustedDevice {
  /** The device id. */
  readonly id: string;
  /** The key of its consecutive-failure count. */
  readonly failures: string;
  /** The key that marks it trusted no more. */
  readonly revoked: string;
  /** Seconds until its token expires (at least 60). */
  readonly ttl: number;
}

/**
 * The login throttle's devices: reads tokens against the store (a device
 * dropped for too many failures is trusted no more), counts their failures
 * and mints tokens. Used by `LoginThrottle`; keys are hashed like its own.
 */
export class DeviceTrust {
  #signer: DeviceTokenSigner;
  #lifetime: number;
  #maxFailures: number;
  #store: ThrottleStore;
  #prefix: string;
  #now: () => number;

  /**
   * Checks the options once.
   *
   * @param options The signer, the lifetime and the failure limit.
   * @param store The throttle's store.
   * @param prefix The throttle's key prefix.
   * @param now The throttle's clock, in unix milliseconds.
   * @throws {TypeError} Without a signer.
   * @throws {RangeError} For a lifetime under 60 s or a limit under 1.
   */
  constructor(
    options: DeviceTrustOptions,
    store: ThrottleStore,
    prefix: string,
    now: () => number,
  ) {
    if (
      typeof options?.signer?.sign !== "function" ||
      typeof options.signer.verify !== "function"
    ) {
      throw new TypeError(
        "LoginThrottle devices needs a signer with sign() and verify(): see DeviceTokenSigner",
      );
    }
    this.#signer = options.signer;
    this.#lifetime = whole(
      options.lifetimeSeconds ?? 180 * 86400,
      "devices.lifetimeSeconds",
      60,
    );
    this.#maxFailures = whole(
      options.maxFailures ?? 10,
      "devices.maxFailures",
      1,
    );
    this.#store = store;
    this.#prefix = prefix;
    this.#now = now;
  }

  /**
   * The device a token names, when it is valid for this account and still
   * trusted.
   *
   * @param account The account of the attempt.
   * @param token The presented token, if any.
   * @returns The device, or `null`.
   */
  async find(
    account: string,
    token: string | null | undefined,
  ): Promise<TrustedDevice | null> {
    if (token === null || token === undefined) return null;
    const nowSeconds = this.#now() / 1000;
    const claims = await readDeviceToken(
      this.#signer,
      account,
      token,
      nowSeconds,
    );
    if (claims === null) return null;
    const key = await counterKey(this.#prefix, "login-device", claims.id);
    const revoked = `${key}:revoked`;
    const [gone, forgotten] = await this.#store.getMany([
      revoked,
      await this.#forgottenKey(account),
    ]);
    if (gone !== null) return null;
    // Every token minted before the account's devices were forgotten (its
    // address proven for the first time, a password reset, a deletion).
    const issuedAt = claims.expiresAt - this.#lifetime;
    if (forgotten !== null && !(issuedAt > Number(forgotten))) return null;
    return {
      id: claims.id,
      failures: key,
      revoked,
      ttl: Math.max(60, Math.ceil(claims.expiresAt - nowSeconds)),
    };
  }

  /**
   * Counts an attempt of the device as a failure in advance (a success
   * clears it).
   *
   * @param device The device.
   * @returns `true` while within the limit; `false` once past it, when the
   * device is trusted no more.
   */
  async failed(device: TrustedDevice): Promise<boolean> {
    const n = await bump(this.#store, device.failures, device.ttl);
    if (n <= this.#maxFailures) return true;
    await this.#store.put(device.revoked, "1", { ttlSeconds: device.ttl });
    return false;
  }

  /**
   * Clears a device's failures after a right password.
   *
   * @param device The device.
   */
  async clear(device: TrustedDevice): Promise<void> {
    await this.#store.delete(device.failures);
  }

  /**
   * Trusts no token minted for the account until now: the next right
   * password mints a new one.
   *
   * @param account The account.
   */
  async forget(account: string): Promise<void> {
    await this.#store.put(
      await this.#forgottenKey(account),
      String(Math.floor(this.#now() / 1000)),
      { ttlSeconds: this.#lifetime },
    );
  }

  #forgottenKey(account: string): Promise<string> {
    return counterKey(this.#prefix, "login-devices-forgotten", account);
  }

  /**
   * Mints a token for the account: the presented device's id when it is
   * valid and still trusted, else a new one; the expiry renewed.
   *
   * @param account The account signed in to.
   * @param token The presented token, if any.
   * @returns The token and its lifetime.
   */
  async mint(
    account: string,
    token: string | null | undefined,
  ): Promise<DeviceToken> {
    const kept = await this.find(account, token);
    // Minted after the account's devices were forgotten, even within the
    // same second (a reset trusts the browser that made it): its issue
    // time is after the stamp, so it is not forgotten with the older ones.
    const [forgotten] = await this.#store.getMany([
      await this.#forgottenKey(account),
    ]);
    const issuedAt = Math.max(
      Math.floor(this.#now() / 1000),
      forgotten === null ? 0 : Number(forgotten) + 1,
    );
    const claims: DeviceTokenClaims = {
      id: kept?.id ?? newDeviceId(),
      expiresAt: issuedAt + this.#lifetime,
    };
    return {
      token: await mintDeviceToken(this.#signer, account, claims),
      maxAgeSeconds: this.#lifetime,
    };
  }
}
