// API keys through identityMiddleware (issue 28; SECURITY.md item 61): a
// key resolves to an identity that says it is a key and carries its
// scopes; a policy gate refuses what the scopes leave out even when the
// owner could; requirePerson refuses a key outright; a key never falls back
// to the session path, and a session token never to the key path.
import assert from "node:assert/strict";
import {
  allows,
  authorize,
  compose,
  currentIdentity,
  definePolicy,
  identityMiddleware,
  requireAuthenticated,
  requirePerson,
} from "../../mod.ts";
import {
  ApiKeys,
  type ApiKeyStore,
  mintApiKey,
  type StoredApiKey,
} from "../../lib/session/mod.ts";
import { evaluatePolicy, principal } from "../../lib/authz/mod.ts";
import { makeManager } from "../session/_helpers.ts";

const ORIGIN = "https://app.example";

function setup(store?: ApiKeyStore) {
  const { sessions, clock } = makeManager();
  const rows = new Map<string, StoredApiKey>();
  const keys = new ApiKeys({
    store: store ??
      { findApiKey: (id) => Promise.resolve(rows.get(id) ?? null) },
    now: clock.now,
  });
  const notes = definePolicy<"view" | "edit">({
    // The owner may do anything: only the scopes hold a key back.
    can: (who) => who?.id === "alice",
  });
  const seen: unknown[] = [];
  const app = compose(
    [identityMiddleware(sessions, { apiKeys: keys, onEvent: () => {} })],
    async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/me") {
        return requireAuthenticated(req) ??
          Response.json(currentIdentity(req));
      }
      if (path === "/edit") {
        return await authorize(req, notes, "edit", "n1") ??
          new Response("edited");
      }
      if (path === "/view") {
        return await authorize(req, notes, "view", "n1") ??
          new Response("viewed");
      }
      if (path === "/allows") {
        return Response.json(await allows(req, notes, "edit", "n1"));
      }
      if (path === "/password") {
        return requirePerson(req) ?? new Response("password changed");
      }
      return new Response("ok");
    },
  );
  async function key(scopes: string[], subject = "alice") {
    const minted = await keys.mint();
    rows.set(minted.id, {
      subject,
      hash: minted.hash,
      scopes,
      createdAt: clock.now(),
      expiresAt: clock.now() + 86_400_000,
      lastUsedAt: 0,
    });
    return minted;
  }
  const get = (path: string, auth?: string, init: RequestInit = {}) =>
    app(
      new Request(ORIGIN + path, {
        ...init,
        headers: {
          ...(auth ? { authorization: `Bearer ${auth}` } : {}),
          ...init.headers as Record<string, string>,
        },
      }),
    );
  return { app, sessions, keys, rows, key, get, notes, seen };
}

Deno.test("a key resolves to its owner's identity that says it is a key, with its scopes", async () => {
  const { key, get } = setup();
  const k = await key(["view"]);
  const res = await get("/me", k.key);
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.subject, "alice");
  assert.deepEqual(body.apiKey, { id: k.id, scopes: ["view"] });
});

Deno.test("a key used beyond its scopes is refused by the policy gate even where its owner is allowed", async () => {
  const { key, get, sessions } = setup();
  const k = await key(["view"]);
  assert.equal((await get("/view", k.key)).status, 200);
  const refused = await get("/edit", k.key, { method: "POST" });
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).error, "forbidden");
  assert.equal(await (await get("/allows", k.key)).json(), false);
  // The owner in person may edit.
  const token = await sessions.issue("alice");
  assert.equal((await get("/edit", token, { method: "POST" })).status, 200);
  // A key with the scope may edit.
  const editor = await key(["view", "edit"]);
  assert.equal(
    (await get("/edit", editor.key, { method: "POST" })).status,
    200,
  );
  // A key with no scopes does nothing a policy guards.
  const none = await key([]);
  assert.equal((await get("/view", none.key)).status, 403);
});

Deno.test("a policy sees the scopes and the actor through the principal; evaluatePolicy denies outside the scopes", async () => {
  const seen: unknown[] = [];
  const p = definePolicy<"view" | "edit">({
    can: (who) => {
      seen.push(who?.scopes);
      return true;
    },
  });
  assert.equal(
    await evaluatePolicy(p, principal("a", { scopes: ["view"] }), "view", "x"),
    true,
  );
  assert.equal(
    await evaluatePolicy(p, principal("a", { scopes: ["view"] }), "edit", "x"),
    false,
  );
  assert.deepEqual(seen, [["view"]]);
  assert.equal(principal("a", { actor: "op" }).actor, "op");
  assert.equal(principal("a").scopes, undefined);
});

Deno.test("requirePerson refuses a key on a credential route, whatever its scopes, and lets a session through", async () => {
  const { key, get, sessions } = setup();
  const k = await key(["view", "edit", "password"]);
  const refused = await get("/password", k.key, { method: "POST" });
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).error, "api_key_refused");
  const token = await sessions.issue("alice");
  assert.equal(
    (await get("/password", token, { method: "POST" })).status,
    200,
  );
  assert.equal((await get("/password")).status, 401);
});

Deno.test("a forged, unknown or revoked key is 401 invalid_token, and a key never passes as a session or a session as a key", async () => {
  const { key, get, rows, sessions } = setup();
  const unknown = (await mintApiKey()).key;
  const res = await get("/me", unknown);
  assert.equal(res.status, 401);
  assert.match(res.headers.get("www-authenticate")!, /invalid_token/);
  const k = await key(["view"]);
  rows.delete(k.id);
  assert.equal((await get("/me", k.key)).status, 401);
  // A key of another prefix is not claimed by the keys and is no session.
  const other = (await mintApiKey("gh")).key;
  assert.equal((await get("/me", other)).status, 401);
  // A session token is never looked up as a key.
  const token = await sessions.issue("alice");
  const me = await (await get("/me", token)).json();
  assert.equal(me.apiKey, undefined);
  // A key in the cookie is no credential at all.
  const live = await key(["view"]);
  const cookie = await get("/me", undefined, {
    headers: { cookie: `__Host-session=${live.key}` },
  });
  assert.equal(cookie.status, 401);
});

Deno.test("a key needs no cross-origin check (a Bearer credential), and a key store outage answers 503, never the resource", async () => {
  const { key, get } = setup();
  const k = await key(["edit"]);
  const cross = await get("/edit", k.key, {
    method: "POST",
    headers: { "sec-fetch-site": "cross-site" },
  });
  assert.equal(cross.status, 200);
  const down = setup({ findApiKey: () => Promise.reject(new Error("down")) });
  const minted = await mintApiKey();
  const res = await down.get("/me", minted.key);
  assert.equal(res.status, 503);
  assert.equal((await down.get("/view", minted.key)).status, 503);
});
