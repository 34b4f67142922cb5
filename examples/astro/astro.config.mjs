import node from "@astrojs/node";
import { defineConfig } from "astro/config";

// The public origin, read at build time: Astro builds request URLs only from
// Host headers it is told to trust (security.allowedDomains), and answers
// "localhost" otherwise. portcullis reads APP_ORIGIN again at run time.
const origin = new URL(process.env.APP_ORIGIN ?? "http://localhost:4321");

export default defineConfig({
  output: "server",
  adapter: node({ mode: "standalone" }),
  security: {
    // Astro's own origin check (on by default) refuses cross-site form posts
    // to on-demand pages. The flows and src/middleware.ts check every unsafe
    // request regardless (JSON and other bodies included), so turning this
    // off would not turn that check off.
    checkOrigin: true,
    allowedDomains: [{
      protocol: origin.protocol.slice(0, -1),
      hostname: origin.hostname,
      ...(origin.port ? { port: origin.port } : {}),
    }],
  },
});
