/**
 * portcullis inside a Hono app (on Deno): Hono routes protected by
 * portcullis middleware through the Hono adapter, and every other path
 * served by the reference app, all on one session manager, so a token from
 * `POST /login` works on `/hono/*` too.
 *
 * Bindings: those of examples/deno_deploy/main.ts. Run:
 * `deno run -A examples/hono/main.ts` (README.md, "Hono").
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
import type { AppDeps } from "../app/app.ts";
import { createDeployApp, type Env } from "../deno_deploy/main.ts";

/**
 * Builds the Hono app.
 *
 * @param env The bindings, usually `Deno.env.toObject()`.
 * @param overrides Parts of the reference app to replace (tests only).
 * @returns The Hono app; serve `app.fetch`.
 */
export async function createHonoApp(
  env: Env,
  overrides: Partial<AppDeps> = {},
): Promise<Hono> {
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  const kv = await DenoKV.open(env.KV_PATH);
  const sessions = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
  });
  const reference = await createDeployApp(env, {
    secret,
    kv,
    sessions,
    ...overrides,
  });

  const app = new Hono();
  // Identity for every Hono route; unsafe cross-site requests get 403.
  app.use(
    "/hono/*",
    honoMiddleware(identityMiddleware(sessions, {
      crossOrigin: { appOrigin: env.APP_ORIGIN },
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
  // Everything else: the reference app, with the original Request (and,
  // on Deno, the connection info Hono passes as `c.env`).
  app.all("*", (c) => reference(c.req.raw, c.env));
  return app;
}

if (import.meta.main) {
  const app = await createHonoApp(Deno.env.toObject());
  Deno.serve({ port: Number(Deno.env.get("PORT") ?? 8000) }, app.fetch);
}
