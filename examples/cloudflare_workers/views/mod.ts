/**
 * This project's pages and mails, which `main.ts` passes to `accounts()`
 * as `views`. Each file under `views/` began as a copy of a default of
 * `@portcullis/accounts` 0.3.0 (or of a sign-in method's package), written by
 * the scaffold: change them as you like. The rules (what a page may show,
 * which link a mail carries, every check) stay in the packages, so an
 * upgrade brings their fixes without touching these files; the changelog's
 * "Views" part of each release says what changed in the defaults.
 *
 * @module
 */
import type { ViewOverrides } from "@portcullis/accounts/views";
import { accountPage } from "./auth/account.ts";
import { accountSections } from "./auth/account_sections.ts";
import { apiKeyCreatedPage, apiKeysSection } from "./auth/api_keys.ts";
import { confirmEmailChangePage } from "./auth/confirm_email_change.ts";
import { confirmVerifyPage } from "./auth/confirm_verify.ts";
import {
  consoleConfirmPage,
  consoleUserPage,
  consoleUsersPage,
  impersonationBanner,
} from "./auth/console.ts";
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
import { verificationStatus } from "./auth/verification_status.ts";
import { changeEmailEmail, emailChangedNotice } from "./emails/change_email.ts";
import { magicLinkEmail } from "./emails/magic_link.ts";
import {
  resetPasswordEmail,
  setPasswordEmail,
} from "./emails/reset_password.ts";
import { verifyEmail } from "./emails/verify_email.ts";
import { STYLESHEET } from "./style.ts";

/** Every page and mail of this project, by its name in `AccountViews`. */
export const views: ViewOverrides = {
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
