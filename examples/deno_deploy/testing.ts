/**
 * What the app's own tests share (`app_test.ts` and each module's test
 * under `methods/`): the app in-process with this project's modules, over
 * a libSQL database in memory and an in-memory key-value store, a clock
 * the test moves, and a mailer whose lines the test reads.
 *
 * @module
 */
// deno-lint-ignore no-import-prefix -- named here, not in the workspace's import map, so that the reference app's first start does not download it (deno task installs every import-map dependency)
import { createClient } from "npm:@libsql/client@^0.18.0";
import { drizzle } from "drizzle-orm/libsql";
import {
  KVSessionStore,
  MemoryKV,
  Pbkdf2Hasher,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { migrate, SQLCredentialStore } from "@portcullis/sql";
import { accounts, LogMailer } from "@portcullis/accounts";
import { modules } from "./modules.ts";
import { views } from "./views/mod.ts";

/** The origin the test app answers as. */
export const ORIGIN = "http://localhost:8000";

/** One answer: the response and, when it is JSON, its body. */
export interface Answer {
  /** The response (its body read). */
  res: Response;
  /** The JSON body, or `null`. */
  // deno-lint-ignore no-explicit-any
  json: any;
  /** The body as text. */
  text: string;
}

/** A running test app. */
export interface TestApp {
  /**
   * Sends a request: JSON `body` (or a form, with `form: true`), a Bearer
   * `token`, extra `headers`.
   */
  call(
    method: string,
    path: string,
    body?: unknown,
    token?: string,
    options?: { form?: boolean; headers?: HeadersInit },
  ): Promise<Answer>;
  /**
   * The app's handler, to serve over HTTP (`Deno.serve`), as the security
   * test kit needs.
   */
  fetch(req: Request, ...rest: unknown[]): Promise<Response>;
  /** Lines the mailer wrote. */
  mail: string[];
  /** Lines the app logged. */
  logs: string[];
  /** The users. */
  credentials: SQLCredentialStore;
  /** The app's clock, in unix milliseconds. */
  now(): number;
  /** Moves the clock forward. */
  advance(ms: number): void;
  /** Registers over JSON and stamps the address verified; the subject and token. */
  verifiedUser(
    email: string,
    password: string,
  ): Promise<{ subject: string; token: string }>;
  /** Closes the database. */
  close(): void;
}

/**
 * Starts the app with this project's modules.
 *
 * @param env The modules' settings, as the environment gives them.
 * @returns The app.
 */
export async function startTestApp(
  env: Record<string, string | undefined> = {},
): Promise<TestApp> {
  const client = createClient({ url: ":memory:" });
  const db = drizzle(client);
  await migrate(db);
  let offset = 0;
  const now = () => Date.now() + offset;
  const kv = new MemoryKV({ now });
  const secret = SecretProvider.fromValue(
    crypto.getRandomValues(new Uint8Array(32)),
  );
  const credentials = new SQLCredentialStore(db);
  const mail: string[] = [];
  const logs: string[] = [];
  const app = accounts({
    sessions: new SessionManager({
      secret,
      store: new KVSessionStore(kv),
      now,
    }),
    secret,
    db,
    credentials,
    kv,
    mailer: new LogMailer((line) => mail.push(line)),
    appOrigin: ORIGIN,
    hasher: new Pbkdf2Hasher({ iterations: 1000 }), // tests only: 600000 by default
    now,
    log: (line) => logs.push(line),
    modules: modules(env),
    views,
  });
  const call: TestApp["call"] = async (method, path, body, token, options) => {
    const headers = new Headers(options?.headers);
    if (!headers.has("accept")) headers.set("accept", "application/json");
    if (token) headers.set("authorization", `Bearer ${token}`);
    let payload: BodyInit | undefined;
    if (body !== undefined && options?.form) {
      headers.set("content-type", "application/x-www-form-urlencoded");
      headers.set("sec-fetch-site", "same-origin");
      payload = new URLSearchParams(body as Record<string, string>);
    } else if (body !== undefined) {
      headers.set("content-type", "application/json");
      payload = JSON.stringify(body);
    }
    const res = await app.fetch(
      new Request(ORIGIN + path, { method, headers, body: payload }),
    );
    const text = await res.text();
    const isJson = res.headers.get("content-type")?.includes("json");
    return { res, text, json: isJson ? JSON.parse(text) : null };
  };
  return {
    call,
    fetch: app.fetch,
    mail,
    logs,
    credentials,
    now,
    advance: (ms) => {
      offset += ms;
    },
    async verifiedUser(email, password) {
      const created = await call("POST", "/register", { email, password });
      if (created.res.status !== 201) {
        throw new Error(`register answered ${created.res.status}`);
      }
      const { subject, token } = created.json;
      await credentials.markVerified(subject, email, now());
      return { subject, token };
    },
    close: () => client.close(),
  };
}
