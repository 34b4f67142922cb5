/**
 * Redis Cluster hash slots: CRC16 (XMODEM) of the key's bytes, or of its
 * hash tag, modulo 16384, as the cluster specification defines them.
 *
 * @module
 */

/** How many hash slots a Redis Cluster has. */
export const CLUSTER_SLOTS = 16384;

const TABLE = /* @__PURE__ */ makeTable();

function makeTable(): Uint16Array {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    }
    table[i] = crc & 0xffff;
  }
  return table;
}

const encoder = new TextEncoder();
const OPEN = 0x7b; // "{"
const CLOSE = 0x7d; // "}"

/**
 * The part of a key Redis Cluster hashes: the bytes between the first `{`
 * and the first `}` after it when that part is not empty, otherwise the
 * whole key. Works on UTF-8 bytes, as Redis does.
 */
function hashedPart(bytes: Uint8Array): Uint8Array {
  const open = bytes.indexOf(OPEN);
  if (open === -1) return bytes;
  const close = bytes.indexOf(CLOSE, open + 1);
  if (close === -1 || close === open + 1) return bytes;
  return bytes.subarray(open + 1, close);
}

/**
 * The hash slot of a key, as `CLUSTER KEYSLOT` answers it.
 *
 * @param key The full key, prefix included.
 * @returns A slot in `[0, 16384)`.
 */
export function keySlot(key: string): number {
  let crc = 0;
  for (const b of hashedPart(encoder.encode(key))) {
    crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ b) & 0xff];
  }
  return crc % CLUSTER_SLOTS;
}
