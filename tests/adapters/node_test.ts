/**
 * The node:http adapter, driven through a real `node:http` server (Deno's
 * Node compatibility layer; the Node conformance run covers Node itself).
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { serve } from "../../lib/http/adapters/node.ts";

async function withServer(
  handler: Parameters<typeof serve>[0],
  fn: (base: string) => Promise<void>,
  origin?: string,
): Promise<void> {
  const server = await serve(handler, {
    port: 0,
    hostname: "127.0.0.1",
    origin,
    onError: () => {},
  });
  const { port } = server.address() as AddressInfo;
  try {
    await fn(`http://127.0.0.1:${port}`);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

Deno.test("node adapter: method, URL, headers and a streamed body reach the handler", async () => {
  await withServer(async (req, info) => {
    return Response.json({
      method: req.method,
      url: req.url,
      custom: req.headers.get("x-custom"),
      body: await req.text(),
      peer: info.remoteAddr.hostname,
    });
  }, async (base) => {
    const res = await fetch(`${base}/a/b?c=1`, {
      method: "POST",
      headers: { "x-custom": "yes" },
      body: "x".repeat(100_000),
    });
    const got = await res.json();
    assert.equal(got.method, "POST");
    assert.equal(
      new URL(got.url).pathname + new URL(got.url).search,
      "/a/b?c=1",
    );
    assert.equal(got.custom, "yes");
    assert.equal(got.body.length, 100_000);
    assert.equal(got.peer, "127.0.0.1");
  });
});

Deno.test("node adapter: several Set-Cookie headers stay separate", async () => {
  await withServer(() => {
    const headers = new Headers();
    headers.append("set-cookie", "a=1; Path=/; HttpOnly");
    headers.append("set-cookie", "b=2; Path=/; Max-Age=0");
    return new Response("ok", { status: 201, headers });
  }, async (base) => {
    const res = await fetch(base);
    await res.body?.cancel();
    assert.equal(res.status, 201);
    assert.deepEqual(res.headers.getSetCookie(), [
      "a=1; Path=/; HttpOnly",
      "b=2; Path=/; Max-Age=0",
    ]);
  });
});

Deno.test("node adapter: the configured origin builds the URL, not the Host header", async () => {
  await withServer((req) => new Response(req.url), async (base) => {
    const res = await fetch(`${base}/x`, { headers: { host: "evil.example" } });
    assert.equal(await res.text(), "https://app.example/x");
  }, "https://app.example");
});

Deno.test("node adapter: a handler that throws answers a plain 500", async () => {
  await withServer(() => {
    throw new Error("boom");
  }, async (base) => {
    const res = await fetch(base);
    assert.equal(res.status, 500);
    assert.equal(await res.text(), "Internal Server Error");
  });
});

Deno.test("node adapter: a streamed response body arrives whole, and redirects keep their Location", async () => {
  await withServer((req) => {
    if (new URL(req.url).pathname === "/r") {
      return new Response(null, {
        status: 303,
        headers: { location: "/login" },
      });
    }
    const chunks = ["one ", "two ", "three"];
    return new Response(
      new ReadableStream({
        pull(c) {
          const next = chunks.shift();
          if (next === undefined) c.close();
          else c.enqueue(new TextEncoder().encode(next));
        },
      }),
    );
  }, async (base) => {
    assert.equal(await (await fetch(base)).text(), "one two three");
    const r = await fetch(`${base}/r`, { redirect: "manual" });
    await r.body?.cancel();
    assert.equal(r.status, 303);
    assert.equal(r.headers.get("location"), "/login");
  });
});
