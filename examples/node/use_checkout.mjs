// Installs @portcullis/* from a checkout of the portcullis repository instead
// of JSR: packs the three packages this example imports with `deno pack` into
// ./vendor and points package.json at the tarballs. For contributors and for
// machines that cannot reach JSR; then `npm install && npm run build`.
//
// Usage: node use_checkout.mjs [path to the checkout, default ../..]
// Deno runs the packing: `deno` on PATH, or the path in the DENO variable
// (for example DENO="npx -y deno@2.9.6").
import { execSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";

// The checkout: this folder's grandparent when run where it is.
const checkout = resolve(process.argv[2] ?? join("..", ".."));
const deno = process.env.DENO ?? "deno";
const vendor = resolve("vendor");
mkdirSync(vendor, { recursive: true });

const packages = [
  ["@portcullis/auth", ".", "portcullis-auth.tgz"],
  ["@portcullis/sql", "stores/sql", "portcullis-sql.tgz"],
  ["@portcullis/libsql-kv", "stores/libsql_kv", "portcullis-libsql-kv.tgz"],
];
for (const [name, dir, file] of packages) {
  console.log(`packing ${name} from ${resolve(checkout, dir)}`);
  execSync(
    `${deno} pack --allow-dirty --quiet --output ${
      JSON.stringify(`${vendor}/${file}`)
    }`,
    { cwd: resolve(checkout, dir), stdio: ["ignore", "ignore", "inherit"] },
  );
}
execSync(
  `npm pkg set ${
    packages.map(([name, , file]) =>
      `"dependencies.${name}=file:vendor/${file}"`
    )
      .join(" ")
  }`,
  { stdio: "inherit" },
);
console.log(
  "package.json now installs @portcullis/* from ./vendor: run npm install",
);
