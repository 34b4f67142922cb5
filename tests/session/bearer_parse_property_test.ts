import assert from "node:assert/strict";
import fc from "fast-check";
import { BearerTransport } from "../../mod.ts";

// The reference: RFC 6750 §2.1 as one regular expression (the parser's
// earlier form). The parser compares the scheme as a string instead.
const REFERENCE = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

const piece = fc.constantFrom(
  "Bearer",
  "bearer",
  "BEARER",
  "BeArEr",
  "Basic",
  " ",
  "  ",
  "\t",
  "a",
  "Z",
  "9",
  "-",
  ".",
  "_",
  "~",
  "+",
  "/",
  "=",
  "==",
  ",",
  "é",
  "v1.abc.def",
);

Deno.test("BearerTransport.read() agrees with the RFC 6750 regular expression on generated headers", () => {
  const bearer = new BearerTransport();
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 8 }), (parts) => {
      const header = parts.join("");
      let req: Request;
      try {
        req = new Request("https://example.com/", {
          headers: { authorization: header },
        });
      } catch {
        return; // not a valid header value at all
      }
      // Headers trim the value: compare against what the parser sees.
      const seen = req.headers.get("authorization")!;
      const m = REFERENCE.exec(seen);
      assert.deepEqual(
        bearer.read(req),
        { present: true, token: m === null ? null : m[1] },
        JSON.stringify(header),
      );
    }),
    { numRuns: 5000 },
  );
});
