/**
 * Runs the tests each sign-in method's module ships in its folder (the
 * ones a generated project runs: examples/app/methods/<name>/*_test.ts) as
 * part of this repository's suite.
 *
 * @module
 */
import "../../examples/app/methods/totp/totp_test.ts";
import "../../examples/app/methods/oidc/oidc_test.ts";
import "../../examples/app/methods/passkeys/passkeys_test.ts";
