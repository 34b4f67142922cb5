/**
 * The security test kit (`@portcullis/accounts/testing`) itself: it passes
 * against the reference app, reports a module that is off as not
 * applicable (and as a failure when the options say the module is on), and
 * fails against an app that breaks a guarantee: the reference app behind a
 * small proxy that breaks one rule each (a real server on 127.0.0.1, as a
 * careless change to an app would). Its mail readers read `LogMailer`'s
 * lines and a recording stand-in for Resend's API that `ResendMailer` sends
 * to over HTTP.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  accountsKit,
  formatKitReport,
  type KitReport,
  logMailReader,
  mailRecorder,
  recordedMailReader,
  runAccountsKit,
} from "../../packages/accounts/testing/mod.ts";
import { LogMailer, ResendMailer } from "../../packages/accounts/mod.ts";
import { startApp, type TestApp } from "../app/_harness.ts";

/** The reference app behind a proxy that rewrites requests or answers. */
async function behindProxy(
  rewrite: (
    req: Request,
    forward: (req: Request) => Promise<Response>,
    app: TestApp,
  ) => Promise<Response>,
  run: (baseUrl: string, mail: string[]) => Promise<KitReport>,
): Promise<KitReport> {
  await using app = await startApp();
  const upstream = app.origin.replace("localhost", "127.0.0.1");
  const forward = (req: Request) => {
    const url = new URL(req.url);
    return fetch(upstream + url.pathname + url.search, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      redirect: "manual",
    });
  };
  const proxy = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => rewrite(req, forward, app),
  );
  try {
    return await run(`http://127.0.0.1:${proxy.addr.port}`, app.mail);
  } finally {
    await proxy.shutdown();
  }
}

function statusOf(report: KitReport, fragment: string): string {
  const found = report.results.filter((r) => r.name.includes(fragment));
  assert.equal(found.length, 1, `one check named like "${fragment}"`);
  return found[0].status;
}

Deno.test("runAccountsKit passes against the reference app and reports TOTP, which is off, as not applicable", async () => {
  await using app = await startApp();
  const report = await runAccountsKit({
    baseUrl: app.origin,
    mail: logMailReader(app.mail),
  });
  assert.equal(report.failed, 0, formatKitReport(report));
  assert.ok(report.passed >= 11, formatKitReport(report));
  assert.equal(report.notApplicable, 1);
  const totp = report.results.find((r) => r.status === "not_applicable")!;
  assert.match(totp.name, /^TOTP/);
  assert.match(totp.message!, /POST \/account\/totp answers 404/);
  assert.match(formatKitReport(report), /\nn\/a - TOTP/);
});

Deno.test("runAccountsKit: totp: true against an app without the module is a failure, never a pass", async () => {
  await using app = await startApp();
  const report = await runAccountsKit({
    baseUrl: app.origin,
    mail: logMailReader(app.mail),
    totp: true,
  });
  assert.equal(statusOf(report, "TOTP"), "failed");
  assert.equal(report.failed, 1, formatKitReport(report));
});

Deno.test("accountsKit registers one step per check, the module that is off as an ignored step", async (t) => {
  await using app = await startApp();
  const report = await accountsKit({
    baseUrl: app.origin,
    mail: logMailReader(app.mail),
  }, t);
  assert.equal(report.failed, 0, formatKitReport(report));
  assert.equal(report.notApplicable, 1);
});

Deno.test("the kit fails against an app whose cookies lose HttpOnly", async () => {
  const report = await behindProxy(async (req, forward) => {
    const res = await forward(req);
    const headers = new Headers();
    for (const [name, value] of res.headers) {
      if (name !== "set-cookie") headers.append(name, value);
    }
    for (const line of res.headers.getSetCookie()) {
      headers.append("set-cookie", line.replace(/;\s*HttpOnly/i, ""));
    }
    return new Response(res.body, { status: res.status, headers });
  }, (baseUrl, mail) => runAccountsKit({ baseUrl, mail: logMailReader(mail) }));
  assert.equal(statusOf(report, "cookies are HttpOnly"), "failed");
  assert.match(
    report.results.find((r) => r.name.startsWith("cookies"))!.message!,
    /is HttpOnly/,
  );
});

Deno.test("the kit fails against an app that lets a cross-site request through", async () => {
  const report = await behindProxy((req, forward) => {
    const headers = new Headers(req.headers);
    headers.delete("sec-fetch-site");
    headers.delete("origin");
    return forward(new Request(req, { headers }));
  }, (baseUrl, mail) => runAccountsKit({ baseUrl, mail: logMailReader(mail) }));
  assert.equal(statusOf(report, "from another site"), "failed");
});

Deno.test("the kit fails against an app whose sign-out does not revoke the session", async () => {
  const report = await behindProxy(async (req, forward) => {
    if (new URL(req.url).pathname === "/logout") {
      await req.body?.cancel();
      return new Response(null, { status: 204 });
    }
    return forward(req);
  }, (baseUrl, mail) => runAccountsKit({ baseUrl, mail: logMailReader(mail) }));
  assert.equal(statusOf(report, "signing out revokes"), "failed");
});

Deno.test("the kit fails against an app whose forgotten-password answer tells a registered address", async () => {
  const report = await behindProxy(async (req, forward, app) => {
    if (new URL(req.url).pathname === "/password/forgot") {
      const body = await req.clone().json().catch(() => ({}));
      const user = await app.credentials.findByEmail(String(body.email));
      const res = await forward(req);
      await res.body?.cancel();
      return Response.json({ known: user !== null }, { status: res.status });
    }
    return forward(req);
  }, (baseUrl, mail) => runAccountsKit({ baseUrl, mail: logMailReader(mail) }));
  assert.equal(statusOf(report, "answer alike"), "failed");
  assert.equal(statusOf(report, "password reset ends"), "passed");
});

Deno.test("the kit fails against an app that keeps the old 8-character minimum, and passes when told the app's own minimum", async () => {
  await using app = await startApp({ minPasswordLength: 8 });
  const strict = await runAccountsKit({
    baseUrl: app.origin,
    mail: logMailReader(app.mail),
  });
  assert.equal(statusOf(strict, "15 by default"), "failed");
  await using other = await startApp({ minPasswordLength: 8 });
  const told = await runAccountsKit({
    baseUrl: other.origin,
    mail: logMailReader(other.mail),
    minPasswordLength: 8,
  });
  assert.equal(statusOf(told, "15 by default"), "passed");
});

Deno.test("without the verification module, its check is not applicable, and the TOTP check proves the address with a reset first", async () => {
  await using app = await startApp({ now: Date.now }, {
    signInEnv: { TOTP: "on", PASSKEYS: "off" },
    wrapModules: (modules) => modules.filter((m) => m.name !== "verification"),
  });
  const report = await runAccountsKit({
    baseUrl: app.origin,
    mail: logMailReader(app.mail),
  });
  assert.equal(report.failed, 0, formatKitReport(report));
  assert.equal(statusOf(report, "verification link"), "not_applicable");
  assert.equal(statusOf(report, "TOTP"), "passed");
});

Deno.test("logMailReader answers the latest link to an address and skips other lines", async () => {
  const lines: string[] = ["Listening on http://localhost:8000/"];
  const mailer = new LogMailer((line) => lines.push(`app | ${line}`));
  const read = logMailReader(() => lines.join("\n"));
  assert.equal(await read("a@example.com"), null);
  for (const token of ["one", "two"]) {
    await mailer.send({
      to: "a@example.com",
      subject: "Verify",
      view: "",
      text: `Open http://localhost:8000/verify?token=${token} now`,
    });
  }
  await mailer.send({
    to: "b@example.com",
    subject: "Verify",
    view: "",
    text: "http://localhost:8000/verify?token=other",
  });
  assert.equal(
    await read("a@example.com"),
    "http://localhost:8000/verify?token=two",
  );
  assert.equal(await logMailReader(lines)("ab@example.com"), null);
});

Deno.test("mailRecorder records what ResendMailer sends over HTTP and refuses a wrong key or body", async () => {
  const recorder = mailRecorder();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    recorder.fetch,
  );
  const baseUrl = `http://127.0.0.1:${server.addr.port}`;
  try {
    const mailer = new ResendMailer({
      apiKey: recorder.apiKey,
      from: "app <no-reply@example.com>",
      baseUrl,
    });
    await mailer.send({
      to: "a@example.com",
      subject: "Reset",
      view: "<p>x</p>",
      text: "Reset: https://app.example/password/reset?token=abc",
    });
    assert.equal(
      await recorder.read("a@example.com"),
      "https://app.example/password/reset?token=abc",
    );
    assert.equal(recorder.mails.length, 1);
    const wrongKey = new ResendMailer({
      apiKey: "re_wrong",
      from: "app <no-reply@example.com>",
      baseUrl,
    });
    await assert.rejects(
      wrongKey.send({ to: "a@example.com", subject: "s", view: "", text: "t" }),
      /401/,
    );
    const bad = await fetch(`${baseUrl}/emails`, {
      method: "POST",
      headers: { authorization: `Bearer ${recorder.apiKey}` },
      body: "{}",
    });
    assert.equal(bad.status, 422);
    await bad.body?.cancel();
    const other = await fetch(`${baseUrl}/domains`);
    assert.equal(other.status, 404);
    await other.body?.cancel();
    assert.equal(recorder.mails.length, 1, "nothing else was recorded");
  } finally {
    await server.shutdown();
  }
  const mails = [
    { to: ["x@example.com", "y@example.com"], text: "http://a/1" },
    { to: "y@example.com", text: "no link here" },
  ];
  assert.equal(await recordedMailReader(mails)("x@example.com"), "http://a/1");
  assert.equal(await recordedMailReader(mails)("y@example.com"), null);
});

Deno.test("runAccountsKit refuses a missing base URL or mail reader", async () => {
  await assert.rejects(
    runAccountsKit({ baseUrl: "localhost:8000", mail: logMailReader([]) }),
    TypeError,
  );
  await assert.rejects(
    // deno-lint-ignore no-explicit-any
    runAccountsKit({ baseUrl: "http://127.0.0.1:1" } as any),
    TypeError,
  );
});
