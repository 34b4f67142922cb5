/**
 * Tests of the magic-link module, in the generated project as here: the
 * app runs in-process with every module of `modules.ts`, over a libSQL
 * database in memory, with a mailer whose lines the tests read.
 *
 * @module
 */
import assert from "node:assert/strict";
// deno-lint-ignore no-import-prefix -- as in app_test.ts: kept out of the import map so the app's first start does not download it
import { createClient } from "npm:@libsql/client@^0.18.0";
import { drizzle } from "drizzle-orm/libsql";
import {
  KVSessionStore,
  MemoryKV,
  Pbkdf2Hasher,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import {
  migrate,
  SQLAuthEventStore,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "@portcullis/sql";
import { createApp } from "../../app.ts";
import { LogMailer } from "../../mailer.ts";
import { setupModules } from "../../module.ts";
import { MODULES } from "../../modules.ts";
import { MAGIC_LINK_TTL_MS } from "./routes.ts";

const ORIGIN = "http://localhost:8000";
const PASSWORD = "correct horse battery";

async function setup() {
  const client = createClient({ url: ":memory:" });
  const db = drizzle(client);
  await migrate(db);
  let t = Date.UTC(2026, 0, 1);
  const now = () => t;
  const kv = new MemoryKV({ now });
  const secret = SecretProvider.fromValue(
    "0YXV2G8SDiuQrIbDvu3wVQSUMC7dd0KMkfthgxfQhNk=",
  );
  const credentials = new SQLCredentialStore(db);
  const mail: string[] = [];
  const pending: Promise<unknown>[] = [];
  const app = createApp({
    sessions: new SessionManager({
      secret,
      store: new KVSessionStore(kv),
      now,
    }),
    secret,
    credentials,
    tokens: new SQLVerificationTokenStore(db),
    events: new SQLAuthEventStore(db),
    kv,
    mailer: new LogMailer((line) => mail.push(line)),
    appOrigin: ORIGIN,
    hasher: new Pbkdf2Hasher({ iterations: 1000 }), // tests only
    now,
    log: () => {},
    defer: (work) => pending.push(work),
    modules: MODULES,
    settings: await setupModules(MODULES, {
      env: {},
      db,
      secret,
      appOrigin: ORIGIN,
      now,
    }),
  });
  /** A browser: keeps cookies, sends same-origin form posts. */
  const browser = () => {
    const cookies = new Map<string, string>();
    const send = async (path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      if (cookies.size > 0) {
        headers.set(
          "cookie",
          [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
        );
      }
      const res = await app.fetch(
        new Request(ORIGIN + path, { ...init, headers }),
      );
      while (pending.length > 0) await Promise.all(pending.splice(0));
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const i = pair.indexOf("=");
        if (/Max-Age=0/i.test(c)) cookies.delete(pair.slice(0, i));
        else cookies.set(pair.slice(0, i), pair.slice(i + 1));
      }
      return res;
    };
    const post = (
      path: string,
      fields: Record<string, string>,
      site = "same-origin",
    ) =>
      send(path, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "sec-fetch-site": site,
        },
        body: new URLSearchParams(fields),
      });
    return { send, post, cookies };
  };
  /** The token of the last sign-in link mailed to `email`. */
  const linkTo = (email: string): string | null => {
    const line = mail.findLast((l) =>
      l.includes(`to=${email} `) && l.includes("/magic-link/")
    );
    const link = line?.match(/link=(\S+)/)?.[1];
    return link === undefined ? null : new URL(link).searchParams.get("token");
  };
  return {
    app,
    browser,
    credentials,
    mail,
    linkTo,
    advance: (ms: number) => t += ms,
    close: () => client.close(),
  };
}

/** Registers `email` from a browser (its address unproven) and answers it. */
async function register(s: Awaited<ReturnType<typeof setup>>, email: string) {
  const b = s.browser();
  const res = await b.post("/register", { email, password: PASSWORD });
  assert.equal(res.status, 303);
  return b;
}

/** Registers `email` and stamps the address proven. */
async function provenAccount(
  s: Awaited<ReturnType<typeof setup>>,
  email: string,
) {
  await register(s, email);
  const user = (await s.credentials.findByEmail(email))!;
  await s.credentials.markVerified(user.id, email, 1);
  return user.id;
}

Deno.test("magic link: the login page asks for a link; the mailed link's page consumes nothing; its form signs in once", async () => {
  const s = await setup();
  const subject = await provenAccount(s, "ml@example.com");
  const b = s.browser();
  const login = await (await b.send("/login")).text();
  assert.match(login, /<form method="post" action="\/magic-link">/);

  const asked = await b.post("/magic-link", { email: "ML@example.com" });
  assert.equal(asked.status, 303);
  assert.equal(asked.headers.get("location"), "/login");
  const token = s.linkTo("ml@example.com");
  assert.ok(token, "a sign-in link was mailed");

  // A mail scanner fetching the link twice consumes nothing.
  for (let i = 0; i < 2; i++) {
    const page = await s.browser().send(`/magic-link/callback?token=${token}`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("referrer-policy"), "strict-origin");
    assert.equal(page.headers.get("set-cookie"), null);
    assert.match(await page.text(), /action="\/magic-link\/callback"/);
  }
  const signedIn = await b.post("/magic-link/callback", { token });
  assert.equal(signedIn.status, 303);
  assert.ok(b.cookies.has("__Host-session"));
  const me = await b.send("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal((await me.json()).subject, subject);

  const again = await s.browser().post("/magic-link/callback", { token });
  assert.equal(again.status, 400, "a link works once");
  await again.body?.cancel();
  s.close();
});

Deno.test("magic link: an unknown address gets the same answer, no mail and no account", async () => {
  const s = await setup();
  await provenAccount(s, "ml@example.com");
  const known = await s.browser().post("/magic-link", {
    email: "ml@example.com",
  });
  const unknown = await s.browser().post("/magic-link", {
    email: "nobody@example.com",
  });
  assert.equal(known.status, unknown.status);
  assert.equal(known.headers.get("location"), unknown.headers.get("location"));
  assert.equal(s.mail.filter((l) => l.includes("/magic-link/")).length, 1);
  assert.equal(await s.credentials.findByEmail("nobody@example.com"), null);
  const invalid = await s.browser().post("/magic-link", { email: "not mail" });
  assert.equal(invalid.status, 422);
  await invalid.body?.cancel();
  s.close();
});

Deno.test("magic link: forged, expired and cross-site: 400 or 403, and nothing changes", async () => {
  const s = await setup();
  await provenAccount(s, "ml@example.com");
  await s.browser().post("/magic-link", { email: "ml@example.com" });
  const token = s.linkTo("ml@example.com")!;
  for (const forged of ["", "x".repeat(43), token.slice(0, -1) + "A"]) {
    if (forged === token) continue;
    const res = await s.browser().post("/magic-link/callback", {
      token: forged,
    });
    assert.equal(res.status, 400);
    await res.body?.cancel();
  }
  const cross = s.browser();
  const refused = await cross.post(
    "/magic-link/callback",
    { token },
    "cross-site",
  );
  assert.equal(refused.status, 403);
  await refused.body?.cancel();
  assert.ok(!cross.cookies.has("__Host-session"));
  s.advance(MAGIC_LINK_TTL_MS + 1);
  const late = await s.browser().post("/magic-link/callback", { token });
  assert.equal(late.status, 400, "expired after 15 minutes");
  await late.body?.cancel();
  s.close();
});

Deno.test("magic link: an address never proven is proven by the link only with the account's password, or by 'This wasn't me', which removes the registrant's password and sessions", async () => {
  const s = await setup();
  const registrant = await register(s, "victim@example.com");
  await s.browser().post("/magic-link", { email: "victim@example.com" });
  const token = s.linkTo("victim@example.com")!;
  const page = await (await s.browser().send(
    `/magic-link/callback?token=${token}`,
  )).text();
  assert.match(page, /name="password"/);
  assert.match(page, /name="disown" value="1"/);

  // Without the password: 401, nothing consumed, nobody signed in.
  const owner = s.browser();
  const bare = await owner.post("/magic-link/callback", { token });
  assert.equal(bare.status, 401);
  await bare.body?.cancel();
  assert.ok(!owner.cookies.has("__Host-session"));
  assert.equal(
    (await s.credentials.findByEmail("victim@example.com"))!.verifiedAt,
    0,
  );

  // "This wasn't me": the registrant's session and password stop working.
  const disowned = await owner.post("/magic-link/callback", {
    token,
    disown: "1",
  });
  assert.equal(disowned.status, 303);
  assert.ok(owner.cookies.has("__Host-session"));
  const user = (await s.credentials.findByEmail("victim@example.com"))!;
  assert.ok(user.verifiedAt > 0);
  const old = await registrant.send("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal(old.status, 401, "the registrant's session is revoked");
  await old.body?.cancel();
  const relogin = await s.browser().post("/login", {
    email: "victim@example.com",
    password: PASSWORD,
  });
  assert.equal(relogin.status, 401, "the registrant's password is gone");
  await relogin.body?.cancel();
  s.close();
});

Deno.test("magic link: the registrant's own password proves the address and signs in, keeping the password", async () => {
  const s = await setup();
  await register(s, "me@example.com");
  await s.browser().post("/magic-link", { email: "me@example.com" });
  const token = s.linkTo("me@example.com")!;
  const b = s.browser();
  const wrong = await b.post("/magic-link/callback", {
    token,
    password: "not the password",
  });
  assert.equal(wrong.status, 401);
  await wrong.body?.cancel();
  const res = await b.post("/magic-link/callback", {
    token,
    password: PASSWORD,
  });
  assert.equal(res.status, 303);
  assert.ok(b.cookies.has("__Host-session"));
  assert.ok(
    (await s.credentials.findByEmail("me@example.com"))!.verifiedAt > 0,
  );
  const login = await s.browser().post("/login", {
    email: "me@example.com",
    password: PASSWORD,
  });
  assert.equal(login.status, 303, "the password still signs in");
  s.close();
});
