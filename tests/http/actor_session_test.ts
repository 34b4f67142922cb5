// Sessions held by an actor (impersonation, issue 28; SECURITY.md item 60):
// the token carries the actor under its MAC, the identity reports it, the
// session is never renewed past its end, a re-mint keeps the actor and the
// end and binds no DPoP key, and requirePerson refuses the actor unless a
// route lets it through.
import assert from "node:assert/strict";
import {
  compose,
  currentIdentity,
  identityMiddleware,
  requirePerson,
  signIn,
} from "../../mod.ts";
import { decodePayload, makeManager } from "../session/_helpers.ts";
import { parseSessionPayload } from "../../lib/session/session_payload.ts";

const ORIGIN = "https://app.example";

Deno.test("an actor rides in the token's payload under the MAC and comes back on resolve", async () => {
  const { sessions, clock } = makeManager();
  const held = await sessions.issueSession("alice", {
    actor: "operator_1",
    notAfter: Math.floor(clock.now() / 1000) + 900,
  });
  assert.match(
    decodePayload(held.token),
    /^alice\|[A-Za-z0-9_-]{30}\|\d+\|operator_1$/,
  );
  const id = await sessions.resolve(held.token);
  assert.equal(id?.subject, "alice");
  assert.equal(id?.actor, "operator_1");
  // An ordinary session has no actor and keeps its three parts.
  const own = await sessions.issueSession("alice");
  assert.equal(own.identity.actor, undefined);
  assert.equal(decodePayload(own.token).split("|").length, 3);
  // Tampering with the actor breaks the MAC.
  const parts = held.token.split(".");
  const forged = decodePayload(held.token).replace("operator_1", "operator_2");
  const b64 = btoa(forged).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
  assert.equal(
    await sessions.resolve([parts[0], parts[1], b64, parts[3]].join(".")),
    null,
  );
});

Deno.test("the payload parser takes a fourth field only as a valid actor", () => {
  const enc = new TextEncoder();
  const jti = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  assert.equal(
    parseSessionPayload(enc.encode(`a|${jti}|100|op`))?.actor,
    "op",
  );
  for (
    const bad of [`a|${jti}|100|`, `a|${jti}|100|op|x`, `a|${jti}|100|o\u0001p`]
  ) {
    assert.equal(parseSessionPayload(enc.encode(bad)), null, bad);
  }
  assert.equal(
    parseSessionPayload(enc.encode(`a|${jti}|100|${"x".repeat(256)}`)),
    null,
  );
});

Deno.test("an actor's session is never renewed by sliding renewal, and dies at its time limit", async () => {
  const { sessions, clock } = makeManager({
    lifetimeSeconds: 3600,
    sliding: { renewAfterSeconds: 60, absoluteLifetimeSeconds: 86400 },
  });
  const end = Math.floor(clock.now() / 1000) + 900;
  const held = await sessions.issueSession("alice", {
    actor: "op",
    notAfter: end,
  });
  clock.advance(600);
  assert.equal(await sessions.renew(held.identity), null);
  assert.ok(await sessions.resolve(held.token));
  clock.advance(301);
  assert.equal(await sessions.resolve(held.token), null);
});

Deno.test("a sign-in that re-mints an actor's session (sign out everywhere else) keeps the actor and the end, and never binds a DPoP key", async () => {
  const { sessions, clock } = makeManager();
  const app = compose(
    [identityMiddleware(sessions, { onEvent: () => {} })],
    async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/remint") {
        const s = await signIn(req, currentIdentity(req)!.subject);
        return Response.json({ token: s.token, identity: s.identity });
      }
      if (path === "/password") {
        return requirePerson(req) ?? new Response("changed");
      }
      if (path === "/notes") {
        return requirePerson(req, { allowActor: true }) ??
          new Response("written");
      }
      return Response.json(currentIdentity(req));
    },
  );
  const end = Math.floor(clock.now() / 1000) + 900;
  const held = await sessions.issueSession("alice", {
    actor: "op",
    notAfter: end,
  });
  const res = await app(
    new Request(`${ORIGIN}/remint`, {
      method: "POST",
      headers: { authorization: `Bearer ${held.token}` },
    }),
  );
  const body = await res.json();
  assert.equal(body.identity.actor, "op");
  assert.ok(body.identity.expiresAt <= end);
  assert.equal(body.identity.binding, undefined);
  assert.equal(
    await sessions.resolve(held.token),
    null,
    "the old one is revoked",
  );
  // The gate for a person refuses the actor by default, and lets it through
  // where the route allows.
  const post = (path: string) =>
    app(
      new Request(`${ORIGIN}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${body.token}` },
      }),
    );
  const refused = await post("/password");
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).error, "impersonation_refused");
  assert.equal((await post("/notes")).status, 200);
});

Deno.test("a sign-in of someone else from an actor's session drops the actor", async () => {
  const { sessions } = makeManager();
  const app = compose(
    [identityMiddleware(sessions, { onEvent: () => {} })],
    async (req) => {
      const s = await signIn(req, "bob");
      return Response.json(s.identity);
    },
  );
  const held = await sessions.issueSession("alice", { actor: "op" });
  const res = await app(
    new Request(`${ORIGIN}/login`, {
      method: "POST",
      headers: { authorization: `Bearer ${held.token}` },
    }),
  );
  const identity = await res.json();
  assert.equal(identity.subject, "bob");
  assert.equal(identity.actor, undefined);
});

Deno.test("issueSession refuses an actor a token cannot carry", () => {
  const { sessions } = makeManager();
  assert.throws(() => sessions.issueSession("alice", { actor: "a|b" }));
  assert.throws(() => sessions.issueSession("alice", { actor: "" }));
});
