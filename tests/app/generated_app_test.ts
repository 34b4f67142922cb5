/**
 * Runs the tests the scaffold writes into new projects as part of this
 * repository's suite: the app's own (`examples/app/app_test.ts`) and each
 * module's (`examples/app/methods/<name>/*_test.ts`).
 */
import "../../examples/app/app_test.ts";

const methods = new URL("../../examples/app/methods/", import.meta.url);
for (
  const module of [...Deno.readDirSync(methods)].sort((a, b) =>
    a.name < b.name ? -1 : 1
  )
) {
  if (!module.isDirectory) continue;
  for (const file of Deno.readDirSync(new URL(`${module.name}/`, methods))) {
    if (file.isFile && file.name.endsWith("_test.ts")) {
      await import(new URL(`${module.name}/${file.name}`, methods).href);
    }
  }
}
