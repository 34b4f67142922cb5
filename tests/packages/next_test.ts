// @portcullis/next without Next: the edge gate and the Node-side helpers
// driven with real Requests and a `headers` function like next/headers'.
// (tests/frameworks/nextjs_test.ts runs them inside a real Next build.)
import assert from "node:assert/strict";
import {
  currentUser,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  requireAuth,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import {
  CrossOriginActionError,
  edgeGate,
  nextAuth,
} from "../../packages/next/mod.ts";

const ORIGIN = "https://app.example";
const secret = SecretProvider.fromValue(
  crypto.getRandomValues(new Uint8Array(32)),
);
const quiet = { onEvent: () => {}, crossOrigin: { appOrigin: ORIGIN } };

function setup() {
  const sessions = new SessionManager({
    secret,
    store: new KVSessionStore(new MemoryKV()),
  });
  const stateless = new SessionManager({ secret, store: null });
  const gate = edgeGate(identityMiddleware(stateless, quiet), {
    protect: ["/dashboard", "/api/notes/"],
  });
  const pass = () => new Response("passed", { headers: { "x-pass": "1" } });
  return { sessions, gate, pass };
}

Deno.test("edgeGate: a browser without a session is sent to an absolute /login URL; an API client gets 401", async () => {
  const { gate, pass } = setup();
  const page = await gate(
    new Request(`${ORIGIN}/dashboard/notes`, {
      headers: { accept: "text/html" },
    }),
    pass,
  );
  assert.equal(page.status, 303);
  assert.equal(
    page.headers.get("location"),
    `${ORIGIN}/login?next=%2Fdashboard%2Fnotes`,
  );
  const api = await gate(new Request(`${ORIGIN}/api/notes`), pass);
  assert.equal(api.status, 401);
});

Deno.test("edgeGate: a prefix covers its subpaths only, and open paths pass", async () => {
  const { gate, pass } = setup();
  for (const path of ["/", "/dashboards", "/login", "/api/notesx"]) {
    const res = await gate(new Request(`${ORIGIN}${path}`), pass);
    assert.equal(res.headers.get("x-pass"), "1", path);
  }
});

Deno.test("edgeGate: a signed session passes, a revoked one too (no store at the edge), a forged one does not", async () => {
  const { gate, pass, sessions } = setup();
  const token = await sessions.issue("user_1");
  const bearer = (t: string) =>
    new Request(`${ORIGIN}/dashboard`, {
      headers: { authorization: `Bearer ${t}` },
    });
  assert.equal((await gate(bearer(token), pass)).headers.get("x-pass"), "1");
  await sessions.revoke(token);
  assert.equal((await gate(bearer(token), pass)).headers.get("x-pass"), "1");
  assert.equal((await gate(bearer(`${token}x`), pass)).status, 401);
});

Deno.test("edgeGate: an unsafe cross-site request is 403 on an open path too", async () => {
  const { gate, pass } = setup();
  const res = await gate(
    new Request(`${ORIGIN}/api/login`, {
      method: "POST",
      headers: {
        "sec-fetch-site": "cross-site",
        origin: "https://evil.example",
      },
    }),
    pass,
  );
  assert.equal(res.status, 403);
});

Deno.test("edgeGate: a protected path must start with /", () => {
  const stateless = new SessionManager({ secret, store: null });
  assert.throws(
    () => edgeGate(identityMiddleware(stateless), { protect: ["dashboard"] }),
    TypeError,
  );
});

Deno.test("nextAuth: identity() reads the cookie from headers() and sees a revocation", async () => {
  const { sessions } = setup();
  const token = await sessions.issue("user_1");
  let incoming = new Headers({ cookie: `__Host-session=${token}` });
  const auth = nextAuth(identityMiddleware(sessions, quiet), {
    headers: () => Promise.resolve(incoming),
    appOrigin: ORIGIN,
  });
  assert.equal((await auth.identity())?.subject, "user_1");
  await sessions.revoke(token);
  assert.equal(await auth.identity(), null);
  incoming = new Headers();
  assert.equal(await auth.identity(), null);
});

Deno.test("nextAuth: action() refuses a cross-origin post and answers the identity of a same-origin one", async () => {
  const { sessions } = setup();
  const token = await sessions.issue("user_2");
  let incoming = new Headers({
    cookie: `__Host-session=${token}`,
    origin: "https://evil.example",
    "sec-fetch-site": "cross-site",
  });
  const auth = nextAuth(identityMiddleware(sessions, quiet), {
    headers: () => incoming,
    appOrigin: ORIGIN,
  });
  await assert.rejects(() => auth.action(), CrossOriginActionError);
  // A component render (GET) from a cross-site link is fine.
  assert.equal((await auth.identity())?.subject, "user_2");
  incoming = new Headers({
    cookie: `__Host-session=${token}`,
    origin: ORIGIN,
    "sec-fetch-site": "same-origin",
  });
  assert.equal((await auth.action())?.subject, "user_2");
});

Deno.test("nextAuth: route() runs identity and the gates, and passes Next's context on", async () => {
  const { sessions } = setup();
  const auth = nextAuth(identityMiddleware(sessions, quiet), {
    headers: () => new Headers(),
    appOrigin: ORIGIN,
  });
  const GET = auth.route(
    async (req: Request, ctx: { params: Promise<{ id: string }> }) =>
      Response.json({ user: currentUser(req), id: (await ctx.params).id }),
    requireAuth(),
  );
  const params = Promise.resolve({ id: "n1" });
  assert.equal((await GET(new Request(`${ORIGIN}/x`), { params })).status, 401);
  const token = await sessions.issue("user_3");
  const ok = await GET(
    new Request(`${ORIGIN}/x`, {
      headers: { authorization: `Bearer ${token}` },
    }),
    { params },
  );
  assert.deepEqual(await ok.json(), { user: "user_3", id: "n1" });
  const POST = auth.route(() => new Response("written"));
  const forged = await POST(
    new Request(`${ORIGIN}/x`, {
      method: "POST",
      headers: { "sec-fetch-site": "cross-site" },
    }),
    {},
  );
  assert.equal(forged.status, 403);
});

Deno.test("nextAuth: appOrigin must be an origin", () => {
  const { sessions } = setup();
  for (const appOrigin of ["app.example", "https://app.example/path"]) {
    assert.throws(
      () =>
        nextAuth(identityMiddleware(sessions), {
          headers: () => new Headers(),
          appOrigin,
        }),
      TypeError,
      appOrigin,
    );
  }
});
