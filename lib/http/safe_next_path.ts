/**
 * Validation of the `next` parameter of sign-in redirects.
 *
 * @module
 */

/**
 * Answers `value` when it is a same-origin relative path (`/account?tab=1`),
 * and `fallback` otherwise: absolute URLs, scheme-relative `//host`,
 * backslashes, control characters and anything that would resolve to
 * another origin are refused (open-redirect protection).
 *
 * @param value The untrusted value (a query parameter, a form field).
 * @param fallback What to answer instead; default `/`.
 * @returns A path safe to put in `Location`.
 *
 * @example Usage
 * ```ts
 * import { safeNextPath } from "@portcullis/auth";
 * safeNextPath("/account"); // "/account"
 * safeNextPath("//evil.example/"); // "/"
 * safeNextPath("https://evil.example/"); // "/"
 * ```
 */
export function safeNextPath(
  value: string | null | undefined,
  fallback = "/",
): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 2048) {
    return fallback;
  }
  // deno-lint-ignore no-control-regex
  if (!value.startsWith("/") || /[\\\u0000-\u001f\u007f]/.test(value)) {
    return fallback;
  }
  if (value.startsWith("//")) return fallback;
  let url: URL;
  try {
    url = new URL(value, "http://portcullis.invalid");
  } catch {
    return fallback;
  }
  if (url.origin !== "http://portcullis.invalid") return fallback;
  const path = url.pathname + url.search + url.hash;
  // Dot segments can collapse "/a/../..//host" into "//host": check again.
  return path.startsWith("//") ? fallback : path;
}
