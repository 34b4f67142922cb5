/**
 * PBKDF2-HMAC-SHA256 in plain JavaScript, for runtimes whose WebCrypto
 * refuses the configured iteration count (Cloudflare Workers cap PBKDF2 at
 * 100000). It computes the standard function of RFC 8018, so its output
 * equals WebCrypto's bit for bit; it is never a weaker substitute.
 *
 * Speed comes from three things: the HMAC inner and outer pad states are
 * compressed once per derivation (each iteration then costs exactly two
 * SHA-256 compressions), the padding of the two fixed-length messages is
 * constant, and the compression keeps its working state in local variables
 * with the message schedule in one reused `Int32Array`.
 *
 * Private helper: not exported from the package.
 *
 * @module
 */

/** SHA-256 round constants (FIPS 180-4 §4.2.2), as signed 32-bit words. */
export const SHA256_K: Int32Array = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);

const IV = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);

/**
 * One SHA-256 compression: `out = compress(state, w[0..15])`. `w` is used as
 * the 64-word schedule and overwritten from word 16 on; `out` may be `state`.
 */
function compress(state: Int32Array, w: Int32Array, out: Int32Array): void {
  for (let t = 16; t < 64; t++) {
    const x = w[t - 15];
    const y = w[t - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^
      (y >>> 10);
    w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
  }
  let a = state[0], b = state[1], c = state[2], d = state[3];
  let e = state[4], f = state[5], g = state[6], h = state[7];
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^
      ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + (g ^ (e & (f ^ g))) + SHA256_K[t] + w[t]) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^
      ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) | (c & (a | b)))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  out[0] = (state[0] + a) | 0;
  out[1] = (state[1] + b) | 0;
  out[2] = (state[2] + c) | 0;
  out[3] = (state[3] + d) | 0;
  out[4] = (state[4] + e) | 0;
  out[5] = (state[5] + f) | 0;
  out[6] = (state[6] + g) | 0;
  out[7] = (state[7] + h) | 0;
}

/**
 * Hashes `data` as the continuation of a message whose first `prefix` bytes
 * (a multiple of 64) already went into `state`. Returns the 8-word digest.
 */
function finish(
  state: Int32Array,
  prefix: number,
  data: Uint8Array,
): Int32Array {
  const total = prefix + data.length;
  const padded = new Uint8Array(Math.ceil((data.length + 9) / 64) * 64);
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  const bits = total * 8;
  view.setUint32(padded.length - 8, Math.floor(bits / 0x100000000));
  view.setUint32(padded.length - 4, bits >>> 0);
  const w = new Int32Array(64);
  const out = Int32Array.from(state);
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(off + i * 4);
    compress(out, w, out);
  }
  return out;
}

function wordsToBytes(words: Int32Array): Uint8Array {
  const bytes = new Uint8Array(words.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < words.length; i++) view.setInt32(i * 4, words[i]);
  return bytes;
}

/** The HMAC-SHA256 inner and outer states after the key block. */
function padStates(password: Uint8Array): [Int32Array, Int32Array] {
  const key = new Uint8Array(64);
  key.set(
    password.length > 64 ? wordsToBytes(finish(IV, 0, password)) : password,
  );
  const view = new DataView(key.buffer);
  const w = new Int32Array(64);
  const inner = new Int32Array(8);
  const outer = new Int32Array(8);
  for (let i = 0; i < 16; i++) w[i] = view.getInt32(i * 4) ^ 0x36363636;
  compress(IV, w, inner);
  for (let i = 0; i < 16; i++) w[i] = view.getInt32(i * 4) ^ 0x5c5c5c5c;
  compress(IV, w, outer);
  return [inner, outer];
}

/**
 * Derives `length` bytes of PBKDF2-HMAC-SHA256.
 *
 * @param password The password bytes (any length).
 * @param salt The salt bytes.
 * @param iterations At least 1.
 * @param length Output bytes, at least 1.
 * @returns The derived key.
 */
export function pbkdf2Sha256Js(
  password: Uint8Array,
  salt: Uint8Array,
  iterations: number,
  length: number,
): Uint8Array {
  const [inner, outer] = padStates(password);
  const blocks = Math.ceil(length / 32);
  const result = new Uint8Array(blocks * 32);
  const first = new Uint8Array(salt.length + 4);
  first.set(salt);
  const w = new Int32Array(64);
  const u = new Int32Array(8);
  const acc = new Int32Array(8);
  for (let block = 1; block <= blocks; block++) {
    new DataView(first.buffer).setUint32(salt.length, block);
    // U1 = HMAC(P, S || INT(block)), through the general padding path.
    const t = finish(inner, 64, first);
    u.set(finish(outer, 64, wordsToBytes(t)));
    acc.set(u);
    for (let i = 1; i < iterations; i++) {
      // Both messages are 64 + 32 bytes long: 768 bits, constant padding.
      w.set(u);
      w[8] = 0x80000000;
      w.fill(0, 9, 15);
      w[15] = 768;
      compress(inner, w, u);
      w.set(u);
      w[8] = 0x80000000;
      w.fill(0, 9, 15);
      w[15] = 768;
      compress(outer, w, u);
      for (let j = 0; j < 8; j++) acc[j] ^= u[j];
    }
    result.set(wordsToBytes(acc), (block - 1) * 32);
  }
  return result.subarray(0, length);
}
