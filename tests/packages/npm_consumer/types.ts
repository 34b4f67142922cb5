/**
 * The types of the npm packages are real, not `any`: each misuse below must
 * be a type error (`@ts-expect-error` fails the check when it is not), and
 * the core's error narrows by code. Checked by `tsc` in
 * tests/packages/npm_install_test.ts beside server.ts.
 */
import { AuthError, SessionManager } from "@portcullis/auth";
import { LibsqlKV } from "@portcullis/libsql-kv";
import { edgeGate } from "@portcullis/next";
import { TotpAuthenticator } from "@portcullis/totp";

export function misuses(): void {
  // @ts-expect-error: a SessionManager needs a secret
  new SessionManager({});
  // @ts-expect-error: LibsqlKV takes a libSQL client, not a URL
  new LibsqlKV("file:app.db");
  // @ts-expect-error: TotpAuthenticator takes its options
  new TotpAuthenticator();
  // @ts-expect-error: the gate takes the core's identity middleware
  edgeGate("identity", { protect: ["/account"] });
}

/** An AuthError's code, or null for anything else. */
export function codeOf(error: unknown): string | null {
  return error instanceof AuthError ? error.code : null;
}
