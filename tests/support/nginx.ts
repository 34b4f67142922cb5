/**
 * Test support: a private nginx (Debian's binary) as a reverse proxy in
 * front of a server on 127.0.0.1, started as a non-daemon child with its
 * config, pid file, temp paths and logs in a temporary directory, and
 * stopped by its process id.
 *
 * @module
 */
import { missing } from "./services.ts";

/** A running nginx. */
export interface Nginx {
  /** The port nginx listens on, on 127.0.0.1. */
  port: number;
  /** nginx's error log so far (for a failure message). */
  errors(): Promise<string>;
  /** Stops nginx (by its process id) and removes its directory. */
  close(): Promise<void>;
  /** `Symbol.asyncDispose` for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Where Debian puts nginx, then `PATH`. */
async function findNginx(): Promise<string | null> {
  for (const path of ["/usr/sbin/nginx", "/usr/bin/nginx"]) {
    try {
      if ((await Deno.stat(path)).isFile) return path;
    } catch {
      // not here
    }
  }
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (dir && (await Deno.stat(`${dir}/nginx`)).isFile) {
        return `${dir}/nginx`;
      }
    } catch {
      // not here
    }
  }
  return null;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * Starts nginx proxying every request to `127.0.0.1:<upstream>`, appending
 * the peer's address to `X-Forwarded-For` as a plain nginx site does
 * (`$proxy_add_x_forwarded_for`).
 *
 * @param upstream The port of the server behind it.
 * @param port The port nginx listens on; default a free one.
 * @returns The running nginx, or `null` when nginx is not installed (a
 * failure under `CI=true`, `SKIPPED` elsewhere).
 */
export async function startNginx(
  upstream: number,
  port: number = freePort(),
): Promise<Nginx | null> {
  const binary = await findNginx();
  if (binary === null) {
    missing("nginx is not installed (apt-get install nginx-light)");
    return null;
  }
  const dir = await Deno.makeTempDir({ prefix: "portcullis-nginx-" });
  const conf = `${dir}/nginx.conf`;
  await Deno.writeTextFile(
    conf,
    `# A private nginx for one test.
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://127.0.0.1:${upstream};
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }
}
`,
  );
  const child = new Deno.Command(binary, {
    args: [
      "-p",
      dir,
      "-e",
      `${dir}/error.log`,
      "-c",
      conf,
      "-g",
      "daemon off;",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const errors = async () => {
    try {
      return await Deno.readTextFile(`${dir}/error.log`);
    } catch {
      return "";
    }
  };
  let stopped = false;
  const close = async () => {
    if (!stopped) {
      stopped = true;
      try {
        Deno.kill(child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    await child.status;
    await child.stderr.cancel().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  // Ready when the port accepts connections.
  for (let i = 0; i < 100; i++) {
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      return { port, errors, close, [Symbol.asyncDispose]: close };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const log = await errors();
  await close();
  throw new Error(`nginx did not start on port ${port}: ${log}`);
}
