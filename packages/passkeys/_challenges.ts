/**
 * The ceremonies' challenges, private to this package: minted signed for
 * their purpose, recorded until their one use, refused once expired, and
 * swept from the store as new ones are issued.
 *
 * @module
 */
import { decodeBase64Url, encodeBase64Url, sha256Hex } from "@portcullis/bytes";
import type { ChallengeStore } from "./passkey_store.ts";
import type { PurposeSigner } from "./signed_values.ts";

/** Why {@linkcode Challenges.accept} refused a challenge. */
export type ChallengeRefusal = "challenge_invalid" | "challenge_used";

/** The ceremony a challenge belongs to. */
export type CeremonyKind = "reg" | "auth" | `reg:${string}`;

/** How often, at most, issuing a challenge also removes expired ones. */
const SWEEP_INTERVAL_MS = 60_000;

/** Issues and checks challenges. */
export class Challenges {
  #store: ChallengeStore;
  #signer: PurposeSigner;
  #seconds: number;
  #now: () => number;
  #nextSweep = -Infinity;

  /**
   * @param store Where challenges wait for their one use.
   * @param signer Signs them for their purpose alone.
   * @param seconds How long a ceremony may take.
   * @param now The clock, in unix milliseconds.
   */
  constructor(
    store: ChallengeStore,
    signer: PurposeSigner,
    seconds: number,
    now: () => number,
  ) {
    this.#store = store;
    this.#signer = signer;
    this.#seconds = seconds;
    this.#now = now;
  }

  /**
   * Mints a challenge for a ceremony (and, for registration, its user) and
   * records it. Before that, at most once a minute, removes the expired
   * ones: a flood of ceremony starts leaves at most the challenges of the
   * last `seconds` plus a minute in the store, with no sweeper to run.
   */
  async issue(kind: CeremonyKind, subject: string): Promise<string> {
    const now = this.#now();
    if (now >= this.#nextSweep) {
      this.#nextSweep = now + SWEEP_INTERVAL_MS;
      await this.#store.deleteExpired(now);
    }
    const id = encodeBase64Url(crypto.getRandomValues(new Uint8Array(16)));
    const expires = now + this.#seconds * 1000;
    await this.#store.put(await sha256Hex(id), expires);
    return await this.#signer.sign(
      new TextEncoder().encode(
        JSON.stringify({ k: kind, s: subject, i: id, e: expires }),
      ),
    );
  }

  /**
   * The library's challenge check: ours, for this ceremony (and user),
   * unexpired, unused. An expired challenge is refused before the store is
   * asked, whether or not its record was swept yet.
   */
  async accept(
    encoded: string,
    kind: CeremonyKind,
    subject: string,
    ctx: { reason: ChallengeRefusal | null },
  ): Promise<boolean> {
    ctx.reason = "challenge_invalid";
    const bytes = encoded.length <= 4096 ? decodeBase64Url(encoded) : null;
    if (bytes === null) return false;
    const payload = await this.#signer.verify(new TextDecoder().decode(bytes));
    if (payload === null) return false;
    try {
      const d = JSON.parse(new TextDecoder().decode(payload));
      if (
        d.k !== kind || d.s !== subject || typeof d.i !== "string" ||
        typeof d.e !== "number" || d.e <= this.#now()
      ) return false;
      if (!(await this.#store.consume(await sha256Hex(d.i)))) {
        ctx.reason = "challenge_used";
        return false;
      }
    } catch {
      return false;
    }
    ctx.reason = null;
    return true;
  }
}
