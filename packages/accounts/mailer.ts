/**
 * Sending mail: through Resend's HTTP API when a key is configured, or one
 * clearly marked log line (with the link) in development.
 *
 * @module
 */

/** One email. */
export interface MailMessage {
  /** The recipient: the stored, normalised address. */
  to: string;
  /** The subject line. */
  subject: string;
  /** The HTML body, rendered from a view in `views/emails/`. */
  view: string;
  /** The plain-text body. */
  text: string;
}

/** Anything that can send an email. A failure throws. */
export interface Mailer {
  /**
   * Sends one email.
   *
   * @param message The email.
   */
  send(message: MailMessage): Promise<void>;
}

/** The marker that starts every line {@linkcode LogMailer} writes. */
export const MAIL_LOG_MARKER = "[mail not sent]";

/**
 * Writes one line per email instead of sending it, for development:
 * `[mail not sent] to=<address> subject="<subject>" link=<first URL>`.
 * Never use it in production: the line holds a working link.
 */
export class LogMailer implements Mailer {
  #log: (line: string) => void;

  /**
   * Makes a mailer that logs instead of sending.
   *
   * @param log Where the line goes; default `console.log`.
   */
  constructor(log: (line: string) => void = console.log) {
    this.#log = log;
  }

  /**
   * Logs the email's recipient, subject and first link.
   *
   * @param message The email.
   */
  send(message: MailMessage): Promise<void> {
    const link = message.text.match(/https?:\/\/\S+/)?.[0] ?? "(no link)";
    this.#log(
      `${MAIL_LOG_MARKER} to=${message.to} subject=${
        JSON.stringify(message.subject)
      } link=${link}`,
    );
    return Promise.resolve();
  }
}

/** Options of {@linkcode ResendMailer}. */
export interface ResendMailerOptions {
  /** The API key (the `RESEND_API_KEY` binding). */
  apiKey: string;
  /** The sender, for example `"App <no-reply@example.com>"`. */
  from: string;
  /** The API's base URL; default `https://api.resend.com`. */
  baseUrl?: string;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
}

/** Sends mail through Resend's `POST /emails` API (or anything with its shape). */
export class ResendMailer implements Mailer {
  #options: Required<ResendMailerOptions>;

  /**
   * Makes a mailer over Resend's HTTP API.
   *
   * @param options The key, the sender and the API's base URL.
   * @throws {TypeError} When the key or the sender is empty.
   */
  constructor(options: ResendMailerOptions) {
    if (!options.apiKey) throw new TypeError("ResendMailer needs an apiKey");
    if (!options.from) throw new TypeError("ResendMailer needs a from address");
    this.#options = {
      apiKey: options.apiKey,
      from: options.from,
      baseUrl: (options.baseUrl ?? "https://api.resend.com").replace(
        /\/+$/,
        "",
      ),
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    };
  }

  /**
   * Sends one email.
   *
   * @param message The email.
   * @throws {Error} When the API does not answer 2xx (the message names the
   * status only, never the key).
   */
  async send(message: MailMessage): Promise<void> {
    const { apiKey, from, baseUrl, fetch } = this.#options;
    const res = await fetch(`${baseUrl}/emails`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        from,
        to: [message.to],
        subject: message.subject,
        html: message.view,
        text: message.text,
      }),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`Mail API answered ${res.status}`);
  }
}

/**
 * Picks the mailer from the bindings: `RESEND_API_KEY` (with `MAIL_FROM`
 * and optionally `RESEND_BASE_URL`) sends real mail; without a key, the
 * links are logged.
 *
 * @param env The bindings (environment variables, or a Workers `env`).
 * @param log Where {@linkcode LogMailer} writes.
 * @returns The mailer.
 */
export function mailerFromEnv(
  env: Record<string, string | undefined>,
  log: (line: string) => void = console.log,
): Mailer {
  const apiKey = env.RESEND_API_KEY;
  if (!apiKey) return new LogMailer(log);
  return new ResendMailer({
    apiKey,
    from: env.MAIL_FROM ?? "portcullis <onboarding@resend.dev>",
    baseUrl: env.RESEND_BASE_URL,
  });
}
