// Whether a secret is plainly not random: the checks SecretProvider runs
// once, at construction, on a secret that is already long enough and in a
// recognisable encoding. Each check is calibrated so that 32 or more bytes
// from a CSPRNG, in hex, base64 or base64url or as raw bytes, are refused
// with odds below one in a billion (the property test in
// tests/secrets/secret_provider_test.ts draws thousands of them), while
// what people paste instead of a secret is refused: a pattern repeated
// ("0123456789abcdef" four times), a counter, a byte value repeated far
// more often than chance, or a phrase ("YourSecretKeyGoesHere…").

/**
 * Why a text secret (hex or base64/base64url, already checked for length
 * and alphabet) is plainly not random, or `null`.
 */
export function textProblem(
  secret: string,
  encoding: "hex" | "base64",
): string | null {
  const data = encoding === "base64" ? secret.replace(/=+$/, "") : secret;
  const period = shortestPeriod(data);
  if (period !== null) return `it repeats a pattern of ${period} characters`;
  if (encoding === "base64" && readsAsWords(data)) {
    return "it reads as words, not as encoded random bytes";
  }
  const bytes = encoding === "hex" ? fromHex(data) : fromBase64(data);
  // As for raw bytes: random ones are all printable with odds of about 1 in
  // 10^14, so these encode a phrase ("echo my-secret | base64").
  if (bytes.every((b) => b >= 0x20 && b < 0x7f)) {
    return "its decoded bytes are printable text: an encoded phrase, not random bytes";
  }
  return bytesProblem(bytes, "its decoded bytes");
}

/** Why raw secret bytes are plainly not random, or `null`. */
export function rawBytesProblem(bytes: Uint8Array): string | null {
  // 32 random bytes are all printable ASCII with odds of about 1 in 10^14:
  // these are the bytes of a text.
  if (bytes.every((b) => b >= 0x20 && b < 0x7f)) {
    return "its bytes are printable text (pass a text secret as a string)";
  }
  return bytesProblem(bytes, "its bytes");
}

function bytesProblem(bytes: Uint8Array, what: string): string | null {
  const n = bytes.length;
  if (new Set(bytes).size < 8) return `${what} use fewer than 8 values`;
  const period = shortestPeriod(bytes);
  if (period !== null) return `${what} repeat a pattern of ${period}`;
  const steps = new Uint8Array(n - 1);
  for (let i = 1; i < n; i++) steps[i - 1] = (bytes[i] - bytes[i - 1]) & 0xff;
  if (shortestPeriod(steps) !== null) {
    return `${what} count up or down in a fixed pattern`;
  }
  const counts = new Uint16Array(256);
  let most = 0;
  for (const b of bytes) most = Math.max(most, ++counts[b]);
  if (most >= mostRepeats(n)) {
    return `${what} hold one value ${most} times in ${n}`;
  }
  return null;
}

/**
 * The smallest period `p` with at least two full repeats (`p ≤ length/2`)
 * such that every element equals the one `p` places before it, or `null`.
 * Random data of 32 elements has one with odds below 256^-16.
 */
function shortestPeriod(data: ArrayLike<number> | string): number | null {
  const n = data.length;
  for (let p = 1; p <= n >> 1; p++) {
    let i = p;
    while (i < n && data[i] === data[i - p]) i++;
    if (i === n) return p;
  }
  return null;
}

/**
 * The count of one byte value in `n` random bytes that is reached with
 * odds below 10^-12 (a union bound over the 256 values:
 * 256 · C(n, k) · 256^-k): 10 for 32 bytes.
 */
function mostRepeats(n: number): number {
  let logChoose = 0; // ln C(n, k)
  for (let k = 1; k <= n; k++) {
    logChoose += Math.log((n - k + 1) / k);
    if (Math.log(256) + logChoose - k * Math.log(256) < Math.log(1e-12)) {
      return k;
    }
  }
  return n + 1;
}

// The fifty most common English letter pairs.
const BIGRAMS = new Set(
  ("th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng " +
    "se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma " +
    "si om ur").split(" "),
);
const VOWELS = new Set("aeiouy");

/**
 * Whether base64 text reads as words ("YourSecretKeyGoesHere…",
 * "Change_Me_In_Production"): a score of word-like runs (a capital then
 * lower-case letters, with vowels among them as in English, scored by
 * common English letter pairs) per 43 characters, plus how far the
 * characters' entropy falls below random base64's. Over two million random
 * 32-byte secrets the score stayed below 16, falling about threefold per
 * point at the top; the threshold of 21 sits where a random secret would
 * reach it about once in 10^9, and placeholder phrases score 22 to 40.
 */
function readsAsWords(data: string): boolean {
  let words = 0;
  for (const match of data.matchAll(/[A-Z]?[a-z]{2,}/g)) {
    const word = match[0].toLowerCase();
    let vowels = 0;
    let consonantRun = 0;
    let longest = 0;
    for (const c of word) {
      if (VOWELS.has(c)) {
        vowels++;
        consonantRun = 0;
      } else longest = Math.max(longest, ++consonantRun);
    }
    const share = vowels / word.length;
    if (share < 0.2 || share > 0.8 || longest >= 4) continue;
    for (let i = 0; i + 1 < word.length; i++) {
      if (BIGRAMS.has(word.slice(i, i + 2))) words++;
    }
    if (word.length >= 4) words++;
  }
  const score = words * 43 / data.length + 12 * (4.8 - entropyBits(data));
  return score >= 21;
}

/** Shannon entropy of the characters of `text`, in bits per character. */
function entropyBits(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const k of counts.values()) {
    const p = k / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function fromHex(text: string): Uint8Array {
  const out = new Uint8Array(text.length >> 1);
  for (let i = 0; i < out.length; i++) {
    out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  }
  return out;
}

function fromBase64(data: string): Uint8Array {
  const std = data.replaceAll("-", "+").replaceAll("_", "/");
  // Whole groups of four only: a trailing partial group adds no full byte
  // beyond what the checks need.
  const whole = std.slice(0, std.length - (std.length % 4));
  const extra = std.slice(whole.length);
  const padded = extra.length >= 2
    ? whole + extra + "=".repeat(4 - extra.length)
    : whole;
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}
