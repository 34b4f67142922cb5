// Issue 27 finding 4 (SECURITY item 57): a session re-minted in place of a
// presented one ("sign out everywhere else", a password change, a sign-in
// from a signed-in client) never ends later than the one presented. With
// only a copied cookie, repeating "sign out everywhere else" kept a thief
// signed in past the absolute lifetime.
import assert from "node:assert/strict";
import {
  compose,
  currentIdentity,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
  signIn,
} from "../../mod.ts";
import { Clock, SECRET } from "../session/_helpers.ts";

const ORIGIN = "https://app.example";
const DAY = 24 * 3600;

function makeApp(sliding = false) {
  const clock = new Clock(Math.floor(Date.now() / 1000) * 1000);
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(new MemoryKV({ now: clock.now })),
    now: clock.now,
    lifetimeSeconds: 7 * DAY,
    ...(sliding
      ? {
        sliding: { renewAfterSeconds: 3600, absoluteLifetimeSeconds: 30 * DAY },
      }
      : {}),
  });
  const handler = compose(
    [identityMiddleware(sessions, { onEvent: () => {} })],
    async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/login" || path === "/revoke-others") {
        if (path === "/revoke-others") {
          const denied = requireAuthenticated(req);
          if (denied) return denied;
          await sessions.revokeAll(currentIdentity(req)!.subject);
        }
        const s = await signIn(req, "alice");
        return Response.json({ expiresAt: s.expiresAt }, {
          headers: { "set-cookie": s.setCookie! },
        });
      }
      const denied = requireAuthenticated(req);
      return denied ?? new Response("ok");
    },
  );
  return { clock, sessions, handler };
}

function cookieOf(res: Response): string {
  const c = res.headers.getSetCookie().find((c) =>
    c.startsWith("__Host-session=")
  )!;
  return c.split(";")[0].slice("__Host-session=".length);
}

function post(app: ReturnType<typeof makeApp>, path: string, cookie?: string) {
  return app.handler(
    new Request(`${ORIGIN}${path}`, {
      method: "POST",
      headers: {
        "sec-fetch-site": "same-origin",
        ...(cookie ? { cookie: `__Host-session=${cookie}` } : {}),
      },
    }),
  );
}

function me(app: ReturnType<typeof makeApp>, cookie: string) {
  return app.handler(
    new Request(`${ORIGIN}/me`, {
      headers: { cookie: `__Host-session=${cookie}` },
    }),
  );
}

Deno.test("issue 27 finding 4: 'sign out everywhere else' with a copied cookie, repeated, never outlives the first session's end", async () => {
  const app = makeApp();
  const login = await post(app, "/login");
  const end = (await login.json()).expiresAt as number;
  let cookie = cookieOf(login);
  for (let i = 0; i < 3; i++) {
    app.clock.advance(2 * DAY);
    const res = await post(app, "/revoke-others", cookie);
    assert.equal(res.status, 200);
    const { expiresAt } = await res.json();
    assert.ok(expiresAt <= end, `re-minted to ${expiresAt}, after ${end}`);
    cookie = cookieOf(res);
  }
  app.clock.advance(end - app.clock.now() / 1000 + 1);
  const late = await me(app, cookie);
  assert.equal(late.status, 401, "the copy ends with the first session");
  await late.body?.cancel();
});

Deno.test("issue 27 finding 4: with sliding renewal a re-minted session is not renewed past the presented one's end", async () => {
  const app = makeApp(true);
  const login = await post(app, "/login");
  const end = (await login.json()).expiresAt as number;
  app.clock.advance(DAY);
  const res = await post(app, "/revoke-others", cookieOf(login));
  assert.equal(res.status, 200, await res.clone().text());
  const cookie = cookieOf(res);
  assert.ok((await res.json()).expiresAt <= end);
  app.clock.advance(2 * 3600); // past renewAfterSeconds
  const used = await me(app, cookie);
  assert.equal(used.status, 200);
  assert.equal(
    used.headers.getSetCookie().length,
    0,
    "a capped session is never renewed",
  );
  await used.body?.cancel();
});

Deno.test("a sign-in from an anonymous client still gets the full lifetime, and another subject's cookie caps nothing", async () => {
  const app = makeApp();
  const login = await post(app, "/login");
  const { expiresAt } = await login.json();
  assert.equal(expiresAt, Math.floor(app.clock.now() / 1000) + 7 * DAY);
  const bob = await app.sessions.issueSession("bob");
  app.clock.advance(1000);
  const other = await app.handler(
    new Request(`${ORIGIN}/login`, {
      method: "POST",
      headers: {
        "sec-fetch-site": "same-origin",
        cookie: `__Host-session=${bob.token}`,
      },
    }),
  );
  assert.equal(
    (await other.json()).expiresAt,
    Math.floor(app.clock.now() / 1000) + 7 * DAY,
  );
});
