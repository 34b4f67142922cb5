/**
 * The passkeys module's own tests, with a software authenticator (an ECDSA
 * P-256 key made here, `none` attestation): a verified user adds a passkey
 * after the password, signs in with it without one, a forged signature is
 * refused, and the module's routes answer 404 while it is off.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ORIGIN, startTestApp } from "../../examples/app/testing.ts";

const PASSWORD = "correct horse battery";
const te = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-")
    .replace(/\//g, "_").replace(/=+$/, "");
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** CBOR (RFC 8949) of the few kinds a credential needs. */
function cbor(value: unknown): Uint8Array<ArrayBuffer> {
  const head = (major: number, n: number) =>
    n < 24
      ? new Uint8Array([(major << 5) | n])
      : n < 256
      ? new Uint8Array([(major << 5) | 24, n])
      : new Uint8Array([(major << 5) | 25, n >> 8, n & 0xff]);
  if (typeof value === "number") {
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === "string") {
    const bytes = te.encode(value);
    return concat(head(3, bytes.length), bytes);
  }
  if (value instanceof Uint8Array) return concat(head(2, value.length), value);
  const entries = value instanceof Map
    ? [...value]
    : Object.entries(value as object);
  return concat(
    head(5, entries.length),
    ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)]),
  );
}

/** An ECDSA signature from WebCrypto's `r || s` to DER. */
function der(raw: Uint8Array): Uint8Array<ArrayBuffer> {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const v = b.slice(i);
    const body = v[0] & 0x80 ? concat(new Uint8Array([0]), v) : v;
    return concat(new Uint8Array([2, body.length]), body);
  };
  const seq = concat(int(raw.slice(0, 32)), int(raw.slice(32)));
  return concat(new Uint8Array([0x30, seq.length]), seq);
}

async function sha256(bytes: BufferSource): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/** A passkey that lives in this test: registration and assertion answers. */
class SoftAuthenticator {
  #keys!: CryptoKeyPair;
  #id = crypto.getRandomValues(new Uint8Array(16));
  #userHandle = "";
  #count = 0;

  async #authData(flags: number, extra = new Uint8Array()) {
    const count = new Uint8Array(4);
    new DataView(count.buffer).setUint32(0, this.#count++);
    return concat(
      await sha256(te.encode(new URL(ORIGIN).hostname)),
      new Uint8Array([flags]),
      count,
      extra,
    );
  }

  #clientData(type: string, challenge: string): Uint8Array<ArrayBuffer> {
    return te.encode(JSON.stringify({ type, challenge, origin: ORIGIN }));
  }

  /** `navigator.credentials.create` with the server's options. */
  async create(options: { challenge: string; user: { id: string } }) {
    this.#keys = await crypto.subtle.generateKey(
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["sign"],
    ) as CryptoKeyPair;
    this.#userHandle = options.user.id;
    const jwk = await crypto.subtle.exportKey("jwk", this.#keys.publicKey);
    const decode = (s: string) =>
      Uint8Array.from(
        atob(s.replace(/-/g, "+").replace(/_/g, "/")),
        (c) => c.charCodeAt(0),
      );
    const cose = cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, decode(jwk.x!)],
        [-3, decode(jwk.y!)],
      ]),
    );
    const credential = concat(
      new Uint8Array(16),
      new Uint8Array([0, this.#id.length]),
      this.#id,
      cose,
    );
    // User present, user verified, attested credential data.
    const authData = await this.#authData(0x45, credential);
    return {
      id: b64url(this.#id),
      rawId: b64url(this.#id),
      type: "public-key",
      response: {
        clientDataJSON: b64url(
          this.#clientData("webauthn.create", options.challenge),
        ),
        attestationObject: b64url(
          cbor({ fmt: "none", attStmt: {}, authData }),
        ),
        transports: ["internal"],
      },
      clientExtensionResults: {},
    };
  }

  /** `navigator.credentials.get` with the server's options. */
  async get(options: { challenge: string }, forge = false) {
    const authData = await this.#authData(0x05);
    const clientData = this.#clientData("webauthn.get", options.challenge);
    const signed = concat(authData, await sha256(clientData));
    if (forge) signed[0] ^= 1;
    const signature = new Uint8Array(
      await crypto.subtle.sign(
        { name: "ECDSA", hash: "SHA-256" },
        this.#keys.privateKey,
        signed,
      ),
    );
    return {
      id: b64url(this.#id),
      rawId: b64url(this.#id),
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(der(signature)),
        userHandle: this.#userHandle,
      },
      clientExtensionResults: {},
    };
  }
}

Deno.test("passkeys: added after the password, then a sign-in without one; a forged signature is refused", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const { token } = await app.verifiedUser("key@example.com", PASSWORD);
  // A session alone adds no passkey: the password first.
  assert.equal(
    (await app.call("POST", "/passkeys/register/options", {}, token)).res
      .status,
    401,
  );
  const creation = await app.call("POST", "/passkeys/register/options", {
    password: PASSWORD,
  }, token);
  assert.equal(creation.res.status, 200);
  const authenticator = new SoftAuthenticator();
  const added = await app.call("POST", "/passkeys/register", {
    response: await authenticator.create(creation.json),
    name: "Laptop",
  }, token);
  assert.equal(added.res.status, 201);
  assert.equal(added.json.name, "Laptop");
  const account = await app.call("GET", "/account", undefined, token, {
    headers: { accept: "text/html" },
  });
  assert.match(account.text, /class="passkey-name">Laptop</);

  const forged = await app.call("POST", "/passkeys/login", {
    response: await authenticator.get(
      (await app.call("POST", "/passkeys/login/options", {})).json,
      true,
    ),
  });
  assert.equal(forged.res.status, 401);
  const signedIn = await app.call("POST", "/passkeys/login", {
    response: await authenticator.get(
      (await app.call("POST", "/passkeys/login/options", {})).json,
    ),
    next: "/account",
  });
  assert.equal(signedIn.res.status, 200);
  assert.equal(signedIn.json.next, "/account");
  const me = await app.call("GET", "/api/me", undefined, signedIn.json.token);
  assert.equal(me.json.email, "key@example.com");
  app.close();
});

Deno.test("passkeys: adding and removing one are in the account's activity; a refused one is not", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const { token } = await app.verifiedUser("act@example.com", PASSWORD);
  const types = async () =>
    ((await app.call("GET", "/api/activity", undefined, token)).json
      .events as { type: string }[]).map((e) => e.type);
  const options = async () =>
    (await app.call("POST", "/passkeys/register/options", {
      password: PASSWORD,
    }, token)).json;
  const refused = await app.call("POST", "/passkeys/register", {
    response: { id: "x", type: "public-key", response: {} },
  }, token);
  assert.equal(refused.res.status, 400);
  assert.ok(!(await types()).includes("passkey_added"));
  const authenticator = new SoftAuthenticator();
  const added = await app.call("POST", "/passkeys/register", {
    response: await authenticator.create(await options()),
    name: "Phone",
  }, token);
  assert.equal(added.res.status, 201);
  assert.equal((await types())[0], "passkey_added");
  const page = await app.call("GET", "/account", undefined, token, {
    headers: { accept: "text/html" },
  });
  assert.match(page.text, /Passkey added/);
  const removed = await app.call("POST", "/account/passkeys/delete", {
    id: added.json.id,
    password: PASSWORD,
  }, token);
  assert.equal(removed.res.status, 204);
  assert.deepEqual((await types()).slice(0, 2), [
    "passkey_removed",
    "passkey_added",
  ]);
  app.close();
});

Deno.test("passkeys: the login page offers the button and serves its script; off, the routes answer 404", async () => {
  const on = await startTestApp({ PASSKEYS: "on" });
  const login = await on.call("GET", "/login", undefined, undefined, {
    headers: { accept: "text/html" },
  });
  assert.match(login.text, /id="passkey-login"/);
  const script = await on.call("GET", "/assets/passkeys.js");
  assert.equal(script.res.status, 200);
  assert.match(script.res.headers.get("content-type")!, /javascript/);
  on.close();
  const off = await startTestApp({ PASSKEYS: "off" });
  assert.equal((await off.call("GET", "/assets/passkeys.js")).res.status, 404);
  assert.equal(
    (await off.call("POST", "/passkeys/login/options", {})).res.status,
    404,
  );
  const page = await off.call("GET", "/login", undefined, undefined, {
    headers: { accept: "text/html" },
  });
  assert.doesNotMatch(page.text, /passkey/);
  off.close();
  const none = await startTestApp({ SIGN_IN_METHODS: "off" });
  assert.equal((await none.call("GET", "/assets/passkeys.js")).res.status, 404);
  none.close();
});

Deno.test("passkeys: PASSKEYS=false or No turns them off; a value neither yes nor no stops the start", async () => {
  for (const value of ["false", "No"]) {
    const off = await startTestApp({ PASSKEYS: value });
    assert.equal(
      (await off.call("GET", "/assets/passkeys.js")).res.status,
      404,
      value,
    );
    off.close();
  }
  await assert.rejects(
    startTestApp({ PASSKEYS: "none" }),
    /^TypeError: PASSKEYS must be one of .* received "none"$/,
  );
});

Deno.test("passkeys: a passkey lets the password be 8 characters (NIST SP 800-63B-4), and the last one stays while the password is shorter than 15", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  let { token } = await app.verifiedUser("nist@example.com", PASSWORD);
  const add = async (password: string, name: string) => {
    const options = await app.call("POST", "/passkeys/register/options", {
      password,
    }, token);
    assert.equal(options.res.status, 200);
    const added = await app.call("POST", "/passkeys/register", {
      response: await new SoftAuthenticator().create(options.json),
      name,
    }, token);
    assert.equal(added.res.status, 201);
    return added.json.id as string;
  };
  const change = async (currentPassword: string, newPassword: string) =>
    await app.call("POST", "/account/password", {
      currentPassword,
      newPassword,
    }, token);
  assert.equal((await change(PASSWORD, "eight ch")).res.status, 422);
  const first = await add(PASSWORD, "Laptop");
  const short = await change(PASSWORD, "eight ch");
  assert.equal(short.res.status, 200, short.text);
  token = short.json.token;
  const second = await add("eight ch", "Phone");
  const remove = (id: string, password: string) =>
    app.call("POST", "/account/passkeys/delete", { id, password }, token);
  assert.equal(
    (await remove(first, "eight ch")).res.status,
    204,
    "one remains",
  );
  const last = await remove(second, "eight ch");
  assert.equal(last.res.status, 409);
  assert.equal(last.json.error, "password_too_short");
  assert.match(last.json.message, /at least 15 characters/);
  const longer = await change("eight ch", PASSWORD);
  assert.equal(longer.res.status, 200);
  token = longer.json.token;
  assert.equal((await remove(second, PASSWORD)).res.status, 204);
  app.close();
});
