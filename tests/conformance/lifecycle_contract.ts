/**
 * The account lifecycle's rows of the HTTP contract (password reset, email
 * change, my sessions, activity, deletion), run by `contract.ts` against
 * every runtime's entry.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { MailSink } from "./mail_sink.ts";

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // deno-lint-ignore no-explicit-any
  json: () => any;
}

/** What the lifecycle rows borrow from the contract's run. */
export interface LifecycleContext {
  /** Sends one request (see `contract.ts`). */
  call: (
    method: string,
    path: string,
    o?: {
      json?: unknown;
      form?: Record<string, string>;
      bearer?: string;
      cookie?: string;
      headers?: Record<string, string>;
      sameOrigin?: boolean;
    },
  ) => Promise<Reply>;
  /** Runs and tallies one check. */
  check: (name: string, fn: () => Promise<void>) => Promise<void>;
  /** A fresh address of this run. */
  email: (who: string) => string;
  /** The mail sink. */
  mail: MailSink;
  /** The password the contract registers with. */
  password: string;
}

function tokenOf(link: string): string {
  return new URL(link).searchParams.get("token") ?? "";
}

/**
 * Runs the lifecycle rows.
 *
 * @param c The contract's helpers.
 */
export async function runLifecycleContract(c: LifecycleContext): Promise<void> {
  const { call, check, mail } = c;
  const carol = { email: c.email("carol"), token: "", other: "" };
  const NEW = "a different passphrase 4 carol";

  await check("lifecycle: POST /register for carol answers 201", async () => {
    const r = await call("POST", "/register", {
      json: { email: carol.email, password: c.password },
    });
    assert.equal(r.status, 201, r.text);
    carol.token = r.json().token;
  });

  await check(
    "POST /password/forgot answers 202 {} for a registered and an unknown address alike, and mails a reset link",
    async () => {
      for (const e of [carol.email, c.email("nobody")]) {
        const r = await call("POST", "/password/forgot", {
          json: { email: e },
        });
        assert.equal(r.status, 202, r.text);
        assert.deepEqual(r.json(), {});
      }
      const link = await mail.link(carol.email, 2);
      assert.match(link, /\/password\/reset\?token=[A-Za-z0-9_-]{43}$/);
    },
  );

  await check(
    "GET /password/reset shows the form (strict-origin) without consuming; POST with a weak password 422, then 200 {}; old sessions 401",
    async () => {
      const link = await mail.link(carol.email, 2);
      const u = new URL(link);
      const page = await call("GET", u.pathname + u.search);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.headers.get("referrer-policy"), "strict-origin");
      const weak = await call("POST", "/password/reset", {
        json: { token: tokenOf(link), password: "short" },
      });
      assert.equal(weak.status, 422, weak.text);
      const ok = await call("POST", "/password/reset", {
        json: { token: tokenOf(link), password: NEW },
      });
      assert.equal(ok.status, 200, ok.text);
      const me = await call("GET", "/api/me", { bearer: carol.token });
      assert.equal(me.status, 401, "every session was revoked");
      const again = await call("POST", "/password/reset", {
        json: { token: tokenOf(link), password: NEW },
      });
      assert.equal(again.status, 400);
    },
  );

  await check(
    "after a reset the new password logs in (200) and GET /api/sessions lists the live sessions, current marked",
    async () => {
      const a = await call("POST", "/login", {
        json: { email: carol.email, password: NEW },
      });
      assert.equal(a.status, 200, a.text);
      const b = await call("POST", "/login", {
        json: { email: carol.email, password: NEW },
      });
      carol.token = a.json().token;
      carol.other = b.json().token;
      const r = await call("GET", "/api/sessions", { bearer: carol.token });
      assert.equal(r.status, 200, r.text);
      const sessions = r.json().sessions as { current: boolean }[];
      assert.equal(sessions.length, 2);
      assert.equal(sessions.filter((s) => s.current).length, 1);
    },
  );

  await check(
    "DELETE /api/sessions/:id answers 204 and that token 401; an unknown id 404",
    async () => {
      const list = (await call("GET", "/api/sessions", { bearer: carol.token }))
        .json().sessions as { id: string; current: boolean }[];
      const other = list.find((s) => !s.current)!;
      const r = await call("DELETE", `/api/sessions/${other.id}`, {
        bearer: carol.token,
      });
      assert.equal(r.status, 204, r.text);
      const me = await call("GET", "/api/me", { bearer: carol.other });
      assert.equal(me.status, 401);
      const unknown = await call("DELETE", `/api/sessions/${"x".repeat(30)}`, {
        bearer: carol.token,
      });
      assert.equal(unknown.status, 404);
    },
  );

  await check(
    "GET /api/activity answers the user's events, newest first",
    async () => {
      const r = await call("GET", "/api/activity", { bearer: carol.token });
      assert.equal(r.status, 200, r.text);
      const types = (r.json().events as { type: string }[]).map((e) => e.type);
      assert.equal(types[0], "session_revoked");
      for (const t of ["login", "password_reset", "registered"]) {
        assert.ok(types.includes(t), t);
      }
    },
  );

  const newEmail = c.email("carol-new");
  await check(
    "POST /account/email: wrong password 401; 202 {} mails the new address; POST /account/email/confirm changes it (200)",
    async () => {
      const wrong = await call("POST", "/account/email", {
        bearer: carol.token,
        json: { password: "not it at all", email: newEmail },
      });
      assert.equal(wrong.status, 401, wrong.text);
      const r = await call("POST", "/account/email", {
        bearer: carol.token,
        json: { password: NEW, email: newEmail },
      });
      assert.equal(r.status, 202, r.text);
      const link = await mail.link(newEmail, 1);
      assert.match(link, /\/account\/email\/confirm\?token=/);
      // Outside the account's session the link needs the account's password.
      const alone = await call("POST", "/account/email/confirm", {
        json: { token: tokenOf(link) },
      });
      assert.equal(alone.status, 401, alone.text);
      const ok = await call("POST", "/account/email/confirm", {
        json: { token: tokenOf(link), password: NEW },
      });
      assert.equal(ok.status, 200, ok.text);
      const me = await call("GET", "/api/me", { bearer: carol.token });
      assert.equal(me.json().email, newEmail);
      assert.equal(me.json().verified, true);
    },
  );

  await check(
    "POST /account/delete answers 204; the token 401; the address registers again (201)",
    async () => {
      const r = await call("POST", "/account/delete", {
        bearer: carol.token,
        json: { password: NEW },
      });
      assert.equal(r.status, 204, r.text);
      const me = await call("GET", "/api/me", { bearer: carol.token });
      assert.equal(me.status, 401);
      const again = await call("POST", "/register", {
        json: { email: newEmail, password: c.password },
      });
      assert.equal(again.status, 201, again.text);
    },
  );

  await check(
    "issue 27 finding 4: POST /account/sessions/revoke-others never gives the new session a later end than the one presented",
    async () => {
      const dave = c.email("dave");
      const reg = await call("POST", "/register", {
        json: { email: dave, password: c.password },
      });
      assert.equal(reg.status, 201, reg.text);
      const first = await call("POST", "/login", {
        json: { email: dave, password: c.password },
      });
      assert.equal(first.status, 200, first.text);
      const end = first.json().expiresAt as number;
      let token = first.json().token as string;
      // A second later a re-minted session would otherwise end a second
      // later; twice, so that the copy's end cannot creep forward.
      for (let i = 0; i < 2; i++) {
        await new Promise((r) => setTimeout(r, 1100));
        const r = await call("POST", "/account/sessions/revoke-others", {
          bearer: token,
        });
        assert.equal(r.status, 200, r.text);
        assert.ok(
          r.json().expiresAt <= end,
          `re-minted to ${r.json().expiresAt}, after ${end}`,
        );
        token = r.json().token;
      }
      const me = await call("GET", "/api/me", { bearer: token });
      assert.equal(me.status, 200, me.text);
    },
  );
}
