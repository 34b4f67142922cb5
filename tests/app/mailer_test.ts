// The mail API is the one part that cannot exist here: a fake of Resend's
// `POST /emails` runs as a real HTTP server on 127.0.0.1 and records what it
// received.
import assert from "node:assert/strict";
import { ResendMailer } from "../../packages/accounts/mod.ts";
import { startApp } from "./_harness.ts";

interface Received {
  path: string;
  authorization: string | null;
  body: {
    from: string;
    to: string[];
    subject: string;
    html: string;
    text: string;
  };
}

async function fakeMailApi(status = 200) {
  const received: Received[] = [];
  const ac = new AbortController();
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve(
    {
      port: 0,
      hostname: "127.0.0.1",
      signal: ac.signal,
      onListen: (a) => ready.resolve(a.port),
    },
    async (req) => {
      received.push({
        path: new URL(req.url).pathname,
        authorization: req.headers.get("authorization"),
        body: await req.json(),
      });
      return Response.json({ id: "email_1" }, { status });
    },
  );
  const port = await ready.promise;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    received,
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

Deno.test("ResendMailer posts Resend's shape with the key as Bearer", async () => {
  const api = await fakeMailApi();
  try {
    const mailer = new ResendMailer({
      apiKey: "re_test_key",
      from: "App <no-reply@example.com>",
      baseUrl: api.baseUrl + "/",
    });
    await mailer.send({
      to: "a@example.com",
      subject: "Hi",
      view: "<p>Hi</p>",
      text: "Hi",
    });
    assert.deepEqual(api.received, [{
      path: "/emails",
      authorization: "Bearer re_test_key",
      body: {
        from: "App <no-reply@example.com>",
        to: ["a@example.com"],
        subject: "Hi",
        html: "<p>Hi</p>",
        text: "Hi",
      },
    }]);
  } finally {
    await api.close();
  }
});

Deno.test("ResendMailer throws on a non-2xx answer without the key in the message", async () => {
  const api = await fakeMailApi(500);
  try {
    const mailer = new ResendMailer({
      apiKey: "re_secret_key",
      from: "a@example.com",
      baseUrl: api.baseUrl,
    });
    await assert.rejects(
      () =>
        mailer.send({
          to: "b@example.com",
          subject: "s",
          view: "v",
          text: "t",
        }),
      (e: unknown) =>
        e instanceof Error && /500/.test(e.message) &&
        !e.message.includes("re_secret_key"),
    );
  } finally {
    await api.close();
  }
});

Deno.test("registration mails the verification link through the API to the stored address, on the configured origin (item 44)", async () => {
  const api = await fakeMailApi();
  await using app = await startApp({
    mailer: new ResendMailer({
      apiKey: "re_key",
      from: "a@example.com",
      baseUrl: api.baseUrl,
    }),
  });
  try {
    const res = await fetch(`${app.origin}/register`, {
      method: "POST",
      headers: { "content-type": "application/json", host: "evil.example" },
      body: JSON.stringify({
        email: "  New.User@Example.COM ",
        password: "correct horse battery",
      }),
    });
    assert.equal(res.status, 201);
    await res.body?.cancel();
    assert.equal(api.received.length, 1);
    const mail = api.received[0];
    assert.deepEqual(mail.body.to, ["new.user@example.com"]);
    const link = mail.body.text.match(/https?:\/\/\S+/)![0];
    assert.ok(link.startsWith(`${app.origin}/verify?token=`), link);
    assert.ok(
      !mail.body.html.includes("evil.example") &&
        !mail.body.text.includes("evil.example"),
    );
    assert.ok(mail.body.html.includes(link.replaceAll("&", "&amp;")));
  } finally {
    await api.close();
  }
});
