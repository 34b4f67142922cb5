/**
 * The OpenID Connect module's own tests, against a small OpenID Provider
 * served here on 127.0.0.1 (discovery, keys, an authorization endpoint
 * that signs in whoever the test names, a token endpoint issuing RS256 ID
 * tokens): a first sign-in creates the user, the next one signs the same
 * user in, a tampered state is refused, and the routes answer 404 while
 * the module is off.
 *
 * @module
 */
import assert from "node:assert/strict";
import { startTestApp, type TestApp } from "../../examples/app/testing.ts";

const te = new TextEncoder();
const b64url = (bytes: Uint8Array | string) =>
  btoa(
    typeof bytes === "string" ? bytes : String.fromCharCode(...bytes),
  ).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** A provider that signs in `login.sub` with `login.email`, verified. */
async function startProvider() {
  const keys = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  const jwk = { ...await crypto.subtle.exportKey("jwk", keys.publicKey) };
  const login = { sub: "user-1", email: "op@example.com" };
  const codes = new Map<string, { nonce: string; client: string }>();
  const ac = new AbortController();
  let issuer = "";
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: ac.signal,
    onListen: () => {},
  }, async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/.well-known/openid-configuration") {
      return Response.json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        code_challenge_methods_supported: ["S256"],
      });
    }
    if (url.pathname === "/jwks") {
      return Response.json({
        keys: [{ ...jwk, kid: "k1", alg: "RS256", use: "sig" }],
      });
    }
    if (url.pathname === "/authorize") {
      const code = crypto.randomUUID();
      codes.set(code, {
        nonce: url.searchParams.get("nonce") ?? "",
        client: url.searchParams.get("client_id") ?? "",
      });
      const back = new URL(url.searchParams.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      return Response.redirect(back, 303);
    }
    if (url.pathname === "/token" && req.method === "POST") {
      const grant = codes.get(
        new URLSearchParams(await req.text()).get("code") ?? "",
      );
      if (grant === undefined) {
        return Response.json({ error: "invalid_grant" }, { status: 400 });
      }
      const now = Math.floor(Date.now() / 1000);
      const body = b64url(JSON.stringify({ alg: "RS256", kid: "k1" })) + "." +
        b64url(JSON.stringify({
          iss: issuer,
          aud: grant.client,
          sub: login.sub,
          email: login.email,
          email_verified: true,
          nonce: grant.nonce,
          iat: now,
          exp: now + 300,
        }));
      const signature = new Uint8Array(
        await crypto.subtle.sign(
          "RSASSA-PKCS1-v1_5",
          keys.privateKey,
          te.encode(body),
        ),
      );
      return Response.json({
        access_token: crypto.randomUUID(),
        token_type: "Bearer",
        expires_in: 300,
        id_token: `${body}.${b64url(signature)}`,
      });
    }
    return new Response("not found", { status: 404 });
  });
  issuer = `http://127.0.0.1:${server.addr.port}`;
  return {
    issuer,
    login,
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

/** The settings that turn the module on against `issuer`. */
function settings(issuer: string) {
  return {
    OIDC_ISSUER: issuer,
    OIDC_CLIENT_ID: "app",
    OIDC_CLIENT_SECRET: "app-secret-0123456789-abcdefghijklmnop",
    OIDC_PROVIDER_ID: "test",
    OIDC_PROVIDER_NAME: "Test OP",
    OIDC_ALLOW_HTTP: "true",
  };
}

/** `name=value` of each cookie an answer sets, for the next request. */
function cookies(res: Response): string {
  return res.headers.getSetCookie().map((c) => c.split(";")[0])
    .filter((c) => !c.endsWith("=")).join("; ");
}

/** Through the provider and back: the callback's answer. */
async function signInAtProvider(app: TestApp, tamper = false) {
  const html = { accept: "text/html" };
  const started = await app.call(
    "GET",
    "/login/oidc/test?next=/account",
    undefined,
    undefined,
    { headers: html },
  );
  assert.equal(started.res.status, 303);
  const atProvider = await fetch(started.res.headers.get("location")!, {
    redirect: "manual",
  });
  await atProvider.body?.cancel();
  const back = new URL(atProvider.headers.get("location")!);
  const state = cookies(started.res);
  return await app.call(
    "GET",
    back.pathname + back.search,
    undefined,
    undefined,
    {
      headers: { ...html, cookie: tamper ? state.slice(0, -2) + "xx" : state },
    },
  );
}

Deno.test("OIDC: a first sign-in creates the user, the next one signs the same user in", async () => {
  const op = await startProvider();
  const app = await startTestApp(settings(op.issuer));
  try {
    const login = await app.call("GET", "/login", undefined, undefined, {
      headers: { accept: "text/html" },
    });
    assert.match(login.text, /href="\/login\/oidc\/test\?next=%2F">Test OP</);
    const first = await signInAtProvider(app);
    assert.equal(first.res.status, 303);
    assert.equal(first.res.headers.get("location"), "/account");
    const me = await app.call("GET", "/api/me", undefined, undefined, {
      headers: { cookie: cookies(first.res) },
    });
    assert.equal(me.json.email, "op@example.com");
    const second = await signInAtProvider(app);
    assert.equal(second.res.status, 303);
    const again = await app.call("GET", "/api/me", undefined, undefined, {
      headers: { cookie: cookies(second.res) },
    });
    assert.equal(again.json.subject, me.json.subject);
    const account = await app.call("GET", "/account", undefined, undefined, {
      headers: { accept: "text/html", cookie: cookies(second.res) },
    });
    assert.match(account.text, /<li>Test OP \(op@example\.com\)<\/li>/);
  } finally {
    app.close();
    await op.close();
  }
});

Deno.test("OIDC: a tampered state is refused and signs nobody in", async () => {
  const op = await startProvider();
  const app = await startTestApp(settings(op.issuer));
  try {
    const refused = await signInAtProvider(app, true);
    assert.equal(refused.res.status, 400);
    assert.equal(cookies(refused.res).includes("session"), false);
    assert.equal(await app.credentials.findByEmail("op@example.com"), null);
  } finally {
    app.close();
    await op.close();
  }
});

Deno.test("OIDC: off, or an unknown provider, the routes answer 404", async () => {
  const off = await startTestApp({});
  assert.equal((await off.call("GET", "/login/oidc/test")).res.status, 404);
  const login = await off.call("GET", "/login", undefined, undefined, {
    headers: { accept: "text/html" },
  });
  assert.doesNotMatch(login.text, /login\/oidc/);
  off.close();
  const op = await startProvider();
  const on = await startTestApp(settings(op.issuer));
  try {
    assert.equal((await on.call("GET", "/login/oidc/other")).res.status, 404);
  } finally {
    on.close();
    await op.close();
  }
});

Deno.test("OIDC: OIDC_ALLOW_HTTP takes the yes and no words of any case, and a value that is neither stops the start", async () => {
  const http = (allow: string | undefined) =>
    startTestApp({ ...settings("http://127.0.0.1:9"), OIDC_ALLOW_HTTP: allow });
  for (const yes of ["true", "1", "yes", "on", "TRUE", "Yes", " on "]) {
    const app = await http(yes);
    const login = await app.call("GET", "/login", undefined, undefined, {
      headers: { accept: "text/html" },
    });
    assert.match(login.text, /Test OP/, `${yes}: the provider is on`);
    app.close();
  }
  // No: the http issuer is refused, as without the setting.
  for (const no of [undefined, "", "false", "0", "no", "off", "OFF"]) {
    await assert.rejects(
      http(no),
      /issuer must be an https URL/,
      `${no}: http is not allowed`,
    );
  }
  for (const neither of ["maybe", "tru", "2", "enabled", "y"]) {
    await assert.rejects(
      http(neither),
      (error: Error) =>
        error instanceof TypeError &&
        /^OIDC_ALLOW_HTTP must be one of 1, true, yes, on \(yes\) or 0, false, no, off \(no\)/
          .test(error.message) &&
        error.message.includes(`received "${neither}"`),
      neither,
    );
  }
  // Even with the provider off, a typo is not passed over in silence.
  await assert.rejects(
    startTestApp({ OIDC_ALLOW_HTTP: "ture" }),
    /OIDC_ALLOW_HTTP must be one of/,
  );
});
