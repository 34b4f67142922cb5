/**
 * The runtime examples of the repository, each the generator's output for
 * one runtime with every module: `examples/<name>/` is
 * {@linkcode exampleFiles}`(name)`, written by `_build_examples.ts` and
 * compared by the scaffold's tests.
 *
 * @module
 */
import { projectConfig, renderApp, type Runtime } from "./generate.ts";

/** Each example folder under `examples/` and the runtime it is written for. */
export const EXAMPLES: Readonly<Record<string, Runtime>> = {
  bun: "bun",
  node: "node",
  deno_deploy: "deno",
  vercel_edge: "vercel_edge",
  cloudflare_workers: "cloudflare_workers",
};

const DENO_DEPLOY_README = `# portcullis on Deno and Deno Deploy

Written by \`@portcullis/scaffold\` (its default runtime, Deno): the same project
as the reference app, \`examples/app\`. The account flows come from
\`@portcullis/accounts\`; this project holds its modules (\`modules.ts\`,
\`modules/\`), its pages and mails (\`views/\`, yours to change), its notes API
(\`notes.ts\`), the entry (\`main.ts\`) and its tests.

\`\`\`sh
deno task start              # http://localhost:8000, data in ./data/
deno task test
\`\`\`

On Deno Deploy (\`DENO_DEPLOYMENT_ID\` is set there) the session denylist goes to
Deploy's own KV and users to the database \`DATABASE_URL\` names (a Turso URL,
with \`DATABASE_AUTH_TOKEN\`); set \`AUTH_SECRET\`, \`APP_ORIGIN\`, and
\`RESEND_API_KEY\` with \`MAIL_FROM\`.
`;

/**
 * An example's files, path → text.
 *
 * @param name A key of {@linkcode EXAMPLES}.
 * @returns What the generator writes for it.
 */
export function exampleFiles(name: string): Map<string, string> {
  const runtime = EXAMPLES[name];
  if (runtime === undefined) throw new Error(`No example ${name}`);
  const files = renderApp({ runtime });
  if (runtime === "deno") {
    files.set("deno.json", projectConfig());
    files.set("README.md", DENO_DEPLOY_README);
  }
  return new Map([...files].sort(([a], [b]) => a < b ? -1 : 1));
}
