// Copied from packages/accounts/views/auth/field.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * One labelled form field, with its error tied to it.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";

/** What {@linkcode field} needs. */
export interface FieldInput {
  /** The input's id (the label points at it). */
  id: string;
  /** The form field's name. */
  name: string;
  /** The label's text. */
  label: string;
  /** `email`, `password` or `text`. */
  type: "email" | "password" | "text";
  /** The `autocomplete` token (`username`, `current-password`, …). */
  autocomplete: string;
  /** A value to fill in again. */
  value?: string;
  /** The least length, for new passwords. */
  minlength?: number;
  /** A hint under the field. */
  hint?: string;
  /** An error about this field, or `null`. */
  error?: string | null;
}

/**
 * Renders a label, an input and, when given, its hint and its error: the
 * input names both in `aria-describedby` and is `aria-invalid` while the
 * error shows, so a screen reader reads the error with the field.
 *
 * @param input The field.
 * @returns The markup.
 */
export function field(input: FieldInput): Html {
  const hintId = input.hint ? `${input.id}-hint` : null;
  const errorId = input.error ? `${input.id}-error` : null;
  const describedBy = [hintId, errorId].filter((x) => x !== null).join(" ");
  return html`
    <label for="${input.id}">${input.label}</label>
    <input id="${input.id}" name="${input.name}" type="${input.type}"
      autocomplete="${input.autocomplete}"
      required${input.minlength
        ? html`
          minlength="${input.minlength}"
        `
        : ""}${input.value
        ? html`
          value="${input.value}"
        `
        : ""}${describedBy
        ? html`
          aria-describedby="${describedBy}"
        `
        : ""}${errorId
        ? html`
          aria-invalid="true"
        `
        : ""}>
    ${hintId ? html`<p class="hint" id="${hintId}">${input.hint}</p>` : ""}
    ${errorId
      ? html`<p class="field-error" id="${errorId}" role="alert">${input.error}</p>`
      : ""}
  `;
}

/**
 * The current password, asked before a sensitive change on the account
 * page; nothing for an account without one (`passwordless`: it
 * re-authenticates first, see `reauth.ts`).
 *
 * @param id The input's id.
 * @param passwordless Whether the account has no password.
 * @returns The markup, or `""`.
 */
export function currentPasswordField(
  id: string,
  passwordless: boolean,
): Html | "" {
  return passwordless ? "" : html`
    <label for="${id}">Current password</label>
    <input id="${id}" name="password" type="password"
      autocomplete="current-password" required>
  `;
}

/**
 * The account's password, asked on a page reached from a mailed link
 * (confirming an address, signing in by link, moving the account to a new
 * address) outside the account's own browser.
 *
 * @param error The error shown under the field, or `null`.
 * @returns The markup.
 */
export function accountPasswordField(error: string | null): Html {
  return field({
    id: "password",
    name: "password",
    label: "Password",
    type: "password",
    autocomplete: "current-password",
    error,
  });
}
