import assert from "node:assert/strict";
import { BearerTransport, CookieTransport } from "../../mod.ts";

const req = (headers: Record<string, string>) =>
  new Request("https://example.com/", { headers });

Deno.test("the session cookie is exactly __Host-session; Path=/; Secure; HttpOnly; SameSite=Lax, no Domain", () => {
  const c = new CookieTransport();
  assert.equal(c.name, "__Host-session");
  assert.equal(
    c.serialize("tok.en", 3600),
    "__Host-session=tok.en; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=3600",
  );
  assert.ok(!/domain/i.test(c.serialize("t", 1)));
  assert.equal(
    new CookieTransport({ name: "sid", sameSite: "Strict" }).serialize("t", 5),
    "__Host-sid=t; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=5",
  );
});

Deno.test("the clearing cookie has the same name, path and prefix with Max-Age=0", () => {
  assert.equal(
    new CookieTransport().clear(),
    "__Host-session=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0",
  );
});

Deno.test("secure: false drops Secure and the __Host- prefix, and says so once", () => {
  const warnings: string[] = [];
  const c = new CookieTransport({
    secure: false,
    warn: (m) => warnings.push(m),
  });
  assert.equal(c.name, "session");
  assert.equal(
    c.serialize("t", 1),
    "session=t; Path=/; HttpOnly; SameSite=Lax; Max-Age=1",
  );
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /without Secure/);
});

Deno.test("cookie names and values outside RFC 6265 are refused; serialisation never emits ; , CR LF", () => {
  for (const name of ["a;b", "a b", "a,b", "a\r\nb", "", "__Host-x", "é"]) {
    assert.throws(() => new CookieTransport({ name }), TypeError, name);
  }
  const c = new CookieTransport();
  for (
    const v of [
      "a;b",
      "a,b",
      "a\r\nSet-Cookie: x=y",
      "a b",
      "",
      "x".repeat(5000),
    ]
  ) {
    assert.throws(() => c.serialize(v, 1), TypeError);
  }
  assert.throws(
    () => new CookieTransport({ sameSite: "None" as unknown as "Lax" }),
    TypeError,
  );
});

Deno.test("the cookie reader answers null for absent, duplicated, oversized or non-token values", () => {
  const c = new CookieTransport();
  assert.equal(c.read(req({})), null);
  assert.equal(
    c.read(req({ cookie: "__Host-session=abc.DEF_-1" })),
    "abc.DEF_-1",
  );
  assert.equal(c.read(req({ cookie: "a=1; __Host-session=abc; b=2" })), "abc");
  assert.equal(
    c.read(req({ cookie: "__Host-session=a; __Host-session=b" })),
    null,
  );
  assert.equal(c.read(req({ cookie: "session=abc" })), null);
  assert.equal(c.read(req({ cookie: "__Host-sessionx=abc" })), null);
  assert.equal(c.read(req({ cookie: "__Host-session=" })), null);
  assert.equal(c.read(req({ cookie: '__Host-session="abc"' })), null);
  assert.equal(c.read(req({ cookie: "__Host-session=a%20b" })), null);
  assert.equal(
    c.read(req({ cookie: "__Host-session=" + "a".repeat(4097) })),
    null,
  );
});

Deno.test("RFC 6750: Authorization must be exactly 'Bearer <token>' (scheme case-insensitive)", () => {
  const b = new BearerTransport();
  assert.deepEqual(b.read(req({})), { present: false, token: null });
  assert.deepEqual(b.read(req({ authorization: "Bearer abc.def" })), {
    present: true,
    token: "abc.def",
  });
  assert.deepEqual(b.read(req({ authorization: "bearer abc" })), {
    present: true,
    token: "abc",
  });
  assert.deepEqual(b.read(req({ authorization: "BEARER abc" })), {
    present: true,
    token: "abc",
  });
  for (
    const bad of [
      "Basic abc",
      "Token abc",
      "Bearer",
      "Bearer ",
      "Bearer a b",
      "Bearer  abc",
      "Bearerabc",
      "X abc",
      "Bearer abc,def",
      "Bearer é",
      "Bearer " + "a".repeat(5000),
      "",
    ]
  ) {
    assert.deepEqual(b.read(req({ authorization: bad })), {
      present: true,
      token: null,
    }, bad);
  }
});

Deno.test("property: the cookie reader agrees with a plain split-based reading of the header", async () => {
  const fc = (await import("fast-check")).default;
  const c = new CookieTransport();
  const reference = (header: string): string | null => {
    let found: string | null = null;
    for (const part of header.split(";")) {
      const p = part.trim();
      if (!p.startsWith("__Host-session=")) continue;
      if (found !== null) return null;
      found = p.slice("__Host-session=".length);
    }
    return found !== null && /^[A-Za-z0-9._-]{1,4096}$/.test(found)
      ? found
      : null;
  };
  const piece = fc.oneof(
    fc.constantFrom(
      "__Host-session=",
      "__Host-session",
      "x__Host-session=",
      "a=",
      "; ",
      ";",
      " ",
      "\t",
      "=",
      "v1.abc_-",
      "tok",
    ),
    fc.string({ maxLength: 8 }),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
      const header = pieces.join("").replace(/[\r\n\0]/g, "");
      const req = new Request("https://example.com/", {
        headers: { cookie: header },
      });
      // Headers trim leading and trailing whitespace of the value.
      assert.equal(
        c.read(req),
        reference(req.headers.get("cookie") ?? ""),
        JSON.stringify(header),
      );
    }),
    { numRuns: 20_000 },
  );
});
