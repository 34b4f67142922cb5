/**
 * A real OpenID Provider for the tests: `oidc-provider` (an OpenID
 * Certified implementation) on 127.0.0.1, in its own process, with its
 * development interactions (a login form that takes any login, and a
 * consent form) driven over HTTP by the tests.
 *
 * Usage: `deno run -A tests/support/oidc_provider.ts '<client JSON>'`. It
 * prints `listening <issuer>` once it serves. The login typed into the form
 * is the account and its `sub`: `name;email;email_verified`, for example
 * `alice;alice@example.com;true`, so each test says what the OP asserts.
 *
 * @module
 */
import { createServer } from "node:http";
import Provider from "oidc-provider";

const client = JSON.parse(Deno.args[0] ?? "{}");
const server = createServer();
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as { port: number }).port;
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [{
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
    ...client,
  }],
  claims: { openid: ["sub"], email: ["email", "email_verified"] },
  // The ID token carries the scope's claims (email, email_verified).
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  // The typed login is the account id and so the `sub`; its second and
  // third parts are the email and email_verified the provider asserts.
  findAccount: (_ctx: unknown, id: string) => {
    const [, email, verified] = id.split(";");
    return {
      accountId: id,
      claims: () => ({
        sub: id,
        email,
        email_verified: verified === "true",
      }),
    };
  },
  // Development cookie keys: this OP lives for one test run.
  cookies: { keys: [crypto.randomUUID()] },
});
// Plain HTTP on 127.0.0.1 only.
provider.proxy = false;
server.on("request", provider.callback());
console.log(`listening ${issuer}`);
