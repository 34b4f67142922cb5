/**
 * Tests of the magic-link module, in the generated project as here: the
 * app in-process with the project's modules (`testing.ts`), driven as a
 * browser would, reading the links the mailer logs.
 *
 * @module
 */
import assert from "node:assert/strict";
import { startTestApp } from "../../examples/app/testing.ts";
import { MAGIC_LINK_TTL_MS } from "../../packages/accounts/magic_link/routes.ts";

const PASSWORD = "correct horse battery";

async function setup() {
  const app = await startTestApp();
  /** A browser: keeps its cookies, posts forms from the app's own pages. */
  const browser = () => {
    const cookies = new Map<string, string>();
    const keep = (res: Response) => {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const i = pair.indexOf("=");
        if (/Max-Age=0/i.test(c)) cookies.delete(pair.slice(0, i));
        else cookies.set(pair.slice(0, i), pair.slice(i + 1));
      }
      return res;
    };
    const headers = (site = "same-origin") => ({
      accept: "text/html",
      "sec-fetch-site": site,
      cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
    });
    return {
      cookies,
      get: async (path: string, accept = "text/html") => {
        const a = await app.call("GET", path, undefined, undefined, {
          headers: { ...headers(), accept },
        });
        keep(a.res);
        return a;
      },
      post: async (
        path: string,
        fields: Record<string, string>,
        site = "same-origin",
      ) => {
        // A form from the app's own page; from another site, as JSON (a
        // form post of testing.ts always says same-origin).
        const a = await app.call("POST", path, fields, undefined, {
          form: site === "same-origin",
          headers: headers(site),
        });
        keep(a.res);
        return a;
      },
    };
  };
  /** The token of the newest sign-in link to `email` (mail goes out after the answer). */
  const linkTo = async (email: string, count = 1): Promise<string | null> => {
    const links = () =>
      app.mail.filter((l) =>
        l.includes(`to=${email} `) && l.includes("/magic-link/")
      );
    for (let i = 0; i < 100 && links().length < count; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const link = links().at(-1)?.match(/link=(\S+)/)?.[1];
    return link === undefined ? null : new URL(link).searchParams.get("token");
  };
  return { ...app, browser, linkTo };
}

/** Registers `email` from a browser (its address unproven) and answers it. */
async function register(s: Awaited<ReturnType<typeof setup>>, email: string) {
  const b = s.browser();
  const res = await b.post("/register", { email, password: PASSWORD });
  assert.equal(res.res.status, 303);
  return b;
}

Deno.test("magic link: the login page asks for a link; the mailed link's page consumes nothing; its form signs in once", async () => {
  const s = await setup();
  const { subject } = await s.verifiedUser("ml@example.com", PASSWORD);
  const b = s.browser();
  const login = await b.get("/login");
  assert.match(login.text, /<form method="post" action="\/magic-link">/);

  const asked = await b.post("/magic-link", { email: "ML@example.com" });
  assert.equal(asked.res.status, 303);
  assert.equal(asked.res.headers.get("location"), "/login");
  const token = await s.linkTo("ml@example.com");
  assert.ok(token, "a sign-in link was mailed");

  // A mail scanner fetching the link twice consumes nothing.
  for (let i = 0; i < 2; i++) {
    const page = await s.browser().get(`/magic-link/callback?token=${token}`);
    assert.equal(page.res.status, 200);
    assert.equal(page.res.headers.get("referrer-policy"), "strict-origin");
    assert.equal(page.res.headers.get("set-cookie"), null);
    assert.match(page.text, /action="\/magic-link\/callback"/);
  }
  const signedIn = await b.post("/magic-link/callback", { token });
  assert.equal(signedIn.res.status, 303);
  assert.ok(b.cookies.has("__Host-session"));
  const me = await b.get("/api/me", "application/json");
  assert.equal(me.json.subject, subject);

  const again = await s.browser().post("/magic-link/callback", { token });
  assert.equal(again.res.status, 400, "a link works once");
  s.close();
});

Deno.test("magic link: an unknown address gets the same answer, no mail and no account", async () => {
  const s = await setup();
  await s.verifiedUser("ml@example.com", PASSWORD);
  const known = await s.browser().post("/magic-link", {
    email: "ml@example.com",
  });
  const unknown = await s.browser().post("/magic-link", {
    email: "nobody@example.com",
  });
  assert.equal(known.res.status, unknown.res.status);
  assert.equal(
    known.res.headers.get("location"),
    unknown.res.headers.get("location"),
  );
  assert.ok(await s.linkTo("ml@example.com"));
  assert.ok(!s.mail.some((l) => l.includes("to=nobody@example.com ")));
  assert.equal(await s.credentials.findByEmail("nobody@example.com"), null);
  const invalid = await s.browser().post("/magic-link", { email: "not mail" });
  assert.equal(invalid.res.status, 422);
  s.close();
});

Deno.test("magic link: forged, expired and cross-site: 400 or 403, and nothing changes", async () => {
  const s = await setup();
  await s.verifiedUser("ml@example.com", PASSWORD);
  await s.browser().post("/magic-link", { email: "ml@example.com" });
  const token = (await s.linkTo("ml@example.com"))!;
  for (const forged of ["", "x".repeat(43), `${token}x`]) {
    const res = await s.browser().post("/magic-link/callback", {
      token: forged,
    });
    assert.equal(res.res.status, 400);
  }
  const cross = s.browser();
  const refused = await cross.post(
    "/magic-link/callback",
    { token },
    "cross-site",
  );
  assert.equal(refused.res.status, 403);
  assert.ok(!cross.cookies.has("__Host-session"));
  s.advance(MAGIC_LINK_TTL_MS + 1000);
  const late = await s.browser().post("/magic-link/callback", { token });
  assert.equal(late.res.status, 400, "expired after 15 minutes");
  s.close();
});

Deno.test("magic link: an address never proven is proven by the link only with the account's password, or by 'This wasn't me', which removes the registrant's password and sessions", async () => {
  const s = await setup();
  const registrant = await register(s, "victim@example.com");
  await s.browser().post("/magic-link", { email: "victim@example.com" });
  const token = (await s.linkTo("victim@example.com"))!;
  const page = await s.browser().get(`/magic-link/callback?token=${token}`);
  assert.match(page.text, /name="password"/);
  assert.match(page.text, /name="disown" value="1"/);

  // Without the password: 401, nothing consumed, nobody signed in.
  const owner = s.browser();
  const bare = await owner.post("/magic-link/callback", { token });
  assert.equal(bare.res.status, 401);
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
  assert.equal(disowned.res.status, 303);
  assert.ok(owner.cookies.has("__Host-session"));
  const user = (await s.credentials.findByEmail("victim@example.com"))!;
  assert.ok(user.verifiedAt > 0);
  const old = await registrant.get("/api/me", "application/json");
  assert.equal(old.res.status, 401, "the registrant's session is revoked");
  const relogin = await s.browser().post("/login", {
    email: "victim@example.com",
    password: PASSWORD,
  });
  assert.equal(relogin.res.status, 401, "the registrant's password is gone");
  s.close();
});

Deno.test("magic link: the registrant's own password proves the address and signs in, keeping the password", async () => {
  const s = await setup();
  await register(s, "me@example.com");
  await s.browser().post("/magic-link", { email: "me@example.com" });
  const token = (await s.linkTo("me@example.com"))!;
  const b = s.browser();
  const wrong = await b.post("/magic-link/callback", {
    token,
    password: "not the password",
  });
  assert.equal(wrong.res.status, 401);
  const res = await b.post("/magic-link/callback", {
    token,
    password: PASSWORD,
  });
  assert.equal(res.res.status, 303);
  assert.ok(b.cookies.has("__Host-session"));
  assert.ok(
    (await s.credentials.findByEmail("me@example.com"))!.verifiedAt > 0,
  );
  const login = await s.browser().post("/login", {
    email: "me@example.com",
    password: PASSWORD,
  });
  assert.equal(login.res.status, 303, "the password still signs in");
  s.close();
});

Deno.test("magic link: MAGIC_LINK=off or SIGN_IN_METHODS=off (or 0, false, no in any case): no form on /login, its routes answer 404", async () => {
  for (
    const env of [
      { MAGIC_LINK: "off" },
      { SIGN_IN_METHODS: "off" },
      { MAGIC_LINK: "0" },
      { MAGIC_LINK: " False " },
      { SIGN_IN_METHODS: "NO" },
    ]
  ) {
    const s = await startTestApp(env);
    const login = await s.call("GET", "/login", undefined, undefined, {
      headers: { accept: "text/html" },
    });
    assert.doesNotMatch(login.text, /action="\/magic-link"/);
    const asked = await s.call("POST", "/magic-link", { email: "a@b.example" });
    assert.equal(asked.res.status, 404);
    const page = await s.call("GET", "/magic-link/callback?token=x");
    assert.equal(page.res.status, 404);
    s.close();
  }
});

Deno.test("magic link: MAGIC_LINK or SIGN_IN_METHODS neither yes nor no stops the start, naming the setting", async () => {
  await assert.rejects(
    startTestApp({ MAGIC_LINK: "of" }),
    /^TypeError: MAGIC_LINK must be one of 1, true, yes, on \(yes\) or 0, false, no, off \(no\), in any case: received "of"$/,
  );
  await assert.rejects(
    startTestApp({ SIGN_IN_METHODS: "none" }),
    /SIGN_IN_METHODS must be one of/,
  );
  // On stays on, in any spelling of yes.
  const s = await startTestApp({ MAGIC_LINK: "Yes", SIGN_IN_METHODS: "1" });
  const login = await s.call("GET", "/login", undefined, undefined, {
    headers: { accept: "text/html" },
  });
  assert.match(login.text, /action="\/magic-link"/);
  s.close();
});
