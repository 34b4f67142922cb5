/**
 * Writes the WebAssembly text of the PBKDF2-HMAC-SHA256 module
 * (`pbkdf2.wat`). The SHA-256 compression is fully unrolled, which is
 * tedious and error-prone to type by hand, so this generator spells out the
 * 64 rounds; everything else is a fixed template below. `build.ts` writes
 * its output to `pbkdf2.wat` and compiles that; a test checks that the
 * committed `.wat` equals this function's output.
 *
 * What the generated code does:
 *
 * - `derive(password, passwordLength, salt, saltLength, iterations, out,
 *   outLength)` computes standard PBKDF2-HMAC-SHA256 (RFC 8018) over bytes
 *   the caller placed in memory at or above {@linkcode INPUT_OFFSET}. The 4
 *   bytes after the salt are overwritten (they hold `INT(i)`).
 * - The HMAC key block, the inner and outer pad states and the first
 *   `U_1` of each output block go through a general SHA-256 that reads
 *   memory (`$compress`, unrolled, big-endian loads).
 * - The iteration loop (`$iterate`) keeps everything in `i32` locals: the
 *   two pad states, `U`, the XOR accumulator, the working variables and a
 *   16-word rolling message schedule. No memory access and no call happen
 *   inside the loop. Each iteration is two compressions of a 96-byte
 *   message, so words 8–15 of the block are constants (`0x80000000`,
 *   zeros, bit length 768): the generator folds them into the round
 *   constants and into the schedule. Round 0 of each compression depends on
 *   the pad state only except for `W[0]`, so its constant part is computed
 *   once per derivation.
 * - Working variables are renamed instead of moved (each round writes two
 *   locals), and `Maj` reuses the previous round's `a ^ b`.
 *
 * Private helper: not exported from the package.
 *
 * @module
 */

import {
  c,
  CHUNK,
  compressFunction,
  hotCompression,
  IV,
  roundZeroConstants,
  S,
} from "./_wat_sha256.ts";

/** First byte of memory free for the caller's password, salt and output. */
export const INPUT_OFFSET = 1024;

/** `$iterate(n)`: `n` more PBKDF2 iterations, all in locals. */
function iterateFunction(): string {
  const i = "    ";
  const l = "        ";
  const lines: string[] = [];
  lines.push(
    "  ;; n more iterations: U <- HMAC(P, U), ACC ^= U, with the pad states at",
  );
  lines.push(
    "  ;; INNER and OUTER; U and ACC are read from and written back to memory.",
  );
  lines.push("  (func $iterate (param $n i32)");
  const decl = (names: string[]) =>
    lines.push(`${i}${names.map((n) => `(local ${n} i32)`).join(" ")}`);
  decl([...S, "$t1", "$x0", "$x1"]);
  decl(Array.from({ length: 16 }, (_, j) => `$w${j}`));
  decl(Array.from({ length: 8 }, (_, j) => `$i${j}`));
  decl(Array.from({ length: 8 }, (_, j) => `$o${j}`));
  decl(Array.from({ length: 8 }, (_, j) => `$u${j}`));
  decl(Array.from({ length: 8 }, (_, j) => `$acc${j}`));
  decl(["$iE", "$iA", "$iBC", "$oE", "$oA", "$oBC"]);
  for (let j = 0; j < 8; j++) {
    lines.push(
      `${i}(local.set $i${j} (i32.load offset=${4 * j} (global.get $INNER)))`,
    );
    lines.push(
      `${i}(local.set $o${j} (i32.load offset=${4 * j} (global.get $OUTER)))`,
    );
    lines.push(
      `${i}(local.set $u${j} (i32.load offset=${4 * j} (global.get $U)))`,
    );
    lines.push(
      `${i}(local.set $acc${j} (i32.load offset=${4 * j} (global.get $ACC)))`,
    );
  }
  lines.push(...roundZeroConstants("$i", i));
  lines.push(...roundZeroConstants("$o", i));
  lines.push(`${i}(block $done`);
  lines.push(`${i}  (br_if $done (i32.eqz (local.get $n)))`);
  lines.push(`${i}  (loop $next`);
  lines.push(`${l};; inner hash: SHA-256 state after ipad, message U`);
  lines.push(...hotCompression("$i", l));
  lines.push(
    `${l};; outer hash: SHA-256 state after opad, message inner digest`,
  );
  lines.push(...hotCompression("$o", l));
  for (let j = 0; j < 8; j++) {
    lines.push(
      `${l}(local.set $acc${j} (i32.xor (local.get $acc${j}) (local.get $u${j})))`,
    );
  }
  lines.push(
    `${l}(br_if $next (local.tee $n (i32.sub (local.get $n) (i32.const 1))))`,
  );
  lines.push(`${i}  )`);
  lines.push(`${i})`);
  for (let j = 0; j < 8; j++) {
    lines.push(
      `${i}(i32.store offset=${4 * j} (global.get $U) (local.get $u${j}))`,
    );
    lines.push(
      `${i}(i32.store offset=${4 * j} (global.get $ACC) (local.get $acc${j}))`,
    );
  }
  lines.push("  )");
  return lines.join("\n");
}

/**
 * The complete module text.
 *
 * @returns WebAssembly text format, deterministic.
 */
export function generatePbkdf2Wat(): string {
  const setIv = IV.map((v, j) =>
    `    (i32.store offset=${4 * j} (local.get $p) ${c(v)})`
  ).join("\n");
  const toBe = Array.from(
    { length: 8 },
    (_, j) =>
      `    (i32.store offset=${
        4 * j
      } (local.get $dst) (call $bswap (i32.load offset=${
        4 * j
      } (local.get $src))))`,
  ).join("\n");
  const xorKey = Array.from(
    { length: 16 },
    (_, j) =>
      `    (i32.store offset=${
        4 * j
      } (global.get $KEY) (i32.xor (i32.load offset=${
        4 * j
      } (global.get $KEY)) (local.get $v)))`,
  ).join("\n");
  return `;; PBKDF2-HMAC-SHA256 (RFC 8018) for portcullis.
;; GENERATED by packages/hashers/pbkdf2_wasm/_generate_wat.ts: do not edit by hand;
;; run \`deno run -A --no-lock packages/hashers/pbkdf2_wasm/build.ts\` after changing the generator.
;;
;; Memory layout (bytes):
;;   0..63     KEY    HMAC key block, then key ^ ipad, then key ^ opad
;;   64..127   PAD    last, padded block of a general SHA-256
;;   128..159  INNER  SHA-256 state after key ^ ipad (8 native-order words)
;;   160..191  OUTER  SHA-256 state after key ^ opad
;;   192..223  STATE  scratch state
;;   224..255  MSG    a digest as 32 big-endian bytes
;;   256..287  U      the latest U_j (8 native-order words)
;;   288..319  ACC    the XOR of U_1..U_j
;;   ${INPUT_OFFSET}..     the caller's password, salt (+4 bytes), output
;; Bytes 0..${INPUT_OFFSET - 1} are zeroed before derive returns.
(module
  (memory (export "memory") 1)
  (global $KEY i32 (i32.const 0))
  (global $PAD i32 (i32.const 64))
  (global $INNER i32 (i32.const 128))
  (global $OUTER i32 (i32.const 160))
  (global $STATE i32 (i32.const 192))
  (global $MSG i32 (i32.const 224))
  (global $U i32 (i32.const 256))
  (global $ACC i32 (i32.const 288))
  (global (export "input") i32 (i32.const ${INPUT_OFFSET}))

  ;; Byte swap: memory is little-endian, SHA-256 words are big-endian.
  (func $bswap (param $x i32) (result i32)
    (i32.or
      (i32.and (i32.rotl (local.get $x) (i32.const 8)) (i32.const 0x00ff00ff))
      (i32.and (i32.rotr (local.get $x) (i32.const 8)) (i32.const 0xff00ff00)))
  )

  ;; The SHA-256 initial state.
  (func $set_iv (param $p i32)
${setIv}
  )

  ;; 8 native-order words at $src as 32 big-endian bytes at $dst.
  (func $to_be (param $src i32) (param $dst i32)
${toBe}
  )

  ;; KEY ^= v in every byte (v repeats one byte four times).
  (func $xor_key (param $v i32)
${xorKey}
  )

${compressFunction()}

  ;; Finishes a SHA-256 whose first $prefix bytes (a multiple of 64) are in
  ;; the state at $s: absorbs $len bytes at $data, then the padding.
  (func $hash_tail (param $s i32) (param $data i32) (param $len i32) (param $prefix i32)
    (local $bits i64)
    (local.set $bits (i64.shl
      (i64.add (i64.extend_i32_u (local.get $prefix)) (i64.extend_i32_u (local.get $len)))
      (i64.const 3)))
    (block $tail
      (loop $full
        (br_if $tail (i32.lt_u (local.get $len) (i32.const 64)))
        (call $compress (local.get $s) (local.get $data))
        (local.set $data (i32.add (local.get $data) (i32.const 64)))
        (local.set $len (i32.sub (local.get $len) (i32.const 64)))
        (br $full)))
    (memory.fill (global.get $PAD) (i32.const 0) (i32.const 64))
    (memory.copy (global.get $PAD) (local.get $data) (local.get $len))
    (i32.store8 (i32.add (global.get $PAD) (local.get $len)) (i32.const 0x80))
    (if (i32.ge_u (local.get $len) (i32.const 56))
      (then
        (call $compress (local.get $s) (global.get $PAD))
        (memory.fill (global.get $PAD) (i32.const 0) (i32.const 64))))
    (i32.store offset=56 (global.get $PAD)
      (call $bswap (i32.wrap_i64 (i64.shr_u (local.get $bits) (i64.const 32)))))
    (i32.store offset=60 (global.get $PAD)
      (call $bswap (i32.wrap_i64 (local.get $bits))))
    (call $compress (local.get $s) (global.get $PAD))
  )

${iterateFunction()}

  ;; PBKDF2-HMAC-SHA256: writes $outLen bytes at $out. All pointers at or
  ;; above ${INPUT_OFFSET}; the 4 bytes after the salt are overwritten.
  ;; $iterations >= 1, read as unsigned.
  (func (export "derive") (param $pw i32) (param $pwLen i32) (param $salt i32)
      (param $saltLen i32) (param $iterations i32) (param $out i32) (param $outLen i32)
    (local $block i32) (local $off i32) (local $n i32) (local $left i32)
    ;; HMAC key block: the password, or its SHA-256 when longer than 64 bytes.
    (memory.fill (global.get $KEY) (i32.const 0) (i32.const 64))
    (if (i32.gt_u (local.get $pwLen) (i32.const 64))
      (then
        (call $set_iv (global.get $STATE))
        (call $hash_tail (global.get $STATE) (local.get $pw) (local.get $pwLen) (i32.const 0))
        (call $to_be (global.get $STATE) (global.get $KEY)))
      (else
        (memory.copy (global.get $KEY) (local.get $pw) (local.get $pwLen))))
    (call $xor_key (i32.const 0x36363636))
    (call $set_iv (global.get $INNER))
    (call $compress (global.get $INNER) (global.get $KEY))
    ;; 0x6a = 0x36 ^ 0x5c: from key ^ ipad to key ^ opad.
    (call $xor_key (i32.const 0x6a6a6a6a))
    (call $set_iv (global.get $OUTER))
    (call $compress (global.get $OUTER) (global.get $KEY))
    (local.set $block (i32.const 1))
    (loop $blocks
      ;; U_1 = HMAC(P, S || INT(block))
      (i32.store (i32.add (local.get $salt) (local.get $saltLen)) (call $bswap (local.get $block)))
      (memory.copy (global.get $STATE) (global.get $INNER) (i32.const 32))
      (call $hash_tail (global.get $STATE) (local.get $salt)
        (i32.add (local.get $saltLen) (i32.const 4)) (i32.const 64))
      (call $to_be (global.get $STATE) (global.get $MSG))
      (memory.copy (global.get $U) (global.get $OUTER) (i32.const 32))
      (call $hash_tail (global.get $U) (global.get $MSG) (i32.const 32) (i32.const 64))
      (memory.copy (global.get $ACC) (global.get $U) (i32.const 32))
      ;; The remaining iterations, in chunks: V8 replaces a function's
      ;; baseline (Liftoff) code by optimised code only between calls, so one
      ;; call for all iterations would run the first derivation unoptimised.
      (local.set $left (i32.sub (local.get $iterations) (i32.const 1)))
      (block $done
        (loop $chunks
          (br_if $done (i32.eqz (local.get $left)))
          (local.set $n (select (i32.const ${CHUNK}) (local.get $left)
            (i32.gt_u (local.get $left) (i32.const ${CHUNK}))))
          (call $iterate (local.get $n))
          (local.set $left (i32.sub (local.get $left) (local.get $n)))
          (br $chunks)))
      (call $to_be (global.get $ACC) (global.get $MSG))
      (local.set $n (i32.sub (local.get $outLen) (local.get $off)))
      (if (i32.gt_u (local.get $n) (i32.const 32)) (then (local.set $n (i32.const 32))))
      (memory.copy (i32.add (local.get $out) (local.get $off)) (global.get $MSG) (local.get $n))
      (local.set $off (i32.add (local.get $off) (i32.const 32)))
      (local.set $block (i32.add (local.get $block) (i32.const 1)))
      (br_if $blocks (i32.lt_u (local.get $off) (local.get $outLen))))
    (memory.fill (i32.const 0) (i32.const 0) (i32.const ${INPUT_OFFSET}))
  )
)
`;
}
