/**
 * IP addresses as bytes: strict parsing of IPv4 and IPv6 text, the
 * canonical text form (RFC 5952), and CIDR ranges. Internal to the client
 * address rule.
 *
 * @module
 */

/** An address as 4 (IPv4) or 16 (IPv6) bytes. */
export type IpBytes = Uint8Array;

const IPV4_PART = /^(?:0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/**
 * Parses dotted-quad IPv4: four decimal parts 0–255 without leading zeros
 * (so `010.0.0.1` is refused rather than read as octal or decimal).
 */
function parseIpv4(text: string): IpBytes | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!IPV4_PART.test(parts[i])) return null;
    const n = Number(parts[i]);
    if (n > 255) return null;
    bytes[i] = n;
  }
  return bytes;
}

/** Parses IPv6 text (with `::` and an optional trailing IPv4); no zone. */
function parseIpv6(text: string): IpBytes | null {
  if (text.length < 2 || text.length > 45) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === "") return [];
    const out: number[] = [];
    const parts = half.split(":");
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (i === parts.length - 1 && part.includes(".")) {
        const v4 = parseIpv4(part);
        if (v4 === null) return null;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!HEX_GROUP.test(part)) return null;
        out.push(parseInt(part, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (head === null || tail === null) return null;
  // An IPv4 part may only end the address.
  if (halves.length === 2 && halves[0].includes(".")) return null;
  const count = head.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return null;
  const all = [...head, ...new Array(8 - count).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

/**
 * Parses an address's text: IPv4 or IPv6 without brackets, port or zone.
 * An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is its IPv4 address.
 *
 * @returns 4 or 16 bytes, or `null` when the text is not exactly an address.
 */
export function parseIp(text: string): IpBytes | null {
  if (text.includes(":")) {
    const v6 = parseIpv6(text);
    if (v6 === null) return null;
    const mapped = v6.subarray(0, 10).every((b) => b === 0) &&
      v6[10] === 0xff && v6[11] === 0xff;
    return mapped ? v6.slice(12) : v6;
  }
  return parseIpv4(text);
}

/** The canonical text of an address: dotted IPv4, or RFC 5952 IPv6. */
export function formatIp(bytes: IpBytes): string {
  if (bytes.length === 4) return bytes.join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  // The longest run of two or more zero groups (the first on a tie) is "::".
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (list: number[]) => list.map((g) => g.toString(16)).join(":");
  if (best === -1) return hex(groups);
  return `${hex(groups.slice(0, best))}::${
    hex(groups.slice(best + bestLength))
  }`;
}

/** A range of addresses: `network/prefix`. */
export interface IpRange {
  /** The network's bytes (4 or 16). */
  bytes: IpBytes;
  /** How many leading bits must match. */
  prefix: number;
}

/**
 * Parses `address` or `address/prefix` (a single address is a full-length
 * prefix). Host bits set below the prefix are refused, so a typo such as
 * `10.0.0.1/8` does not silently mean `10.0.0.0/8`.
 */
export function parseRange(text: string): IpRange | null {
  const slash = text.indexOf("/");
  const bytes = parseIp(slash === -1 ? text : text.slice(0, slash));
  if (bytes === null) return null;
  const bits = bytes.length * 8;
  if (slash === -1) return { bytes, prefix: bits };
  const prefixText = text.slice(slash + 1);
  if (!/^(?:0|[1-9][0-9]{0,2})$/.test(prefixText)) return null;
  let prefix = Number(prefixText);
  // `::ffff:10.0.0.0/104` names the IPv4 range 10.0.0.0/8.
  if (bytes.length === 4 && text.slice(0, slash).includes(":")) {
    if (prefix < 96) return null;
    prefix -= 96;
  }
  if (prefix > bits) return null;
  const range = { bytes, prefix };
  return hostBitsClear(range) ? range : null;
}

function hostBitsClear({ bytes, prefix }: IpRange): boolean {
  for (let bit = prefix; bit < bytes.length * 8; bit++) {
    if (bytes[bit >> 3] & (0x80 >> (bit & 7))) return false;
  }
  return true;
}

/** Whether `address` lies in `range` (IPv4 and IPv6 never match each other). */
export function inRange(range: IpRange, address: IpBytes): boolean {
  if (range.bytes.length !== address.length) return false;
  const whole = range.prefix >> 3;
  for (let i = 0; i < whole; i++) {
    if (range.bytes[i] !== address[i]) return false;
  }
  const rest = range.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (range.bytes[whole] & mask) === (address[whole] & mask);
}
