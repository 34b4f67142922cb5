/**
 * Sign-in with OpenID Providers (`@portcullis/oidc`): the provider links
 * on `/login`, the flow under `/login/oidc/`, the linked providers on
 * `/account`, and a fresh sign-in with a linked provider as a way to
 * confirm a user without a password.
 *
 * @module
 */
import { html } from "../../views/html.ts";
import type { AppModule } from "../../module.ts";
import { handle } from "../../routes/handle.ts";
import {
  oidcAccountSection,
  oidcCallback,
  oidcLoginLinks,
  oidcReauth,
  oidcStart,
} from "../../routes/oidc.ts";
import { confirmLink } from "../../routes/oidc_link.ts";

/** The OpenID Connect module. */
export const oidc: AppModule = {
  name: "oidc",
  routes(app, ctx) {
    app.post("/login/oidc/link", handle(ctx, confirmLink));
    app.get("/login/oidc/:provider", handle(ctx, oidcStart));
    app.get("/login/oidc/:provider/callback", handle(ctx, oidcCallback));
    app.get("/login/oidc/:provider/reauth", handle(ctx, oidcReauth));
  },
  lifecycle: (ctx) =>
    ctx.methods.oidc === null ? [] : [ctx.methods.oidc.lifecycle],
  loginButtons: oidcLoginLinks,
  accountSection: (ctx, _req, user) => oidcAccountSection(ctx, user.subject),
  async reauthWays(ctx, subject) {
    const oidc = ctx.methods.oidc;
    if (oidc === null) return [];
    const linked = await oidc.identities.listFor(subject);
    return oidc.providers.filter((p) => linked.some((l) => l.provider === p.id))
      .map((p) =>
        html`<li><a id="reauth-${p.id}" href="/login/oidc/${p.id}/reauth?next=/account">Confirm with ${p.name}</a></li>`
      );
  },
};
