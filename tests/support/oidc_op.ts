/**
 * Test support: starts the real OpenID Provider (`oidc_provider.ts`, over
 * `oidc-provider`) as its own process on 127.0.0.1, and drives its
 * development login and consent forms over HTTP like a browser would.
 *
 * @module
 */

/** A running provider. */
export interface TestOp {
  /** Its issuer, `http://127.0.0.1:<port>`. */
  issuer: string;
  /**
   * Follows an authorization URL through the provider's login (as `login`,
   * `sub;email;email_verified`) and consent, and answers the callback URL
   * the provider redirects to (not followed).
   */
  signIn(authorizationUrl: string, login: string): Promise<string>;
  /** Follows an authorization URL and presses "cancel" on the login form. */
  abort(authorizationUrl: string): Promise<string>;
  /** Stops the process. */
  close(): Promise<void>;
  /** `Symbol.asyncDispose` for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a provider with one client.
 *
 * @param client `client_id`, `client_secret`, `redirect_uris`.
 * @returns The running provider.
 */
export async function startOp(
  client: { client_id: string; client_secret: string; redirect_uris: string[] },
): Promise<TestOp> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      // The tests' own import map and lockfile (oidc-provider is there).
      `--import-map=${new URL("../import_map.json", import.meta.url).pathname}`,
      `--lock=${new URL("../deno.lock", import.meta.url).pathname}`,
      new URL("./oidc_provider.ts", import.meta.url).pathname,
      JSON.stringify(client),
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let first = "";
  const timer = setTimeout(() => child.kill(), 30_000);
  while (!first.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    first += value;
  }
  clearTimeout(timer);
  const m = /listening (\S+)/.exec(first);
  if (m === null) {
    await child.status;
    throw new Error("The OpenID Provider did not start");
  }
  const issuer = m[1];
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  const redirect = client.redirect_uris[0];

  async function drive(
    authorizationUrl: string,
    action: (uid: string, prompt: string) => {
      method: string;
      path: string;
      body?: URLSearchParams;
    },
  ): Promise<string> {
    const jar = new Map<string, string>();
    let url = authorizationUrl;
    let init: RequestInit = {};
    for (let hop = 0; hop < 20; hop++) {
      const headers = new Headers(init.headers);
      headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
      const res = await fetch(url, { ...init, headers, redirect: "manual" });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const i = pair.indexOf("=");
        jar.set(pair.slice(0, i), pair.slice(i + 1));
      }
      const location = res.headers.get("location");
      if (location !== null) {
        await res.body?.cancel();
        const next = new URL(location, url).href;
        if (next.startsWith(redirect)) return next;
        url = next;
        init = {};
        continue;
      }
      const html = await res.text();
      const uid = /\/interaction\/([^/?#]+)/.exec(url)?.[1];
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      if (res.status !== 200 || uid === undefined || prompt === undefined) {
        throw new Error(`Unexpected provider page ${res.status} at ${url}`);
      }
      const step = action(uid, prompt);
      url = new URL(step.path, issuer).href;
      init = step.body
        ? {
          method: step.method,
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: step.body,
        }
        : { method: step.method };
    }
    throw new Error("Too many redirects at the provider");
  }

  const close = async () => {
    try {
      child.kill();
    } catch {
      // already gone
    }
    await child.status;
  };
  return {
    issuer,
    signIn: (authorizationUrl, login) =>
      drive(authorizationUrl, (uid, prompt) => ({
        method: "POST",
        path: `/interaction/${uid}`,
        body: new URLSearchParams(
          prompt === "login" ? { prompt, login, password: "any" } : { prompt },
        ),
      })),
    abort: (authorizationUrl) =>
      drive(authorizationUrl, (uid) => ({
        method: "GET",
        path: `/interaction/${uid}/abort`,
      })),
    close,
    [Symbol.asyncDispose]: close,
  };
}
