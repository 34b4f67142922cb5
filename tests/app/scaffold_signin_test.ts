/**
 * The scaffold's sign-in method options: `--no-totp`, `--no-oidc`,
 * `--no-passkeys` leave a method's package out of the project, and the
 * project still type-checks, lints and passes its own tests.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  projectConfig,
  renderApp,
  scaffold,
} from "../../packages/scaffold/mod.ts";

const root = new URL("../../", import.meta.url);

Deno.test("by default the project has every sign-in method and maps its packages", () => {
  const config = JSON.parse(projectConfig());
  assert.equal(
    config.imports["@portcullis/totp"],
    "jsr:@portcullis/totp@^0.2.0",
  );
  assert.equal(
    config.imports["@portcullis/oidc"],
    "jsr:@portcullis/oidc@^0.2.0",
  );
  assert.equal(
    config.imports["@portcullis/passkeys/"],
    "jsr:/@portcullis/passkeys@^0.2.0/",
  );
  // From JSR each package brings its own npm dependencies.
  assert.equal(config.imports.otpauth, undefined);
  const local = JSON.parse(projectConfig({ package: "/repo" }));
  assert.equal(
    local.imports["@portcullis/passkeys/browser-script"],
    "file:///repo/packages/passkeys/browser_script.ts",
  );
  const files = renderApp();
  for (const pkg of ["totp", "oidc", "passkeys"]) {
    assert.match(
      files.get(`methods/${pkg}/mod.ts`)!,
      new RegExp(`from "@portcullis/${pkg}"`),
    );
  }
});

Deno.test("--no-totp, --no-oidc and --no-passkeys leave each package and its npm dependencies out", () => {
  const options = { totp: false, oidc: false, passkeys: false };
  for (const [path, content] of renderApp(options)) {
    assert.doesNotMatch(
      content,
      /@portcullis\/(totp|oidc|passkeys)"|\[(totp|oidc|passkeys)\]/,
      path,
    );
  }
  const config = JSON.parse(projectConfig(options));
  for (
    const name of [
      "@portcullis/totp",
      "@portcullis/oidc",
      "@portcullis/passkeys",
      "@portcullis/passkeys/",
      "otpauth",
      "oauth4webapi",
      "@simplewebauthn/server",
    ]
  ) {
    assert.equal(config.imports[name], undefined, name);
  }
  const onlyTotp = renderApp({ oidc: false, passkeys: false });
  assert.match(onlyTotp.get("methods/totp/mod.ts")!, /TotpAuthenticator/);
  for (const [path, content] of onlyTotp) {
    assert.doesNotMatch(content, /OidcClient|PasskeyAuthenticator/, path);
  }
});

Deno.test({
  name:
    "a generated project without the sign-in methods type-checks, lints and passes its own tests",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "portcullis-project-" });
    try {
      await scaffold(dir, {
        totp: false,
        oidc: false,
        passkeys: false,
        package: root.pathname,
      });
      for (
        const args of [["check", "main.ts", "app_test.ts"], ["lint"], [
          "test",
          "-A",
        ]]
      ) {
        const out = await new Deno.Command(Deno.execPath(), {
          args,
          cwd: dir,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const text = new TextDecoder().decode(out.stdout) +
          new TextDecoder().decode(out.stderr);
        assert.equal(
          out.code,
          0,
          `deno ${args.join(" ")}:\n${text.slice(-2000)}`,
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
