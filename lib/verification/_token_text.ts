// Text helpers of the single-use tokens: the purpose rule and base64url.
// Internal to lib/verification.

const PURPOSE_SHAPE = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** Throws a `TypeError` unless `purpose` is lower-case letters, digits and `-`. */
export function checkPurpose(purpose: unknown): void {
  if (typeof purpose !== "string" || !PURPOSE_SHAPE.test(purpose)) {
    throw new TypeError(
      `Token purpose must be lower-case letters, digits and "-": received "${
        String(purpose)
      }"`,
    );
  }
}

/** Unpadded base64url of bytes. */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}
