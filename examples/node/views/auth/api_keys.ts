// Copied from packages/accounts/views/auth/api_keys.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * API keys on `/account`: the list (name, scopes, created, last used,
 * expiry, a revoke button), the form that creates one, and the page that
 * shows a new key once. Plain forms, no JavaScript.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";
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
  const items = input.keys.map((k) =>
    html`
      <li>
        <div>
          <div
            class="device">${k.name} <code class="hint">${k.id}</code>${k
                .expired
              ? html`<span class="badge">Expired</span>`
              : ""}</div>
          <span
            class="meta">Scopes: ${k.scopes.length > 0
              ? k.scopes.join(", ")
              : "none"} · created ${when(k.createdAt)} · last used ${when(
                k.lastUsedAt,
              )} · expires ${when(k.expiresAt)}</span>
        </div>
        <form method="post" action="/account/keys/revoke">
          <input type="hidden" name="id" value="${k.id}">
          <button type="submit" class="secondary"
            aria-label="Revoke the key ${k.name}">Revoke</button>
        </form>
      </li>
    `
  );
  const scopes = input.scopes.map((s) =>
    html`
      <label class="check"><input type="checkbox" name="scope:${s}"
        value="on"> ${s}</label>
    `
  );
  const create = html`
    <p class="hint">A key keeps working when you sign out everywhere: revoke it
      here when it is no longer needed.</p>
    <form method="post" action="/account/keys">
      <label for="key-name">Name</label>
      <input id="key-name" name="name" type="text" required
        maxlength="100" autocomplete="off">
      <label for="key-days">Expires in (days, at most ${input.maxDays})</label>
      <input id="key-days" name="expiresInDays" type="number" min="1"
        max="${input.maxDays}" value="${input.defaultDays}" required>
      <fieldset>
        <legend>Scopes</legend>
        ${scopes}
      </fieldset>
      ${currentPasswordField("key-password", input.passwordless)}
      <p><button type="submit">Create key</button></p>
    </form>
  `;
  return html`
    <section id="api-keys" class="item" aria-labelledby="api-keys-h">
      <h3 id="api-keys-h">API keys</h3>
      <p class="state">For a script or a CI job: a key calls the API as you,
        within its scopes, and never changes how you sign in.</p>
      ${input.keys.length > 0
        ? html`<ul id="key-list" class="list">${items}</ul>`
        : ""}
      ${input.canCreate
        ? html`
          <details class="action">
            <summary>Create a key</summary>
            ${create}
          </details>
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
