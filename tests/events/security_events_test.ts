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

Deno.test("SecurityEvents.emit() hands every one of the nineteen types to the one hook, with time and user agent", async () => {
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
  ]);
  const req = new Request("http://localhost/", {
    headers: { "user-agent": "Agent/1.0" },
  });
  for (const type of SECURITY_EVENT_TYPES) await events.emit(type, "u1", req);
  await events.emit("login_failed", null);
  assert.equal(seen.length, 20);
  assert.deepEqual(seen[0], {
    type: "registered",
    subject: "u1",
    at: 5_000,
    userAgent: "Agent/1.0",
  });
  assert.deepEqual(seen[19], {
    type: "login_failed",
    subject: null,
    at: 5_019,
    userAgent: null,
  });
  assert.ok(Object.isFrozen(seen[0]));
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
