/**
 * The core's size and import time: `mod.ts` (no stores, no hashing
 * libraries) bundled by esbuild, minified, then gzipped; and the time a
 * fresh Deno process takes to import it.
 *
 * Usage: `deno run -A bench/bundle_size.ts`
 *
 * @module
 */
import * as esbuild from "esbuild";

const root = new URL("..", import.meta.url).pathname;
// Code splitting, as Deno, Vite or wrangler load it: the PBKDF2
// WebAssembly bytes are imported lazily (only when WebCrypto refuses and no
// compiled module was given), so they land in a chunk of their own.
const outdir = await Deno.makeTempDir();
const result = await esbuild.build({
  entryPoints: [`${root}mod.ts`],
  bundle: true,
  splitting: true,
  minify: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  outdir,
  metafile: true,
  logLevel: "error",
});
await esbuild.stop();
const outputs = Object.entries(result.metafile.outputs).filter(([p]) =>
  p.endsWith(".js")
);
const entryOut = outputs.find(([, o]) => o.entryPoint !== undefined)!;
const bytes = await Deno.readFile(entryOut[0]);
const lazy = outputs.filter(([p]) => p !== entryOut[0]).map(([, o]) => o.bytes)
  .reduce((a, b) => a + b, 0);
await Deno.remove(outdir, { recursive: true });
const gzipped = new Uint8Array(
  await new Response(
    new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip")),
  ).arrayBuffer(),
);
const inputs = Object.keys(result.metafile.inputs);
const external = inputs.filter((p) => !p.startsWith("lib/") && p !== "mod.ts");

// Import time: a fresh process per sample, after one warm-up that fills
// Deno's compile cache.
const probe = `const t = performance.now(); await import(${
  JSON.stringify(`${root}mod.ts`)
}); console.log(performance.now() - t);`;
const samples: number[] = [];
for (let i = 0; i < 11; i++) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", probe],
    stdout: "piped",
  }).output();
  if (i > 0) samples.push(Number(new TextDecoder().decode(out.stdout)));
}
samples.sort((a, b) => a - b);

console.log(
  `| core bundle, entry chunk (mod.ts, esbuild --minify --splitting) | ${
    (bytes.length / 1024).toFixed(1)
  } KiB |`,
);
console.log(
  `| lazily loaded chunk (PBKDF2 WebAssembly bytes) | ${
    (lazy / 1024).toFixed(1)
  } KiB |`,
);
console.log(
  `| entry chunk gzipped | ${(gzipped.length / 1024).toFixed(1)} KiB |`,
);
console.log(
  `| modules in the bundle | ${inputs.length} (${external.length} outside lib/: ${
    external.join(", ") || "none"
  }) |`,
);
console.log(
  `| import time, fresh Deno process (median of 10) | ${
    samples[5].toFixed(1)
  } ms |`,
);
