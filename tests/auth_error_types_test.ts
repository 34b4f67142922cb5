// AuthError narrows in the type system: after `err instanceof AuthError`,
// `err.code` is the union of codes (never `any`) and `switch (err.code)`
// narrows `err.reason` to that code's reasons. The `@ts-expect-error` lines
// are the proof: `deno test` type-checks this file first, and a directive
// whose line compiles is itself an error ("Unused '@ts-expect-error'").
import assert from "node:assert/strict";
import {
  AuthError,
  type AuthErrorCode,
  type AuthErrorOf,
  type AuthErrorReasons,
} from "../mod.ts";

/** What a caller writes: catch, narrow, switch, read the reason. */
function describe(err: unknown): string {
  if (!(err instanceof AuthError)) return "other";
  // @ts-expect-error: the code is a string literal union, not a number
  const asNumber: number = err.code;
  void asNumber;
  const code: AuthErrorCode = err.code;
  switch (err.code) {
    case "STORE_UNAVAILABLE": {
      const reason: "timeout" | "failed" | undefined = err.reason;
      // @ts-expect-error: a password reason is not a store reason
      const wrong: "passwordTooShort" | undefined = err.reason;
      void wrong;
      return `${code}/${reason}`;
    }
    case "INVALID_PASSWORD": {
      const reason: AuthErrorReasons["INVALID_PASSWORD"] | undefined =
        err.reason;
      // @ts-expect-error: narrowed to the password reasons, "timeout" is none
      if (err.reason === "timeout") return "impossible";
      return `${code}/${reason}`;
    }
    case "RUNTIME_UNSUPPORTED": {
      const reason:
        | "selfTestFailed"
        | "selfTestTooSlow"
        | "webCryptoRefusesCost"
        | undefined = err.reason;
      return `${code}/${reason}`;
    }
    case "MISCONFIGURED": {
      // MISCONFIGURED has no reasons.
      const reason: undefined = err.reason;
      return `${code}/${reason}`;
    }
    default:
      return `${code}/${err.reason}`;
  }
}

Deno.test("a caught AuthError narrows its reason by code at run time as in the types", () => {
  assert.equal(
    describe(
      new AuthError("STORE_UNAVAILABLE", "Store timed out", {
        reason: "timeout",
      }),
    ),
    "STORE_UNAVAILABLE/timeout",
  );
  assert.equal(
    describe(
      new AuthError("INVALID_PASSWORD", "Password is too short", {
        reason: "passwordTooShort",
      }),
    ),
    "INVALID_PASSWORD/passwordTooShort",
  );
  assert.equal(
    describe(new AuthError("MISCONFIGURED", "No secret")),
    "MISCONFIGURED/undefined",
  );
  assert.equal(describe(new TypeError("not ours")), "other");
});

Deno.test("new AuthError() takes only the reasons of its code, and keeps name, message and cause", () => {
  const cause = new Error("socket closed");
  const err: AuthErrorOf<"STORE_UNAVAILABLE"> = new AuthError(
    "STORE_UNAVAILABLE",
    "Store unreachable",
    { reason: "failed", cause },
  );
  assert.ok(err instanceof AuthError);
  assert.ok(err instanceof Error);
  assert.equal(err.name, "AuthError");
  assert.equal(err.message, "Store unreachable");
  assert.equal(err.cause, cause);
  assert.equal(err.constructor.name, "AuthError");
  // @ts-expect-error: "passwordTooShort" is not a reason of STORE_UNAVAILABLE
  new AuthError("STORE_UNAVAILABLE", "x", { reason: "passwordTooShort" });
  // @ts-expect-error: MISCONFIGURED has no reasons
  new AuthError("MISCONFIGURED", "x", { reason: "timeout" });
  // @ts-expect-error: an unknown code
  new AuthError("NOT_A_CODE", "x");
  // A code-specific error is not another code's.
  // @ts-expect-error: AuthErrorOf<"STORE_UNAVAILABLE"> is not INVALID_EMAIL's
  const other: AuthErrorOf<"INVALID_EMAIL"> = err;
  void other;
});
