/**
 * The reference app inside a Hono app on Deno, as the Hono conformance run
 * serves it: Hono routes under `/hono/*` guarded by portcullis middleware
 * through the Hono adapter, and every other path served by the reference
 * app (Hono's catch-all), on one session manager.
 *
 * @module
 */
import { Hono } from "hono";
import {
  currentUser,
  DenoKV,
  identityMiddleware,
  KVSessionStore,
  requireAuth,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { honoMiddleware } from "@portcullis/auth/adapters/hono";
import type { AccountsOptions } from "@portcullis/accounts";
import { createDenoApp, type Env } from "./deno.ts";

/**
 * Builds the Hono app.
 *
 * @param env The bindings of {@linkcode createDenoApp}.
 * @param overrides Parts of the reference app to replace.
 * @returns The Hono app; serve `app.fetch`.
 */
export async function createHonoApp(
  env: Env,
  overrides: Partial<AccountsOptions> = {},
): Promise<Hono> {
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  const kv = await DenoKV.open(env.KV_PATH);
  const sessions = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
  });
  const reference = await createDenoApp(env, {
    secret,
    kv,
    sessions,
    ...overrides,
  });
  const app = new Hono();
  app.use(
    "/hono/*",
    honoMiddleware(identityMiddleware(sessions, {
      crossOrigin: { appOrigin: env.APP_ORIGIN! },
    })),
  );
  app.get(
    "/hono/me",
    honoMiddleware(requireAuth()),
    (c) => c.json({ subject: currentUser(c.req.raw), via: "hono" }),
  );
  app.post(
    "/hono/echo",
    honoMiddleware(requireAuth()),
    async (c) =>
      c.json({ subject: currentUser(c.req.raw), body: await c.req.text() }),
  );
  // Everything else: the reference app, with the original Request and the
  // connection info Hono passes as `c.env` on Deno.
  app.all("*", (c) => reference.fetch(c.req.raw, c.env));
  return app;
}
