// Copied from packages/accounts/views/auth/account_sections.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The account page's own groups after Security: Sessions (with the recent
 * activity), Email address and Danger zone. Every action is a plain form;
 * those that ask for more than a click open behind their name.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";
import { deviceName } from "@portcullis/accounts/views";
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

/** How many events show before "Earlier activity" folds the rest. */
const RECENT = 10;

function when(iso: string): Html {
  return html`<time datetime="${iso}">${
    iso.replace("T", " ").slice(0, 16)
  } UTC</time>`;
}

/**
 * A device's name, its full `User-Agent` string behind it (a disclosure
 * that opens on a click, a tap or the keyboard, without a script).
 */
function device(userAgent: string | null): Html {
  const name = deviceName(userAgent);
  return userAgent
    ? html`
      <details
        class="agent"><summary>${name}</summary><code>${userAgent}</code></details>
    `
    : html`<span>${name}</span>`;
}

function sessionItem(s: SessionRow): Html {
  const started = s.createdAt.slice(0, 16).replace("T", " ");
  return html`
    <li${s.current
      ? html`
        class="current"
      `
      : ""}>
      <div>
        <div class="device">${device(s.userAgent)}${s.current
          ? html`<span class="badge">This browser</span>`
          : ""}${s.byOperator
          ? html`<span class="badge">An operator acting as you</span>`
          : ""}</div>
        <span class="meta">Started ${when(s.createdAt)} · last seen ${when(
          s.lastSeenAt,
        )}</span>
      </div>
      ${s.current ? "" : html`
        <form method="post" action="/account/sessions/revoke">
          <input type="hidden" name="id" value="${s.id}">
          <button type="submit" class="secondary"
            aria-label="Sign out ${deviceName(
              s.userAgent,
            )}, started ${started} UTC">Sign out</button>
        </form>
      `}
    </li>
  `;
}

function eventItem(e: ActivityRow): Html {
  const byOperator = e.byOperator && !e.type.startsWith("impersonation_") &&
    e.type !== "operator_acted";
  return html`<li>${byOperator ? "An operator acted on your account: " : ""}${
    LABELS[e.type] ?? e.type
  }${
    e.detail
      ? html`
        <span class="hint">${e.detail}</span>
      `
      : ""
  }<span class="meta">${when(e.at)}${
    e.userAgent
      ? html`
        · ${device(e.userAgent)}
      `
      : ""
  }</span></li>`;
}

function activity(rows: ActivityRow[]): Html {
  if (rows.length === 0) return html`<p>Nothing yet.</p>`;
  const recent = rows.slice(0, RECENT);
  const earlier = rows.slice(RECENT);
  return html`
    <ul class="events">${recent.map(eventItem)}</ul>
    ${earlier.length > 0
      ? html`
        <details class="more">
          <summary>Earlier activity (${earlier.length})</summary>
          <ul class="events">${earlier.map(eventItem)}</ul>
        </details>
      `
      : ""}
  `;
}

/**
 * Renders the Sessions group (this browser's session marked, each other one
 * with its own sign-out; this browser signs out with the navigation bar's
 * "Log out"), the recent activity inside it, the Email address group and
 * the Danger zone. Sessions and events show a device name ("Chrome on
 * Linux"); the full `User-Agent` string opens under it.
 *
 * @param input The sessions, the activity, and whether the account has no
 * password.
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
  return html`
    <section id="sessions" class="group" aria-labelledby="sessions-h">
      <h2 id="sessions-h">Sessions</h2>
      <ul id="session-list" class="list">${input.sessions.map(sessionItem)}</ul>
      <form method="post" action="/account/sessions/revoke-others">
        <p><button type="submit" id="revoke-others" class="secondary">Sign out all other sessions</button></p>
      </form>
      <section id="activity" class="item" aria-labelledby="activity-h">
        <h3 id="activity-h">Recent activity</h3>
        ${activity(input.activity)}
      </section>
    </section>
    <section id="email-address" class="group" aria-labelledby="email-address-h">
      <h2 id="email-address-h">Email address</h2>
      <details class="action" id="change-email">
        <summary>Change email address</summary>
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
      </details>
    </section>
    <section id="danger-zone" class="group danger-zone"
      aria-labelledby="danger-zone-h">
      <h2 id="danger-zone-h">Danger zone</h2>
      <details class="action" id="delete-account">
        <summary>Delete account</summary>
        <form method="post" action="/account/delete">
          <p>This signs out every session and deletes your account and your
            activity, with everything the app keeps for it. It cannot be
            undone.</p>
          ${password("delete-password")}
          <p><button type="submit" class="danger">Delete my account</button></p>
        </form>
      </details>
    </section>
  `;
}
