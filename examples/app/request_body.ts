/**
 * Reading form and JSON bodies on the same routes.
 *
 * @module
 */

/** A parsed body: where it came from, and its string fields. */
export interface ParsedBody {
  /** `"form"` for HTML forms, `"json"` for API clients. */
  kind: "form" | "json";
  /** The fields that are strings; anything else is left out. */
  fields: Record<string, string>;
}

/** The largest body read, in bytes. */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * Parses a request body as a form (`application/x-www-form-urlencoded` or
 * `multipart/form-data`) or JSON (anything else that is not empty).
 *
 * @param req The request.
 * @returns The body, or `null` when it is too large or malformed.
 */
export async function readBody(req: Request): Promise<ParsedBody | null> {
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) return null;
  try {
    if (type.startsWith("multipart/form-data")) {
      const form = await req.formData();
      const fields: Record<string, string> = {};
      for (const [k, v] of form) if (typeof v === "string") fields[k] = v;
      return { kind: "form", fields };
    }
    const text = await req.text();
    if (new TextEncoder().encode(text).length > MAX_BODY_BYTES) return null;
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
