// The client address behind reverse proxies (issue 27, item 2; SECURITY.md
// requirement 59): the rightmost-untrusted rule over X-Forwarded-For and
// Forwarded, hop counts, platform headers, and malformed or forged headers
// that must never put a written address in place of the peer's.
import assert from "node:assert/strict";
import fc from "fast-check";
import { clientAddress, TrustedProxies } from "@portcullis/auth/http";

function req(headers: Record<string, string> = {}): Request {
  return new Request("https://app.example/login", { headers });
}

const NGINX = TrustedProxies.parse("127.0.0.1, 10.0.0.0/8, 2001:db8:ff::/48");

Deno.test("TrustedProxies.parse() reads addresses, CIDRs, names and hop counts", () => {
  const p = TrustedProxies.parse(" 10.0.0.0/8,192.0.2.7  2001:DB8::/32 ");
  assert.equal(p.toString(), "10.0.0.0/8, 192.0.2.7, 2001:db8::/32");
  assert.equal(p.trusts("10.255.0.1"), true);
  assert.equal(p.trusts("11.0.0.1"), false);
  assert.equal(p.trusts("192.0.2.7"), true);
  assert.equal(p.trusts("192.0.2.8"), false);
  assert.equal(p.trusts("2001:db8:1::5"), true);
  assert.equal(p.trusts("2001:db9::1"), false);
  // An IPv4-mapped IPv6 peer is its IPv4 address.
  assert.equal(p.trusts("::ffff:10.1.1.1"), true);
  assert.equal(p.trusts("garbage"), false);
  assert.equal(p.hops, undefined);
  assert.equal(TrustedProxies.parse("2").hops, 2);
  assert.equal(TrustedProxies.parse("2").trusts("10.0.0.1"), false);
  for (const none of ["", "  ", "none", "NONE", "0"]) {
    assert.equal(TrustedProxies.parse(none).isNone, true, none);
  }
  const named = TrustedProxies.parse("loopback private");
  for (const a of ["127.0.0.1", "127.9.9.9", "::1", "10.2.3.4", "172.31.0.1"]) {
    assert.equal(named.trusts(a), true, a);
  }
  for (const a of ["172.32.0.1", "192.169.0.1", "8.8.8.8", "::2"]) {
    assert.equal(named.trusts(a), false, a);
  }
  assert.equal(TrustedProxies.parse("fc00::/7").trusts("fd12::1"), true);
  assert.equal(TrustedProxies.parse("0.0.0.0/1").trusts("8.8.8.8"), true);
  assert.equal(TrustedProxies.parse("0.0.0.0/1").trusts("::8"), false);
  assert.equal(
    TrustedProxies.parse("::ffff:10.0.0.0/104").trusts("10.9.9.9"),
    true,
  );
});

Deno.test("TrustedProxies.parse() refuses typos with a message naming the entry", () => {
  const bad = [
    "10.0.0.300",
    "10.0.0.1/8", // host bits below the prefix
    "10.0.0.0/33",
    "10.0.0.0/-1",
    "10.0.0.0/08",
    "010.0.0.1",
    "10.0.0",
    "1.2.3.4.5",
    "example.com",
    "fe80::1%eth0",
    "2001:db8::/129",
    ":::1",
    "1::2::3",
    "[::1]",
    "127.0.0.1:80",
    "17",
    "99",
    "01",
    "2 10.0.0.1",
    "10.0.0.0/8;",
    "*",
  ];
  for (const value of bad) {
    assert.throws(
      () => TrustedProxies.parse(value),
      (e: unknown) =>
        e instanceof TypeError && e.message.startsWith("TRUSTED_PROXIES"),
      value,
    );
  }
  assert.throws(
    () => TrustedProxies.parse("nope", "PROXIES"),
    /^TypeError: PROXIES must list .*"nope" is none of these$/,
  );
});

Deno.test("clientAddress() is the socket's address by default, whatever the headers", () => {
  const forged = req({
    "x-forwarded-for": "203.0.113.1",
    "forwarded": "for=203.0.113.1",
    "x-real-ip": "203.0.113.1",
    "cf-connecting-ip": "203.0.113.1",
  });
  assert.equal(clientAddress(forged, { remote: "192.0.2.9" }), "192.0.2.9");
  assert.equal(clientAddress(forged), null);
  assert.equal(clientAddress(forged, { remote: null }), null);
  assert.equal(
    clientAddress(forged, { remote: "::ffff:192.0.2.9" }),
    "192.0.2.9",
  );
  assert.equal(
    clientAddress(forged, { remote: "2001:0DB8:0:0:0:0:0:1" }),
    "2001:db8::1",
  );
  // A peer that is not an IP address (a Unix socket) is kept as it is.
  assert.equal(
    clientAddress(forged, { remote: "/run/app.sock" }),
    "/run/app.sock",
  );
});

Deno.test("clientAddress() takes the rightmost untrusted X-Forwarded-For entry from a trusted peer", () => {
  const cases: [string | undefined, string, string][] = [
    // [header, peer, expected]
    ["198.51.100.4", "127.0.0.1", "198.51.100.4"],
    ["203.0.113.1, 198.51.100.4", "127.0.0.1", "198.51.100.4"],
    // Entries the client wrote (left) are skipped over trusted hops only.
    ["6.6.6.6, 198.51.100.4, 10.0.0.2", "127.0.0.1", "198.51.100.4"],
    ["6.6.6.6,198.51.100.4,10.0.0.2,10.0.0.3", "10.0.0.9", "198.51.100.4"],
    // A forged trusted-looking address left of the real one changes nothing.
    ["10.0.0.5, 198.51.100.4", "127.0.0.1", "198.51.100.4"],
    // Ports are removed; IPv6 in every written form.
    ["198.51.100.4:51234", "127.0.0.1", "198.51.100.4"],
    ["2001:DB8:0:0::7", "127.0.0.1", "2001:db8::7"],
    ["[2001:db8::7]", "127.0.0.1", "2001:db8::7"],
    ["[2001:db8::7]:443", "127.0.0.1", "2001:db8::7"],
    ["::ffff:198.51.100.4", "127.0.0.1", "198.51.100.4"],
    ["198.51.100.4", "2001:db8:ff:1::2", "198.51.100.4"],
    ["198.51.100.4", "::ffff:127.0.0.1", "198.51.100.4"],
    // Every hop trusted: the leftmost started the request.
    ["10.0.0.7, 10.0.0.8", "127.0.0.1", "10.0.0.7"],
    // No header from a trusted peer: the peer.
    [undefined, "127.0.0.1", "127.0.0.1"],
    ["", "127.0.0.1", "127.0.0.1"],
    // An untrusted peer's header is never read.
    ["198.51.100.4", "192.0.2.50", "192.0.2.50"],
    ["10.0.0.5", "192.0.2.50", "192.0.2.50"],
  ];
  for (const [header, remote, expected] of cases) {
    const headers: Record<string, string> = header === undefined
      ? {}
      : { "x-forwarded-for": header };
    assert.equal(
      clientAddress(req(headers), { remote, trustedProxies: NGINX }),
      expected,
      `${header} via ${remote}`,
    );
  }
});

Deno.test("clientAddress() falls back to the peer on a malformed chain, never to a written value", () => {
  const garbage = [
    "garbage",
    "unknown",
    "_hidden",
    "198.51.100.4, ",
    "198.51.100.4,,",
    "198.51.100.4 10.0.0.2",
    "198.51.100.256",
    "198.051.100.4",
    "198.51.100.4:99999999",
    "198.51.100.4:port",
    "[198.51.100.4]",
    "[2001:db8::7",
    "2001:db8::7]",
    "[2001:db8::7]x",
    "fe80::1%25eth0",
    "1.2.3.4\t5",
    "198.51.100.4/32",
    "x".repeat(9000),
    "1.2.3.4, " + "x".repeat(9000),
  ];
  for (const value of garbage) {
    assert.equal(
      clientAddress(req({ "x-forwarded-for": value }), {
        remote: "127.0.0.1",
        trustedProxies: NGINX,
      }),
      "127.0.0.1",
      JSON.stringify(value.slice(0, 40)),
    );
  }
  // Garbage the client wrote, left of the address the proxy appended, does
  // not matter: the rule stops at the proxy's entry.
  assert.equal(
    clientAddress(req({ "x-forwarded-for": "garbage, 198.51.100.4" }), {
      remote: "127.0.0.1",
      trustedProxies: NGINX,
    }),
    "198.51.100.4",
  );
});

Deno.test("clientAddress() reads Forwarded (RFC 7239) only when told to", () => {
  const read = (value: string, remote = "127.0.0.1") =>
    clientAddress(req({ forwarded: value, "x-forwarded-for": "6.6.6.6" }), {
      remote,
      trustedProxies: NGINX,
      header: "forwarded",
    });
  assert.equal(read("for=192.0.2.60;proto=http;by=203.0.113.43"), "192.0.2.60");
  assert.equal(read('for="_gazonk", for=198.51.100.17'), "198.51.100.17");
  assert.equal(read('For="[2001:db8:cafe::17]:4711"'), "2001:db8:cafe::17");
  assert.equal(read('for="192.0.2.43:47011"'), "192.0.2.43");
  assert.equal(read('for="[2001:db8::1]:_p1"'), "2001:db8::1");
  assert.equal(
    read("for=192.0.2.43, for=198.51.100.17;by=10.0.0.1"),
    "198.51.100.17",
  );
  assert.equal(
    read("for=6.6.6.6, for=198.51.100.17, for=10.0.0.3"),
    "198.51.100.17",
  );
  // A quoted comma or semicolon stays inside its element.
  assert.equal(
    read('for=198.51.100.17;ext="a,b;c", for=10.0.0.3'),
    "198.51.100.17",
  );
  // Malformed or unusable where the answer would be: the peer.
  for (
    const bad of [
      "for=unknown",
      'for="_gazonk"',
      'for="[2001:db8::1"',
      'for="198.51.100.17',
      "for=[2001:db8::1]:80:80",
      "by=10.0.0.1",
      "for=198.51.100.17;for=198.51.100.18",
      'for="\\"198.51.100.17"',
      "for=198.51.100.17, for=",
      'for=1.2.3.4, for="x',
    ]
  ) assert.equal(read(bad), "127.0.0.1", bad);
  // From an untrusted peer, never read.
  assert.equal(read("for=198.51.100.17", "192.0.2.1"), "192.0.2.1");
  // And X-Forwarded-For is ignored when the proxy writes Forwarded.
  assert.equal(read("for=198.51.100.17"), "198.51.100.17");
});

Deno.test("clientAddress() never reads a header other than the one named", () => {
  // nginx writes X-Forwarded-For; a Forwarded or X-Real-IP the client sent
  // passes through it untouched and must not be believed.
  const r = req({
    forwarded: "for=6.6.6.6",
    "x-real-ip": "6.6.6.6",
    "x-forwarded-for": "198.51.100.4",
  });
  assert.equal(
    clientAddress(r, { remote: "127.0.0.1", trustedProxies: NGINX }),
    "198.51.100.4",
  );
  assert.throws(
    () => clientAddress(r, { remote: "127.0.0.1", header: "X-Real-IP" }),
    TypeError,
  );
  assert.throws(
    () =>
      clientAddress(r, { remote: "127.0.0.1", trustedProxies: "10.0.0.1/8" }),
    TypeError,
  );
});

Deno.test("clientAddress() with a hop count takes that many entries from the right", () => {
  const one = TrustedProxies.parse("1");
  const two = TrustedProxies.parse("2");
  const xff = (
    value: string | null,
    trustedProxies: TrustedProxies,
    remote: string | null = "10.9.9.9",
  ) =>
    clientAddress(
      req(value === null ? {} : { "x-forwarded-for": value }),
      { remote, trustedProxies },
    );
  assert.equal(xff("6.6.6.6, 198.51.100.4", one), "198.51.100.4");
  assert.equal(xff("6.6.6.6, 198.51.100.4, 10.0.0.2", two), "198.51.100.4");
  // Fewer entries than proxies: the request did not come through them all.
  assert.equal(xff("198.51.100.4", two), "10.9.9.9");
  assert.equal(xff(null, one), "10.9.9.9");
  assert.equal(xff("garbage", one), "10.9.9.9");
  // On an edge runtime with no socket address (Vercel's X-Forwarded-For).
  assert.equal(xff("198.51.100.4", one, null), "198.51.100.4");
  assert.equal(xff(null, one, null), null);
});

Deno.test("clientAddress() reads a platform's one-address header (Cloudflare, Fly, x-real-ip)", () => {
  const one = TrustedProxies.parse("1");
  for (const header of ["cf-connecting-ip", "fly-client-ip", "x-real-ip"]) {
    const read = (value: string, remote: string | null = null) =>
      clientAddress(req({ [header]: value, "x-forwarded-for": "6.6.6.6" }), {
        remote,
        trustedProxies: one,
        header,
      });
    assert.equal(read("198.51.100.4"), "198.51.100.4", header);
    assert.equal(read("2001:db8::4"), "2001:db8::4", header);
    // A list in a one-address header is malformed.
    assert.equal(read("6.6.6.6, 198.51.100.4"), null, header);
    assert.equal(read("nonsense", "10.0.0.1"), "10.0.0.1", header);
  }
  // Cloudflare in front of a server: trusted by its ranges, not by position.
  const cf = TrustedProxies.parse("173.245.48.0/20");
  const r = req({ "cf-connecting-ip": "198.51.100.4" });
  assert.equal(
    clientAddress(r, {
      remote: "173.245.48.5",
      trustedProxies: cf,
      header: "cf-connecting-ip",
    }),
    "198.51.100.4",
  );
  assert.equal(
    clientAddress(r, {
      remote: "192.0.2.1",
      trustedProxies: cf,
      header: "cf-connecting-ip",
    }),
    "192.0.2.1",
  );
});

Deno.test("clientAddress() property: whatever the client writes, the answer is the address the first proxy saw", () => {
  const address = fc.oneof(fc.ipV4(), fc.ipV6());
  fc.assert(
    fc.property(
      fc.array(fc.oneof(address, fc.string({ maxLength: 40 })), {
        maxLength: 6,
      }),
      address.filter((a) => !NGINX.trusts(a)),
      fc.array(fc.constantFrom("10.0.0.1", "10.20.30.40", "127.0.0.1"), {
        maxLength: 3,
      }),
      (written, seen, hops) => {
        // What the client wrote, then what the first proxy saw, then the
        // trusted hops; the peer is the last trusted hop.
        const header = [...written, seen, ...hops].join(", ")
          .replace(/[\r\n\0]/g, "");
        let r: Request;
        try {
          r = req({ "x-forwarded-for": header });
        } catch {
          return; // not a header value at all
        }
        assert.equal(
          clientAddress(r, { remote: "127.0.0.1", trustedProxies: NGINX }),
          clientAddress(req(), { remote: seen }),
        );
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("clientAddress() property: no header value throws", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: "binary-ascii", maxLength: 200 }).map((s) =>
        s.replace(/[\r\n\0]/g, "").trim()
      ),
      fc.constantFrom("x-forwarded-for", "forwarded", "x-real-ip"),
      fc.constantFrom("127.0.0.1", "192.0.2.1", null),
      (value, header, remote) => {
        let r: Request;
        try {
          r = req({ [header]: value });
        } catch {
          return; // not a header value at all
        }
        const answer = clientAddress(r, {
          remote,
          trustedProxies: NGINX,
          header,
        });
        assert.ok(answer === null || typeof answer === "string");
        if (remote !== "127.0.0.1") assert.equal(answer, remote);
      },
    ),
    { numRuns: 1000 },
  );
});

Deno.test("outside review: a forwarding header no proxy writes is refused (a typo would make it one every client writes), and so is a range that trusts every address", () => {
  const r = req({ "x-forwarded-for": "198.51.100.4" });
  for (
    const header of [
      "x-forwaded-for",
      "x-forwarded-fro",
      "cookie",
      "authorization",
      "x-forwarded-host",
    ]
  ) {
    assert.throws(
      () =>
        clientAddress(r, {
          remote: "127.0.0.1",
          trustedProxies: NGINX,
          header,
        }),
      TypeError,
      header,
    );
  }
  for (
    const header of [
      "x-forwarded-for",
      "forwarded",
      "x-real-ip",
      "cf-connecting-ip",
      "fly-client-ip",
      "true-client-ip",
    ]
  ) {
    clientAddress(r, { remote: "127.0.0.1", trustedProxies: NGINX, header });
  }
  for (const all of ["0.0.0.0/0", "::/0", "::ffff:0:0/96", "10.0.0.1, ::/0"]) {
    assert.throws(() => TrustedProxies.parse(all), /every address/, all);
  }
});

Deno.test("outside review: an X-Forwarded-For padded past 8 KiB by the client still yields the address the proxy appended, never the proxy's own", () => {
  const padding = Array.from(
    { length: 1200 },
    (_, i) => `10.9.${i >> 8}.${i & 255}`,
  )
    .join(", ");
  assert.ok(padding.length > 8192);
  const r = req({ "x-forwarded-for": `${padding}, 198.51.100.77` });
  assert.equal(
    clientAddress(r, { remote: "127.0.0.1", trustedProxies: NGINX }),
    "198.51.100.77",
  );
  // Lows 27 finding 2: every kept entry a trusted proxy, the cut one is
  // where the answer would be: the peer, never a trusted address the
  // client wrote into the padding.
  const allTrusted = req({ "x-forwarded-for": `${padding}, 10.0.0.5` });
  assert.equal(
    clientAddress(allTrusted, { remote: "127.0.0.1", trustedProxies: NGINX }),
    "127.0.0.1",
  );
  // A single entry longer than the bound is malformed: the peer.
  const huge = req({ "x-forwarded-for": "1".repeat(9000) });
  assert.equal(
    clientAddress(huge, { remote: "127.0.0.1", trustedProxies: NGINX }),
    "127.0.0.1",
  );
});

// Lows 27 finding 2: behind an nginx that appends to the client's
// Forwarded (`proxy_set_header Forwarded "$http_forwarded, for=$remote_addr";`),
// a client that sent `Forwarded: for="` (an unterminated quote) swallowed the
// proxy's element into its quoted string, and the whole header fell back to
// the peer: the client counted in the proxy's own bucket, a second budget.
// Elements are read from the right, each on its own, so nothing a client
// writes left of the proxies' part changes how that part reads.
Deno.test("lows 27 finding 2: a client's unterminated quote in Forwarded does not hide the element the proxy appended", () => {
  const read = (value: string, remote = "127.0.0.1", trusted = NGINX) =>
    clientAddress(req({ forwarded: value }), {
      remote,
      trustedProxies: trusted,
      header: "forwarded",
    });
  // nginx's "$http_forwarded, for=$remote_addr" with the client's `for="`.
  assert.equal(read('for=", for=198.51.100.77'), "198.51.100.77");
  // nginx writes an IPv6 $remote_addr unquoted; quoted with brackets too.
  assert.equal(read('for=", for=2001:db8::77'), "2001:db8::77");
  assert.equal(read('for=", for="[2001:db8::77]:4711"'), "2001:db8::77");
  // Through a second trusted proxy that appends as well.
  assert.equal(
    read('for=", for=198.51.100.77, for=10.0.0.3', "10.0.0.4"),
    "198.51.100.77",
  );
  // With a hop count.
  assert.equal(
    read('for=", for=198.51.100.77', "192.0.2.9", TrustedProxies.parse("1")),
    "198.51.100.77",
  );
  assert.equal(
    read(
      'for=", for=198.51.100.77, for=10.0.0.3',
      "192.0.2.9",
      TrustedProxies.parse("2"),
    ),
    "198.51.100.77",
  );
  // Other client-written oddities left of the proxy's element.
  for (
    const client of [
      '"',
      'for="198.51.100.1',
      'for="[2001:db8::1',
      'for="\\',
      'for="a\\"b',
      'for=6.6.6.6;ext="x',
      'for=6.6.6.6, "',
      'for=6.6.6.6;by="a,b',
      '"""',
      "for=6.6.6.6;for=6.6.6.7",
      "garbage",
      "",
    ]
  ) {
    assert.equal(
      read(`${client}, for=198.51.100.77`),
      "198.51.100.77",
      client,
    );
  }
  // The client's text is never the answer, whatever it holds.
  assert.equal(
    read('for=6.6.6.6, for="6.6.6.7, for=198.51.100.77'),
    "198.51.100.77",
  );
});

Deno.test("lows 27 finding 2: a Forwarded padded past 8 KiB by the client yields the element the proxy appended, never the proxy's own address", () => {
  const read = (value: string) =>
    clientAddress(req({ forwarded: value }), {
      remote: "127.0.0.1",
      trustedProxies: NGINX,
      header: "forwarded",
    });
  const elements = Array.from(
    { length: 800 },
    (_, i) => `for=10.9.${i >> 8}.${i & 255}`,
  ).join(", ");
  assert.ok(elements.length > 8192);
  assert.equal(read(`${elements}, for=198.51.100.77`), "198.51.100.77");
  // Padding inside an open quote, so the cut falls inside a quoted string.
  assert.equal(
    read(`for="${"x".repeat(9000)}, for=198.51.100.77`),
    "198.51.100.77",
  );
  assert.equal(
    read(`for="${"x,".repeat(5000)}", for=198.51.100.77`),
    "198.51.100.77",
  );
  // The cut element itself is never read: only entries right of it count.
  assert.equal(read(`for=${"1".repeat(9000)}`), "127.0.0.1");
  assert.equal(
    read(`${elements}, for=10.0.0.5`),
    "127.0.0.1",
  );
});

Deno.test("lows 27 finding 2 (property): whatever the client writes in Forwarded, the answer is the address the first proxy appended", () => {
  const address = fc.oneof(fc.ipV4(), fc.ipV6());
  const element = (a: string) => a.includes(":") ? `for="[${a}]"` : `for=${a}`;
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: "binary-ascii", maxLength: 60 }),
        fc.array(
          fc.oneof(
            fc.constantFrom('"', "\\", ",", ";", "=", "for=", 'for="', " "),
            address,
            fc.string({ maxLength: 8 }),
          ),
          { maxLength: 12 },
        ).map((parts) => parts.join("")),
      ),
      address.filter((a) => !NGINX.trusts(a)),
      fc.array(fc.constantFrom("10.0.0.1", "10.20.30.40", "127.0.0.1"), {
        maxLength: 3,
      }),
      fc.boolean(),
      (written, seen, hops, unquotedV6) => {
        const seenElement = unquotedV6 ? `for=${seen}` : element(seen);
        const header = [
          written.replace(/[\r\n\0]/g, ""),
          seenElement,
          ...hops.map(element),
        ].join(", ");
        let r: Request;
        try {
          r = req({ forwarded: header });
        } catch {
          return; // not a header value at all
        }
        assert.equal(
          clientAddress(r, {
            remote: "127.0.0.1",
            trustedProxies: NGINX,
            header: "forwarded",
          }),
          clientAddress(req(), { remote: seen }),
        );
      },
    ),
    { numRuns: 1000 },
  );
});
