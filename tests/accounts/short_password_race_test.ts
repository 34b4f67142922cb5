/**
 * A password change to one that needs a second factor (8 characters, NIST
 * SP 800-63B-4) racing the removal of the account's last passkey (outside
 * tester's LOW finding 5 against the passkeys): however the two interleave,
 * the account never ends with a short password and no second factor. In
 * one process a per-account critical section orders them; across processes
 * (two apps over one database, each with its own section) each re-reads
 * after its write and undoes itself when it lost. TOTP turned off takes
 * the same section in one process.
 *
 * @module
 */
import assert from "node:assert/strict";
// deno-lint-ignore no-import-prefix -- as examples/app/testing.ts names it
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
import { modules } from "../../examples/app/modules.ts";
import { views } from "../../examples/app/views/mod.ts";
import { Secret, TOTP } from "otpauth";
import { SoftAuthenticator } from "../support/soft_authenticator.ts";

const ORIGIN = "http://localhost:8000";
const LONG = "correct horse battery staple";
const SHORT = "Qx7vmP2z"; // 8 characters: allowed only with a second factor

type Fetch = (req: Request) => Promise<Response>;

/** `processes` apps over one database and one key-value store. */
async function apps(
  processes: number,
  env: Record<string, string> = {},
) {
  const client = createClient({ url: ":memory:" });
  const db = drizzle(client);
  await migrate(db);
  const kv = new MemoryKV();
  const secret = SecretProvider.fromValue(
    crypto.getRandomValues(new Uint8Array(32)),
  );
  const credentials = new SQLCredentialStore(db);
  const fetches: Fetch[] = Array.from({ length: processes }, () =>
    accounts({
      sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
      secret,
      db,
      credentials,
      kv,
      mailer: new LogMailer(() => {}),
      appOrigin: ORIGIN,
      hasher: new Pbkdf2Hasher({ iterations: 1000 }),
      log: () => {},
      modules: modules({ PASSKEYS: "on", ...env }),
      views,
    }).fetch);
  return { fetches, credentials, close: () => client.close() };
}

async function call(
  fetch: Fetch,
  path: string,
  body: unknown,
  token?: string,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers = new Headers({
    accept: "application/json",
    "content-type": "application/json",
  });
  if (token) headers.set("authorization", `Bearer ${token}`);
  const res = await fetch(
    new Request(ORIGIN + path, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    }),
  );
  const text = await res.text();
  return { status: res.status, json: text === "" ? {} : JSON.parse(text) };
}

/** An account with the long password and one passkey; its token and id. */
async function accountWithPasskey(
  fetch: Fetch,
  credentials: SQLCredentialStore,
  email: string,
): Promise<{ token: string; passkey: string }> {
  const made = await call(fetch, "/register", { email, password: LONG });
  assert.equal(made.status, 201, JSON.stringify(made.json));
  const token = made.json.token as string;
  await credentials.markVerified(
    made.json.subject as string,
    email,
    Date.now(),
  );
  const options = await call(fetch, "/passkeys/register/options", {
    password: LONG,
  }, token);
  const added = await call(fetch, "/passkeys/register", {
    response: await new SoftAuthenticator(ORIGIN).create(
      options.json as never,
    ),
    name: "Laptop",
  }, token);
  assert.equal(added.status, 201, JSON.stringify(added.json));
  return { token, passkey: added.json.id as string };
}

/** Races the two changes, then checks what the account is left with. */
async function race(
  change: Fetch,
  remove: Fetch,
  credentials: SQLCredentialStore,
  email: string,
): Promise<void> {
  const { token, passkey } = await accountWithPasskey(
    change,
    credentials,
    email,
  );
  const [changed, removed] = await Promise.all([
    call(change, "/account/password", {
      currentPassword: LONG,
      newPassword: SHORT,
    }, token),
    call(remove, "/account/passkeys/delete", {
      id: passkey,
      password: LONG,
    }, token),
  ]);
  // What the account holds now: which password signs in, and whether the
  // passkey is still there.
  const short = await call(change, "/login", { email, password: SHORT });
  const long = await call(change, "/login", { email, password: LONG });
  const session = (short.status === 200 ? short : long).json.token as string;
  assert.ok(session, `${email}: some password still signs in`);
  const stillThere = await call(change, "/account/passkeys/rename", {
    id: passkey,
    name: "Still here",
  }, session);
  const hasPasskey = stillThere.status === 204;
  assert.ok(
    !(short.status === 200 && !hasPasskey),
    `${email}: an 8-character password and no second factor (change ${changed.status}, removal ${removed.status})`,
  );
  // Each answer says what happened.
  assert.equal(
    changed.status === 200 || changed.status === 303,
    short.status === 200,
    `${email}: the change's answer (${changed.status}) matches the password`,
  );
  assert.equal(
    removed.status === 204,
    !hasPasskey,
    `${email}: the removal's answer (${removed.status}) matches the passkey`,
  );
}

Deno.test("in one process, a change to an 8-character password racing the removal of the last passkey never leaves a short password alone", async () => {
  const { fetches: [app], credentials, close } = await apps(1);
  for (let i = 0; i < 6; i++) {
    await race(app, app, credentials, `one${i}@example.com`);
  }
  close();
});

Deno.test("across two processes over one database, the same race never leaves a short password alone", async () => {
  const { fetches: [a, b], credentials, close } = await apps(2);
  for (let i = 0; i < 6; i++) {
    await race(a, b, credentials, `two${i}@example.com`);
  }
  close();
});

Deno.test("in one process, a change to an 8-character password racing TOTP turned off never leaves a short password alone", async () => {
  const { fetches: [app], credentials, close } = await apps(1, {
    TOTP: "on",
  });
  for (let i = 0; i < 6; i++) {
    const email = `totp${i}@example.com`;
    const made = await call(app, "/register", { email, password: LONG });
    const token = made.json.token as string;
    await credentials.markVerified(
      made.json.subject as string,
      email,
      Date.now(),
    );
    const start = await call(app, "/account/totp", { password: LONG }, token);
    assert.equal(start.status, 200, JSON.stringify(start.json));
    const totp = new TOTP({
      secret: Secret.fromBase32(start.json.secret as string),
    });
    const on = await call(app, "/account/totp/confirm", {
      code: totp.generate({ timestamp: Date.now() }),
    }, token);
    assert.equal(on.status, 200, JSON.stringify(on.json));
    const [changed, off] = await Promise.all([
      call(app, "/account/password", {
        currentPassword: LONG,
        newPassword: SHORT,
      }, token),
      call(app, "/account/totp/disable", {
        password: LONG,
        code: totp.generate({ timestamp: Date.now() + 30_000 }),
      }, token),
    ]);
    // With TOTP on, a right password answers 202 (the second step); 200
    // is a password that is the only factor.
    const short = await call(app, "/login", { email, password: SHORT });
    assert.notEqual(
      short.status,
      200,
      `${email}: an 8-character password and no second factor (change ${changed.status}, TOTP off ${off.status})`,
    );
  }
  close();
});

Deno.test("two removals of an account's two passkeys at once, in one process or across two, never leave its 8-character password alone", async () => {
  for (const processes of [1, 2]) {
    const { fetches, credentials, close } = await apps(processes);
    const [a, b] = [fetches[0], fetches[processes - 1]];
    for (let i = 0; i < 9; i++) {
      const email = `pair${processes}-${i}@example.com`;
      const { token, passkey: first } = await accountWithPasskey(
        a,
        credentials,
        email,
      );
      const options = await call(a, "/passkeys/register/options", {
        password: LONG,
      }, token);
      const second = await call(a, "/passkeys/register", {
        response: await new SoftAuthenticator(ORIGIN).create(
          options.json as never,
        ),
        name: "Phone",
      }, token);
      assert.equal(second.status, 201);
      const changed = await call(a, "/account/password", {
        currentPassword: LONG,
        newPassword: SHORT,
      }, token);
      assert.equal(changed.status, 200, JSON.stringify(changed.json));
      const session = changed.json.token as string;
      const answers = await Promise.all([
        call(a, "/account/passkeys/delete", {
          id: first,
          password: SHORT,
        }, session),
        call(b, "/account/passkeys/delete", {
          id: second.json.id,
          password: SHORT,
        }, session),
      ]);
      const left = await Promise.all(
        [first, second.json.id as string].map(async (id) =>
          (await call(a, "/account/passkeys/rename", {
            id,
            name: "Still here",
          }, session)).status === 204
        ),
      );
      assert.ok(
        left.some(Boolean),
        `${email} (${processes}): both passkeys gone with an 8-character password (${
          answers.map((r) => r.status)
        })`,
      );
      assert.equal(
        answers.filter((r) => r.status === 204).length,
        left.filter((l) => !l).length,
        `${email}: the answers say what was removed`,
      );
    }
    close();
  }
});
