/**
 * How the security test kit reads the links an app mails: a
 * {@linkcode MailReader} answers the latest link mailed to an address.
 * Two ready readers: {@linkcode logMailReader} over the lines of
 * `LogMailer` (`[mail not sent] to=… link=…`), and
 * {@linkcode recordedMailReader} over mails recorded by a stand-in for an
 * HTTP mail API, such as the one {@linkcode mailRecorder} serves.
 *
 * @module
 */
import { MAIL_LOG_MARKER } from "../mailer.ts";

/**
 * Answers the latest link mailed to `address` (the first URL of the
 * newest mail to it), or `null` when nothing was mailed to it yet. The
 * kit calls it before and after an action and waits for a new link.
 */
export type MailReader = (address: string) => Promise<string | null>;

/**
 * Reads `LogMailer`'s lines: each mail is one line
 * `[mail not sent] to=<address> subject="…" link=<url>`, in the order
 * written. Lines without the marker are skipped, so the whole output of a
 * server process can be given.
 *
 * @param source The lines (an array the app's `log` pushes to), or a
 * function answering the output so far (a string or lines).
 * @returns The reader.
 *
 * @example Over the app's log lines
 * ```ts
 * import { LogMailer } from "@portcullis/accounts";
 * import { logMailReader } from "@portcullis/accounts/testing";
 *
 * const lines: string[] = [];
 * const mailer = new LogMailer((line) => lines.push(line));
 * await mailer.send({
 *   to: "a@example.com",
 *   subject: "Verify",
 *   view: "",
 *   text: "Open http://localhost:8000/verify?token=abc",
 * });
 * const link = await logMailReader(lines)("a@example.com");
 * if (link !== "http://localhost:8000/verify?token=abc") throw new Error(link ?? "none");
 * ```
 */
export function logMailReader(
  source: readonly string[] | (() => string | readonly string[]),
): MailReader {
  return (address) => {
    const output = typeof source === "function" ? source() : source;
    const lines = typeof output === "string" ? output.split("\n") : output;
    let latest: string | null = null;
    for (const line of lines) {
      const at = line.indexOf(MAIL_LOG_MARKER);
      if (at < 0) continue;
      const to = line.slice(at).match(/ to=(\S+) /)?.[1];
      const link = line.slice(at).match(/ link=(https?:\/\/\S+)/)?.[1];
      if (to === address && link !== undefined) latest = link;
    }
    return Promise.resolve(latest);
  };
}

/** One mail as an HTTP mail API received it (Resend's shape). */
export interface RecordedMail {
  /** The recipients: one address or several. */
  to: string | readonly string[];
  /** The plain-text body, where the kit looks for the link. */
  text: string;
  /** The subject line. */
  subject?: string;
}

/**
 * Reads mails recorded in order (oldest first) by a stand-in for the mail
 * API the app sends to: the latest mail to the address, its first URL.
 *
 * @param mails The recorded mails; the array may grow after the call.
 * @returns The reader.
 *
 * @example Usage
 * ```ts
 * import { recordedMailReader } from "@portcullis/accounts/testing";
 *
 * const mails = [{ to: ["a@example.com"], text: "Open https://app.example/verify?token=x" }];
 * const link = await recordedMailReader(mails)("a@example.com");
 * if (link !== "https://app.example/verify?token=x") throw new Error(link ?? "none");
 * ```
 */
export function recordedMailReader(
  mails: readonly RecordedMail[],
): MailReader {
  return (address) => {
    for (let i = mails.length - 1; i >= 0; i--) {
      const to = mails[i].to;
      const matches = typeof to === "string"
        ? to === address
        : to.includes(address);
      if (matches) {
        return Promise.resolve(
          mails[i].text.match(/https?:\/\/\S+/)?.[0] ?? null,
        );
      }
    }
    return Promise.resolve(null);
  };
}

/** A recording stand-in for an HTTP mail API; see {@linkcode mailRecorder}. */
export interface MailRecorder {
  /**
   * The Web-standard handler to serve (`Deno.serve`, `Bun.serve`, any
   * server of `Request` and `Response`): `POST /emails` with
   * `Authorization: Bearer <apiKey>` and Resend's JSON
   * (`{from, to, subject, html, text}`) is recorded and answered 200; a
   * wrong key 401, a malformed body 422, anything else 404.
   */
  fetch(req: Request): Promise<Response>;
  /** The key it accepts: give it to the app as `RESEND_API_KEY`. */
  readonly apiKey: string;
  /** Every mail recorded, oldest first. */
  readonly mails: readonly RecordedMail[];
  /** The kit's reader over {@linkcode MailRecorder.mails}. */
  readonly read: MailReader;
}

/**
 * Makes a recording stand-in for Resend's `POST /emails`, which
 * `ResendMailer` (and `mailerFromEnv` with `RESEND_API_KEY` and
 * `RESEND_BASE_URL`) sends to. Serve its `fetch` on 127.0.0.1, point the
 * app's `RESEND_BASE_URL` at it, and give its `read` to the kit. Nothing
 * leaves the machine.
 *
 * @param apiKey The key to accept; default a random one.
 * @returns The recorder.
 *
 * @example Served by Deno next to the app under test
 * ```ts ignore
 * import { mailRecorder } from "@portcullis/accounts/testing";
 *
 * const recorder = mailRecorder();
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0 }, recorder.fetch);
 * // start the app with RESEND_API_KEY=recorder.apiKey and
 * // RESEND_BASE_URL=http://127.0.0.1:<server.addr.port>
 * ```
 */
export function mailRecorder(
  apiKey: string = `re_test_${crypto.randomUUID()}`,
): MailRecorder {
  const mails: RecordedMail[] = [];
  const answer = (message: string, status: number) =>
    Response.json({ message }, { status });
  return {
    apiKey,
    mails,
    read: recordedMailReader(mails),
    async fetch(req: Request): Promise<Response> {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/emails") {
        await req.body?.cancel();
        return answer("Not found", 404);
      }
      if (req.headers.get("authorization") !== `Bearer ${apiKey}`) {
        await req.body?.cancel();
        return answer("Invalid API key", 401);
      }
      const body = await req.json().catch(() => null);
      if (
        body === null || typeof body !== "object" ||
        !(typeof body.to === "string" || Array.isArray(body.to)) ||
        typeof body.text !== "string"
      ) {
        return answer("Invalid body", 422);
      }
      mails.push({
        to: typeof body.to === "string" ? body.to : body.to.map(String),
        text: body.text,
        subject: typeof body.subject === "string" ? body.subject : undefined,
      });
      return Response.json({ id: crypto.randomUUID() });
    },
  };
}
