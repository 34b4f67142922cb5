/**
 * `TotpAuthenticator`: TOTP (RFC 6238) as a second factor, over `otpauth`.
 *
 * @module
 */
import { Secret, TOTP } from "otpauth";
import qrcode from "qrcode-generator";
import { sha256Hex } from "@portcullis/bytes";
import { SecretBox } from "./secret_box.ts";
import type { PurposeSigner } from "./signed_values.ts";
import {
  credentialFingerprint,
  openPending,
  type PendingSecondFactor,
  signPending,
} from "./pending_value.ts";
import type { TotpStore } from "./totp_store.ts";
import {
  newRecoveryCodes,
  normalizeRecoveryCode,
  RECOVERY_CODE_COUNT,
} from "./recovery_codes.ts";

const PERIOD = 30;
const DIGITS = 6;
const CODE = /^\d{6}$/;

/** Options of {@linkcode TotpAuthenticator}. */
export interface TotpAuthenticatorOptions {
  /** Where enrolments and recovery codes are kept. */
  store: TotpStore;
  /** The name authenticator apps show, for example the site's name. */
  issuer: string;
  /**
   * AES-GCM keys that seal the secrets at rest, the current one first
   * (older ones still open secrets sealed before a rotation), or a promise
   * of them. See {@linkcode deriveSecretKey}.
   */
  secretKeys: readonly CryptoKey[] | Promise<readonly CryptoKey[]>;
  /** Signs the "second factor pending" values; its key serves nothing else. */
  pending: PurposeSigner;
  /** How long a pending value lives, in seconds; default 300. */
  pendingSeconds?: number;
  /**
   * The application's side of what a pending value is bound to: a string
   * that changes whenever the account's other credentials change, such as
   * the user's password hash (`(s) => credentials.findById(s).then((u) =>
   * u?.passwordHash ?? null)`). A pending value is refused once it
   * differs, so a password change or reset between the two steps ends the
   * sign-in; `null` (no such account) refuses it too. The TOTP side (the
   * enrolment, its last used time step and the count of recovery codes
   * left) is always bound. Default: none.
   */
  accountState?: (subject: string) => string | null | Promise<string | null>;
  /** Time steps of skew accepted either side; default 1 (RFC 6238 §5.2). */
  window?: number;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
}

/** What {@linkcode TotpAuthenticator.startEnrolment} answers. */
export interface Enrolment {
  /** The secret in base32, for typing into an app by hand. */
  secret: string;
  /** The `otpauth://totp/…` URI. */
  uri: string;
  /** The URI as a QR code, an `<svg>` element (no script, no links). */
  qrSvg: string;
}

/** Which kind of code {@linkcode TotpAuthenticator.verify} accepted. */
export type SecondFactor = "totp" | "recovery";

/**
 * TOTP second factor: enrolment (secret, `otpauth://` URI, QR code as SVG,
 * confirmed by one valid code), ten single-use recovery codes stored hashed,
 * verification that accepts each time step once with ±1 step of skew, and
 * the signed "second factor pending" value. It issues no session: after
 * {@linkcode TotpAuthenticator.verify} answers, the application calls
 * `signIn(req, subject)` exactly as after a password.
 *
 * @example Usage
 * ```ts
 * import { MemoryTotpStore, TotpAuthenticator, deriveSecretKey } from "@portcullis/totp";
 * const hmac = await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
 * const totp = new TotpAuthenticator({
 *   store: new MemoryTotpStore(),
 *   issuer: "Example",
 *   secretKeys: [await deriveSecretKey(hmac)],
 *   pending: { sign: async (b) => btoa(String.fromCharCode(...b)), verify: async () => null }, // use signToken/verifyToken
 * });
 * const enrolment = await totp.startEnrolment("user_1", "a@example.com");
 * console.assert(enrolment!.uri.startsWith("otpauth://totp/"));
 * ```
 */
export class TotpAuthenticator {
  #store: TotpStore;
  #issuer: string;
  #box: SecretBox;
  #pending: PurposeSigner;
  #pendingSeconds: number;
  #accountState: (subject: string) => string | null | Promise<string | null>;
  #window: number;
  #now: () => number;

  /**
   * Makes the authenticator; options are checked once, here.
   *
   * @param options The store, the issuer, the keys and the clock.
   * @throws {TypeError} When a key or the issuer is missing.
   */
  constructor(options: TotpAuthenticatorOptions) {
    if (typeof options.issuer !== "string" || options.issuer === "") {
      throw new TypeError("issuer must be a non-empty string: received none");
    }
    this.#store = options.store;
    this.#issuer = options.issuer;
    this.#box = new SecretBox(options.secretKeys);
    this.#pending = options.pending;
    this.#pendingSeconds = options.pendingSeconds ?? 300;
    this.#accountState = options.accountState ?? (() => "");
    this.#window = options.window ?? 1;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Starts (or restarts) enrolment: a new 160-bit secret, stored sealed and
   * pending until {@linkcode TotpAuthenticator.confirmEnrolment}.
   *
   * @param subject The user.
   * @param accountName What the authenticator app shows (the email).
   * @returns The secret, URI and QR code; `null` when TOTP is already on.
   */
  async startEnrolment(
    subject: string,
    accountName: string,
  ): Promise<Enrolment | null> {
    const secret = new Secret({ size: 20 });
    const saved = await this.#store.savePending({
      subject,
      secret: await this.#box.seal(subject, secret.base32),
      enabledAt: 0,
      lastStep: 0,
      createdAt: this.#now(),
    });
    if (!saved) return null;
    const uri = this.#totp(secret, accountName).toString();
    const qr = qrcode(0, "M");
    qr.addData(uri);
    qr.make();
    return {
      secret: secret.base32,
      uri,
      qrSvg: qr.createSvgTag({ cellSize: 4, margin: 4, scalable: true }),
    };
  }

  /**
   * Confirms a pending enrolment with one valid code: TOTP is on from now,
   * that code's time step is used, and ten recovery codes are made.
   *
   * @param subject The user.
   * @param code The six digits the app shows.
   * @returns The recovery codes (show them once), or `null` when there is
   * no pending enrolment or the code is wrong.
   */
  async confirmEnrolment(
    subject: string,
    code: string,
  ): Promise<string[] | null> {
    const record = await this.#store.find(subject);
    if (record === null || record.enabledAt > 0) return null;
    const step = await this.#check(subject, record.secret, code);
    if (step === null) return null;
    if (
      !(await this.#store.enable(subject, record.secret, step, this.#now()))
    ) {
      return null;
    }
    return await this.regenerateRecoveryCodes(subject);
  }

  /**
   * Whether TOTP is on for a user (enrolment confirmed).
   *
   * @param subject The user.
   */
  async isEnabled(subject: string): Promise<boolean> {
    return ((await this.#store.find(subject))?.enabledAt ?? 0) > 0;
  }

  /**
   * How many recovery codes a user has left.
   *
   * @param subject The user.
   */
  recoveryCodesLeft(subject: string): Promise<number> {
    return this.#store.countRecoveryCodes(subject);
  }

  /**
   * Checks a second factor: six digits are a TOTP code (its time step is
   * accepted once, and never one older than the last accepted), anything
   * else is tried as a recovery code (consumed on success, which changes
   * the count of codes left, so that every pending value issued before it
   * stops opening, as after a TOTP code; the time steps are left alone, so
   * the app's next code still passes).
   *
   * @param subject The user.
   * @param code What the user typed.
   * @returns Which factor passed, or `null`.
   */
  async verify(subject: string, code: string): Promise<SecondFactor | null> {
    if (typeof code !== "string" || code.length > 64) return null;
    const trimmed = code.replace(/\s+/g, "");
    const record = await this.#store.find(subject);
    if (record === null || record.enabledAt === 0) return null;
    if (CODE.test(trimmed)) {
      const step = await this.#check(subject, record.secret, trimmed);
      if (step === null) return null;
      return (await this.#store.useStep(subject, step)) ? "totp" : null;
    }
    const normal = normalizeRecoveryCode(trimmed);
    if (normal === null) return null;
    const hash = await sha256Hex(normal);
    if (!(await this.#store.consumeRecoveryCode(subject, hash))) return null;
    // The fingerprint of pending values holds the count of codes left: one
    // fewer ends them. Moving the last used step instead would spend a time
    // step the app has not shown yet, and refuse the user's next code.
    return "recovery";
  }

  /**
   * Replaces a user's recovery codes with ten new ones. (Pending values
   * are bound to the count of codes left: one issued while the user held
   * ten, before a recovery code was used, opens again after this until it
   * expires; the second step still needs a valid code.)
   *
   * @param subject The user.
   * @returns The codes, to show once; only their hashes are stored.
   */
  async regenerateRecoveryCodes(subject: string): Promise<string[]> {
    const codes = newRecoveryCodes(RECOVERY_CODE_COUNT);
    const hashes = await Promise.all(
      codes.map((c) => sha256Hex(normalizeRecoveryCode(c)!)),
    );
    await this.#store.replaceRecoveryCodes(subject, hashes, this.#now());
    return codes;
  }

  /**
   * Turns TOTP off after a valid code (the application checks the password
   * first).
   *
   * @param subject The user.
   * @param code A TOTP code or a recovery code.
   * @returns Whether it was turned off.
   */
  async disable(subject: string, code: string): Promise<boolean> {
    if ((await this.verify(subject, code)) === null) return false;
    await this.#store.remove(subject);
    return true;
  }

  /**
   * Mints the "second factor pending" value given after a right password
   * when TOTP is on. It is not a session: it is signed for its own purpose,
   * so no gate accepts it, and it expires after `pendingSeconds`. It is
   * bound to the credentials as they are now (see
   * {@linkcode TotpAuthenticator.readPending}), with no write to the store.
   *
   * @param subject The user who gave the right password.
   * @param next Where to go afterwards (a local path).
   * @param options `boundTo`: what the value is tied to, such as the
   * thumbprint of the client's DPoP key (`dpopKeyOf(req)` of
   * `@portcullis/auth/http`); `null` or absent for nothing.
   * @returns The value, for a cookie or a JSON field.
   */
  async issuePending(
    subject: string,
    next = "/",
    options: { boundTo?: string | null } = {},
  ): Promise<string> {
    const boundTo = options.boundTo ?? null;
    if (boundTo !== null && (typeof boundTo !== "string" || boundTo === "")) {
      throw new TypeError("boundTo must be a non-empty string or null");
    }
    return await signPending(this.#pending, {
      subject,
      next,
      expires: Math.floor(this.#now() / 1000) + this.#pendingSeconds,
      // A user without TOTP on gets a value that never opens.
      fingerprint: (await this.#fingerprint(subject)) ?? "none",
      boundTo,
    });
  }

  /**
   * Reads a pending value. It opens only while the credentials are as they
   * were when it was issued: a successful second step (a TOTP code moves
   * the last used time step on, a recovery code lowers the count of codes
   * left), TOTP turned off or
   * enrolled anew, or a change of the `accountState` (a password change or
   * reset) ends it. So a value serves one successful second step, however
   * often it is presented; only its failed attempts can repeat. A value
   * issued with `boundTo` opens only when the same is given here, and one
   * issued without opens only without it: a copy taken from a client
   * holding a DPoP key is worth nothing to another.
   *
   * @param value The value the client sent back.
   * @param options `boundTo`: what this second step presents (the
   * thumbprint of its DPoP key), `null` or absent for nothing.
   * @returns The subject, next path and fingerprint, or `null` when forged,
   * malformed, expired, no longer bound to the credentials or tied to
   * something else.
   */
  async readPending(
    value: string,
    options: { boundTo?: string | null } = {},
  ): Promise<PendingSecondFactor | null> {
    const pending = await openPending(this.#pending, value, this.#now());
    if (pending === null) return null;
    if (pending.boundTo !== (options.boundTo ?? null)) return null;
    const current = await this.#fingerprint(pending.subject);
    return current !== null && current === pending.fingerprint ? pending : null;
  }

  /** The credentials' fingerprint now; `null` without TOTP or account. */
  async #fingerprint(subject: string): Promise<string | null> {
    const [record, state, codesLeft] = await Promise.all([
      this.#store.find(subject),
      this.#accountState(subject),
      this.#store.countRecoveryCodes(subject),
    ]);
    if (record === null || record.enabledAt === 0) return null;
    if (typeof state !== "string") return null;
    return await credentialFingerprint(record, codesLeft, state);
  }

  #totp(secret: Secret, label = "user"): TOTP {
    return new TOTP({
      issuer: this.#issuer,
      label,
      algorithm: "SHA1",
      digits: DIGITS,
      period: PERIOD,
      secret,
    });
  }

  /** The time step `code` is valid for, within the window, or `null`. */
  async #check(
    subject: string,
    sealed: string,
    code: string,
  ): Promise<number | null> {
    if (!CODE.test(code)) return null;
    const base32 = await this.#box.open(subject, sealed);
    if (base32 === null) return null;
    const timestamp = this.#now();
    const delta = this.#totp(Secret.fromBase32(base32)).validate({
      token: code,
      timestamp,
      window: this.#window,
    });
    if (delta === null) return null;
    return TOTP.counter({ period: PERIOD, timestamp }) + delta;
  }
}
