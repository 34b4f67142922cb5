/**
 * API keys on `/account`: the list (name, scopes, created, last used,
 * expiry, a revoke button), the form that creates one, and the page that
 * shows a new key once. Plain forms, no JavaScript.
 *
 * @module
 */
import { type Html, html } from "../html.ts";
import { currentPasswordField } from "./field.ts";
import type { PageContent } from "./layout.ts";

/** One key as the account page lists it. */
export interface ApiKeyRow {
  /** The key's public id. */
  id: string;
  /** The owner's name for it. */
  name: string;
  /** Its scopes. */
  scopes: string[];
  /** When it was made (ISO 8601). */
  createdAt: string;
  /** When it was last used, to the minute (ISO 8601), or `null`. */
  lastUsedAt: string | null;
  /** When it stops working (ISO 8601). */
  expiresAt: string;
  /** Whether it has stopped working already. */
  expired: boolean;
}

/** What {@linkcode apiKeysSection} needs. */
export interface ApiKeysSectionInput {
  /** The user's keys, newest first. */
  keys: ApiKeyRow[];
  /** The scopes a key may be given (the app's policy actions). */
  scopes: readonly string[];
  /** The lifetime a new key gets unless the user picks another, in days. */
  defaultDays: number;
  /** The longest lifetime the app allows, in days. */
  maxDays: number;
  /** No password field: the account has none (it re-authenticates first). */
  passwordless: boolean;
  /** Whether the account may create keys (its address is proven). */
  canCreate: boolean;
}

function when(iso: string | null): Html | string {
  return iso === null
    ? "never"
    : html`<time datetime="${iso}">${
      iso.replace("T", " ").slice(0, 16)
    } UTC</time>`;
}

/**
 * The API keys section of `/account`.
 *
 * @param input The keys and what a new key may be.
 * @returns The markup.
 */
export function apiKeysSection(input: ApiKeysSectionInput): Html {
  const rows = input.keys.map((k) =>
    html`
      <tr>
        <td>${k.name} <code class="hint">${k.id}</code></td>
        <td>${k.scopes.length > 0 ? k.scopes.join(", ") : "none"}</td>
        <td>${when(k.createdAt)}</td>
        <td>${when(k.lastUsedAt)}</td>
        <td>${k.expired
          ? html`
            <strong>expired</strong>
          `
          : ""}${when(k.expiresAt)}</td>
        <td>
          <form method="post" action="/account/keys/revoke" class="inline">
            <input type="hidden" name="id" value="${k.id}">
            <button type="submit" class="secondary"
              aria-label="Revoke the key ${k.name}">Revoke</button>
          </form>
        </td>
      </tr>
    `
  );
  const scopes = input.scopes.map((s) =>
    html`
      <label class="check"><input type="checkbox" name="scope:${s}"
        value="on"> ${s}</label>
    `
  );
  return html`
    <section id="api-keys" aria-labelledby="api-keys-h">
      <h2 id="api-keys-h">API keys</h2>
      <p>A key lets a script or a CI job call this app's API as you, limited to
        the scopes you give it. It cannot change your password, your address,
        your sign-in methods or other keys. Signing out everywhere does not stop
        keys: revoke them here.</p>
      ${input.keys.length > 0
        ? html`
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col"><span hidden>Action</span></th>
              </tr>
            </thead>
            <tbody>${rows}</tbody>
          </table>
        `
        : html`<p>No keys yet.</p>`}
      ${input.canCreate
        ? html`
          <h3>Create a key</h3>
          <form method="post" action="/account/keys">
            <label for="key-name">Name</label>
            <input id="key-name" name="name" type="text" required
              maxlength="100" autocomplete="off">
            <label for="key-days">Expires in (days, at most ${input
              .maxDays})</label>
            <input id="key-days" name="expiresInDays" type="number" min="1"
              max="${input.maxDays}" value="${input.defaultDays}" required>
            <fieldset>
              <legend>Scopes</legend>
              ${scopes}
            </fieldset>
            ${currentPasswordField("key-password", input.passwordless)}
            <p><button type="submit">Create key</button></p>
          </form>
        `
        : html`<p>Verify your email address to create keys.</p>`}
    </section>
  `;
}

/** What {@linkcode apiKeyCreatedPage} needs. */
export interface ApiKeyCreatedInput {
  /** The signed-in user's email. */
  email: string;
  /** The whole key, shown this once. */
  key: string;
  /** Its name. */
  name: string;
  /** Its scopes. */
  scopes: string[];
  /** When it stops working (ISO 8601). */
  expiresAt: string;
}

/**
 * The page that shows a new key, once.
 *
 * @param input The key and its details.
 * @returns The page.
 */
export function apiKeyCreatedPage(input: ApiKeyCreatedInput): PageContent {
  return {
    title: "Your new API key",
    email: input.email,
    body: html`
      <h1>Your new API key</h1>
      <p>Copy it now: it is not shown again. Only a hash of it is kept.</p>
      <p><code id="new-key" class="secret">${input.key}</code></p>
      <p>Send it as <code>Authorization: Bearer &lt;key&gt;</code>.</p>
      <dl>
        <dt>Name</dt>
        <dd>${input.name}</dd>
        <dt>Scopes</dt>
        <dd>${input.scopes.length > 0 ? input.scopes.join(", ") : "none"}</dd>
        <dt>Expires</dt>
        <dd>${when(input.expiresAt)}</dd>
      </dl>
      <p><a href="/account#api-keys">Back to your account</a></p>
    `,
  };
}
