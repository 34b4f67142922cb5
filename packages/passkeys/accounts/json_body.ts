/**
 * The JSON bodies of the passkey routes: an object (kept whole, unlike a
 * form's fields), read through the package's capped reader.
 *
 * @module
 */
import { errorResponse } from "@portcullis/auth";
import { MAX_BODY_BYTES, readBytes } from "@portcullis/accounts/plugin";

/**
 * Reads a JSON object body (objects kept, unlike form fields) through the
 * capped reader; `null` when not one or over the cap.
 */
export async function readJson(
  req: Request,
): Promise<Record<string, unknown> | null> {
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  if (!type.startsWith("application/json")) return null;
  try {
    const bytes = await readBytes(req, MAX_BODY_BYTES);
    if (bytes === null) return null;
    const value = JSON.parse(new TextDecoder().decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value
      : null;
  } catch {
    return null;
  }
}

/**
 * {@linkcode readJson}, or the 400 answer: what `bodyOrBadRequest` is to
 * `readBody`.
 */
export async function jsonOrBadRequest(
  req: Request,
): Promise<Record<string, unknown> | Response> {
  return await readJson(req) ?? errorResponse(
    req,
    400,
    "bad_request",
    "Send a JSON object with content-type application/json",
  );
}
