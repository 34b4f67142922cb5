/**
 * `PasskeyAuthenticator`: WebAuthn registration and sign-in ceremonies over
 * `@simplewebauthn/server`, with one-time, purpose-bound challenges.
 *
 * @module
 */
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { decodeBase64Url, encodeBase64Url } from "@portcullis/bytes";
import {
  type CeremonyKind,
  type ChallengeRefusal,
  Challenges,
} from "./_challenges.ts";
import type {
  ChallengeStore,
  PasskeyRecord,
  PasskeyStore,
} from "./passkey_store.ts";
import type { PurposeSigner } from "./signed_values.ts";
import { passkeyName } from "./_passkey_name.ts";

/** Why a ceremony was refused. */
export type PasskeyRefusal =
  | "malformed"
  | "challenge_invalid"
  | "challenge_used"
  | "unknown_credential"
  | "user_handle_mismatch"
  | "credential_exists"
  | "origin_mismatch"
  | "rp_id_mismatch"
  | "counter_stale"
  | "backup_flags_invalid"
  | "invalid_name"
  | "verification_failed";

/** The outcome of a ceremony. */
export type PasskeyOutcome<T> =
  | ({ kind: "ok" } & T)
  | { kind: "refused"; reason: PasskeyRefusal };

/**
 * Creation options as JSON (WebAuthn's
 * `PublicKeyCredentialCreationOptionsJSON`): pass them unchanged to
 * `startRegistration({ optionsJSON })` in the browser.
 */
export interface CreationOptionsJSON {
  /** The single-use challenge, base64url. */
  readonly challenge: string;
  /** The relying party. */
  readonly rp: { readonly id?: string; readonly name: string };
  /** Everything else WebAuthn defines. */
  readonly [member: string]: unknown;
}

/**
 * Request options as JSON (WebAuthn's
 * `PublicKeyCredentialRequestOptionsJSON`): pass them unchanged to
 * `startAuthentication({ optionsJSON })` in the browser.
 */
export interface RequestOptionsJSON {
  /** The single-use challenge, base64url. */
  readonly challenge: string;
  /** The relying party id. */
  readonly rpId?: string;
  /** Everything else WebAuthn defines. */
  readonly [member: string]: unknown;
}

/** Options of {@linkcode PasskeyAuthenticator}. */
export interface PasskeyAuthenticatorOptions {
  /** The relying party id: the site's registrable domain (`example.com`). */
  rpId: string;
  /** The site's name, shown by the authenticator. */
  rpName: string;
  /** The origins ceremonies may come from (`https://example.com`). */
  origins: readonly string[];
  /** Where passkeys live. */
  store: PasskeyStore;
  /**
   * Where issued challenges wait for their one use (atomic consume); its
   * expired challenges are removed as new ones are issued.
   */
  challenges: ChallengeStore;
  /** Signs challenges; its key serves nothing else (`webauthn-challenge`). */
  signer: PurposeSigner;
  /** How long a ceremony may take, in seconds; default 300. */
  challengeSeconds?: number;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
}

/**
 * Passkeys: registration of discoverable credentials for a signed-in user,
 * and sign-in with one (no username typed). Each challenge is a value
 * signed for this purpose alone (so nothing else minted by the application
 * passes as one), expires after `challengeSeconds`, names its ceremony and,
 * for registration, its user, and is accepted once (the store consumes it).
 * Issuing a challenge also removes expired ones from the store (at most
 * once a minute), so abandoned ceremonies need no scheduled job.
 * Sign-in checks the origin, the RP id, user verification, the
 * signature counter (a clone that reports a counter not above the stored
 * one is refused) and the backup flags: backed up without being eligible
 * (BS without BE) is refused at either ceremony, and so is an assertion
 * whose backup eligibility (BE) differs from the one registered, either
 * way (BE is fixed for a credential's life). The backup state (synced or
 * on this device only) is kept with the passkey. It issues no session: the
 * application calls `signIn(req, subject)` with the subject it answers.
 *
 * @example Usage
 * ```ts
 * import { MemoryPasskeyStore, PasskeyAuthenticator } from "@portcullis/passkeys";
 * const store = new MemoryPasskeyStore();
 * const passkeys = new PasskeyAuthenticator({
 *   rpId: "localhost", rpName: "Example", origins: ["http://localhost:8000"],
 *   store, challenges: store,
 *   signer: { sign: async () => "signed-challenge-value", verify: async () => null }, // use signToken/verifyToken
 * });
 * const options = await passkeys.authenticationOptions();
 * console.assert(options.rpId === "localhost");
 * ```
 */
export class PasskeyAuthenticator {
  #o: Required<Omit<PasskeyAuthenticatorOptions, "origins">> & {
    origins: string[];
  };
  #challenges: Challenges;

  /**
   * Makes the authenticator; options are checked once, here.
   *
   * @param options The relying party, the stores and the signer.
   * @throws {TypeError} When no origin is given or one is not an origin.
   */
  constructor(options: PasskeyAuthenticatorOptions) {
    if (options.origins.length === 0) {
      throw new TypeError("origins must name at least one origin");
    }
    for (const o of options.origins) {
      if (new URL(o).origin !== o) {
        throw new TypeError(
          `origins must be scheme://host[:port]: received "${o}"`,
        );
      }
    }
    this.#o = {
      challengeSeconds: 300,
      now: Date.now,
      ...options,
      origins: [...options.origins],
    };
    this.#challenges = new Challenges(
      this.#o.challenges,
      this.#o.signer,
      this.#o.challengeSeconds,
      this.#o.now,
    );
  }

  /** The relying party id the ceremonies are bound to. */
  get rpId(): string {
    return this.#o.rpId;
  }

  /**
   * The WebAuthn user handle of a subject (the `user.id` its passkeys were
   * made with), base64url: what the Signals API names the user by.
   *
   * @param subject The subject id.
   * @returns The handle.
   */
  userHandle(subject: string): string {
    return encodeBase64Url(new TextEncoder().encode(subject));
  }

  /**
   * Options for `navigator.credentials.create` (pass to
   * `startRegistration({ optionsJSON })` of `@simplewebauthn/browser`).
   *
   * @param user The signed-in user: subject and email.
   * @param purpose The ceremony the challenge is for (`"signup"`,
   * `"recover"`, `"upgrade"`…; default the ordinary adding of a passkey):
   * {@linkcode PasskeyAuthenticator.register} accepts it for that purpose
   * alone, so a challenge one route issued after its own checks cannot be
   * spent on another route.
   * @returns The options; their challenge is single-use.
   */
  async registrationOptions(
    user: { subject: string; email: string },
    purpose?: string,
  ): Promise<CreationOptionsJSON> {
    const existing = await this.#o.store.listFor(user.subject);
    return (await generateRegistrationOptions({
      rpName: this.#o.rpName,
      rpID: this.#o.rpId,
      userName: user.email,
      userID: new TextEncoder().encode(user.subject),
      challenge: await this.#challenges.issue(
        registrationKind(purpose),
        user.subject,
      ),
      timeout: this.#o.challengeSeconds * 1000,
      attestationType: "none",
      excludeCredentials: existing.map((p) => ({
        id: p.credentialId,
        transports: p.transports as never,
      })),
      authenticatorSelection: {
        residentKey: "required",
        userVerification: "required",
      },
    })) as unknown as CreationOptionsJSON;
  }

  /**
   * Checks a registration and stores the passkey.
   *
   * @param subject The signed-in user (the challenge must be theirs).
   * @param response What `startRegistration` answered in the browser.
   * @param name The user's name for the passkey: trimmed, `"Passkey"` when
   * empty; one longer than 64 characters or with a control, invisible or
   * direction-changing character is refused (`invalid_name`) before the
   * challenge is spent.
   * @param purpose The ceremony, as given to
   * {@linkcode PasskeyAuthenticator.registrationOptions}: a challenge
   * issued for another is refused (`challenge_invalid`).
   * @returns The stored passkey, or a refusal.
   */
  async register(
    subject: string,
    response: unknown,
    name: string,
    purpose?: string,
  ): Promise<PasskeyOutcome<{ passkey: PasskeyRecord }>> {
    const checked = await this.checkRegistration(
      subject,
      response,
      name,
      purpose,
    );
    if (checked.kind === "refused") return checked;
    if (!(await this.#o.store.add(checked.passkey))) {
      return refused("credential_exists");
    }
    return checked;
  }

  /**
   * Checks a registration as {@linkcode PasskeyAuthenticator.register}
   * does (its challenge spent), without storing the passkey: for a caller
   * that must first claim something of its own that a refused registration
   * must not spend (the one-time right of the automatic upgrade), and then
   * stores it with the store's `add`.
   *
   * @param subject The signed-in user (the challenge must be theirs).
   * @param response What `startRegistration` answered in the browser.
   * @param name The user's name for the passkey, as for `register`.
   * @param purpose The ceremony, as for `register`.
   * @returns The passkey to store, or a refusal.
   */
  async checkRegistration(
    subject: string,
    response: unknown,
    name: string,
    purpose?: string,
  ): Promise<PasskeyOutcome<{ passkey: PasskeyRecord }>> {
    const label = passkeyName(name);
    if (label === null) return refused("invalid_name");
    const ctx = { reason: null as ChallengeRefusal | null };
    let info;
    try {
      const result = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge: (c) =>
          this.#challenges.accept(c, registrationKind(purpose), subject, ctx),
        expectedOrigin: this.#o.origins,
        expectedRPID: this.#o.rpId,
        requireUserVerification: true,
      });
      if (!result.verified) return refused("verification_failed");
      info = result.registrationInfo;
    } catch (error) {
      return refused(ctx.reason ?? reasonOf(error));
    }
    return {
      kind: "ok",
      passkey: {
        credentialId: info.credential.id,
        subject,
        publicKey: encodeBase64Url(info.credential.publicKey),
        counter: info.credential.counter,
        transports: [...(info.credential.transports ?? [])],
        name: label,
        createdAt: this.#o.now(),
        lastUsedAt: 0,
        backupEligible: info.credentialDeviceType === "multiDevice",
        backedUp: info.credentialBackedUp,
      },
    };
  }

  /**
   * Options for `navigator.credentials.get` with discoverable credentials
   * (no username): pass to `startAuthentication({ optionsJSON })`.
   *
   * @returns The options; their challenge is single-use.
   */
  async authenticationOptions(): Promise<RequestOptionsJSON> {
    return (await generateAuthenticationOptions({
      rpID: this.#o.rpId,
      challenge: await this.#challenges.issue("auth", ""),
      timeout: this.#o.challengeSeconds * 1000,
      userVerification: "required",
    })) as unknown as RequestOptionsJSON;
  }

  /**
   * Checks a sign-in and answers whose passkey it was.
   *
   * @param response What `startAuthentication` answered in the browser.
   * @returns The subject and credential id, or a refusal.
   */
  async authenticate(
    response: unknown,
  ): Promise<PasskeyOutcome<{ subject: string; credentialId: string }>> {
    const r = response as AuthenticationResponseJSON;
    if (typeof r?.id !== "string" || r.id.length > 1400) {
      return refused("malformed");
    }
    const record = await this.#o.store.find(r.id);
    if (record === null) return refused("unknown_credential");
    const handle = r.response?.userHandle;
    if (
      handle !== undefined && handle !== null &&
      handle !== this.userHandle(record.subject)
    ) return refused("user_handle_mismatch");
    const publicKey = decodeBase64Url(record.publicKey);
    if (publicKey === null) return refused("verification_failed");
    const ctx = { reason: null as ChallengeRefusal | null };
    let newCounter: number;
    let eligible: boolean;
    let backedUp: boolean;
    try {
      const result = await verifyAuthenticationResponse({
        response: r,
        expectedChallenge: (c) => this.#challenges.accept(c, "auth", "", ctx),
        expectedOrigin: this.#o.origins,
        expectedRPID: this.#o.rpId,
        credential: {
          id: record.credentialId,
          publicKey,
          counter: record.counter,
          transports: record.transports as never,
        },
        requireUserVerification: true,
      });
      if (!result.verified) return refused("verification_failed");
      newCounter = result.authenticationInfo.newCounter;
      eligible = result.authenticationInfo.credentialDeviceType ===
        "multiDevice";
      backedUp = result.authenticationInfo.credentialBackedUp;
    } catch (error) {
      return refused(ctx.reason ?? reasonOf(error));
    }
    // Backup eligibility is fixed when the credential is made (WebAuthn L3
    // §6.1.3): an assertion whose BE differs from the one registered, either
    // way, is not from the authenticator that registered it, and changes
    // nothing (no counter, no backup state). BS may change, and only with
    // BE (BS without BE was refused above). A passkey stored before the
    // flags were kept (BE not known) records this use's BE.
    if (
      record.backupEligible !== undefined && record.backupEligible !== eligible
    ) return refused("backup_flags_invalid");
    const moved = await this.#o.store.updateCounter(
      record.credentialId,
      record.counter,
      newCounter,
      this.#o.now(),
      backedUp,
      record.backupEligible === undefined ? eligible : undefined,
    );
    if (!moved) return refused("counter_stale");
    return {
      kind: "ok",
      subject: record.subject,
      credentialId: record.credentialId,
    };
  }
}

function refused(
  reason: PasskeyRefusal,
): { kind: "refused"; reason: PasskeyRefusal } {
  return { kind: "refused", reason };
}

/** The refusal a library error stands for. */
function reasonOf(error: unknown): PasskeyRefusal {
  const m = String((error as Error)?.message ?? "");
  if (/counter/i.test(m)) return "counter_stale";
  if (/backed up|backup/i.test(m)) return "backup_flags_invalid";
  if (/origin/i.test(m)) return "origin_mismatch";
  if (/RP ID/i.test(m)) return "rp_id_mismatch";
  if (/challenge/i.test(m)) return "challenge_invalid";
  return "verification_failed";
}

/** The challenge kind of a registration for `purpose`. */
function registrationKind(purpose: string | undefined): CeremonyKind {
  return purpose === undefined ? "reg" : `reg:${purpose}`;
}
