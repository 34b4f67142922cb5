// Regenerates the runtime examples from the generator: examples/<name>/ is
// what `scaffold --runtime <runtime>` writes with every module (deno_deploy
// is the Deno project, like examples/app/, with a README of its own). Run
// by _build_templates.ts after it rebuilt the templates;
// tests/app/scaffold_test.ts fails when an example differs from the
// generator's output.
import { exampleFiles, EXAMPLES } from "./_examples.ts";

const root = new URL("../../", import.meta.url);
for (const name of Object.keys(EXAMPLES)) {
  const dir = new URL(`examples/${name}/`, root);
  await Deno.remove(dir, { recursive: true }).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  for (const [path, text] of exampleFiles(name)) {
    const file = new URL(path, dir);
    await Deno.mkdir(new URL(".", file), { recursive: true });
    await Deno.writeTextFile(file, text);
  }
}
console.log(`Wrote examples/{${Object.keys(EXAMPLES).join(",")}}`);
