// The security kit of @portcullis/accounts against this Edge Function in
// Vercel's edge-runtime: `npm test` bundles api/index.ts as Vercel does
// (esbuild, the edge-light condition), serves it on a free port, and reads
// the mailed links from a recording mail API on 127.0.0.1. The stores are
// yours: UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, DATABASE_URL
// and DATABASE_AUTH_TOKEN of empty test instances (never production's).
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import process from "node:process";
import { build } from "esbuild";
import { EdgeRuntime, runServer } from "edge-runtime";
import { serve } from "@portcullis/auth/adapters/node";
import {
  formatKitReport,
  mailRecorder,
  runAccountsKit,
} from "@portcullis/accounts/testing";

const unset = ["UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN"]
  .concat("DATABASE_URL").filter((name) => !process.env[name]);
const skip = unset.length > 0 && `set ${unset.join(", ")} (test instances)`;

test(
  "the app keeps the guarantees of @portcullis/accounts",
  { skip },
  async () => {
    const recorder = mailRecorder();
    const mail = await serve(recorder.fetch, {
      port: 0,
      hostname: "127.0.0.1",
    });
    const { outputFiles } = await build({
      stdin: {
        contents: `import handler from "./api/index.ts";
addEventListener("fetch", (e) => e.respondWith(handler(e.request)));`,
        resolveDir: ".",
        loader: "ts",
      },
      bundle: true,
      write: false,
      format: "iife",
      platform: "browser",
      conditions: ["edge-light", "worker", "browser"],
    });
    const env = {
      ...process.env,
      AUTH_SECRET: randomBytes(32).toString("base64"),
      RESEND_API_KEY: recorder.apiKey,
      RESEND_BASE_URL: `http://127.0.0.1:${mail.address().port}`,
    };
    // As on Vercel: no code from strings, no WebAssembly from bytes.
    const runtime = new EdgeRuntime({
      initialCode: outputFiles[0].text,
      codeGeneration: { strings: false, wasm: false },
      extend: (context) => Object.assign(context, { process: { env } }),
    });
    const server = await runServer({ runtime, port: 0, host: "127.0.0.1" });
    // The function reads its settings on the first request.
    env.APP_ORIGIN = new URL(server.url).origin;
    try {
      const report = await runAccountsKit({
        baseUrl: env.APP_ORIGIN,
        mail: recorder.read,
      });
      console.log(formatKitReport(report));
      assert.equal(report.failed, 0, "every check passed");
      assert.ok(report.passed > 0, "the kit ran its checks");
    } finally {
      await server.close();
      mail.close();
    }
  },
);
