/**
 * Bench support, not part of the package: a round-robin reverse proxy on
 * 127.0.0.1 in front of the app instances `bench/cluster.ts` starts.
 *
 * ```sh
 * deno run -A bench/_cluster_proxy.ts '{"port":8100,"upstreams":{"A":"http://127.0.0.1:8101","B":"http://127.0.0.1:8102"}}'
 * ```
 *
 * Each request goes to the next instance in turn, with its method, path,
 * query, headers and body; the answer comes back as it is (redirects are
 * not followed), with one header added, `x-bench-instance`, naming the
 * instance that answered. An instance that cannot be reached gives 502.
 * Prints `{"ready":true,"pid":…}` once it listens; stops on SIGTERM.
 *
 * @module
 */

/** What the parent passes as the first argument (JSON). */
export interface ClusterProxyConfig {
  /** The port to listen on (127.0.0.1). */
  port: number;
  /** The instances, by name, each an origin on 127.0.0.1. */
  upstreams: Record<string, string>;
}

/** The response header naming the instance that answered. */
export const INSTANCE_HEADER = "x-bench-instance";

/** Hop-by-hop headers, and `host`, which the upstream fetch sets itself. */
const DROPPED = [
  "connection",
  "keep-alive",
  "host",
  "transfer-encoding",
  "content-length",
];

function main(): void {
  const config = JSON.parse(Deno.args[0]) as ClusterProxyConfig;
  const upstreams = Object.entries(config.upstreams);
  const client = Deno.createHttpClient({});
  let next = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: config.port, onListen() {} },
    async (req, info) => {
      const [name, origin] = upstreams[next++ % upstreams.length];
      const url = new URL(req.url);
      const headers = new Headers(req.headers);
      for (const h of DROPPED) headers.delete(h);
      headers.set("x-forwarded-for", info.remoteAddr.hostname);
      try {
        // Bodies here are small: read whole, so the instance sees the same
        // Content-Length (a stream would go out chunked).
        const body = req.method === "GET" || req.method === "HEAD"
          ? undefined
          : await req.arrayBuffer();
        const res = await fetch(origin + url.pathname + url.search, {
          method: req.method,
          headers,
          body,
          redirect: "manual",
          client,
        });
        const out = new Response(res.body, res);
        out.headers.set(INSTANCE_HEADER, name);
        return out;
      } catch {
        return Response.json(
          { error: "bad_gateway", message: `Instance ${name} did not answer` },
          { status: 502, headers: { [INSTANCE_HEADER]: name } },
        );
      }
    },
  );
  Deno.addSignalListener("SIGTERM", async () => {
    await server.shutdown();
    client.close();
    Deno.exit(0);
  });
  console.log(JSON.stringify({ ready: true, pid: Deno.pid }));
}

if (import.meta.main) main();
