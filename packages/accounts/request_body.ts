/**
 * Reading request bodies: the caps every route's body passes
 * ({@linkcode bodyCaps}, which `createApp` runs before any route sees the
 * request), then form and JSON bodies parsed on the same routes.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
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
 * The caps on every request body, before any route runs: Hono's
 * `bodyLimit` (a declared `Content-Length` over {@linkcode MAX_BODY_BYTES}
 * refused unread, a chunked body read only up to it; 413), behind the two
 * rules it lacks:
 * - a `GET` or `HEAD` carries no body at all (413);
 * - the whole body must arrive within {@linkcode BODY_TIMEOUT_MS} (408,
 *   whichever reader was waiting for it), and each chunk is copied as it
 *   arrives, never kept: a runtime may hand over a one-byte chunk as a
 *   view of a much larger buffer, so keeping chunks let a body sent a byte
 *   at a time hold tens of KiB per byte (found by the red-team review: 24
 *   KB sent slowly took the app from 93 MiB to 1 GiB). A body the client
 *   broke off answers 400.
 *
 * @param timeoutMs How long a body may take; default
 * {@linkcode BODY_TIMEOUT_MS}.
 * @returns The middlewares, in order.
 */
export function bodyCaps(
  timeoutMs: number = BODY_TIMEOUT_MS,
): MiddlewareHandler[] {
  return [
    bodyDeadline(timeoutMs),
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => bodyTooLarge(c.req.raw),
    }),
  ];
}

function bodyDeadline(timeoutMs: number): MiddlewareHandler {
  return async (c, next) => {
    const req = c.req.raw;
    if (req.method === "GET" || req.method === "HEAD") {
      const length = req.headers.get("content-length");
      if (
        (length !== null && length.trim() !== "0") ||
        req.headers.has("transfer-encoding")
      ) {
        await req.body?.cancel().catch(() => {});
        return bodyTooLarge(req, 0);
      }
      return await next();
    }
    if (req.body === null) return await next();
    const reader = req.body.getReader();
    let outcome: "late" | "broken" | null = null;
    const timer = setTimeout(() => {
      outcome = "late";
      reader.cancel().catch(() => {});
    }, timeoutMs);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (outcome === "late") throw new BodyTimeout(timeoutMs);
          if (done) {
            clearTimeout(timer);
            return controller.close();
          }
          controller.enqueue(value.slice());
        } catch (error) {
          outcome ??= "broken";
          clearTimeout(timer);
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    c.req.raw = new Request(req, { body, duplex: "half" } as RequestInit);
    try {
      await next();
    } finally {
      clearTimeout(timer);
    }
    if (outcome === null) return;
    c.res = undefined;
    c.res = outcome === "late"
      ? errorResponse(
        req,
        408,
        "request_timeout",
        "The request body took too long to arrive",
        { connection: "close" },
      )
      : errorResponse(req, 400, "bad_request", "Unreadable request body");
  };
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

/**
 * {@linkcode readBody}, or the 400 answer for a body it cannot read.
 *
 * @param req The request.
 * @returns The body, or 400 `bad_request` (JSON or a small page).
 */
export async function bodyOrBadRequest(
  req: Request,
): Promise<ParsedBody | Response> {
  return await readBody(req) ??
    errorResponse(req, 400, "bad_request", "Unreadable request body");
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
 * Reads a request's body, at most `max` bytes of it, each chunk copied into
 * one buffer of at most `max` bytes and never kept (see
 * {@linkcode bodyCaps}).
 *
 * @param req The request.
 * @param max The most bytes accepted.
 * @returns The bytes, or `null` once the body passes `max` (the rest is
 * not read and the stream is cancelled).
 */
export async function readBytes(
  req: Request,
  max: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  let buffer = new Uint8Array(Math.min(max, 4096));
  let total = 0;
  try {
    while (true) {
      const { done, value } = await reader.read();
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
