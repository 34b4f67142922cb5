/**
 * The pages and mails of `@portcullis/accounts`: the default views, the
 * registry an app replaces them through ({@linkcode AccountViews}), and the
 * pieces a view of one's own is built from (the `html` tag, the layout's
 * {@linkcode PageContent}, form fields).
 *
 * Views are the application's; rules are the package's. Every page and mail
 * the package renders comes from the app's {@linkcode AccountViews}: pass
 * `views` to `accounts()` with the ones you replace (the scaffold copies
 * every default into a new project's `views/` and passes them all). A page
 * view answers a {@linkcode PageContent}, which the app's `layout` frames,
 * so a replaced layout frames every page, those of the modules too. A mail
 * view answers an {@linkcode EmailContent}.
 *
 * @example Replacing the login page
 * ```ts
 * import { defaultViews, html, type AccountViews } from "@portcullis/accounts/views";
 *
 * const views: Partial<AccountViews> = {
 *   login: (input) => ({
 *     ...defaultViews.login(input),
 *     title: "Sign in to Example",
 *   }),
 * };
 * ```
 *
 * @module
 */
import { accountPage } from "./auth/account.ts";
import { accountSections } from "./auth/account_sections.ts";
import { confirmEmailChangePage } from "./auth/confirm_email_change.ts";
import { confirmVerifyPage } from "./auth/confirm_verify.ts";
import { forgotPasswordPage } from "./auth/forgot_password.ts";
import { homePage } from "./auth/home.ts";
import { layout } from "./auth/layout.ts";
import { loginPage } from "./auth/login.ts";
import {
  confirmMagicLinkPage,
  magicLinkLogin,
  magicLinkRequestPage,
} from "./auth/magic_link.ts";
import { messagePage } from "./auth/message.ts";
import { reauthSection } from "./auth/reauth.ts";
import { registerPage } from "./auth/register.ts";
import { resetPasswordPage } from "./auth/reset_password.ts";
import { changeEmailEmail, emailChangedNotice } from "./emails/change_email.ts";
import { magicLinkEmail } from "./emails/magic_link.ts";
import {
  resetPasswordEmail,
  setPasswordEmail,
} from "./emails/reset_password.ts";
import { verifyEmail } from "./emails/verify_email.ts";
import { verificationStatus } from "./auth/verification_status.ts";
import { apiKeyCreatedPage, apiKeysSection } from "./auth/api_keys.ts";
import {
  consoleConfirmPage,
  consoleUserPage,
  consoleUsersPage,
  impersonationBanner,
} from "./auth/console.ts";
import { STYLESHEET } from "./style.ts";

export { type Html, html, raw } from "./html.ts";
export { deviceName } from "./device_name.ts";
export {
  accountPage,
  accountSections,
  apiKeyCreatedPage,
  apiKeysSection,
  changeEmailEmail,
  confirmEmailChangePage,
  confirmMagicLinkPage,
  confirmVerifyPage,
  consoleConfirmPage,
  consoleUserPage,
  consoleUsersPage,
  emailChangedNotice,
  forgotPasswordPage,
  homePage,
  impersonationBanner,
  layout,
  loginPage,
  magicLinkEmail,
  magicLinkLogin,
  magicLinkRequestPage,
  messagePage,
  reauthSection,
  registerPage,
  resetPasswordEmail,
  resetPasswordPage,
  setPasswordEmail,
  STYLESHEET,
  verificationStatus,
  verifyEmail,
};
export type { FlashMessage, PageContent } from "./auth/layout.ts";
export type { AccountInput } from "./auth/account.ts";
export type { ActivityRow, SessionRow } from "./auth/account_sections.ts";
export type {
  ApiKeyCreatedInput,
  ApiKeyRow,
  ApiKeysSectionInput,
} from "./auth/api_keys.ts";
export type {
  ConsoleConfirmInput,
  ConsoleUserInput,
  ConsoleUserRow,
  ConsoleUsersInput,
  ImpersonationBannerInput,
} from "./auth/console.ts";
export type { ConfirmVerifyInput } from "./auth/confirm_verify.ts";
export type { HomeInput } from "./auth/home.ts";
export type { LoginInput } from "./auth/login.ts";
export type { ConfirmMagicLinkInput } from "./auth/magic_link.ts";
export type { MessageInput } from "./auth/message.ts";
export type { ReauthInput } from "./auth/reauth.ts";
export type { RegisterInput } from "./auth/register.ts";
export type { ResetPasswordInput } from "./auth/reset_password.ts";
export type { EmailContent } from "./emails/email_content.ts";
export {
  accountPasswordField,
  currentPasswordField,
  field,
  type FieldInput,
} from "./auth/field.ts";

/** The mails the package sends, each rendered from its input. */
export interface AccountEmails {
  /** The link that proves the address after a registration. */
  verifyEmail: typeof verifyEmail;
  /** The password-reset link. */
  resetPassword: typeof resetPasswordEmail;
  /** The link that sets a first password (an account without one). */
  setPassword: typeof setPasswordEmail;
  /** The link that confirms a new address. */
  changeEmail: typeof changeEmailEmail;
  /** The notice to the old address after a change. */
  emailChanged: typeof emailChangedNotice;
  /** The sign-in link. */
  magicLink: typeof magicLinkEmail;
}

/**
 * Every page and mail of the package's own modules. Pages answer a
 * {@linkcode PageContent} (framed by {@linkcode AccountViews.layout});
 * sections and buttons answer markup placed inside a page.
 */
export interface AccountViews {
  /** Frames every page: the document, the navigation, the flash message. */
  layout: typeof layout;
  /** The stylesheet served at `/style.css`. */
  stylesheet: string;
  /** `GET /`. */
  home: typeof homePage;
  /** `GET /login` and a refused sign-in. */
  login: typeof loginPage;
  /** `GET /register` and a refused registration. */
  register: typeof registerPage;
  /** `GET /account`, its modules' sections inside. */
  account: typeof accountPage;
  /** The account page's own sections: sessions, activity, the forms. */
  accountSections: typeof accountSections;
  /** The "Confirm it's you" section of a passwordless account. */
  reauthSection: typeof reauthSection;
  /** A page with a title and a message (link results, errors). */
  message: typeof messagePage;
  /** `GET /password/forgot`. */
  forgotPassword: typeof forgotPasswordPage;
  /** `GET /password/reset`. */
  resetPassword: typeof resetPasswordPage;
  /** `GET /account/email/confirm`. */
  confirmEmailChange: typeof confirmEmailChangePage;
  /** `GET /verify` when the link cannot act at once. */
  confirmVerify: typeof confirmVerifyPage;
  /** Whether the address is verified, at the top of `/account`. */
  verificationStatus: typeof verificationStatus;
  /** The sign-in-link form under the login form. */
  magicLinkLogin: typeof magicLinkLogin;
  /** A refused sign-in-link request. */
  magicLinkRequest: typeof magicLinkRequestPage;
  /** `GET /magic-link/callback`. */
  confirmMagicLink: typeof confirmMagicLinkPage;
  /** The API keys section of `/account` (the `apiKeys()` module). */
  apiKeys: typeof apiKeysSection;
  /** The page that shows a new API key once. */
  apiKeyCreated: typeof apiKeyCreatedPage;
  /** The operator's confirmation before the console (`operatorConsole()`). */
  consoleConfirm: typeof consoleConfirmPage;
  /** The console's list of users. */
  consoleUsers: typeof consoleUsersPage;
  /** One user's page in the console. */
  consoleUser: typeof consoleUserPage;
  /**
   * The banner every page shows while an operator acts as a user (put at
   * the top of the page's `<body>`), with its end button.
   */
  impersonationBanner: typeof impersonationBanner;
  /** The mails. */
  emails: AccountEmails;
}

/**
 * What `accounts()` takes as `views`: any view replaced, the mails each on
 * their own.
 */
export type ViewOverrides =
  & Partial<Omit<AccountViews, "emails">>
  & { emails?: Partial<AccountEmails> };

/** The package's own views: the pages and mails it renders by default. */
export const defaultViews: AccountViews = {
  layout,
  stylesheet: STYLESHEET,
  home: homePage,
  login: loginPage,
  register: registerPage,
  account: accountPage,
  accountSections,
  reauthSection,
  message: messagePage,
  forgotPassword: forgotPasswordPage,
  resetPassword: resetPasswordPage,
  confirmEmailChange: confirmEmailChangePage,
  confirmVerify: confirmVerifyPage,
  verificationStatus,
  magicLinkLogin,
  magicLinkRequest: magicLinkRequestPage,
  confirmMagicLink: confirmMagicLinkPage,
  apiKeys: apiKeysSection,
  apiKeyCreated: apiKeyCreatedPage,
  consoleConfirm: consoleConfirmPage,
  consoleUsers: consoleUsersPage,
  consoleUser: consoleUserPage,
  impersonationBanner,
  emails: {
    verifyEmail,
    resetPassword: resetPasswordEmail,
    setPassword: setPasswordEmail,
    changeEmail: changeEmailEmail,
    emailChanged: emailChangedNotice,
    magicLink: magicLinkEmail,
  },
};

/**
 * The app's views: the package's defaults with the app's replacements.
 *
 * @param overrides The views the app replaces.
 * @returns Every view.
 */
export function withViews(overrides: ViewOverrides = {}): AccountViews {
  return {
    ...defaultViews,
    ...overrides,
    emails: { ...defaultViews.emails, ...overrides.emails },
  };
}
