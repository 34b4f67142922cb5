/**
 * The app as a Cloudflare Worker (`wrangler dev`, `wrangler deploy`). The
 * modules are in `modules.ts`, the pages and mails in `views/`. The session
 * denylist, rate limits and notes in Workers KV (`AUTH_KV`); users and
 * single-use tokens in D1 (`DB`), migrated on the first request. Workers
 * refuse WebCrypto PBKDF2 above 100000 iterations, so passwords are hashed
 * at full strength in the imported WebAssembly module of
 * `@portcullis/hashers`. Bindings: `AUTH_SECRET` (a secret), `APP_ORIGIN`,
 * `RESEND_API_KEY` and `MAIL_FROM`, and each module's (see `modules.ts`).
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
import { migrate } from "@portcullis/sql";
import { type AnyD1Database, drizzle } from "drizzle-orm/d1";
// @ts-ignore: wrangler imports a `.wasm` file as a compiled WebAssembly.Module
import pbkdf2Wasm from "@portcullis/hashers/pbkdf2-sha256.wasm";
import { type Accounts, accounts, mailerFromEnv } from "@portcullis/accounts";
import { modules } from "./modules.ts";
import { views } from "./views/mod.ts";

/** The Worker's bindings. */
interface Env {
  AUTH_KV: KVNamespaceLike;
  DB: AnyD1Database;
  /** `AUTH_SECRET`, `APP_ORIGIN`, the mail's and the modules' settings. */
  [setting: string]: unknown;
}

const hasher = new Pbkdf2WasmHasher({
  wasmModule: pbkdf2Wasm as WebAssembly.Module,
});
const apps = new WeakMap<object, Promise<Accounts>>();

async function build(env: Env): Promise<Accounts> {
  // The bindings that are strings: vars and secrets.
  const settings = Object.fromEntries(
    Object.entries(env).filter(([, v]) => typeof v === "string"),
  ) as Record<string, string>;
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env: settings });
  const db = drizzle(env.DB);
  await migrate(db);
  const kv = new CloudflareKV(env.AUTH_KV);
  return accounts({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    db,
    kv,
    mailer: mailerFromEnv(settings),
    appOrigin: settings.APP_ORIGIN ?? "",
    clientAddress: (req) => req.headers.get("cf-connecting-ip"),
    hasher,
    modules: modules(settings),
    views,
  });
}

export default {
  /**
   * Answers every request (the app is built once per isolate).
   *
   * @param req The request.
   * @param env The bindings.
   * @param ctx The execution context.
   * @returns The app's answer.
   */
  async fetch(req: Request, env: Env, ctx: unknown): Promise<Response> {
    let app = apps.get(env);
    if (app === undefined) {
      app = build(env);
      app.catch(() => apps.delete(env));
      apps.set(env, app);
    }
    return (await app).fetch(req, env, ctx);
  },
};
