import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decodeBase64Url,
  encodeBase64Url,
} from "../../lib/_common/base64url.ts";

Deno.test("base64url round-trips any bytes and matches the standard encoding", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      const s = encodeBase64Url(bytes);
      const std = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-")
        .replace(/\//g, "_").replace(/=+$/, "");
      assert.equal(s, std);
      assert.deepEqual(decodeBase64Url(s), bytes);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("base64url decoding is strict: padding, foreign characters, bad lengths and non-canonical bits are refused", () => {
  for (
    const bad of [
      "A",
      "AA=",
      "AA==",
      "A+B/",
      "AB C",
      "QQ=",
      "QR",
      "QUF",
      "QUG",
      "é",
      "\u0000",
      "Zm9v\n",
    ]
  ) {
    assert.equal(decodeBase64Url(bad), null, JSON.stringify(bad));
  }
  assert.deepEqual(decodeBase64Url("QQ"), new Uint8Array([65]));
  assert.deepEqual(decodeBase64Url("QUE"), new Uint8Array([65, 65]));
  assert.deepEqual(decodeBase64Url(""), new Uint8Array());
});

Deno.test("property: a decoded string always re-encodes to itself (one encoding per byte string)", () => {
  fc.assert(
    fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{0,40}$/), (s) => {
      const bytes = decodeBase64Url(s);
      if (bytes !== null) assert.equal(encodeBase64Url(bytes), s);
    }),
    { numRuns: 5000 },
  );
});
