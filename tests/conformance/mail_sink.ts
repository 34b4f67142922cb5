/**
 * Test support: a mail sink on 127.0.0.1 that speaks the part of Resend's
 * HTTP API the app's `ResendMailer` uses (`POST /emails` with
 * `Authorization: Bearer <key>` and `{from, to, subject, html, text}`).
 * Every runtime's entry picks it up from `RESEND_API_KEY` and
 * `RESEND_BASE_URL`, so the conformance suite reads verification links the
 * same way on Deno, Bun, Node, Vercel's edge-runtime and workerd.
 *
 * @module
 */

/** One captured email. */
export interface SunkMail {
  /** The recipients. */
  to: string[];
  /** The subject line. */
  subject: string;
  /** The plain-text body. */
  text: string;
  /** The HTML body. */
  html: string;
}

/** A running sink; see {@linkcode startMailSink}. */
export interface MailSink {
  /** The base URL to give as `RESEND_BASE_URL`. */
  readonly url: string;
  /** The API key it accepts, to give as `RESEND_API_KEY`. */
  readonly apiKey: string;
  /** Every email received so far, oldest first. */
  readonly mails: readonly SunkMail[];
  /**
   * Waits for the `n`-th email (1-based) to an address and answers the
   * first URL in its text.
   *
   * @param to The recipient.
   * @param n Which email; default 1.
   * @param timeoutMs How long to wait; default 5000.
   */
  link(to: string, n?: number, timeoutMs?: number): Promise<string>;
  /** Stops the server. */
  close(): Promise<void>;
}

/**
 * Starts a sink on a random port of 127.0.0.1.
 *
 * @returns The running sink.
 */
export function startMailSink(): MailSink {
  const apiKey = `re_test_${crypto.randomUUID()}`;
  const mails: SunkMail[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/emails") {
        return Response.json({ message: "Not found" }, { status: 404 });
      }
      if (req.headers.get("authorization") !== `Bearer ${apiKey}`) {
        return Response.json({ message: "Invalid API key" }, { status: 401 });
      }
      const body = await req.json().catch(() => null);
      if (
        body === null || !Array.isArray(body.to) ||
        typeof body.subject !== "string" || typeof body.text !== "string"
      ) {
        return Response.json({ message: "Invalid body" }, { status: 422 });
      }
      mails.push({
        to: body.to.map(String),
        subject: body.subject,
        text: body.text,
        html: String(body.html ?? ""),
      });
      return Response.json({ id: crypto.randomUUID() });
    },
  );
  const { port } = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    mails,
    async link(to: string, n = 1, timeoutMs = 5000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      while (true) {
        const found = mails.filter((m) => m.to.includes(to));
        if (found.length >= n) {
          const url = found[n - 1].text.match(/https?:\/\/\S+/)?.[0];
          if (url === undefined) throw new Error(`Mail to ${to} has no link`);
          return url;
        }
        if (Date.now() > deadline) {
          throw new Error(`No mail #${n} to ${to} within ${timeoutMs} ms`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close(): Promise<void> {
      await server.shutdown();
    },
  };
}
