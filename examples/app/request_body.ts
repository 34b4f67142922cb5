/**
 * Reading request bodies: one cap for every route ({@linkcode capBody},
 * which `createApp` runs before any route sees the request), then form and
 * JSON bodies parsed on the same routes.
 *
 * @module
 */
import { errorResponse } from "@portcullis/auth";

/** A parsed body: where it came from, and its string fields. */
export interface ParsedBody {
  /** `"form"` for HTML forms, `"json"` for API clients. */
  kind: "form" | "json";
  /** The fields that are strings; anything else is left out. */
  fields: Record<string, string>;
}

/** The media types a body may have: JSON and the two HTML form types. */
const ACCEPTED = new Set([
  "application/json",
  "application/x-www-form-urlencoded",
  "multipart/form-data",
]);

/**
 * Whether a request's body has a media type the app reads: exactly
 * `application/json`, `application/x-www-form-urlencoded` or
 * `multipart/form-data` (any case, parameters allowed), or no body at all
 * (no content type and no length). `text/plain`, `image/png`,
 * `application/json-seq` or a body without a content type are not.
 *
 * @param req The request.
 * @returns `true` when the body may be read.
 */
export function acceptedBody(req: Request): boolean {
  const type = req.headers.get("content-type");
  if (type === null) {
    const length = req.headers.get("content-length");
    return (length === null || length.trim() === "0") &&
      !req.headers.has("transfer-encoding");
  }
  return ACCEPTED.has(type.split(";")[0].trim().toLowerCase());
}

/** The largest body read, in bytes. */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * The one cap every request body goes through, before any route runs: a
 * declared `Content-Length` over `max` is refused unread; any other body is
 * read as a stream with a running count that stops (and cancels the
 * stream) as soon as it passes `max`; a `GET` or `HEAD` may carry no body
 * at all. A body over the cap answers 413 (JSON or a small page) with
 * `Connection: close`, having held at most `max` bytes; a body within it
 * comes back in a new `Request` whose body is those bytes, so no route can
 * read past the cap, whichever way it reads (`readBody`, `req.json()`, …).
 *
 * @param req The request as the runtime handed it over.
 * @param max The most bytes accepted; default {@linkcode MAX_BODY_BYTES}.
 * @returns The request to serve (the same one when it has no body), or the
 * answer: 413 over the cap, 408 when the body takes longer than
 * {@linkcode BODY_TIMEOUT_MS} to arrive, 400 when the client broke it off.
 */
export async function capBody(
  req: Request,
  max: number = MAX_BODY_BYTES,
): Promise<Request | Response> {
  const bodiless = req.method === "GET" || req.method === "HEAD";
  const declared = req.headers.get("content-length");
  const limit = bodiless ? 0 : max;
  if (
    (declared !== null && !(Number(declared) <= limit)) ||
    (bodiless && req.headers.has("transfer-encoding"))
  ) {
    await req.body?.cancel().catch(() => {});
    return bodyTooLarge(req, limit);
  }
  if (req.body === null) return req;
  let bytes: Uint8Array<ArrayBuffer> | null;
  try {
    bytes = await readBytes(req, limit);
  } catch (error) {
    if (error instanceof BodyTimeout) {
      return errorResponse(
        req,
        408,
        "request_timeout",
        "The request body took too long to arrive",
        { connection: "close" },
      );
    }
    return errorResponse(req, 400, "bad_request", "Unreadable request body");
  }
  if (bytes === null) return bodyTooLarge(req, limit);
  return new Request(req.url, {
    method: req.method,
    headers: req.headers,
    body: bodiless ? null : bytes,
  });
}

/**
 * The answer to a body over the cap: 413, JSON or a small page, with
 * `Connection: close` so the rest of the body is not waited for.
 *
 * @param req The request.
 * @param max The cap that was passed, in bytes.
 * @returns The response.
 */
export function bodyTooLarge(
  req: Request,
  max: number = MAX_BODY_BYTES,
): Response {
  return errorResponse(
    req,
    413,
    "payload_too_large",
    max === 0
      ? `A ${req.method} request takes no body`
      : `The request body is larger than ${max} bytes`,
    { connection: "close" },
  );
}

/**
 * Parses a request body as a form (`application/x-www-form-urlencoded` or
 * `multipart/form-data`) or JSON (`application/json`, or no body at all);
 * any other media type is refused ({@linkcode acceptedBody}). The
 * body is read as a stream with a running byte count, so a body without
 * `Content-Length` (chunked) stops being read as soon as it passes
 * {@linkcode MAX_BODY_BYTES}; a declared length past it is refused unread.
 *
 * @param req The request.
 * @returns The body, or `null` when it is too large or malformed.
 */
export async function readBody(req: Request): Promise<ParsedBody | null> {
  if (!acceptedBody(req)) return null;
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (!(declared <= MAX_BODY_BYTES)) return null;
  try {
    const bytes = await readBytes(req, MAX_BODY_BYTES);
    if (bytes === null) return null;
    if (type.startsWith("multipart/form-data")) {
      const form = await new Response(bytes, {
        headers: { "content-type": req.headers.get("content-type")! },
      }).formData();
      const fields: Record<string, string> = {};
      for (const [k, v] of form) if (typeof v === "string") fields[k] = v;
      return { kind: "form", fields };
    }
    const text = new TextDecoder().decode(bytes);
    if (type.startsWith("application/x-www-form-urlencoded")) {
      return {
        kind: "form",
        fields: Object.fromEntries(new URLSearchParams(text)),
      };
    }
    const data = text.trim() === "" ? {} : JSON.parse(text);
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      return null;
    }
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) {
      if (typeof v === "string") fields[k] = v;
    }
    return { kind: "json", fields };
  } catch {
    return null;
  }
}

/** How long a body may take to arrive, in milliseconds. */
export const BODY_TIMEOUT_MS = 10_000;

/** A body that did not arrive in time (see {@linkcode readBytes}). */
export class BodyTimeout extends Error {
  /** @param ms The time allowed. */
  constructor(ms: number) {
    super(`The request body did not arrive within ${ms} ms`);
    this.name = "BodyTimeout";
  }
}

/**
 * Reads a request's body, at most `max` bytes of it, within `timeoutMs`.
 *
 * Each chunk is copied into one buffer of at most `max` bytes and never
 * kept: a runtime may hand over a one-byte chunk as a view of a much larger
 * buffer, so keeping chunks let a body sent a byte at a time hold tens of
 * KiB per byte (found by the red-team review: 24 KB sent slowly took the
 * app from 93 MiB to 1 GiB).
 *
 * @param req The request.
 * @param max The most bytes accepted.
 * @param timeoutMs How long the whole body may take; default
 * {@linkcode BODY_TIMEOUT_MS}.
 * @returns The bytes, or `null` once the body passes `max` (the rest is
 * not read and the stream is cancelled).
 * @throws {BodyTimeout} When the body is not complete in time (the stream
 * is cancelled).
 */
export async function readBytes(
  req: Request,
  max: number,
  timeoutMs: number = BODY_TIMEOUT_MS,
): Promise<Uint8Array<ArrayBuffer> | null> {
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  let buffer = new Uint8Array(Math.min(max, 4096));
  let total = 0;
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    reader.cancel().catch(() => {});
  }, timeoutMs);
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (late) throw new BodyTimeout(timeoutMs);
      if (done) break;
      if (total + value.byteLength > max) {
        await reader.cancel().catch(() => {});
        return null;
      }
      if (total + value.byteLength > buffer.byteLength) {
        const grown = new Uint8Array(
          Math.min(
            max,
            Math.max(2 * buffer.byteLength, total + value.byteLength),
          ),
        );
        grown.set(buffer.subarray(0, total));
        buffer = grown;
      }
      buffer.set(value, total);
      total += value.byteLength;
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
  return buffer.slice(0, total);
}

/**
 * Whether the request came from an HTML form (so the answer is a redirect
 * or a page), judged by its content type.
 *
 * @param req The request.
 * @returns `true` for form posts.
 */
export function isFormPost(req: Request): boolean {
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  return type.startsWith("application/x-www-form-urlencoded") ||
    type.startsWith("multipart/form-data");
}
