/**
 * portcullis as a module Worker: the session denylist and the login limit
 * in Workers KV (`AUTH_KV`), users in D1 (`DB`) through drizzle's D1
 * driver. The app is built once per isolate from the bindings.
 *
 * Passwords are hashed with PBKDF2-SHA256 at 600000 iterations. Production
 * Workers refuse WebCrypto PBKDF2 above 100000 iterations (the core's
 * `Pbkdf2Hasher` refuses to start here), so `Pbkdf2WasmHasher` of
 * `@portcullis/hashers` then derives the same standard PBKDF2 in the
 * WebAssembly module imported below (wrangler turns a `.wasm` import into a compiled
 * `WebAssembly.Module`; Workers refuse compiling bytes at run time). It
 * costs about 3× WebCrypto's time: a paid plan's CPU limit is needed
 * (wrangler.toml), never a lower iteration count.
 *
 * Workers KV is eventually consistent: a sign-out can take about 60 s to
 * reach other locations (README.md).
 *
 * @module
 */
import {
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { Pbkdf2WasmHasher } from "@portcullis/hashers/pbkdf2-wasm";
import { CloudflareKV, type KVNamespaceLike } from "@portcullis/cloudflare";
import { migrate, SQLCredentialStore } from "@portcullis/sql";
import { type AnyD1Database, drizzle } from "drizzle-orm/d1";
// @ts-ignore: wrangler imports a .wasm file as a compiled WebAssembly.Module
import pbkdf2Wasm from "@portcullis/hashers/pbkdf2-sha256.wasm";
import { createApp } from "./app.ts";

/** The Worker's bindings (wrangler.toml, plus the secret). */
export interface Env {
  /** Secret: at least 32 random bytes (`wrangler secret put AUTH_SECRET`). */
  AUTH_SECRET: string;
  /** The public origin, `https://…`. */
  APP_ORIGIN: string;
  /** Workers KV namespace for the denylist and the login limit. */
  AUTH_KV: KVNamespaceLike;
  /** D1 database for users. */
  DB: AnyD1Database;
}

type App = ReturnType<typeof createApp>;
const hasher = new Pbkdf2WasmHasher({
  wasmModule: pbkdf2Wasm as WebAssembly.Module,
});
const apps = new WeakMap<object, Promise<App>>();

async function build(env: Env): Promise<App> {
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env: { ...env } });
  const db = drizzle(env.DB);
  await migrate(db); // idempotent; or apply the migration with wrangler once
  const kv = new CloudflareKV(env.AUTH_KV);
  return createApp({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    credentials: new SQLCredentialStore(db),
    kv,
    appOrigin: env.APP_ORIGIN,
    hasher,
    // Cloudflare sets cf-connecting-ip; a client cannot override it there.
    clientAddress: (req) => req.headers.get("cf-connecting-ip"),
  });
}

export default {
  /**
   * Serves one request.
   *
   * @param req The request.
   * @param env The bindings (the same object for every request of an isolate).
   * @param ctx The execution context.
   * @returns The response.
   */
  async fetch(req: Request, env: Env, ctx: unknown): Promise<Response> {
    let app = apps.get(env);
    if (app === undefined) {
      app = build(env);
      app.catch(() => apps.delete(env)); // a failed start is retried
      apps.set(env, app);
    }
    return (await app)(req, env, ctx);
  },
};
