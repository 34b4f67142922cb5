// Issue 16 finding 9a: a policy or an `isVerified` check that never settles
// must not hold the request. Each gets the session store's deadline
// (`storeTimeoutMs`); past it `authorize` and `requireVerified` answer 503
// with Retry-After and `allows` denies, never the resource.
import assert from "node:assert/strict";
import {
  allows,
  type AuthEvent,
  authorize,
  compose,
  definePolicy,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  requireVerified,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import { SECRET } from "../session/_helpers.ts";

const DEADLINE_MS = 80;

/** Promises that never settle on their own; released when a test ends. */
function hangs() {
  const waiting: (() => void)[] = [];
  return {
    never<T>(value: T): Promise<T> {
      return new Promise<T>((resolve) => waiting.push(() => resolve(value)));
    },
    release(): void {
      for (const r of waiting.splice(0)) r();
    },
  };
}

async function setup(
  isVerified?: (subject: string) => boolean | Promise<boolean>,
) {
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(new MemoryKV()),
    storeTimeoutMs: DEADLINE_MS,
  });
  const events: AuthEvent[] = [];
  const middleware = identityMiddleware(sessions, {
    isVerified,
    onEvent: (e) => events.push(e),
  });
  const token = await sessions.issue("alice");
  const request = () =>
    new Request("https://app.example/notes/n1", {
      headers: { authorization: `Bearer ${token}` },
    });
  return { middleware, events, request };
}

/** Runs `f` and answers its result with the time it took. */
async function timed<T>(f: () => T | Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const out = await f();
  return [out, performance.now() - started];
}

Deno.test("issue 16 finding 9a: a policy whose can() never settles gets the store deadline: authorize answers 503 with Retry-After, allows denies, the handler never runs", async () => {
  const h = hangs();
  const policy = definePolicy<"view">({ can: () => h.never(true) });
  const { middleware, events, request } = await setup();
  let reached = 0;
  const app = compose([middleware], async (req) => {
    const denied = await authorize(req, policy, "view", "n1");
    if (denied) return denied;
    reached++;
    return new Response("the protected resource");
  });
  const [res, elapsed] = await timed(() => app(request()));
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("retry-after"), "5");
  const body = await res.json();
  assert.equal(body.error, "policy_unavailable");
  assert.equal(reached, 0);
  assert.ok(elapsed >= DEADLINE_MS - 10, `waited for the deadline: ${elapsed}`);
  assert.ok(elapsed < 1500, `did not hang: ${elapsed} ms`);
  assert.ok(
    events.some((e) =>
      e.type === "policy_error" && e.error instanceof Error &&
      /did not answer within 80 ms/.test(e.error.message)
    ),
    "reported through the event hook",
  );

  const asks = compose([middleware], async (req) => {
    const [allowed, took] = await timed(() =>
      allows(req, policy, "view", "n1")
    );
    assert.ok(took < 1500, `allows did not hang: ${took} ms`);
    return new Response(allowed ? "allowed" : "denied");
  });
  assert.equal(await (await asks(request())).text(), "denied");
  h.release();
});

Deno.test("issue 16 finding 9a: a policy whose before() never settles is cut off the same way", async () => {
  const h = hangs();
  const policy = definePolicy<"view">({
    before: () => h.never(null),
    can: () => true,
  });
  const { middleware, request } = await setup();
  const app = compose([middleware], async (req) => {
    const denied = await authorize(req, policy, "view", "n1");
    return denied ?? new Response("the protected resource");
  });
  const [res, elapsed] = await timed(() => app(request()));
  assert.equal(res.status, 503);
  assert.doesNotMatch(await res.text(), /protected resource/);
  assert.ok(elapsed < 1500, `did not hang: ${elapsed} ms`);
  h.release();
});

Deno.test("issue 16 finding 9a: an isVerified that never settles gets the store deadline: requireVerified answers 503, never the resource", async () => {
  const h = hangs();
  const { middleware, events, request } = await setup(() => h.never(true));
  const app = compose([middleware], async (req) => {
    const denied = await requireVerified(req);
    return denied ?? new Response("the protected resource");
  });
  const [res, elapsed] = await timed(() => app(request()));
  assert.equal(res.status, 503);
  assert.ok(res.headers.get("retry-after"));
  assert.doesNotMatch(await res.text(), /protected resource/);
  assert.ok(elapsed >= DEADLINE_MS - 10, `waited for the deadline: ${elapsed}`);
  assert.ok(elapsed < 1500, `did not hang: ${elapsed} ms`);
  assert.ok(
    events.some((e) =>
      e.type === "verification_check_failed" && e.error instanceof Error &&
      /isVerified did not answer within 80 ms/.test(e.error.message)
    ),
  );
  h.release();
});

Deno.test("issue 16 finding 9a: policies and isVerified that answer within the deadline are unchanged, synchronous or not", async () => {
  const slow = <T>(value: T) =>
    new Promise<T>((r) => setTimeout(() => r(value), DEADLINE_MS / 4));
  const policy = definePolicy<"view" | "edit">({
    can: (p, action) => action === "view" ? slow(p !== null) : false,
  });
  for (const isVerified of [() => slow(true), () => true]) {
    const { middleware, request } = await setup(isVerified);
    const app = compose([middleware], async (req) => {
      const view = await authorize(req, policy, "view", "n1");
      const edit = await authorize(req, policy, "edit", "n1");
      const verified = await requireVerified(req);
      return new Response(
        JSON.stringify([view?.status ?? null, edit?.status, verified]),
      );
    });
    assert.deepEqual(await (await app(request())).json(), [null, 403, null]);
  }
});
