import assert from "node:assert/strict";
import {
  cleanUserAgent,
  eventRetention,
  isFloodable,
  MemorySecurityEventStore,
  SECURITY_EVENT_TYPES,
  type SecurityEvent,
  SecurityEvents,
} from "@portcullis/auth/events";

Deno.test("SecurityEvents.emit() hands every one of the twenty-six types to the one hook, with time and user agent", async () => {
  const seen: SecurityEvent[] = [];
  let t = 5_000;
  const events = new SecurityEvents({
    hook: (e) => void seen.push(e),
    now: () => t++,
  });
  assert.deepEqual([...SECURITY_EVENT_TYPES], [
    "registered",
    "login",
    "login_failed",
    "throttled",
    "logout",
    "password_changed",
    "password_reset",
    "email_changed",
    "verified",
    "credentials_removed",
    "session_revoked",
    "account_deleted",
    "session_bound",
    "session_refreshed",
    "binding_proof_refused",
    "passkey_added",
    "passkey_removed",
    "totp_enabled",
    "totp_disabled",
    "api_key_created",
    "api_key_revoked",
    "account_banned",
    "account_unbanned",
    "impersonation_started",
    "impersonation_ended",
    "operator_acted",
  ]);
  const req = new Request("http://localhost/", {
    headers: { "user-agent": "Agent/1.0" },
  });
  for (const type of SECURITY_EVENT_TYPES) await events.emit(type, "u1", req);
  await events.emit("login_failed", null);
  assert.equal(seen.length, 27);
  assert.deepEqual(seen[0], {
    type: "registered",
    subject: "u1",
    at: 5_000,
    userAgent: "Agent/1.0",
  });
  assert.deepEqual(seen[26], {
    type: "login_failed",
    subject: null,
    at: 5_026,
    userAgent: null,
  });
  assert.ok(Object.isFrozen(seen[0]));
});

Deno.test("SecurityEvents: an event names the operator who acted (given, or read from the request by actorOf) and carries a cleaned note", async () => {
  const seen: SecurityEvent[] = [];
  const acting = new WeakSet<Request>();
  const events = new SecurityEvents({
    hook: (e) => void seen.push(e),
    now: () => 7,
    actorOf: (req) => acting.has(req) ? "op_1" : null,
  });
  const impersonated = new Request("http://localhost/");
  acting.add(impersonated);
  await events.emit("session_revoked", "u1", impersonated);
  await events.emit("login", "u1", new Request("http://localhost/"));
  await events.emit("account_banned", "u1", undefined, {
    actor: "op_2",
    detail: "spam\u0000\nand more " + "x".repeat(300),
  });
  await events.emit("operator_acted", "op_1", impersonated, { actor: null });
  assert.equal(seen[0].actor, "op_1");
  assert.equal("actor" in seen[1], false, "no actor: the owner acted");
  assert.equal(seen[2].actor, "op_2");
  assert.equal(seen[2].detail!.length, 200);
  assert.ok(seen[2].detail!.startsWith("spamand more x"));
  assert.equal("actor" in seen[3], false, "null names nobody");
  // A throwing actorOf names nobody and breaks nothing.
  const broken = new SecurityEvents({
    hook: (e) => void seen.push(e),
    actorOf: () => {
      throw new Error("boom");
    },
  });
  await broken.emit("login", "u1", impersonated);
  assert.equal("actor" in seen[4], false);
});

Deno.test("SecurityEvents: a failing hook is reported (message only) and never throws", async () => {
  const errors: string[] = [];
  const events = new SecurityEvents({
    hook: () => Promise.reject(new Error("db down")),
    onError: (m) => errors.push(m),
  });
  await events.emit("login", "u1");
  assert.equal(errors.length, 1);
  assert.match(errors[0], /login: db down/);
  const sync = new SecurityEvents({
    hook: () => {
      throw new Error("boom");
    },
    onError: (m) => errors.push(m),
  });
  await sync.emit("logout", "u1");
  assert.match(errors[1], /logout: boom/);
});

Deno.test("SecurityEvents: misuse throws clear errors", async () => {
  assert.throws(() => new SecurityEvents({} as never), TypeError);
  const events = new SecurityEvents({ hook: () => {} });
  await assert.rejects(events.emit("hacked" as never, "u1"), TypeError);
});

Deno.test("cleanUserAgent() removes control characters and caps the length", () => {
  assert.equal(cleanUserAgent(null), null);
  assert.equal(cleanUserAgent("  \u0000\r\n "), null);
  assert.equal(cleanUserAgent("A\r\nSet-Cookie: x"), "ASet-Cookie: x");
  assert.equal(cleanUserAgent("x".repeat(1000))!.length, 256);
});

Deno.test("SecurityEvents into a MemorySecurityEventStore: the activity of one user, newest first", async () => {
  const store = new MemorySecurityEventStore();
  let t = 0;
  const events = new SecurityEvents({
    hook: (e) => store.append(e),
    now: () => t,
  });
  await events.emit("registered", "u1");
  t = 10;
  await events.emit("login", "u1");
  await events.emit("logout", "u1");
  await events.emit("login", "u2");
  assert.deepEqual((await store.list("u1")).map((e) => e.type), [
    "logout",
    "login",
    "registered",
  ]);
});

Deno.test("eventRetention() fills in 15 minutes and 1000 rows, and refuses a window or a cap that cannot work", () => {
  assert.deepEqual(eventRetention(), {
    aggregationWindowMs: 15 * 60 * 1000,
    maxPerSubject: 1000,
  });
  assert.deepEqual(
    eventRetention({ aggregationWindowMs: 1, maxPerSubject: 50 }),
    { aggregationWindowMs: 1, maxPerSubject: 50 },
  );
  for (const bad of [0, -1, 1.5, Number.NaN]) {
    assert.throws(
      () => eventRetention({ aggregationWindowMs: bad }),
      RangeError,
    );
  }
  for (const bad of [49, 0, 100.5]) {
    assert.throws(() => eventRetention({ maxPerSubject: bad }), RangeError);
  }
  assert.throws(() => new MemorySecurityEventStore(10), RangeError);
});

Deno.test("only login_failed, throttled and binding_proof_refused are floodable (issue 27 finding 3): every other type is kept whatever a stranger does", () => {
  assert.deepEqual(
    SECURITY_EVENT_TYPES.filter((t) => isFloodable(t)),
    ["login_failed", "throttled", "binding_proof_refused"],
  );
  assert.equal(isFloodable("an unknown type"), false);
});
