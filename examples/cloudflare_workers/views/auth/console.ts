// Copied from packages/accounts/views/auth/console.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The operator's console (`operatorConsole()`): the confirmation of the
 * operator's password, the list of users with its search and pages, one
 * user's page (sign-in methods, sessions, keys, activity, ban, sign-outs,
 * impersonation), and the banner every page shows while an operator acts
 * as a user. Plain forms, no JavaScript.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";
import type { FlashMessage, PageContent } from "./layout.ts";
import { currentPasswordField } from "./field.ts";

function when(iso: string | null): Html | string {
  return iso === null
    ? "never"
    : html`<time datetime="${iso}">${
      iso.replace("T", " ").slice(0, 16)
    } UTC</time>`;
}

/** What {@linkcode consoleConfirmPage} needs. */
export interface ConsoleConfirmInput {
  /** The operator's email. */
  email: string;
  /** Where to go once confirmed (a console path). */
  next: string;
  /** Whether the operator has no password (a fresh re-authentication instead). */
  passwordless: boolean;
  /** An error (a wrong password), or `null`. */
  error: string | null;
}

/**
 * The page that asks the operator to confirm it's them before the console.
 *
 * @param input The operator and where to go next.
 * @returns The page.
 */
export function consoleConfirmPage(input: ConsoleConfirmInput): PageContent {
  return {
    title: "Confirm it's you",
    email: input.email,
    body: html`
      <h1>Operator console</h1>
      <p>Confirm it's you: the console shows and changes other people's
        accounts.${input.passwordless
          ? " Your account has no password: re-authenticate from your account page first."
          : ""}</p>
      ${input.error
        ? html`<p class="flash alert" role="alert">${input.error}</p>`
        : ""}
      <form method="post" action="/console/confirm">
        <input type="hidden" name="next" value="${input.next}">
        ${currentPasswordField("console-password", input.passwordless)}
        <p><button type="submit">Confirm</button></p>
      </form>
    `,
  };
}

/** One user in the console's list. */
export interface ConsoleUserRow {
  /** The subject id. */
  id: string;
  /** The email address. */
  email: string;
  /** Whether the address is proven. */
  verified: boolean;
  /** Whether the account is banned. */
  banned: boolean;
  /** When it was registered (ISO 8601). */
  createdAt: string;
}

/** What {@linkcode consoleUsersPage} needs. */
export interface ConsoleUsersInput {
  /** The operator's email. */
  email: string;
  /** The search as typed. */
  query: string;
  /** This page of users. */
  users: ConsoleUserRow[];
  /** The link to the next page, or `null` on the last. */
  nextPage: string | null;
  /** A flash message. */
  flash: FlashMessage | null;
}

/**
 * The console's list of users, with the search by email.
 *
 * @param input The search and the page.
 * @returns The page.
 */
export function consoleUsersPage(input: ConsoleUsersInput): PageContent {
  const rows = input.users.map((u) =>
    html`
      <tr>
        <td><a href="/console/users/${encodeURIComponent(u.id)}">${u
          .email}</a></td>
        <td>${u.verified ? "yes" : "no"}</td>
        <td>${u.banned ? html`<strong>banned</strong>` : "active"}</td>
        <td>${when(u.createdAt)}</td>
      </tr>
    `
  );
  return {
    title: "Users",
    email: input.email,
    flash: input.flash,
    body: html`
      <h1>Users</h1>
      <form method="get" action="/console/users" role="search">
        <label for="console-q">Search by email</label>
        <input id="console-q" name="q" type="search" value="${input.query}"
          autocomplete="off">
        <p><button type="submit">Search</button></p>
      </form>
      ${input.users.length === 0
        ? html`<p id="no-users">No user matches.</p>`
        : html`
          <table id="users">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Verified</th>
                <th scope="col">State</th>
                <th scope="col">Registered</th>
              </tr>
            </thead>
            <tbody>${rows}</tbody>
          </table>
        `}
      ${input.nextPage
        ? html`<p><a id="next-page" href="${input.nextPage}">Next page</a></p>`
        : ""}
    `,
  };
}

/** What the console shows of one user. */
export interface ConsoleUserInput {
  /** The operator's email. */
  email: string;
  /** The user. */
  user: ConsoleUserRow;
  /** The ban, when banned. */
  ban: { reason: string; bannedAt: string } | null;
  /** The sign-in methods, as lines (`password`, `2 passkeys`, …). */
  methods: string[];
  /** The live sessions. */
  sessions: {
    id: string;
    createdAt: string;
    lastSeenAt: string;
    userAgent: string | null;
    byOperator: boolean;
  }[];
  /** The API keys. */
  keys: {
    id: string;
    name: string;
    scopes: string[];
    lastUsedAt: string | null;
    expiresAt: string;
  }[];
  /** The latest security events. */
  activity: {
    type: string;
    at: string;
    byOperator: boolean;
    detail: string | null;
  }[];
  /** Whether the operator may act as this user (not an operator, not banned). */
  canImpersonate: boolean;
  /** How long an impersonation lasts, in minutes. */
  impersonationMinutes: number;
  /** A flash message. */
  flash: FlashMessage | null;
}

/**
 * One user's page in the console.
 *
 * @param input The user and what can be done.
 * @returns The page.
 */
export function consoleUserPage(input: ConsoleUserInput): PageContent {
  const u = input.user;
  const base = `/console/users/${encodeURIComponent(u.id)}`;
  const sessions = input.sessions.map((s) =>
    html`
      <tr>
        <td>${when(s.createdAt)}${s.byOperator ? " (an operator's)" : ""}</td>
        <td>${when(s.lastSeenAt)}</td>
        <td class="agent">${s.userAgent ?? "unknown"}</td>
        <td>
          <form method="post" action="${base}/sessions/revoke" class="inline">
            <input type="hidden" name="session" value="${s.id}">
            <button type="submit" class="secondary">Sign out</button>
          </form>
        </td>
      </tr>
    `
  );
  const keys = input.keys.map((k) =>
    html`
      <li>${k.name} <code class="hint">${k.id}</code>: ${k.scopes.join(", ") ||
        "no scopes"}; last used ${when(k.lastUsedAt)}; expires ${when(
          k.expiresAt,
        )}</li>
    `
  );
  const activity = input.activity.map((e) =>
    html`<li>${when(e.at)}: ${e.type}${
      e.byOperator ? " (by an operator)" : ""
    }${
      e.detail
        ? html`
          <span class="hint">${e.detail}</span>
        `
        : ""
    }</li>`
  );
  return {
    title: u.email,
    email: input.email,
    flash: input.flash,
    body: html`
      <p><a href="/console/users">All users</a></p>
      <h1 id="user-email">${u.email}</h1>
      <dl>
        <dt>Id</dt>
        <dd><code>${u.id}</code></dd>
        <dt>Verified</dt>
        <dd>${u.verified ? "yes" : "no"}</dd>
        <dt>Registered</dt>
        <dd>${when(u.createdAt)}</dd>
        <dt>State</dt>
        <dd id="user-state">${input.ban
          ? html`<strong>banned</strong> ${
            when(input.ban.bannedAt)
          }: ${input.ban.reason}`
          : "active"}</dd>
        <dt>Sign-in methods</dt>
        <dd>${input.methods.join(", ") || "none"}</dd>
      </dl>
      <section id="console-sessions" aria-labelledby="console-sessions-h">
        <h2 id="console-sessions-h">Sessions</h2>
        ${input.sessions.length === 0 ? html`<p>No live session.</p>` : html`
          <table>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Last seen</th>
                <th scope="col">Browser</th>
                <th scope="col"><span hidden>Action</span></th>
              </tr>
            </thead>
            <tbody>${sessions}</tbody>
          </table>
        `}
        <form method="post" action="${base}/sessions/revoke-all">
          <p><button type="submit" id="revoke-all">Sign out every session</button></p>
        </form>
      </section>
      <section id="console-keys" aria-labelledby="console-keys-h">
        <h2 id="console-keys-h">API keys</h2>
        ${keys.length === 0 ? html`<p>None.</p>` : html`<ul>${keys}</ul>`}
      </section>
      <section id="console-ban" aria-labelledby="console-ban-h">
        <h2 id="console-ban-h">${input.ban ? "Lift the ban" : "Ban"}</h2>
        ${input.ban
          ? html`
            <form method="post" action="${base}/unban">
              <p><button type="submit" id="unban">Lift the ban</button></p>
            </form>
          `
          : html`
            <form method="post" action="${base}/ban">
              <p>A ban signs the user out everywhere, refuses every sign-in
                (as a wrong password would) and stops their API keys.</p>
              <label for="ban-reason">Reason (recorded)</label>
              <input id="ban-reason" name="reason" type="text" required
                maxlength="500" autocomplete="off">
              <p><button type="submit" class="danger" id="ban">Ban</button></p>
            </form>
          `}
      </section>
      <section id="console-impersonate" aria-labelledby="console-impersonate-h">
        <h2 id="console-impersonate-h">Act as this user</h2>
        ${input.canImpersonate
          ? html`
            <form method="post" action="${base}/impersonate">
              <p>For ${input
                .impersonationMinutes} minutes you see what they see. You
                cannot change their password, address, sign-in methods or
                keys, nor delete the account; everything you do is recorded,
                on their account and on yours.</p>
              <p><button type="submit" id="impersonate">Act as ${u
                .email}</button></p>
            </form>
          `
          : html`<p>Not available: the account is an operator's or is banned.</p>`}
      </section>
      <section id="console-activity" aria-labelledby="console-activity-h">
        <h2 id="console-activity-h">Recent activity</h2>
        ${activity.length === 0
          ? html`<p>Nothing yet.</p>`
          : html`<ul>${activity}</ul>`}
      </section>
    `,
  };
}

/** What {@linkcode impersonationBanner} needs. */
export interface ImpersonationBannerInput {
  /** The operator's email (their name in the banner). */
  operator: string;
  /** The user they act as. */
  user: string;
  /** When the impersonation ends (ISO 8601). */
  endsAt: string;
}

/**
 * The banner at the top of every page while an operator acts as a user,
 * with the button that ends it.
 *
 * @param input Who acts as whom, and until when.
 * @returns The markup.
 */
export function impersonationBanner(input: ImpersonationBannerInput): Html {
  return html`
    <div class="impersonation" id="impersonation-banner" role="alert">
      <p><strong>${input.operator}</strong> is acting as <strong>${input
        .user}</strong> until ${when(input.endsAt)}. Everything done here is
          recorded.</p>
      <form method="post" action="/impersonation/end" class="inline">
        <button type="submit" id="end-impersonation">End impersonation</button>
      </form>
    </div>
  `;
}
