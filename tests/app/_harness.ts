/**
 * Starts the reference app in-process on a random port, over real stores: a
 * libSQL file (SQL stores, migrated) and Deno KV in a temporary directory, a
 * clock the test moves, and a mailer whose lines the test reads.
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  DenoKV,
  type KeyValueStore,
  KVSessionStore,
  type PasswordHasher,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import type { PutOptions } from "../../lib/session/mod.ts";
import { migrate, SQLCredentialStore } from "../../stores/sql/mod.ts";
import { Pbkdf2Hasher } from "../../lib/authn/pbkdf2_hasher.ts";
import { LoginThrottle } from "../../lib/throttle/mod.ts";
import {
  accounts,
  type AccountsModule,
  type AccountsOptions,
  LogMailer,
} from "../../packages/accounts/mod.ts";
import { modules } from "../../examples/app/modules.ts";

/**
 * Settings that turn every module of the reference app on (OpenID Connect
 * with a provider that is never asked: its discovery is lazy), for tests
 * that read every route.
 */
export const EVERY_MODULE: Record<string, string> = {
  TOTP: "on",
  PASSKEYS: "on",
  MAGIC_LINK: "on",
  OIDC_ISSUER: "https://id.invalid",
  OIDC_CLIENT_ID: "app",
  OIDC_CLIENT_SECRET: "unused",
};

/** A running app and what the test needs to drive it. */
export interface TestApp {
  /** `http://localhost:<port>`. */
  origin: string;
  /** Lines the mailer wrote. */
  mail: string[];
  /** Lines the app logged. */
  logs: string[];
  /** Moves the clock forward. */
  advance(ms: number): void;
  /** The app's clock, in unix milliseconds. */
  now(): number;
  /** The users. */
  credentials: SQLCredentialStore;
  /** Runs a read-only SQL query on the app's database (for assertions). */
  query(sql: string): Promise<Record<string, unknown>[]>;
  /** The sessions. */
  sessions: SessionManager;
  /** A handle on the app's login throttle (same store, same keys). */
  throttle: LoginThrottle;
  /** The last verification link mailed to `email`. */
  lastLink(email: string): string;
  /**
   * Waits (at most 2 s) until `count` mails went to `email`, for mail sent
   * after the answer; answers the last one's link.
   */
  awaitLink(email: string, count?: number): Promise<string>;
  /** Every `METHOD path` the app routes (its Hono routes). */
  routes: { method: string; path: string }[];
  /** Stops the server and removes the files. */
  close(): Promise<void>;
  /** `Symbol.asyncDispose` for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** How {@linkcode startApp} builds what it does not take from `overrides`. */
export interface StartOptions {
  /** Wraps the key-value store the sessions' denylist lives in. */
  sessionKv?: (kv: KeyValueStore) => KeyValueStore;
  /** Wraps the key-value store the app gets (limits, notes, sessions list). */
  appKv?: (kv: KeyValueStore) => KeyValueStore;
  /**
   * The host name of the app's origin (`APP_ORIGIN`), default `localhost`;
   * a browser test maps it to 127.0.0.1.
   */
  host?: string;
  /**
   * Settings for the sign-in methods beside the password, as `main.ts`
   * reads them from the environment (`{ TOTP: "on" }`); default TOTP and
   * passkeys off.
   */
  signInEnv?:
    | Record<string, string | undefined>
    | ((origin: string) => Promise<Record<string, string | undefined>>);
  /**
   * Wraps the modules the app composes (to make one of their stores fail,
   * like a backend that is down): the modules `modules.ts` lists for
   * `signInEnv`.
   */
  wrapModules?: (modules: readonly AccountsModule[]) => AccountsModule[];
}

/**
 * Starts the app.
 *
 * @param overrides Dependencies to replace (limits, …).
 * @param options How the default parts are built.
 * @returns The running app.
 */
export async function startApp(
  overrides: Partial<AccountsOptions> = {},
  options: StartOptions = {},
): Promise<TestApp> {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-app-" });
  let t = Date.UTC(2026, 0, 1);
  const now = () => t;
  const client = createClient({ url: `file:${dir}/app.db` });
  const db = drizzle(client);
  await migrate(db);
  const kv = await DenoKV.open(`${dir}/kv.sqlite3`, { now });
  const secret = SecretProvider.fromValue(
    crypto.getRandomValues(new Uint8Array(32)),
  );
  const sessionStore = new KVSessionStore(options.sessionKv?.(kv) ?? kv);
  const sessions = new SessionManager({ secret, store: sessionStore, now });
  const credentials = new SQLCredentialStore(db);
  const mail: string[] = [];
  const logs: string[] = [];
  const ac = new AbortController();
  let origin = "";
  const ready = Promise.withResolvers<void>();
  let app: ReturnType<typeof accounts> | null = null;
  const server = Deno.serve({
    port: 0,
    hostname: "127.0.0.1",
    signal: ac.signal,
    onListen: () => ready.resolve(),
  }, (req, info) => app!.fetch(req, info));
  await ready.promise;
  origin = `http://${options.host ?? "localhost"}:${server.addr.port}`;
  const env = typeof options.signInEnv === "function"
    ? await options.signInEnv(origin)
    : options.signInEnv ?? { TOTP: "off", PASSKEYS: "off" };
  const listed = modules(env);
  app = accounts({
    sessions,
    secret,
    db,
    credentials,
    kv: options.appKv?.(kv) ?? kv,
    sessionStore,
    mailer: new LogMailer((line) => mail.push(line)),
    appOrigin: origin,
    hasher: new Pbkdf2Hasher({ iterations: 1000 }),
    now,
    log: (line) => logs.push(line),
    clientAddress: (req) => req.headers.get("x-test-client") ?? "198.51.100.1",
    modules: options.wrapModules?.(listed) ?? listed,
    ...overrides,
  });
  const close = async () => {
    ac.abort();
    await server.finished;
    kv.close();
    client.close();
    await Deno.remove(dir, { recursive: true });
  };
  const lastLink = (email: string): string => {
    const line = mail.findLast((l) => l.includes(`to=${email} `));
    const link = line?.match(/link=(\S+)/)?.[1];
    if (!link) throw new Error(`No mail to ${email}`);
    return link;
  };
  return {
    origin,
    mail,
    logs,
    credentials,
    query: async (sql) =>
      (await client.execute(sql)).rows.map((r) => ({ ...r })),
    sessions,
    throttle: new LoginThrottle({ store: kv, now }),
    advance: (ms) => {
      t += ms;
    },
    now,
    lastLink(email) {
      const line = mail.findLast((l) => l.includes(`to=${email} `));
      const link = line?.match(/link=(\S+)/)?.[1];
      if (!link) throw new Error(`No mail to ${email}`);
      return link;
    },
    async awaitLink(email, count = 1) {
      for (let i = 0; i < 200; i++) {
        if (mail.filter((l) => l.includes(`to=${email} `)).length >= count) {
          return lastLink(email);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`No mail to ${email}`);
    },
    routes: app.routes,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A tiny client that keeps the session cookie, like a browser would. */
export class Browser {
  #origin: string;
  /** The cookies, by name. */
  cookies: Map<string, string> = new Map();

  /**
   * Makes a client for one app.
   *
   * @param origin The app's origin.
   */
  constructor(origin: string) {
    this.#origin = origin;
  }

  /**
   * Sends a request with the stored cookies and stores what comes back.
   *
   * @param path The path.
   * @param init The request options.
   * @returns The response (redirects are not followed).
   */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0 && !headers.has("cookie")) {
      headers.set(
        "cookie",
        [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      );
    }
    if (!headers.has("accept")) headers.set("accept", "text/html");
    const res = await fetch(new URL(path, this.#origin), {
      ...init,
      headers,
      redirect: "manual",
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const i = pair.indexOf("=");
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (attrs.some((a) => a.trim() === "Max-Age=0")) {
        this.cookies.delete(name);
      } else this.cookies.set(name, value);
    }
    return res;
  }

  /**
   * Posts a form.
   *
   * @param path The path.
   * @param fields The fields.
   * @param headers Extra headers.
   * @returns The response.
   */
  post(
    path: string,
    fields: Record<string, string>,
    headers: HeadersInit = {},
  ): Promise<Response> {
    return this.fetch(path, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "sec-fetch-site": "same-origin",
        ...Object.fromEntries(new Headers(headers)),
      },
      body: new URLSearchParams(fields),
    });
  }

  /**
   * Gets a page and reads its body.
   *
   * @param path The path.
   * @returns Status, body and response.
   */
  async page(
    path: string,
  ): Promise<{ status: number; body: string; res: Response }> {
    const res = await this.fetch(path);
    return { status: res.status, body: await res.text(), res };
  }
}

/**
 * Sends a JSON request.
 *
 * @param origin The app's origin.
 * @param method The method.
 * @param path The path.
 * @param body The JSON body, or `undefined`.
 * @param headers Extra headers (`authorization`, …).
 * @returns Status, parsed body and headers.
 */
export async function api(
  origin: string,
  method: string,
  path: string,
  body?: unknown,
  headers: HeadersInit = {},
): Promise<
  { status: number; body: Record<string, unknown>; headers: Headers }
> {
  const h = new Headers(headers);
  h.set("accept", "application/json");
  if (body !== undefined) h.set("content-type", "application/json");
  const res = await fetch(new URL(path, origin), {
    method,
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: "manual",
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === "" ? {} : JSON.parse(text),
    headers: res.headers,
  };
}

/** `Authorization: Bearer <token>`. */
export function bearer(token: unknown): HeadersInit {
  return { authorization: `Bearer ${token}` };
}

/**
 * Registers a user over JSON and answers its subject and token.
 *
 * @param origin The app's origin.
 * @param email The email.
 * @param password The password.
 * @returns The subject and a Bearer token.
 */
export async function registerJson(
  origin: string,
  email: string,
  password = "correct horse battery",
): Promise<{ subject: string; token: string }> {
  const res = await api(origin, "POST", "/register", { email, password });
  if (res.status !== 201) throw new Error(`register answered ${res.status}`);
  return res.body as { subject: string; token: string };
}

/**
 * Stamps an account verified straight in the store, for tests whose subject
 * is not verification itself (a sign-in method needs a verified address).
 *
 * @param app The app.
 * @param email The account's (normalised) email.
 * @returns The account's subject.
 */
export async function verifyDirectly(
  app: TestApp,
  email: string,
): Promise<string> {
  const user = await app.credentials.findByEmail(email);
  if (user === null) throw new Error(`no account for ${email}`);
  await app.credentials.markVerified(user.id, email, Math.max(1, app.now()));
  return user.id;
}

/**
 * Redeems a verification link the way its confirmation page does: a form
 * POST of the link's token and the account's password to `/verify`
 * (`GET /verify` only shows the form).
 *
 * @param link The mailed link, `<origin>/verify?token=…`.
 * @param headers Extra headers (a cookie, …).
 * @param password The account's password (the harness's default one).
 * @returns The response, its body read.
 */
export async function redeemLink(
  link: string,
  headers: HeadersInit = {},
  password = "correct horse battery",
): Promise<Response> {
  const url = new URL(link);
  const h = new Headers(headers);
  h.set("content-type", "application/x-www-form-urlencoded");
  h.set("sec-fetch-site", "same-origin");
  const res = await fetch(new URL("/verify", url.origin), {
    method: "POST",
    headers: h,
    body: new URLSearchParams({
      token: url.searchParams.get("token") ?? "",
      password,
    }),
    redirect: "manual",
  });
  await res.body?.cancel();
  return res;
}

/**
 * A key-value store in front of another that can be made to fail, like a
 * backend that is down: `down = "all"` fails every call, `"writes"` only
 * `put` and `delete`.
 */
export class FlakyKV implements KeyValueStore {
  #inner: KeyValueStore;
  /** What fails now. */
  down: false | "all" | "writes" = false;

  /**
   * Wraps a store.
   *
   * @param inner The store that answers while up.
   */
  constructor(inner: KeyValueStore) {
    this.#inner = inner;
  }

  /** {@inheritDoc KeyValueStore.getMany} */
  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    if (this.down === "all") return Promise.reject(new Error("kv is down"));
    return this.#inner.getMany(keys);
  }

  /** {@inheritDoc KeyValueStore.put} */
  put(key: string, value: string, options?: PutOptions): Promise<void> {
    if (this.down) return Promise.reject(new Error("kv is down"));
    return this.#inner.put(key, value, options);
  }

  /** {@inheritDoc KeyValueStore.delete} */
  delete(key: string): Promise<void> {
    if (this.down) return Promise.reject(new Error("kv is down"));
    return this.#inner.delete(key);
  }
}

/**
 * A store with the protocol's optional atomic `increment`, built in the
 * test over any store: increments run one after another, and a new key
 * starts at 1 with the given time to live (fixed, it does not slide).
 */
export class AtomicKV implements KeyValueStore {
  #inner: KeyValueStore;
  #queue: Promise<unknown> = Promise.resolve();
  #expiry = new Map<string, number>();
  #now: () => number;

  /**
   * Wraps a store and adds `increment`.
   *
   * @param inner The store.
   * @param now The clock, in unix milliseconds.
   */
  constructor(inner: KeyValueStore, now: () => number = Date.now) {
    this.#inner = inner;
    this.#now = now;
  }

  /** {@inheritDoc KeyValueStore.getMany} */
  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    return this.#inner.getMany(keys);
  }

  /** {@inheritDoc KeyValueStore.put} */
  put(key: string, value: string, options?: PutOptions): Promise<void> {
    return this.#inner.put(key, value, options);
  }

  /** {@inheritDoc KeyValueStore.delete} */
  delete(key: string): Promise<void> {
    return this.#inner.delete(key);
  }

  /**
   * Adds 1 to `key` atomically.
   *
   * @param key The counter.
   * @param ttlSeconds The time to live of a new counter.
   * @returns The new value.
   */
  increment(key: string, ttlSeconds: number): Promise<number> {
    const run = this.#queue.then(async () => {
      const [value] = await this.#inner.getMany([key]);
      const next = Number(value ?? 0) + 1;
      if (value === null) {
        this.#expiry.set(key, this.#now() + ttlSeconds * 1000);
      }
      const left = Math.ceil(
        ((this.#expiry.get(key) ?? this.#now()) - this.#now()) / 1000,
      );
      await this.#inner.put(key, String(next), {
        ttlSeconds: Math.max(left, 1),
      });
      return next;
    });
    this.#queue = run.catch(() => {});
    return run;
  }
}

/**
 * A hasher that counts the password checks it performs, and can make each
 * one slow, as a production cost is (so concurrent requests overlap).
 */
export class CountingHasher implements PasswordHasher {
  #inner: PasswordHasher;
  #delayMs: number;
  /** How many times `verify` ran. */
  verifies = 0;

  /**
   * Wraps a hasher.
   *
   * @param inner The hasher that does the work.
   * @param delayMs Extra milliseconds each `verify` takes.
   */
  constructor(inner: PasswordHasher, delayMs = 0) {
    this.#inner = inner;
    this.#delayMs = delayMs;
  }

  /** {@inheritDoc PasswordHasher.hash} */
  hash(password: string): Promise<string> {
    return this.#inner.hash(password);
  }

  /** {@inheritDoc PasswordHasher.verify} */
  async verify(password: string, stored: string): Promise<boolean> {
    this.verifies++;
    if (this.#delayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.#delayMs));
    }
    return await this.#inner.verify(password, stored);
  }

  /** {@inheritDoc PasswordHasher.needsRehash} */
  needsRehash(stored: string): boolean {
    return this.#inner.needsRehash(stored);
  }
}
