/**
 * A user's first server with portcullis, written against the npm packages
 * and nothing else (tests/packages/npm_install_test.ts installs them from
 * the tarballs of `deno task npm`, then runs this file on Node, compiled by
 * `tsc`, and on Bun as it is). Users in a libSQL file (`@portcullis/sql` on
 * drizzle), sessions revocable in the same file (`@portcullis/libsql-kv`),
 * bcrypt hashes (`@portcullis/hashers/bcrypt`), served by the core's
 * `node:http` adapter.
 *
 * - `POST /register` `{email, password}`: 201 `{subject}`; 409 when taken.
 * - `POST /login` `{email, password}`: 200 `{subject, token}`; 401 otherwise.
 * - `GET /me`: 200 `{subject, email}` with `Authorization: Bearer <token>`;
 *   401 without a valid session.
 *
 * Environment: `PORT`, `AUTH_SECRET`, `DATABASE_FILE`. Prints `listening`
 * once it accepts connections.
 */
import process from "node:process";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  compose,
  currentUser,
  errorResponse,
  identityMiddleware,
  KVSessionStore,
  PasswordAuthenticator,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
  signIn,
} from "@portcullis/auth";
import { serve } from "@portcullis/auth/adapters/node";
import { BcryptHasher } from "@portcullis/hashers/bcrypt";
import { LibsqlKV } from "@portcullis/libsql-kv";
import { migrate, SQLCredentialStore } from "@portcullis/sql";

const port = Number(process.env.PORT ?? 3000);
const origin = `http://127.0.0.1:${port}`;
const client = createClient({
  url: `file:${process.env.DATABASE_FILE ?? "app.db"}`,
});
const db = drizzle(client);
await migrate(db);
const credentials = new SQLCredentialStore(db);
const sessions = new SessionManager({
  secret: SecretProvider.fromEnv("AUTH_SECRET", { env: process.env }),
  store: new KVSessionStore(new LibsqlKV(client)),
});
const passwords = new PasswordAuthenticator({
  credentials,
  hasher: new BcryptHasher(),
});

interface Credentials {
  email: string;
  password: string;
}

async function routes(req: Request): Promise<Response> {
  const route = `${req.method} ${new URL(req.url).pathname}`;
  if (route === "POST /register" || route === "POST /login") {
    const { email, password } = await req.json() as Credentials;
    if (route === "POST /register") {
      const result = await passwords.register(email, password);
      if (result.kind === "created") {
        return Response.json({ subject: result.subject }, { status: 201 });
      }
      const status = result.kind === "emailTaken" ? 409 : 400;
      return errorResponse(req, status, "refused", result.kind);
    }
    const login = await passwords.login(email, password, {
      address: "127.0.0.1",
    });
    const session = login.kind === "ok" ? await signIn(req, login) : null;
    if (login.kind !== "ok" || session === null) {
      return errorResponse(req, 401, "invalid_credentials", "Wrong password");
    }
    return Response.json({ subject: login.subject, token: session.token });
  }
  if (route === "GET /me") {
    const denied = requireAuthenticated(req);
    if (denied) return denied;
    const subject = currentUser(req)!;
    const user = await credentials.findById(subject);
    return Response.json({ subject, email: user?.email ?? null });
  }
  return errorResponse(req, 404, "not_found", "Nothing here");
}

const app = compose(
  [identityMiddleware(sessions, { crossOrigin: { appOrigin: origin } })],
  routes,
);
await serve(app, { port, hostname: "127.0.0.1" });
console.log("listening");
