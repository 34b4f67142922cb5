// Item 36 on Cloudflare Workers: in workerd a timer belongs to the request
// that set it and is dropped when that request ends, so one timer shared by
// every store call would leave later requests without a deadline. The
// library's own deadline module, bundled as a Worker and run in workerd
// (Miniflare), must bound a hanging call whether it comes right after
// another request ended or while another request's call is in flight.
import assert from "node:assert/strict";
import * as esbuild from "esbuild";
import { Miniflare } from "miniflare";

const DEADLINE_MS = 300;

async function bundleWorker(): Promise<string> {
  const entry = `
    import { Deadline } from ${
    JSON.stringify(
      new URL("../../lib/kv/deadline.ts", import.meta.url).pathname,
    )
  };
    const deadline = new Deadline(${DEADLINE_MS});
    export default {
      async fetch(req, env) {
        const path = new URL(req.url).pathname;
        if (path === "/fast") {
          await deadline.guard(Promise.resolve(1));
          return new Response("fast");
        }
        if (path === "/slow") {
          await deadline.guard(new Promise((r) => setTimeout(r, 100)));
          return new Response("slow");
        }
        const started = Date.now();
        // A store that accepts the connection and never answers.
        const hung = path === "/hang-io"
          ? fetch(env.SILENT_URL)
          : new Promise(() => {});
        try {
          await deadline.guard(hung);
          return new Response("answered", { status: 200 });
        } catch (error) {
          return new Response(error.name + " " + (Date.now() - started), {
            status: 503,
          });
        }
      },
    };`;
  const out = await esbuild.build({
    stdin: { contents: entry, loader: "ts", resolveDir: "/" },
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
  });
  await esbuild.stop();
  return out.outputFiles[0].text;
}

async function withWorker(
  run: (mf: Miniflare) => Promise<void>,
): Promise<void> {
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const c of silent) conns.push(c);
  })().catch(() => {});
  const mf = new Miniflare({
    modules: [{
      type: "ESModule",
      path: "worker.mjs",
      contents: await bundleWorker(),
    }],
    compatibilityDate: "2025-09-01",
    bindings: {
      SILENT_URL: `http://127.0.0.1:${(silent.addr as Deno.NetAddr).port}/`,
    },
  });
  try {
    await mf.ready;
    await run(mf);
  } finally {
    await mf.dispose();
    silent.close();
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
  }
}

async function expectDeadline(mf: Miniflare, path: string): Promise<void> {
  const abort = new AbortController();
  const guard = setTimeout(() => abort.abort(), 8_000);
  try {
    const res = await mf.dispatchFetch(`http://worker${path}`, {
      signal: abort.signal,
    });
    const body = await res.text();
    assert.equal(res.status, 503, body);
    assert.match(body, /^DeadlineExceeded \d+$/);
  } finally {
    clearTimeout(guard);
  }
}

Deno.test("item 36 (workerd): a hanging call right after another request ended still meets its deadline", async () => {
  await withWorker(async (mf) => {
    assert.equal(
      await (await mf.dispatchFetch("http://worker/fast")).text(),
      "fast",
    );
    await new Promise((r) => setTimeout(r, 50));
    await expectDeadline(mf, "/hang-io");
    await expectDeadline(mf, "/hang");
    // And again, after those ended.
    await expectDeadline(mf, "/hang-io");
  });
});

Deno.test("item 36 (workerd): a hanging call that joins while another request's call is in flight meets its deadline", async () => {
  await withWorker(async (mf) => {
    const slow = mf.dispatchFetch("http://worker/slow").then((r) => r.text());
    await new Promise((r) => setTimeout(r, 50));
    await expectDeadline(mf, "/hang-io");
    assert.equal(await slow, "slow");
  });
});
