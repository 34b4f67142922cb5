// docs/getting_started.md runs as written: its TypeScript blocks, joined in
// order, are one app.ts, started with the page's own import map (pointed at
// this checkout) in a process of its own, and driven over HTTP through every
// step the page promises. The map itself must name every export of the core.
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);
const page = await Deno.readTextFile(
  new URL("docs/getting_started.md", root),
);

function blocks(lang: string): string[] {
  const found: string[] = [];
  const re = new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g");
  for (const m of page.matchAll(re)) found.push(m[1]);
  return found;
}

const CHECKOUT = "./portcullis/";

function pageMap(): Record<string, string> {
  const [json] = blocks("json");
  return JSON.parse(json).imports;
}

Deno.test("getting started: the local-checkout import map names every export of the core, and only those", async () => {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("deno.json", root)),
  );
  const expected: Record<string, string> = {};
  for (const [sub, path] of Object.entries<string>(config.exports)) {
    const name = sub === "."
      ? "@portcullis/auth"
      : `@portcullis/auth${sub.slice(1)}`;
    expected[name] = CHECKOUT + path.replace(/^\.\//, "");
  }
  assert.deepEqual(pageMap(), expected);
});

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}

Deno.test("getting started: the page's app runs and does what the page says", async () => {
  const code = blocks("ts ignore").join("\n");
  assert.match(code, /export const app/);
  const dir = await Deno.makeTempDir({ prefix: "portcullis-getting-started-" });
  const map: Record<string, string> = {};
  for (const [name, path] of Object.entries(pageMap())) {
    map[name] = new URL(path.slice(CHECKOUT.length), root).href;
  }
  await Deno.writeTextFile(`${dir}/app.ts`, code);
  await Deno.writeTextFile(
    `${dir}/import_map.json`,
    JSON.stringify({ imports: map }),
  );
  const port = freePort();
  const secret = btoa(
    String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--check", // the page's code type-checks as well as runs
      "--no-lock",
      `--import-map=${dir}/import_map.json`,
      `${dir}/app.ts`,
    ],
    cwd: dir,
    env: { AUTH_SECRET: secret, PORT: String(port) },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const base = `http://127.0.0.1:${port}`;
  try {
    let up = false;
    // Up to 90 s: `--check` type-checks first, slow on a loaded machine.
    for (let i = 0; i < 900 && !up; i++) {
      try {
        await (await fetch(`${base}/nothing`)).body?.cancel();
        up = true;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.ok(up, "the page's app did not start");

    const json = (body: unknown, headers: Record<string, string> = {}) => ({
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    const alice = {
      email: "alice@example.com",
      password: "correct horse battery",
    };
    const bob = { email: "bob@example.com", password: "staple battery horse" };

    const created = await fetch(`${base}/register`, json(alice));
    assert.equal(created.status, 201);
    assert.match((await created.json()).subject, /.+/);
    const taken = await fetch(`${base}/register`, json(alice));
    assert.equal(taken.status, 409);
    await taken.body?.cancel();
    const short = await fetch(
      `${base}/register`,
      json({ ...bob, password: "short" }),
    );
    assert.equal(short.status, 422);
    assert.equal((await short.json()).error, "passwordTooShort");
    assert.equal((await fetch(`${base}/register`, json(bob))).status, 201);

    const wrong = await fetch(
      `${base}/login`,
      json({ ...alice, password: "nope nope nope" }),
    );
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const unknown = await fetch(
      `${base}/login`,
      json({ ...alice, email: "x@example.com" }),
    );
    assert.equal(unknown.status, 401);
    await unknown.body?.cancel();

    const login = await fetch(`${base}/login`, json(alice));
    assert.equal(login.status, 200);
    const { token, expiresAt } = await login.json();
    assert.match(token, /^v1\./);
    assert.ok(expiresAt > Date.now() / 1000);
    const setCookie = login.headers.get("set-cookie") ?? "";
    assert.match(setCookie, /^__Host-session=[^;]+; /);
    const cookie = setCookie.split(";")[0];
    const bobToken =
      (await (await fetch(`${base}/login`, json(bob))).json()).token;

    // A protected route: by Bearer, by cookie, and anonymous.
    const me = await fetch(`${base}/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(me.status, 200);
    const subject = (await me.json()).subject;
    assert.match(subject, /.+/);
    const byCookie = await fetch(`${base}/me`, { headers: { cookie } });
    assert.deepEqual(await byCookie.json(), { subject });
    const anonymous = await fetch(`${base}/me`);
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();
    const browser = await fetch(`${base}/me`, {
      headers: { accept: "text/html", "sec-fetch-mode": "navigate" },
      redirect: "manual",
    });
    assert.equal(browser.status, 303);
    const sentTo = browser.headers.get("location") ?? "";
    assert.match(sentTo, /^\/login\?next=/);
    await browser.body?.cancel();

    // The page it sends the browser to exists, and its form signs in and
    // goes back (issue 31: it was a 404).
    const page = await fetch(`${base}${sentTo}`, {
      headers: { accept: "text/html" },
    });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<form method="post">/);
    const posted = await fetch(`${base}${sentTo}`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: base, "sec-fetch-site": "same-origin" },
      body: new URLSearchParams(alice),
    });
    await posted.body?.cancel();
    assert.equal(posted.status, 303);
    assert.equal(posted.headers.get("location"), "/me");
    const formCookie = (posted.headers.get("set-cookie") ?? "").split(";")[0];
    const viaForm = await fetch(`${base}/me`, {
      headers: { cookie: formCookie },
    });
    assert.equal(viaForm.status, 200);
    await viaForm.body?.cancel();
    const offSite = await fetch(`${base}/login?next=//evil.example/`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: base, "sec-fetch-site": "same-origin" },
      body: new URLSearchParams(alice),
    });
    await offSite.body?.cancel();
    assert.equal(offSite.headers.get("location"), "/", "never off-site");

    // A form posted from another site never reaches a route.
    const forged = await fetch(`${base}/notes`, {
      method: "POST",
      headers: {
        cookie,
        "sec-fetch-site": "cross-site",
        origin: "https://evil.example",
      },
    });
    assert.equal(forged.status, 403);
    await forged.body?.cancel();

    // The policy: the author edits, another user gets 403.
    const note = await fetch(`${base}/notes`, {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "same-origin" },
    });
    assert.equal(note.status, 201);
    const { id } = await note.json();
    const stranger = await fetch(`${base}/notes/${id}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${bobToken}` },
    });
    assert.equal(stranger.status, 403);
    await stranger.body?.cancel();
    const author = await fetch(`${base}/notes/${id}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(author.status, 200);
    assert.deepEqual(await author.json(), { id, edited: true });

    // An API key: made by a person, shown once, limited to its scopes (the
    // author may edit; the author's "view" key may not), and never a person.
    const made = await fetch(
      `${base}/keys`,
      json({ scopes: ["view"] }, { authorization: `Bearer ${token}` }),
    );
    assert.equal(made.status, 201);
    const { key } = await made.json();
    assert.match(key, /^pc_[a-z2-7]{16}_[a-z2-7]{59}$/);
    const asKey = await fetch(`${base}/me`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.deepEqual(await asKey.json(), { subject });
    const keyEdits = await fetch(`${base}/notes/${id}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(keyEdits.status, 403);
    await keyEdits.body?.cancel();
    const keyMakesKey = await fetch(
      `${base}/keys`,
      json({ scopes: ["edit"] }, { authorization: `Bearer ${key}` }),
    );
    assert.equal(keyMakesKey.status, 403);
    assert.equal((await keyMakesKey.json()).error, "api_key_refused");

    // Logout: the token is dead wherever it was copied, the cookie cleared.
    const out = await fetch(`${base}/logout`, {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "same-origin" },
    });
    assert.equal(out.status, 204);
    assert.match(out.headers.get("set-cookie") ?? "", /Max-Age=0/);
    const after = await fetch(`${base}/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(after.status, 401);
    await after.body?.cancel();
    const afterCookie = await fetch(`${base}/me`, { headers: { cookie } });
    assert.equal(afterCookie.status, 401);
    await afterCookie.body?.cancel();
  } finally {
    child.kill("SIGTERM");
    const { stderr } = await child.output();
    const text = new TextDecoder().decode(stderr);
    assert.doesNotMatch(text, /error:/i, text);
    await Deno.remove(dir, { recursive: true });
  }
});
