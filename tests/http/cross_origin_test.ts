import assert from "node:assert/strict";
import { CrossOriginProtection } from "../../lib/http/mod.ts";
import { makeManager } from "../session/_helpers.ts";
import { makeApp } from "./_app.ts";

function request(
  method: string,
  site?: string,
  origin?: string,
  path = "/",
  extra: Record<string, string> = {},
) {
  const headers: Record<string, string> = { ...extra };
  if (site !== undefined) headers["sec-fetch-site"] = site;
  if (origin !== undefined) headers["origin"] = origin;
  return new Request(`https://example.com${path}`, { method, headers });
}

Deno.test("item 29: Go 1.25 CrossOriginProtection table (SECURITY.md §2.2)", () => {
  const csrf = new CrossOriginProtection();
  const table: [string, string | undefined, string | undefined, boolean][] = [
    ["POST", "same-origin", undefined, true],
    ["POST", "none", undefined, true],
    ["POST", "cross-site", undefined, false],
    ["POST", "same-site", undefined, false],
    ["POST", undefined, undefined, true],
    ["POST", undefined, "https://example.com", true],
    ["POST", undefined, "https://attacker.example", false],
    ["POST", undefined, "null", false],
    ["GET", "cross-site", undefined, true],
    ["HEAD", "cross-site", undefined, true],
    ["OPTIONS", "cross-site", undefined, true],
    ["PUT", "cross-site", undefined, false],
    ["PATCH", "cross-site", undefined, false],
    ["DELETE", "cross-site", undefined, false],
    ["POST", "unknown-value", undefined, false],
  ];
  for (const [method, site, origin, allowed] of table) {
    assert.equal(
      csrf.check(request(method, site, origin)),
      allowed,
      `${method} ${site} ${origin}`,
    );
  }
});

Deno.test("item 29: trusted origins pass exactly, others do not", () => {
  const csrf = new CrossOriginProtection({
    trustedOrigins: ["https://trusted.example"],
  });
  assert.equal(
    csrf.check(request("POST", undefined, "https://trusted.example")),
    true,
  );
  assert.equal(
    csrf.check(request("POST", "cross-site", "https://trusted.example")),
    true,
  );
  assert.equal(
    csrf.check(request("POST", undefined, "https://attacker.example")),
    false,
  );
  assert.equal(
    csrf.check(request("POST", "cross-site", "https://attacker.example")),
    false,
  );
  assert.equal(
    csrf.check(
      request("POST", "cross-site", "https://trusted.example.attacker.example"),
    ),
    false,
  );
  assert.equal(
    csrf.check(request("POST", "cross-site", "http://trusted.example")),
    false,
  );
});

Deno.test("item 31: a trusted origin with a path, trailing slash, null or empty is a configuration error", () => {
  for (
    const bad of [
      "https://example.com/",
      "example.com",
      "null",
      "",
      "https://example.com/path",
      "https://example.com?q",
      "ftp://example.com",
      "https://user@example.com",
    ]
  ) {
    assert.throws(
      () => new CrossOriginProtection({ trustedOrigins: [bad] }),
      TypeError,
      bad,
    );
  }
  assert.throws(
    () => new CrossOriginProtection({ appOrigin: "https://example.com/" }),
    TypeError,
  );
  assert.throws(
    () => new CrossOriginProtection({ exemptPaths: ["hook"] }),
    TypeError,
  );
  assert.ok(
    new CrossOriginProtection({ trustedOrigins: ["http://localhost:8000"] }),
  );
});

Deno.test("V16 (CVE-2025-47910): exempt paths match exactly, with no prefix, slash or case leniency", () => {
  const csrf = new CrossOriginProtection({ exemptPaths: ["/api/hook"] });
  assert.equal(
    csrf.check(request("POST", "cross-site", undefined, "/api/hook")),
    true,
  );
  for (
    const path of [
      "/api/hook/",
      "/api//hook",
      "/API/hook",
      "/api/hook/x",
      "/api/hookx",
      "/api/hook%2F",
      "/x/api/hook",
    ]
  ) {
    assert.equal(
      csrf.check(request("POST", "cross-site", undefined, path)),
      false,
      path,
    );
  }
  // Dot segments are resolved by the URL parser before any code sees the
  // request, and routers dispatch the resolved path: the same handler.
  assert.equal(
    new Request("https://example.com/api/./hook").url,
    "https://example.com/api/hook",
  );
});

Deno.test("appOrigin (APP_ORIGIN) replaces the request host in the Origin comparison", () => {
  const csrf = new CrossOriginProtection({ appOrigin: "https://app.example" });
  // Behind a proxy the request URL carries an internal host.
  const internal = (origin: string) =>
    new Request("http://10.0.0.1:3000/x", {
      method: "POST",
      headers: { origin },
    });
  assert.equal(csrf.check(internal("https://app.example")), true);
  assert.equal(csrf.check(internal("http://10.0.0.1:3000")), false);
  assert.equal(csrf.check(internal("http://app.example")), false);
});

Deno.test("V1/V2 (CVE-2024-43787, CVE-2024-48913): content type plays no part in the decision", async () => {
  const { sessions } = makeManager();
  const { handler, calls } = makeApp(sessions);
  const token = await sessions.issue("alice");
  for (
    const type of [
      undefined,
      "application/x-www-form-urlencoded",
      "Application/X-WWW-Form-Urlencoded",
      "multipart/form-data; boundary=x",
      "text/plain",
      "TEXT/PLAIN;charset=utf-8",
      "application/json",
      "",
    ]
  ) {
    const headers: Record<string, string> = {
      cookie: `__Host-session=${token}`,
      "sec-fetch-site": "cross-site",
    };
    if (type !== undefined) headers["content-type"] = type;
    const res = await handler(
      new Request("https://example.com/notes/n1", {
        method: "POST",
        headers,
        body: "x=1",
      }),
    );
    assert.equal(res.status, 403, String(type));
  }
  assert.deepEqual(calls, []);
});

Deno.test("the CSRF matrix through the middleware: method × Sec-Fetch-Site × Origin × transport", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions, {
    crossOrigin: { trustedOrigins: ["https://trusted.example"] },
  });
  const token = await sessions.issue("alice");
  const sites = [undefined, "same-origin", "none", "same-site", "cross-site"];
  const origins = [
    undefined,
    "https://example.com",
    "https://attacker.example",
    "null",
    "https://trusted.example",
  ];
  const transports = ["cookie", "bearer", "none", "bad-bearer"] as const;
  let checked = 0;
  for (
    const method of ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]
  ) {
    for (const site of sites) {
      for (const origin of origins) {
        for (const transport of transports) {
          const headers: Record<string, string> = {};
          if (site) headers["sec-fetch-site"] = site;
          if (origin) headers["origin"] = origin;
          if (transport === "cookie") {
            headers.cookie = `__Host-session=${token}`;
          }
          if (transport === "bearer") headers.authorization = `Bearer ${token}`;
          if (transport === "bad-bearer") headers.authorization = "Bearer nope";
          const res = await handler(
            new Request("https://example.com/notes/n1", { method, headers }),
          );
          const safe = ["GET", "HEAD", "OPTIONS"].includes(method);
          const browserOk = site === "same-origin" || site === "none" ||
            (site === undefined &&
              (origin === undefined || origin === "https://example.com")) ||
            origin === "https://trusted.example";
          const expectCsrf403 = !safe && transport !== "bearer" && !browserOk;
          const label = `${method} site=${site} origin=${origin} ${transport}`;
          if (expectCsrf403) {
            assert.equal(res.status, 403, label);
            assert.equal(
              (await res.json()).error,
              "cross_origin_rejected",
              label,
            );
          } else {
            const body = method === "HEAD" ? null : await res.text();
            if (transport === "cookie" || transport === "bearer") {
              assert.equal(res.status, 200, label);
            } else {assert.equal(
                res.status,
                403,
                label + " (policy denies anonymous)",
              );}
            if (body !== null && res.status === 403) {
              assert.match(body, /forbidden/);
            }
          }
          checked++;
        }
      }
    }
  }
  assert.equal(checked, 7 * 5 * 5 * 4);
});

Deno.test("item 34: the login endpoint is cross-origin checked too (login CSRF)", async () => {
  const { sessions } = makeManager();
  const { handler, calls } = makeApp(sessions);
  const res = await handler(
    request("POST", "cross-site", "https://attacker.example", "/login"),
  );
  assert.equal(res.status, 403);
  assert.equal(res.headers.get("set-cookie"), null);
  assert.deepEqual(calls, []);
});

Deno.test("a refused cross-origin request names the origin the app expects", async () => {
  const { sessions } = makeManager();
  const { handler } = makeApp(sessions);
  const res = await handler(
    request("POST", "cross-site", "https://attacker.example", "/login", {
      accept: "application/json",
    }),
  );
  assert.equal(res.status, 403);
  const body = await res.json();
  assert.equal(body.error, "cross_origin_rejected");
  assert.match(
    body.message,
    /takes unsafe requests from https:\/\/example\.com$/,
  );
  const csrf = new CrossOriginProtection({ appOrigin: "https://app.example" });
  assert.equal(
    csrf.expectedOrigin(new Request("http://10.0.0.7:8000/x")),
    "https://app.example",
  );
});
