/**
 * `PortcullisClient`: the browser side of `@portcullis/accounts`' JSON
 * routes and of the passkeys module's WebAuthn ceremonies (sign-up,
 * sign-in, autofill, confirmation, adding, recovery, automatic upgrade,
 * and the Signals that follow them). Typed answers, never a thrown error
 * for an expected outcome: a refusal comes back as `{ ok: false, error }`.
 *
 * @module
 */
import { hasCapability, supportsAutofill } from "./capabilities.ts";
import { signalUnknownCredential } from "./signals.ts";
import {
  authenticationToJSON,
  type BrowserCredential,
  type CreationOptions,
  creationOptionsFromJSON,
  type CreationOptionsJSON,
  registrationToJSON,
  type RequestOptions,
  requestOptionsFromJSON,
  type RequestOptionsJSON,
} from "./webauthn_json.ts";

/** `navigator.credentials`, the part the ceremonies use. */
interface Credentials {
  create(options: {
    publicKey: CreationOptions;
    signal?: AbortSignal;
    mediation?: "conditional";
  }): Promise<BrowserCredential | null>;
  get(options: {
    publicKey: RequestOptions;
    signal?: AbortSignal;
    mediation?: "conditional";
  }): Promise<BrowserCredential | null>;
}

function credentials(): Credentials {
  const nav = (globalThis as { navigator?: { credentials?: Credentials } })
    .navigator;
  if (nav?.credentials === undefined) {
    throw Object.assign(new Error("WebAuthn is not available"), {
      name: "NotSupportedError",
    });
  }
  return nav.credentials;
}

/** A refusal, as the server (or the browser's ceremony) gave it. */
export interface ClientError {
  /** The code: the server's (`invalid_credentials`, `passkey_refused`, …) or `ceremony_failed`. */
  error: string;
  /** A sentence for the user. */
  message: string;
  /** A finer reason, when there is one (the DOMException's name for a ceremony). */
  reason?: string;
  /** Set when a sign-in was refused because the server does not know the passkey. */
  unknownCredential?: boolean;
}

/** The outcome of a call: the data, or the refusal with its status (0: no answer). */
export type ClientResult<T> =
  | { ok: true; status: number; data: T }
  | { ok: false; status: number; error: ClientError };

/** A session, as the JSON routes answer one (the cookie is set beside it). */
export interface SessionAnswer {
  /** The bearer token (the same session as the cookie). */
  token?: string;
  /** Unix seconds of its expiry. */
  expiresAt?: number;
  /** Where to go next (a local path). */
  next?: string;
}

/** `GET /api/me`. */
export interface Me {
  /** The subject id. */
  subject: string;
  /** The address. */
  email: string;
  /** Whether the address is proven. */
  verified: boolean;
}

/** Options of {@linkcode PortcullisClient}. */
export interface PortcullisClientOptions {
  /** The app's origin (or a path prefix); default the page's own origin. */
  base?: string;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
  /** Whether cookies go with requests; default `"same-origin"`. */
  credentials?: RequestCredentials;
}

/**
 * The browser client. One instance per page is enough; a ceremony started
 * while another waits (an autofill `get` pending when the button is
 * clicked) aborts the one that waits, as WebAuthn allows one at a time.
 *
 * @example Usage
 * ```ts ignore
 * import { PortcullisClient } from "@portcullis/client";
 * const client = new PortcullisClient();
 * const result = await client.signInWithPasskey({ next: "/account" });
 * if (result.ok) location.assign(result.data.next ?? "/");
 * else console.log(result.error.message);
 * ```
 */
export class PortcullisClient {
  #base: string;
  #fetch: typeof fetch;
  #credentials: RequestCredentials;
  #pending: AbortController | null = null;

  /**
   * Makes the client.
   *
   * @param options The app's origin, the fetch and the credentials mode.
   */
  constructor(options: PortcullisClientOptions = {}) {
    this.#base = (options.base ?? "").replace(/\/$/, "");
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#credentials = options.credentials ?? "same-origin";
  }

  /**
   * Sends one JSON request to the app.
   *
   * @param method `GET` or `POST`.
   * @param path The route (`/login`).
   * @param body The JSON body of a `POST`.
   * @returns The answer.
   */
  async request<T>(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
  ): Promise<ClientResult<T>> {
    let res: Response;
    try {
      res = await this.#fetch(`${this.#base}${path}`, {
        method,
        credentials: this.#credentials,
        headers: method === "POST"
          ? { "content-type": "application/json", accept: "application/json" }
          : { accept: "application/json" },
        body: method === "POST" ? JSON.stringify(body ?? {}) : undefined,
      });
    } catch (error) {
      return failed(0, "network_error", (error as Error)?.message ?? "");
    }
    let data: unknown = null;
    try {
      data = res.status === 204 ? null : await res.json();
    } catch {
      data = null;
    }
    if (res.ok) return { ok: true, status: res.status, data: data as T };
    const e = (data ?? {}) as Partial<ClientError>;
    return {
      ok: false,
      status: res.status,
      error: {
        ...e,
        error: typeof e.error === "string" ? e.error : "http_error",
        message: typeof e.message === "string"
          ? e.message
          : `Request failed: the server answered ${res.status}`,
      },
    };
  }

  /** `POST /register`: a new account with a password (201 `{subject, token}`). */
  register(
    email: string,
    password: string,
  ): Promise<ClientResult<SessionAnswer & { subject: string }>> {
    return this.request("POST", "/register", { email, password });
  }

  /** `POST /login`: a password sign-in (200 `{token, expiresAt}`). */
  login(
    email: string,
    password: string,
    next = "/",
  ): Promise<ClientResult<SessionAnswer>> {
    return this.request("POST", "/login", { email, password, next });
  }

  /** `POST /logout`. */
  logout(): Promise<ClientResult<null>> {
    return this.request("POST", "/logout");
  }

  /** `GET /api/me`: the signed-in user. */
  me(): Promise<ClientResult<Me>> {
    return this.request("GET", "/api/me");
  }

  /** `POST /passkeys/recover`: mails a recovery link (202, whether or not the address is registered). */
  requestRecovery(email: string): Promise<ClientResult<unknown>> {
    return this.request("POST", "/passkeys/recover", { email });
  }

  /**
   * Signs up with an email and a passkey, no password
   * (`POST /passkeys/signup/options`, `navigator.credentials.create`,
   * `POST /passkeys/signup`): the account is made with the passkey, the
   * verification link mailed, and the browser signed in.
   *
   * @param input The address, the passkey's name and where to go next.
   * @returns The session (201), or the refusal (409 `email_taken`, …).
   */
  async signUpWithPasskey(
    input: { email: string; name?: string; next?: string },
  ): Promise<ClientResult<SessionAnswer>> {
    const started = await this.request<
      { options: CreationOptionsJSON; pending: string }
    >("POST", "/passkeys/signup/options", { email: input.email });
    if (!started.ok) return started;
    const response = await this.#create(started.data.options);
    if ("error" in response) return { ok: false, status: 0, error: response };
    return this.request("POST", "/passkeys/signup", {
      pending: started.data.pending,
      response,
      name: input.name ?? "Passkey",
      next: input.next ?? "/",
    });
  }

  /**
   * Signs in with a passkey (no address typed). With `autofill`, the
   * request waits, without a dialog, for the user to pick a passkey in the
   * autofill list of an input with `autocomplete="username webauthn"`
   * (conditional mediation); it answers `ceremony_failed` at once where the
   * browser cannot. A refusal because the server does not know the passkey
   * also signals it (`signalUnknownCredential`), so the provider can hide
   * it.
   *
   * @param input Where to go next, and whether to wait in the autofill.
   * @returns The session, or the refusal.
   */
  async signInWithPasskey(
    input: { next?: string; autofill?: boolean } = {},
  ): Promise<ClientResult<SessionAnswer>> {
    return await this.#assert("/passkeys/login", input);
  }

  /**
   * Confirms it is the signed-in user with one of their passkeys
   * (`/passkeys/reauth`): the re-check before a sensitive change.
   *
   * @param input Where to go next.
   * @returns `{next}`, or the refusal.
   */
  async reauthWithPasskey(
    input: { next?: string } = {},
  ): Promise<ClientResult<SessionAnswer>> {
    return await this.#assert("/passkeys/reauth", input);
  }

  /**
   * Adds a passkey to the signed-in account (`/passkeys/register`): the
   * current password goes with the options request, unless the session
   * re-authenticated just before.
   *
   * @param input The passkey's name, and the current password.
   * @returns `{id, name}` (201), or the refusal.
   */
  async addPasskey(
    input: { name?: string; password?: string } = {},
  ): Promise<ClientResult<{ id: string; name: string }>> {
    const started = await this.request<CreationOptionsJSON>(
      "POST",
      "/passkeys/register/options",
      input.password === undefined ? {} : { password: input.password },
    );
    if (!started.ok) return started;
    const response = await this.#create(started.data);
    if ("error" in response) return { ok: false, status: 0, error: response };
    return this.request("POST", "/passkeys/register", {
      response,
      name: input.name ?? "Passkey",
    });
  }

  /**
   * Adds a passkey in a recovery session (after a recovery link): the
   * recovery ends, and the browser is signed in.
   *
   * @param input The passkey's name.
   * @returns The session (201), or the refusal.
   */
  async recoverWithPasskey(
    input: { name?: string } = {},
  ): Promise<ClientResult<SessionAnswer>> {
    const started = await this.request<CreationOptionsJSON>(
      "POST",
      "/passkeys/recover/options",
    );
    if (!started.ok) return started;
    const response = await this.#create(started.data);
    if ("error" in response) return { ok: false, status: 0, error: response };
    return this.request("POST", "/passkeys/recover/register", {
      response,
      name: input.name ?? "Passkey",
    });
  }

  /**
   * The automatic upgrade after a password sign-in: where the browser
   * supports conditional create (`getClientCapabilities().conditionalCreate`),
   * asks the app for creation options and lets the password manager make
   * a passkey without a dialog (`mediation: "conditional"`). Answers
   * `unsupported` without a request where the browser cannot.
   *
   * @returns `{id, name}` (201), or why not.
   */
  async upgradeToPasskey(): Promise<
    ClientResult<{ id: string; name: string }>
  > {
    if (!(await hasCapability("conditionalCreate"))) {
      return failed(0, "unsupported", "This browser cannot upgrade silently");
    }
    const started = await this.request<CreationOptionsJSON>(
      "POST",
      "/passkeys/upgrade/options",
    );
    if (!started.ok) return started;
    const response = await this.#create(started.data, "conditional");
    if ("error" in response) return { ok: false, status: 0, error: response };
    return this.request("POST", "/passkeys/upgrade", { response });
  }

  /** Aborts the ceremony that waits, if any (an autofill request). */
  cancelCeremony(): void {
    this.#pending?.abort();
    this.#pending = null;
  }

  #signal(): AbortSignal {
    this.cancelCeremony();
    this.#pending = new AbortController();
    return this.#pending.signal;
  }

  async #create(
    options: CreationOptionsJSON,
    mediation?: "conditional",
  ) {
    try {
      const credential = await credentials().create({
        publicKey: creationOptionsFromJSON(options),
        signal: this.#signal(),
        ...(mediation ? { mediation } : {}),
      });
      if (credential === null) return ceremonyFailed("NotAllowedError");
      return registrationToJSON(credential);
    } catch (error) {
      return ceremonyFailed((error as Error)?.name);
    }
  }

  async #assert(
    path: "/passkeys/login" | "/passkeys/reauth",
    input: { next?: string; autofill?: boolean },
  ): Promise<ClientResult<SessionAnswer>> {
    if (input.autofill && !(await supportsAutofill())) {
      return failed(0, "unsupported", "This browser has no passkey autofill");
    }
    const started = await this.request<RequestOptionsJSON>(
      "POST",
      `${path}/options`,
    );
    if (!started.ok) return started;
    let response;
    try {
      const credential = await credentials().get({
        publicKey: requestOptionsFromJSON(started.data),
        signal: this.#signal(),
        ...(input.autofill ? { mediation: "conditional" as const } : {}),
      });
      if (credential === null) {
        return {
          ok: false,
          status: 0,
          error: ceremonyFailed("NotAllowedError"),
        };
      }
      response = authenticationToJSON(credential);
    } catch (error) {
      return {
        ok: false,
        status: 0,
        error: ceremonyFailed((error as Error)?.name),
      };
    }
    const answer = await this.request<SessionAnswer>("POST", path, {
      response,
      next: input.next ?? "/",
    });
    if (!answer.ok && answer.error.unknownCredential && started.data.rpId) {
      await signalUnknownCredential(started.data.rpId, response.id);
    }
    return answer;
  }
}

function ceremonyFailed(name: string | undefined): ClientError {
  return {
    error: "ceremony_failed",
    reason: name ?? "Error",
    message: name === "NotAllowedError" || name === "AbortError"
      ? "The passkey request was cancelled or timed out"
      : "The passkey request failed",
  };
}

function failed(
  status: number,
  error: string,
  message: string,
): { ok: false; status: number; error: ClientError } {
  return { ok: false, status, error: { error, message } };
}
