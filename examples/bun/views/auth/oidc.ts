// Copied from packages/oidc/accounts/views.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The OpenID Connect pages: the "Sign in with …" links, the password step
 * that links a provider to an existing account, and the account page's
 * list of linked providers.
 *
 * @module
 */
import { type Html, html, type PageContent } from "@portcullis/accounts/views";

/** The login page's provider links. */
export function providerLinks(
  providers: readonly { id: string; name: string }[],
  next: string,
): Html {
  if (providers.length === 0) return html``;
  return html`
    <h2>Or sign in with</h2>
    <ul id="providers">${providers.map((p) =>
      html`<li><a href="/login/oidc/${p.id}?next=${
        encodeURIComponent(next)
      }">${p.name}</a></li>`
    )}</ul>
  `;
}

/** An account with the provider's email exists: prove its password to link. */
export function linkPage(
  input: {
    provider: string;
    email: string;
    error: string | null;
    signedIn?: boolean;
    /** Signed in: whether the form asks for the current password. */
    askPassword?: boolean;
  },
): PageContent {
  if (input.signedIn) {
    return {
      title: "Link your account",
      email: null,
      body: html`
        <h1>Link ${input.provider}?</h1>
        <p>Sign in to this account with the ${input.provider} account
          <strong>${input.email}</strong> from now on?</p>
        ${input.error
          ? html`<p class="flash alert" role="alert">${input.error}</p>`
          : ""}
        <form method="post" action="/login/oidc/link">
          ${input.askPassword
            ? html`
              <label for="link-password">Your current password</label>
              <input id="link-password" name="password" type="password"
                autocomplete="current-password" required>
            `
            : ""}
          <p><button type="submit" id="confirm-link">Link ${input
            .provider}</button></p>
        </form>
        <p><a href="/account">Cancel</a></p>
      `,
    };
  }
  return {
    title: "Link your account",
    email: null,
    body: html`
      <h1>Link ${input.provider} to your account</h1>
      <p>An account for <strong>${input.email}</strong> exists. Enter its
        password once to sign in with ${input.provider} from now on.</p>
      ${input.error
        ? html`<p class="flash alert" role="alert">${input.error}</p>`
        : ""}
      <form method="post" action="/login/oidc/link">
        <label for="password">Password</label>
        <input id="password" name="password" type="password"
          autocomplete="current-password" required>
        <p><button type="submit">Link and sign in</button></p>
      </form>
      <p><a href="/login">Cancel</a></p>
    `,
  };
}

/**
 * The account page's section (an item of its Security group): linked
 * providers and links to add one.
 */
export function linkedProvidersSection(input: {
  providers: readonly { id: string; name: string }[];
  linked: readonly { provider: string; email: string }[];
}): Html {
  const name = (id: string) =>
    input.providers.find((p) => p.id === id)?.name ?? id;
  const unlinked = input.providers.filter((p) =>
    !input.linked.some((l) => l.provider === p.id)
  );
  return html`
    <section id="providers-section" class="item" aria-labelledby="providers-h">
      <h3 id="providers-h">Sign-in providers</h3>
      ${input.linked.length > 0
        ? html`<ul id="linked-providers">${
          input.linked.map((l) =>
            html`<li>${name(l.provider)} (${l.email})</li>`
          )
        }</ul>`
        : html`<p class="state" id="linked-providers">None linked.</p>`}
      ${unlinked.map((p) =>
        html`<p><a href="/login/oidc/${p.id}?next=/account">Link ${p.name}</a></p>`
      )}
    </section>
  `;
}

/**
 * The "Confirm it's you" way of a linked provider: a fresh sign-in there
 * (an item of the account page's list).
 */
export function providerReauthLink(p: { id: string; name: string }): Html {
  return html`<li><a id="reauth-${p.id}" href="/login/oidc/${p.id}/reauth?next=/account">Confirm with ${p.name}</a></li>`;
}

/** The OpenID Connect module's pages and pieces of the shared pages. */
export interface OidcViews {
  /** The "Sign in with …" links on `/login`. */
  providerLinks: typeof providerLinks;
  /** The page that links a provider to an account (after the password). */
  link: typeof linkPage;
  /** The section of `/account`: the linked providers. */
  linkedProviders: typeof linkedProvidersSection;
  /** A provider's item in the "Confirm it's you" list. */
  reauthLink: typeof providerReauthLink;
}

/** The OpenID Connect module's default views. */
export const defaultOidcViews: OidcViews = {
  providerLinks,
  link: linkPage,
  linkedProviders: linkedProvidersSection,
  reauthLink: providerReauthLink,
};
