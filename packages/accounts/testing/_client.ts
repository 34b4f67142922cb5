/**
 * The kit's HTTP client: plain `fetch` against the app under test, the
 * answers read whole, and the small assertions the checks make. No test
 * framework and no runtime API beyond the Web's.
 *
 * @module
 */

/** One answer, its body read. */
export interface Reply {
  /** The status. */
  status: number;
  /** The headers. */
  headers: Headers;
  /** The body as text. */
  text: string;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** What one request carries. */
export interface CallOptions {
  /** A JSON body (and `Accept: application/json`). */
  json?: unknown;
  /** A form body (and the same-origin headers a browser's own form sends). */
  form?: Record<string, string>;
  /** `Authorization: Bearer <token>`. */
  bearer?: string;
  /** A `Cookie` header. */
  cookie?: string;
  /** More headers, over the ones above. */
  headers?: Record<string, string>;
  /** A raw body, with `headers` saying what it is. */
  raw?: BodyInit;
}

/** A failed expectation of the kit. */
export class KitFailure extends Error {
  /**
   * Makes one.
   *
   * @param message What was expected and what came.
   */
  constructor(message: string) {
    super(message);
    this.name = "KitFailure";
  }
}

/** A check that does not apply to this app (a module that is off). */
export class NotApplicable extends Error {
  /**
   * Makes one.
   *
   * @param message Why the check does not apply.
   */
  constructor(message: string) {
    super(message);
    this.name = "NotApplicable";
  }
}

/**
 * Fails unless `ok`.
 *
 * @param ok The condition.
 * @param message What was expected.
 */
export function expect(ok: unknown, message: string): asserts ok {
  if (!ok) throw new KitFailure(message);
}

/**
 * Fails unless `reply` has `status`; the message shows the body's start.
 *
 * @param reply The answer.
 * @param status The status expected.
 * @param what The request, for the message.
 */
export function expectStatus(reply: Reply, status: number, what: string): void {
  if (reply.status !== status) {
    throw new KitFailure(
      `${what}: expected ${status}, got ${reply.status} ${
        reply.text.slice(0, 200).replace(/\s+/g, " ")
      }`,
    );
  }
}

/** Sends requests to one app. */
export class KitClient {
  readonly #base: string;
  readonly #fetch: typeof fetch;

  /**
   * Makes a client.
   *
   * @param baseUrl The app's origin (and path prefix, if any).
   * @param fetchImpl The fetch to use.
   */
  constructor(baseUrl: string, fetchImpl: typeof fetch) {
    this.#base = baseUrl.replace(/\/+$/, "");
    this.#fetch = fetchImpl;
  }

  /** The app's base URL, without a trailing slash. */
  get base(): string {
    return this.#base;
  }

  /**
   * Sends one request, never following a redirect.
   *
   * @param method The method.
   * @param path The path (and query) under the base URL.
   * @param o The body, credentials and headers.
   * @returns The answer, read.
   */
  async call(
    method: string,
    path: string,
    o: CallOptions = {},
  ): Promise<Reply> {
    const headers = new Headers();
    let body: BodyInit | undefined;
    if (o.json !== undefined) {
      headers.set("content-type", "application/json");
      headers.set("accept", "application/json");
      body = JSON.stringify(o.json);
    } else if (o.form !== undefined) {
      headers.set("content-type", "application/x-www-form-urlencoded");
      headers.set("accept", "text/html");
      headers.set("sec-fetch-site", "same-origin");
      headers.set("origin", new URL(this.#base).origin);
      body = new URLSearchParams(o.form).toString();
    } else if (o.raw !== undefined) {
      body = o.raw;
    }
    if (o.bearer !== undefined) {
      headers.set("authorization", `Bearer ${o.bearer}`);
    }
    if (o.cookie !== undefined) headers.set("cookie", o.cookie);
    for (const [name, value] of Object.entries(o.headers ?? {})) {
      headers.set(name, value);
    }
    const res = await this.#fetch(this.#base + path, {
      method,
      headers,
      body,
      redirect: "manual",
    });
    const text = await res.text();
    let json: unknown = undefined;
    if (/json/.test(res.headers.get("content-type") ?? "")) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { status: res.status, headers: res.headers, text, json };
  }
}

/**
 * The `Set-Cookie` lines of an answer that set a value (not the ones that
 * clear a cookie).
 *
 * @param reply The answer.
 * @returns The lines.
 */
export function setCookies(reply: Reply): string[] {
  return reply.headers.getSetCookie().filter((line) =>
    !/^[^=]+=;/.test(line) && !/max-age=0/i.test(line)
  );
}

/**
 * The session cookie an answer sets, as `name=value`, or null.
 *
 * @param reply The answer.
 * @returns The cookie pair.
 */
export function sessionCookie(reply: Reply): string | null {
  for (const line of setCookies(reply)) {
    const m = line.match(/^((?:__Host-)?session)=([^;]+)/);
    if (m) return `${m[1]}=${m[2]}`;
  }
  return null;
}

/**
 * The path and query of a mailed link, to send to the app under test
 * whatever origin the link names (an app behind a proxy mails its public
 * origin).
 *
 * @param link The link.
 * @returns `pathname + search`.
 */
export function pathOf(link: string): string {
  const url = new URL(link);
  return url.pathname + url.search;
}

/**
 * The `token` query parameter of a mailed link.
 *
 * @param link The link.
 * @returns The token.
 */
export function tokenOf(link: string): string {
  const token = new URL(link).searchParams.get("token");
  expect(token, `the mailed link carries a token: ${link}`);
  return token;
}

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/**
 * The RFC 6238 code (SHA-1, six digits, 30-second steps) of a base32 key at
 * a time step, computed with WebCrypto.
 *
 * @param key The base32 key the app showed at enrolment.
 * @param step The time step (`floor(unix seconds / 30)`).
 * @returns The six-digit code.
 */
export async function totpCode(key: string, step: number): Promise<string> {
  const clean = key.replace(/[\s=]/g, "").toUpperCase();
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const ch of clean) {
    const value = BASE32.indexOf(ch);
    expect(value >= 0, `the TOTP key is base32: ${ch}`);
    buffer = (buffer << 5) | value;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((buffer >> bits) & 0xff);
    }
  }
  const counter = new Uint8Array(8);
  new DataView(counter.buffer).setBigUint64(0, BigInt(step));
  const hmacKey = await crypto.subtle.importKey(
    "raw",
    new Uint8Array(bytes),
    { name: "HMAC", hash: "SHA-1" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", hmacKey, counter),
  );
  const offset = mac[19] & 0x0f;
  const value = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) |
    (mac[offset + 2] << 8) | mac[offset + 3];
  return String(value % 1_000_000).padStart(6, "0");
}
