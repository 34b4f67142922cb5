// SHA-256 round generation for the PBKDF2 WebAssembly text: constants,
// the unrolled rounds and the memory-reading compression function. Used by
// _generate_wat.ts (a build tool; not part of the published package).

import { SHA256_K } from "./_pbkdf2_sha256_js.ts";

/** Iterations per call of the inner loop (see the comment in `derive`). */
export const CHUNK = 1024;

// The SHA-256 round constants, shared with the JavaScript route, as
// unsigned numbers.
export const K = Array.from(SHA256_K, (k) => k >>> 0);

export const IV = [
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
];

/** Local names of the working variables a..h. */
export const S = ["$a", "$b", "$c", "$d", "$e", "$f", "$g", "$h"];

/** A message word: known when the module is generated, or held in a local. */
export type Word = { known: number } | { local: string };

export function hex(n: number): string {
  return "0x" + (n >>> 0).toString(16).padStart(8, "0");
}

export function c(n: number): string {
  return `(i32.const ${hex(n)})`;
}

export function get(name: string): string {
  return `(local.get ${name})`;
}

export function rotr(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

export function smallSigma0(x: number): number {
  return rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3);
}

export function smallSigma1(x: number): number {
  return rotr(x, 17) ^ rotr(x, 19) ^ (x >>> 10);
}

export function sigma(x: string, r1: number, r2: number, r3: number): string {
  return `(i32.xor (i32.xor (i32.rotr ${x} (i32.const ${r1})) (i32.rotr ${x} (i32.const ${r2}))) (i32.rotr ${x} (i32.const ${r3})))`;
}

export function smallSigma(
  x: string,
  r1: number,
  r2: number,
  s: number,
): string {
  return `(i32.xor (i32.xor (i32.rotr ${x} (i32.const ${r1})) (i32.rotr ${x} (i32.const ${r2}))) (i32.shr_u ${x} (i32.const ${s})))`;
}

/** The local that holds role `i` (0 = a … 7 = h) before round `t`. */
export function role(i: number, t: number): string {
  return S[(((i - t) % 8) + 8) % 8];
}

/**
 * Emits rounds `from`..63 over the words `w` (16 initial words; later ones
 * are computed into `$w0`..`$w15`, reusing the slot of `W[t-16]`).
 */
export function rounds(w: Word[], from: number, indent: string): string[] {
  const out: string[] = [];
  const words = [...w];
  for (let t = from; t < 64; t++) {
    if (t >= 16) {
      let known = 0;
      const terms: string[] = [];
      const add = (word: Word, f: (x: number) => number, g: string | null) => {
        if ("known" in word) known = (known + f(word.known)) | 0;
        else {
          terms.push(
            g === null ? get(word.local) : g.replaceAll("#", get(word.local)),
          );
        }
      };
      add(words[t - 2], smallSigma1, smallSigma("#", 17, 19, 10));
      add(words[t - 7], (x) => x, null);
      add(words[t - 15], smallSigma0, smallSigma("#", 7, 18, 3));
      add(words[t - 16], (x) => x, null);
      if (terms.length === 0) {
        words[t] = { known };
      } else {
        let expr = terms[0];
        for (const term of terms.slice(1)) expr = `(i32.add ${expr} ${term})`;
        if (known !== 0) expr = `(i32.add ${expr} ${c(known)})`;
        const slot = `$w${t % 16}`;
        out.push(`${indent};; W[${t}]`);
        out.push(`${indent}(local.set ${slot} ${expr})`);
        words[t] = { local: slot };
      }
    }
    const word = words[t];
    const kw = "known" in word
      ? c((K[t] + word.known) | 0)
      : `(i32.add ${get(word.local)} ${c(K[t])})`;
    const [a, b, , d, e, f, g, h] = Array.from(
      { length: 8 },
      (_, i) => role(i, t),
    );
    const ch = `(i32.xor ${get(g)} (i32.and ${get(e)} (i32.xor ${get(f)} ${
      get(g)
    })))`;
    const ab = `$x${t % 2}`;
    const bc = `$x${(t + 1) % 2}`;
    out.push(`${indent};; round ${t}`);
    out.push(
      `${indent}(local.set $t1 (i32.add (i32.add (i32.add ${
        get(h)
      } ${kw}) ${ch}) ${sigma(get(e), 6, 11, 25)}))`,
    );
    out.push(`${indent}(local.set ${d} (i32.add ${get(d)} (local.get $t1)))`);
    out.push(`${indent}(local.set ${ab} (i32.xor ${get(a)} ${get(b)}))`);
    out.push(
      `${indent}(local.set ${h} (i32.add (i32.add (local.get $t1) ${
        sigma(get(a), 2, 13, 22)
      }) (i32.xor ${get(b)} (i32.and (local.get ${ab}) (local.get ${bc})))))`,
    );
  }
  return out;
}

/** `$compress(state, block)`: one compression from and to memory. */
export function compressFunction(): string {
  const lines: string[] = [];
  const i = "    ";
  lines.push(
    "  ;; One SHA-256 compression: state (8 native-order words at $s) absorbs",
  );
  lines.push("  ;; the 64-byte block at $blk (big-endian words).");
  lines.push("  (func $compress (param $s i32) (param $blk i32)");
  lines.push(
    `    (local ${
      S.join(" i32) (local ")
    } i32) (local $t1 i32) (local $x0 i32) (local $x1 i32)`,
  );
  lines.push(
    `    ${
      Array.from({ length: 16 }, (_, j) => `(local $w${j} i32)`).join(" ")
    }`,
  );
  for (let j = 0; j < 16; j++) {
    lines.push(
      `${i}(local.set $w${j} (call $bswap (i32.load offset=${
        4 * j
      } (local.get $blk))))`,
    );
  }
  for (let j = 0; j < 8; j++) {
    lines.push(
      `${i}(local.set ${S[j]} (i32.load offset=${4 * j} (local.get $s)))`,
    );
  }
  lines.push(`${i}(local.set $x1 (i32.xor (local.get $b) (local.get $c)))`);
  const w: Word[] = Array.from({ length: 16 }, (_, j) => ({ local: `$w${j}` }));
  lines.push(...rounds(w, 0, i));
  for (let j = 0; j < 8; j++) {
    lines.push(
      `${i}(i32.store offset=${
        4 * j
      } (local.get $s) (i32.add (i32.load offset=${4 * j} (local.get $s)) ${
        get(S[j])
      }))`,
    );
  }
  lines.push("  )");
  return lines.join("\n");
}

/**
 * One in-register compression of the 96-byte message `pad || u`, where the
 * state before it is the pad state `iv` (locals `${p}0..7`). Round 0 uses
 * the per-derivation constants `${p}E`, `${p}A`, `${p}BC`. Leaves the
 * digest in `$u0..7`.
 */
export function hotCompression(p: string, indent: string): string[] {
  const out: string[] = [];
  // Round 0: e1 = (d0 + P) + W0, a1 = (P + T2) + W0; roles at t = 1.
  out.push(`${indent};; round 0 (constant part precomputed)`);
  out.push(
    `${indent}(local.set $h (i32.add (local.get ${p}A) (local.get $u0)))`,
  );
  out.push(
    `${indent}(local.set $d (i32.add (local.get ${p}E) (local.get $u0)))`,
  );
  for (
    const [local, k] of [["$a", 0], ["$b", 1], ["$c", 2], ["$e", 4], [
      "$f",
      5,
    ], ["$g", 6]] as const
  ) {
    out.push(`${indent}(local.set ${local} (local.get ${p}${k}))`);
  }
  out.push(`${indent}(local.set $x0 (local.get ${p}BC))`);
  const w: Word[] = [
    ...Array.from({ length: 8 }, (_, j) => ({ local: `$u${j}` })),
    { known: 0x80000000 | 0 },
    ...Array.from({ length: 6 }, () => ({ known: 0 })),
    { known: 768 },
  ];
  out.push(...rounds(w, 1, indent));
  for (let j = 0; j < 8; j++) {
    out.push(
      `${indent}(local.set $u${j} (i32.add (local.get ${p}${j}) ${get(S[j])}))`,
    );
  }
  return out;
}

/** Round-0 constants of a pad state held in locals `${p}0..7`. */
export function roundZeroConstants(p: string, indent: string): string[] {
  const v = (j: number) => `(local.get ${p}${j})`;
  const pExpr = `(i32.add (i32.add (i32.add ${v(7)} ${c(K[0])}) (i32.xor ${
    v(6)
  } (i32.and ${v(4)} (i32.xor ${v(5)} ${v(6)})))) ${sigma(v(4), 6, 11, 25)})`;
  const t2 = `(i32.add ${sigma(v(0), 2, 13, 22)} (i32.xor ${
    v(1)
  } (i32.and (i32.xor ${v(0)} ${v(1)}) (i32.xor ${v(1)} ${v(2)}))))`;
  return [
    `${indent}(local.set $t1 ${pExpr})`,
    `${indent}(local.set ${p}E (i32.add ${v(3)} (local.get $t1)))`,
    `${indent}(local.set ${p}A (i32.add (local.get $t1) ${t2}))`,
    `${indent}(local.set ${p}BC (i32.xor ${v(0)} ${v(1)}))`,
  ];
}
