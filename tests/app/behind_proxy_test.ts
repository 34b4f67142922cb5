/**
 * Issue 27 finding 2 (behind a reverse proxy, per-address limits became
 * global; SECURITY.md requirement 59): the reference app's `main.ts`
 * behind a real nginx, with `TRUSTED_PROXIES`, keeps each client's limits
 * its own, and a forged `X-Forwarded-For` from an untrusted peer changes
 * nothing. Clients present distinct addresses by connecting from
 * 127.0.0.2, 127.0.0.3, … as local addresses.
 *
 * @module
 */
import assert from "node:assert/strict";
import { freePort, startNginx } from "../support/nginx.ts";
import { startApp } from "./_harness.ts";

const PASSWORD = "correct horse battery staple";
const MAIN = new URL("../../examples/app/main.ts", import.meta.url).pathname;

/** A client connecting from one local address (a different "machine"). */
class Client {
  #http: Deno.HttpClient;
  constructor(readonly base: string, localAddress: string) {
    this.#http = Deno.createHttpClient({ localAddress });
  }
  /** POSTs JSON; answers the status and the JSON body. */
  async post(
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(this.base + path, {
      method: "POST",
      client: this.#http,
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {} };
  }
  close(): void {
    this.#http.close();
  }
}

/** Starts `examples/app/main.ts` with `env`; answers its output and a stop. */
async function startMain(env: Record<string, string>) {
  const full: Record<string, string> = { NO_COLOR: "1", ...env };
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "CI"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) full[name] = value;
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", MAIN],
    clearEnv: true,
    env: full,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const decoder = new TextDecoder();
  const reader = child.stdout.getReader();
  const timer = setTimeout(() => child.kill(), 60_000);
  try {
    while (!out.includes("Listening on")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += decoder.decode(value);
    }
  } finally {
    clearTimeout(timer);
  }
  // Keep draining so the child never blocks on a full pipe.
  const drained = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      out += decoder.decode(value);
    }
  })();
  const stderr = new Response(child.stderr).text();
  return {
    output: () => out,
    started: out.includes("Listening on"),
    stderr,
    async stop() {
      try {
        Deno.kill(child.pid, "SIGTERM");
      } catch {
        // already gone
      }
      await child.status;
      await drained.catch(() => {});
      await stderr.catch(() => "");
    },
  };
}

Deno.test({
  name:
    "issue 27 finding 2: behind a real nginx with TRUSTED_PROXIES, a stranger's 100 wrong logins leave other clients' logins and registrations open; a forged X-Forwarded-For from an untrusted peer changes nothing",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const proxyPort = freePort();
    const dir = await Deno.makeTempDir({ prefix: "portcullis-proxy-" });
    // The app takes a port of the system's choosing (none another test can
    // take between a probe and the bind), and nginx proxies to it.
    const app = await startMain({
      DATA_DIR: `${dir}/data`,
      PORT: "0",
      APP_ORIGIN: `http://127.0.0.1:${proxyPort}`,
      TRUSTED_PROXIES: "127.0.0.1",
      TOTP: "off",
      PASSKEYS: "off",
    });
    const appPort = Number(
      app.output().match(/Listening on port (\d+)/)?.[1] ?? 0,
    );
    await using nginx = appPort > 0
      ? await startNginx(appPort, proxyPort)
      : null;
    const via = (address: string) =>
      new Client(`http://127.0.0.1:${proxyPort}`, address);
    const clients: Client[] = [];
    try {
      assert.ok(
        app.started && appPort > 0,
        `the app did not start: ${app.output()} ${await Promise.race([
          app.stderr,
          new Promise((r) => setTimeout(() => r(""), 1000)),
        ])}`,
      );
      if (nginx === null) return;
      assert.match(app.output(), /Trusted proxies: 127\.0\.0\.1/);
      const owner = via("127.0.0.3");
      const stranger = via("127.0.0.2");
      clients.push(owner, stranger);
      const created = await owner.post("/register", {
        email: "owner@example.com",
        password: PASSWORD,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));

      // The stranger: 100 wrong logins for random unknown emails, each
      // with a different forged X-Forwarded-For that nginx appends to.
      const statuses: number[] = [];
      const next = { i: 0 };
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next.i < 100) {
            const i = next.i++;
            const res = await stranger.post("/login", {
              email: `nobody${i}-${crypto.randomUUID()}@example.com`,
              password: "wrong password, long enough",
            }, { "x-forwarded-for": `203.0.113.${i % 250}, 127.0.0.3` });
            statuses.push(res.status);
          }
        }),
      );
      assert.deepEqual(
        [...new Set(statuses)],
        [401],
        "the stranger's first 100 were wrong logins",
      );
      // Its own address is now throttled, whatever it writes.
      const more = await stranger.post("/login", {
        email: "owner@example.com",
        password: PASSWORD,
      }, { "x-forwarded-for": "127.0.0.3" });
      assert.equal(more.status, 429, "the limit holds the stranger");
      for (let i = 0; i < 10; i++) {
        await stranger.post("/register", {
          email: `spam${i}@example.com`,
          password: PASSWORD,
        });
      }
      const spam = await stranger.post("/register", {
        email: "spam-more@example.com",
        password: PASSWORD,
      });
      assert.equal(spam.status, 429, "the registration limit holds it too");

      // Everyone else is untouched.
      const login = await owner.post("/login", {
        email: "owner@example.com",
        password: PASSWORD,
      });
      assert.equal(login.status, 200, JSON.stringify(login.body));
      assert.equal(typeof login.body.token, "string");
      const newcomer = via("127.0.0.4");
      clients.push(newcomer);
      const joined = await newcomer.post("/register", {
        email: "newcomer@example.com",
        password: PASSWORD,
      });
      assert.equal(joined.status, 201, JSON.stringify(joined.body));

      // Straight to the app (an untrusted peer), the stranger's forged
      // header naming a fresh address is not believed: it is still itself.
      const direct = new Client(`http://127.0.0.1:${appPort}`, "127.0.0.2");
      clients.push(direct);
      for (const path of ["/login", "/register"]) {
        const forged = await direct.post(path, {
          email: "owner@example.com",
          password: PASSWORD,
        }, { "x-forwarded-for": "127.0.0.5", forwarded: "for=127.0.0.5" });
        assert.equal(forged.status, 429, `${path} from a forged header`);
      }
      // The address it named is open through the proxy.
      const named = via("127.0.0.5");
      clients.push(named);
      const namedLogin = await named.post("/login", {
        email: "owner@example.com",
        password: PASSWORD,
      });
      assert.equal(namedLogin.status, 200);
    } finally {
      for (const client of clients) client.close();
      await app.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("issue 27 finding 2: a typo in TRUSTED_PROXIES stops the start with a message naming it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-proxy-" });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-kv", MAIN],
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "",
        HOME: Deno.env.get("HOME") ?? "",
        ...(Deno.env.get("DENO_DIR")
          ? { DENO_DIR: Deno.env.get("DENO_DIR")! }
          : {}),
        NO_COLOR: "1",
        DATA_DIR: `${dir}/data`,
        PORT: "0",
        TRUSTED_PROXIES: "10.0.0.0/8, 192.168.1.300",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    });
    const { code, stdout, stderr } = await child.output();
    const err = new TextDecoder().decode(stderr);
    assert.equal(code, 1);
    assert.doesNotMatch(new TextDecoder().decode(stdout), /Listening on/);
    assert.match(
      err,
      /^error: TRUSTED_PROXIES must list .*"192\.168\.1\.300" is none of these\n$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("accounts({ trustedProxies }): every throttle reads the rightmost untrusted forwarded address, and only from a trusted peer", async () => {
  // The harness's peer is the x-test-client header (its socket stand-in).
  await using app = await startApp({ trustedProxies: "10.0.0.0/8" });
  const post = async (
    path: string,
    peer: string,
    xff: string,
    body: unknown,
  ) => {
    const res = await fetch(app.origin + path, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        "x-test-client": peer,
        "x-forwarded-for": xff,
      },
      body: JSON.stringify(body),
    });
    await res.body?.cancel();
    return res.status;
  };
  const owner = { email: "owner@example.com", password: PASSWORD };
  assert.equal(await post("/register", "10.0.0.1", "198.51.100.7", owner), 201);
  // The stranger behind the proxy, forging entries left of its own.
  for (let i = 0; i < 100; i++) {
    assert.equal(
      await post("/login", "10.0.0.1", `198.51.100.7, 198.51.100.66`, {
        email: `nobody${i}@example.com`,
        password: "wrong password, long enough",
      }),
      401,
    );
  }
  assert.equal(
    await post("/login", "10.0.0.2", "198.51.100.66, 10.0.0.9", owner),
    429,
    "the stranger is held at its own address through two proxies",
  );
  // Another client behind the same proxy signs in.
  assert.equal(await post("/login", "10.0.0.1", "198.51.100.7", owner), 200);
  // Straight from an untrusted peer the header is ignored: the peer's own
  // bucket, not the address it names.
  for (let i = 0; i < 10; i++) {
    await post("/register", "203.0.113.5", "198.51.100.8", {
      email: `spam${i}@example.com`,
      password: PASSWORD,
    });
  }
  assert.equal(
    await post("/register", "203.0.113.5", "198.51.100.9", {
      email: "more@example.com",
      password: PASSWORD,
    }),
    429,
  );
  assert.equal(
    await post("/register", "10.0.0.1", "198.51.100.8", {
      email: "named@example.com",
      password: PASSWORD,
    }),
    201,
    "the address the forged header named is untouched",
  );
});
