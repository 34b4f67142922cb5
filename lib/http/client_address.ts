/**
 * The client's address behind reverse proxies: which peers are trusted
 * ({@linkcode TrustedProxies}) and the rightmost-untrusted rule over
 * `X-Forwarded-For`, `Forwarded` (RFC 7239) or a platform's own header
 * ({@linkcode clientAddress}).
 *
 * @module
 */
import {
  formatIp,
  inRange,
  type IpBytes,
  type IpRange,
  parseIp,
  parseRange,
} from "./_ip_address.ts";

/** Named ranges {@linkcode TrustedProxies.parse} accepts beside addresses. */
const NAMED_RANGES: Record<string, readonly string[]> = {
  loopback: ["127.0.0.0/8", "::1"],
  private: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

/** The most proxies a hop count may name. */
const MAX_HOPS = 16;

/** Reads a setting's parts (set by the class's static block). */
let hopsAndRanges: (
  proxies: TrustedProxies,
) => [number | undefined, readonly IpRange[]];

/**
 * The reverse proxies whose forwarding headers the app believes: a list of
 * addresses and CIDR ranges (the peer must be one of them), or a hop count
 * (exactly that many proxies always stand in front of the app, as on a
 * platform that sets the header itself). The default trusts no one: the
 * client's address is the socket's, and forwarding headers are ignored.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { TrustedProxies } from "@portcullis/auth/http";
 *
 * const proxies = TrustedProxies.parse("10.0.0.0/8, 192.0.2.7");
 * assert.equal(proxies.trusts("10.1.2.3"), true);
 * assert.equal(proxies.trusts("192.0.2.8"), false);
 * assert.equal(TrustedProxies.parse("1").hops, 1);
 * assert.equal(TrustedProxies.parse("").trusts("127.0.0.1"), false);
 * ```
 */
export class TrustedProxies {
  /** Trusts no proxy: the client's address is always the socket's. */
  static readonly none: TrustedProxies = new TrustedProxies([], undefined);

  #ranges: readonly IpRange[];
  #hops: number | undefined;
  #text: string;

  private constructor(ranges: readonly IpRange[], hops: number | undefined) {
    this.#ranges = ranges;
    this.#hops = hops;
    this.#text = hops !== undefined
      ? String(hops)
      : ranges.map((r) =>
        r.prefix === r.bytes.length * 8
          ? formatIp(r.bytes)
          : `${formatIp(r.bytes)}/${r.prefix}`
      ).join(", ");
  }

  /**
   * Reads a setting such as `TRUSTED_PROXIES`:
   * - empty, `none` or `0`: no proxy is trusted (the default behaviour);
   * - a whole number from 1 to 16: that many proxies always stand in front
   *   of the app, whatever their addresses;
   * - a list of IPv4/IPv6 addresses and CIDR ranges separated by commas or
   *   spaces, and the names `loopback` (127.0.0.0/8, ::1) and `private`
   *   (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7).
   *
   * @param value The setting's text.
   * @param name The setting's name, for the error message.
   * @returns The parsed setting.
   * @throws {TypeError} For anything else (a typo, host bits set below a
   * CIDR prefix such as `10.0.0.1/8`, a hop count mixed with addresses),
   * with a message that names the entry.
   */
  static parse(value: string, name = "TRUSTED_PROXIES"): TrustedProxies {
    const text = value.trim();
    if (text === "" || text.toLowerCase() === "none") {
      return TrustedProxies.none;
    }
    if (/^[0-9]+$/.test(text)) {
      const hops = Number(text);
      if (!/^(?:0|[1-9][0-9]?)$/.test(text) || hops > MAX_HOPS) {
        throw new TypeError(
          `${name} must be a hop count from 0 to ${MAX_HOPS}, or addresses and CIDR ranges: received "${text}"`,
        );
      }
      return hops === 0 ? TrustedProxies.none : new TrustedProxies([], hops);
    }
    const ranges: IpRange[] = [];
    for (const entry of text.split(/[\s,]+/)) {
      if (entry === "") continue;
      const named = NAMED_RANGES[entry.toLowerCase()];
      if (named) {
        ranges.push(...named.map((r) => parseRange(r)!));
        continue;
      }
      const range = parseRange(entry);
      if (range === null) {
        throw new TypeError(
          `${name} must list IPv4/IPv6 addresses or CIDR ranges (for example 10.0.0.0/8, ::1), the names loopback or private, or be a hop count: "${entry}" is none of these`,
        );
      }
      if (range.prefix === 0) {
        throw new TypeError(
          `${name} must not trust every address ("${entry}"): any client could then choose its own address. List your proxies' addresses or ranges, or give a hop count`,
        );
      }
      ranges.push(range);
    }
    return ranges.length === 0
      ? TrustedProxies.none
      : new TrustedProxies(ranges, undefined);
  }

  /**
   * The hop count, when the setting is one (`undefined` for a list of
   * addresses and for no proxy).
   */
  get hops(): number | undefined {
    return this.#hops;
  }

  /** Whether no proxy is trusted (forwarding headers are never read). */
  get isNone(): boolean {
    return this.#hops === undefined && this.#ranges.length === 0;
  }

  /**
   * Whether `address` is one of the trusted proxies (always `false` for a
   * hop count, which trusts positions rather than addresses).
   *
   * @param address An IPv4 or IPv6 address's text.
   * @returns `true` when a listed address or range holds it.
   */
  trusts(address: string): boolean {
    const bytes = parseIp(address);
    return bytes !== null && this.#ranges.some((r) => inRange(r, bytes));
  }

  /** The setting in canonical form (`10.0.0.0/8, ::1`, `2`, or empty). */
  toString(): string {
    return this.#text;
  }

  static {
    hopsAndRanges = (proxies) => [proxies.#hops, proxies.#ranges];
  }
}

/**
 * The rightmost-untrusted rule over a forwarding chain (left to right,
 * `null` entries malformed): the client's address, or `"remote"` for the
 * peer's.
 */
function pick(
  proxies: TrustedProxies,
  chain: readonly (IpBytes | null)[] | null,
  remote: IpBytes | null,
): IpBytes | "remote" {
  const [hops, ranges] = hopsAndRanges(proxies);
  const trusts = (bytes: IpBytes) => ranges.some((r) => inRange(r, bytes));
  if (hops !== undefined) {
    // The peer is the nearest proxy; each proxy appended the address it
    // saw, so the client is `hops` entries from the right.
    if (chain === null) return "remote";
    const index = chain.length - hops;
    return index < 0 ? "remote" : chain[index] ?? "remote";
  }
  if (remote === null || !trusts(remote) || chain === null) return "remote";
  for (let i = chain.length - 1; i >= 0; i--) {
    const entry = chain[i];
    // Something that is not an address where the answer would be: the
    // nearest proxy's own address, never a guess.
    if (entry === null) return "remote";
    if (!trusts(entry)) return entry;
  }
  // Every hop is a trusted proxy (a health check from inside): the
  // leftmost one started the request.
  return chain[0] ?? "remote";
}

/** Options of {@linkcode clientAddress}. */
export interface ClientAddressOptions {
  /**
   * The peer's address, from the socket: Deno's `info.remoteAddr.hostname`,
   * Bun's `server.requestIP(req)?.address`, Node's `socket.remoteAddress`.
   * `null` or absent where the runtime gives none (Workers, Vercel Edge).
   */
  remote?: string | null;
  /**
   * Whose forwarding header is believed: a {@linkcode TrustedProxies} or its
   * text (`"10.0.0.0/8"`, `"1"`). Default: no one, so the answer is
   * `remote`.
   */
  trustedProxies?: TrustedProxies | string;
  /**
   * The header the trusted proxies write, lower case: `x-forwarded-for`
   * (the default; nginx, load balancers, Vercel, Fly), `forwarded`
   * (RFC 7239), or a one-address header a platform sets and clients cannot
   * (`cf-connecting-ip`, `fly-client-ip`, `x-real-ip`). Name exactly the one
   * your proxy writes: any other forwarding header passes through it from
   * the client untouched.
   */
  header?: string;
}

/**
 * The forwarding headers proxies and platforms write. Any other name is
 * refused, so that a typo (`x-forwaded-for`) cannot turn the setting into
 * a header every client writes itself.
 */
const FORWARDING_HEADERS: ReadonlySet<string> = new Set([
  "x-forwarded-for",
  "forwarded",
  "x-real-ip",
  "cf-connecting-ip",
  "fly-client-ip",
  "true-client-ip",
]);

/**
 * The client's address for rate limits and logs: the socket's address,
 * unless the peer is a trusted proxy, in which case the forwarding header
 * is read from the right and the first address that is not a trusted
 * proxy is the client (the rightmost-untrusted rule: entries to its left
 * were written by the client and are never believed). With a hop count,
 * the client is that many entries from the right of the chain.
 *
 * The entries are split from the right, each read on its own, so nothing a
 * client writes left of the proxies' part (an unterminated quote in
 * `Forwarded`, a stray backslash, padding past 8 KiB) changes how that
 * part reads: behind a proxy that appends, the answer is the address it
 * appended. A malformed entry where the answer would be (a bad address,
 * `unknown`, an obfuscated identifier, a quote that cannot be closed)
 * never throws and never lets a written address through: the answer is
 * then the peer's address, which a client behind a proxy that appends
 * cannot reach.
 * Addresses come back in canonical form (`2001:db8::1`, an IPv4-mapped
 * IPv6 address as IPv4), ports removed.
 *
 * @param req The request.
 * @param options The peer's address, the trusted proxies and the header.
 * @returns The client's address, or `null` when nothing is known.
 * @throws {TypeError} Only for a malformed `trustedProxies` text or header
 * name (a programming mistake), never for anything in the request.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { clientAddress, TrustedProxies } from "@portcullis/auth/http";
 *
 * const trustedProxies = TrustedProxies.parse("127.0.0.1");
 * const req = new Request("https://app.example/login", {
 *   headers: { "x-forwarded-for": "203.0.113.9, 198.51.100.4" },
 * });
 * // Behind nginx on 127.0.0.1: the rightmost address nginx appended.
 * assert.equal(
 *   clientAddress(req, { remote: "127.0.0.1", trustedProxies }),
 *   "198.51.100.4",
 * );
 * // The same header straight from an untrusted peer is not believed.
 * assert.equal(
 *   clientAddress(req, { remote: "192.0.2.50", trustedProxies }),
 *   "192.0.2.50",
 * );
 * ```
 */
export function clientAddress(
  req: Request,
  options: ClientAddressOptions = {},
): string | null {
  const trusted = typeof options.trustedProxies === "string"
    ? TrustedProxies.parse(options.trustedProxies, "trustedProxies")
    : options.trustedProxies ?? TrustedProxies.none;
  const header = options.header ?? "x-forwarded-for";
  if (!FORWARDING_HEADERS.has(header)) {
    throw new TypeError(
      `The forwarding header must be one a proxy or platform writes, in lower case (${
        [...FORWARDING_HEADERS].join(", ")
      }): received "${header}"`,
    );
  }
  const remoteText = options.remote ?? null;
  const remote = remoteText === null ? null : parseIp(remoteText);
  // The socket's own text when it is not an IP address (a Unix socket).
  const peer = remote === null ? remoteText : formatIp(remote);
  if (trusted.isNone) return peer;
  let picked: IpBytes | "remote";
  try {
    const value = req.headers.get(header);
    const chain = value === null ? null : parseChain(header, value);
    picked = pick(trusted, chain, remote);
  } catch {
    picked = "remote";
  }
  return picked === "remote" ? peer : formatIp(picked);
}

/** The longest header value read; a longer one counts as malformed. */
const MAX_HEADER = 8192;

/**
 * The header's addresses, left to right; `null` for a malformed header. A
 * `null` entry is malformed, and so is everything left of it that is not
 * returned: the chain is read from the right.
 */
function parseChain(
  header: string,
  value: string,
): (IpBytes | null)[] | null {
  let cut = false;
  if (value.length > MAX_HEADER) {
    // The proxies' part is on the right: a client that pads the header
    // past the bound must not fall back to the proxy's own address (a
    // second bucket for it). Only the last 8 KiB of a list are read; the
    // cut first entry is malformed.
    if (header !== "x-forwarded-for" && header !== "forwarded") return null;
    value = value.slice(-MAX_HEADER);
    cut = true;
  }
  if (header === "forwarded") return parseForwarded(value, cut);
  const entries = value.split(",").map((entry) => parseNode(entry.trim()));
  if (cut) entries[0] = null;
  // A one-address header holds exactly one.
  if (header !== "x-forwarded-for" && entries.length !== 1) return null;
  return entries;
}

/**
 * The `for=` of each element of a `Forwarded` header (RFC 7239 §4), left to
 * right, `null` for an element without a usable `for`. The elements are
 * split **from the right**, each read on its own: a proxy appends its
 * element after the client's text, so whatever the client wrote (an
 * unterminated quote that would swallow the proxy's element when read from
 * the left, padding, a stray backslash) cannot change how the proxies'
 * elements read. Where the split meets something it cannot place (a quote
 * it cannot close, a backslash inside a quoted string, which no address
 * needs, or the start of a cut header), that entry is `null` and nothing
 * to its left is read.
 */
function parseForwarded(value: string, cut: boolean): (IpBytes | null)[] {
  const elements: (IpBytes | null)[] = [];
  let end = value.length;
  let quoted = false;
  let malformed = false;
  for (let i = value.length - 1; i >= 0 && !malformed; i--) {
    const c = value[i];
    if (quoted) {
      if (c === "\\" || (c === '"' && value[i - 1] === "\\")) {
        malformed = true;
      } else if (c === '"') quoted = false;
    } else if (c === '"') {
      quoted = true;
    } else if (c === ",") {
      elements.push(forwardedFor(value.slice(i + 1, end)));
      end = i;
    }
  }
  elements.push(
    malformed || quoted || cut ? null : forwardedFor(value.slice(0, end)),
  );
  return elements.reverse();
}

/** The address of one `Forwarded` element's single `for=`, or `null`. */
function forwardedFor(element: string): IpBytes | null {
  const pairs = splitOutsideQuotes(element, ";");
  if (pairs === null) return null;
  let node: IpBytes | null = null;
  let seen = 0;
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq === -1) continue;
    if (pair.slice(0, eq).trim().toLowerCase() !== "for") continue;
    seen++;
    const raw = pair.slice(eq + 1).trim();
    const text = raw.startsWith('"') ? unquote(raw) : raw;
    node = text === null ? null : parseNode(text);
  }
  // Two `for` in one element is malformed: neither is believed.
  return seen === 1 ? node : null;
}

/** Splits on `separator` outside quoted strings; `null` for a bad quote. */
function splitOutsideQuotes(text: string, separator: string): string[] | null {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') {
      quoted = true;
    } else if (c === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quoted) return null;
  parts.push(text.slice(start));
  return parts;
}

/** The content of a quoted string (RFC 7230 §3.2.6); `null` if malformed. */
function unquote(raw: string): string | null {
  if (raw.length < 2 || !raw.endsWith('"')) return null;
  let out = "";
  for (let i = 1; i < raw.length - 1; i++) {
    let c = raw[i];
    if (c === '"') return null;
    if (c === "\\") {
      if (i + 1 >= raw.length - 1) return null;
      c = raw[++i];
    }
    out += c;
  }
  return out;
}

const PORT = /^(?:[0-9]{1,5}|_[A-Za-z0-9._-]+)$/;

/**
 * One node: `192.0.2.1`, `192.0.2.1:8080`, `2001:db8::1`, `[2001:db8::1]`,
 * `[2001:db8::1]:8080` (a port may be obfuscated, `_p1`). `unknown`, an
 * obfuscated identifier (`_hidden`) and anything else are `null`.
 */
function parseNode(text: string): IpBytes | null {
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close === -1) return null;
    const rest = text.slice(close + 1);
    if (rest !== "" && !(rest.startsWith(":") && PORT.test(rest.slice(1)))) {
      return null;
    }
    const inner = text.slice(1, close);
    return inner.includes(":") ? parseIp(inner) : null;
  }
  const colons = text.split(":").length - 1;
  if (colons === 1) {
    const [host, port] = text.split(":");
    return PORT.test(port) && !host.includes(":") && host.includes(".")
      ? parseIp(host)
      : null;
  }
  return parseIp(text);
}
