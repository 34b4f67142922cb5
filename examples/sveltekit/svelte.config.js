import adapter from "@sveltejs/adapter-node";

/** @type {import('@sveltejs/kit').Config} */
export default {
  kit: {
    adapter: adapter(),
    // SvelteKit's own origin check (on by default) refuses cross-site form
    // posts before any hook runs. portcullis checks every unsafe request in
    // hooks.server.ts regardless (JSON and other bodies included), so
    // turning this off would not turn that check off.
  },
};
