/**
 * What the passkeys module's `setup` builds and hands each route: the
 * ceremonies, the store, the browser module, the views, and the parts of
 * recovery and of the automatic upgrade.
 *
 * @module
 */
import type { OneTimeTokens } from "@portcullis/auth/verification";
import type { ShortCookie } from "@portcullis/accounts/plugin";
import type { SQLPasskeyStore } from "@portcullis/sql";
import type { PasskeyAuthenticator } from "../passkey_authenticator.ts";
import type { PasskeyViews } from "./views.ts";
import type { PasskeyPages } from "./pages.ts";

/** The recovery's parts: its links and its session's cookie. */
export interface Recovery {
  /** The links: single-use, 15 minutes. */
  links: OneTimeTokens;
  /** The recovery session's cookie. */
  cookie: ShortCookie;
}

/** The upgrade's parts: its cookie, and the session cookie's name. */
export interface Upgrade {
  /** The upgrade right's cookie. */
  cookie: ShortCookie;
  /** The session cookie's name (its `Set-Cookie` marks a session start). */
  sessionCookie: string;
}

/** What the passkeys module's `setup` builds. */
export interface PasskeysSettings {
  /** The two ceremonies. */
  authenticator: PasskeyAuthenticator;
  /** The users' passkeys. */
  store: SQLPasskeyStore;
  /** The browser module (`@portcullis/client` and its driver). */
  script: string;
  /** The module's pieces of the shared pages, and its own pages. */
  views: PasskeyViews & PasskeyPages;
  /** Recovery by a mailed link: its links and its session's cookie. */
  recovery: Recovery;
  /** The automatic upgrade after a sign-in by a first factor. */
  upgrade: Upgrade;
}
