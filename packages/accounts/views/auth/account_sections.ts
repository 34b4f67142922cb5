/**
 * The account page's lifecycle sections: sessions, recent activity, the
 * email change form and account deletion. Every action is a plain form.
 *
 * @module
 */
import { type Html, html } from "../html.ts";
import { field } from "./field.ts";

/** One session row. */
export interface SessionRow {
  /** The session id. */
  id: string;
  /** When it began (ISO 8601). */
  createdAt: string;
  /** When it was last seen (ISO 8601). */
  lastSeenAt: string;
  /** The user agent it began with. */
  userAgent: string | null;
  /** Whether it is this browser's session. */
  current: boolean;
  /** Whether an operator holds it, acting as the user. */
  byOperator?: boolean;
}

/** One activity row. */
export interface ActivityRow {
  /** The event type. */
  type: string;
  /** When (ISO 8601). */
  at: string;
  /** The user agent. */
  userAgent: string | null;
  /** Whether an operator did it (from the console, or acting as the user). */
  byOperator?: boolean;
  /** A short note of what was done, or `null`. */
  detail?: string | null;
}

const LABELS: Record<string, string> = {
  registered: "Account created",
  login: "Signed in",
  login_failed: "Failed sign-in",
  throttled: "Sign-in attempts throttled",
  logout: "Signed out",
  password_changed: "Password changed",
  password_reset: "Password reset",
  email_changed: "Email address changed",
  verified: "Email address verified",
  credentials_removed:
    "Password, sign-in methods and sessions set up before the address was proven removed",
  session_revoked: "Session signed out",
  account_deleted: "Account deleted",
  passkey_added: "Passkey added",
  passkey_removed: "Passkey removed",
  totp_enabled: "Two-factor authentication turned on",
  totp_disabled: "Two-factor authentication turned off",
  api_key_created: "API key created",
  api_key_revoked: "API key revoked",
  account_banned: "Account banned",
  account_unbanned: "Ban lifted",
  impersonation_started: "An operator started acting as you",
  impersonation_ended: "An operator stopped acting as you",
  operator_acted: "An operator acted on your account",
};

function when(iso: string): Html {
  return html`<time datetime="${iso}">${
    iso.replace("T", " ").slice(0, 16)
  } UTC</time>`;
}

/**
 * Renders the sessions, activity, email and deletion sections.
 *
 * @param input The sessions, the activity and an error for one section.
 * @returns The markup.
 */
export function accountSections(input: {
  sessions: SessionRow[];
  activity: ActivityRow[];
  /** No password field: the account has none (it confirms by re-signing in). */
  passwordless?: boolean;
}): Html {
  const password = (id: string) =>
    input.passwordless ? "" : field({
      id,
      name: "password",
      label: "Current password",
      type: "password",
      autocomplete: "current-password",
    });
  const rows = input.sessions.map((s) =>
    html`
      <tr class="${s.current ? "current" : ""}">
        <td>${when(s.createdAt)}${s.current
          ? html`
            <span>(this browser)</span>
          `
          : ""}</td>
        <td>${when(s.lastSeenAt)}</td>
        <td class="agent">${s.userAgent ?? "unknown"}${s.byOperator
          ? " (an operator acting as you)"
          : ""}</td>
        <td>
          <form method="post" action="/account/sessions/revoke" class="inline">
            <input type="hidden" name="id" value="${s.id}">
            <button type="submit" class="secondary"
              aria-label="Sign out the session begun ${s.createdAt.slice(
                0,
                16,
              )}">Sign out</button>
          </form>
        </td>
      </tr>
    `
  );
  const events = input.activity.map((e) =>
    html`<li>${when(e.at)}: ${
      e.byOperator && !e.type.startsWith("impersonation_") &&
        e.type !== "operator_acted"
        ? "An operator acted on your account: "
        : ""
    }${LABELS[e.type] ?? e.type}${
      e.detail
        ? html`
          <span class="hint">${e.detail}</span>
        `
        : ""
    }${
      e.userAgent
        ? html`
          <span class="hint">(${e.userAgent})</span>
        `
        : ""
    }</li>`
  );
  return html`
    <section id="sessions" aria-labelledby="sessions-h">
      <h2 id="sessions-h">Your sessions</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Last seen</th>
            <th scope="col">Browser</th>
            <th scope="col"><span hidden>Action</span></th>
          </tr>
        </thead>
        <tbody>${rows}</tbody>
      </table>
      <form method="post" action="/account/sessions/revoke-others">
        <p><button type="submit" id="revoke-others">Sign out all other sessions</button></p>
      </form>
    </section>
    <section id="activity" aria-labelledby="activity-h">
      <h2 id="activity-h">Recent activity</h2>
      ${events.length > 0
        ? html`<ul>${events}</ul>`
        : html`<p>Nothing yet.</p>`}
    </section>
    <section id="change-email" aria-labelledby="change-email-h">
      <h2 id="change-email-h">Change email address</h2>
      <form method="post" action="/account/email">
        ${field({
          id: "new-email",
          name: "email",
          label: "New email address",
          type: "email",
          autocomplete: "email",
          hint: "We send a link there; the address changes when you open it.",
        })}
        ${password("email-password")}
        <p><button type="submit">Send a confirmation link</button></p>
      </form>
    </section>
    <section id="delete-account" aria-labelledby="delete-account-h">
      <h2 id="delete-account-h">Delete account</h2>
      <form method="post" action="/account/delete">
        <p>This signs out every session and deletes your account, your notes and
          your activity. It cannot be undone.</p>
        ${password("delete-password")}
        <p><button type="submit" class="danger">Delete my account</button></p>
      </form>
    </section>
  `;
}
