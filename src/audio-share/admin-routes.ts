import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { refuses } from "../http/routes/declare";
import { listAnswer, parsePage } from "../http/pagination";
import { revokeLink } from "./link-verbs";
import { AudioShareModel as M } from "./model";
import { issueTrackToken, listTrackTokens, revokeTrackToken } from "./track";

const errs = refuses(404);

/** Operator routes: revoke a short link; issue, list and revoke /track bearer tokens. Each write is audited. */
export function adminRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:audio-share-admin" })
    .use(guards.admin.plugin)
    .post(
      "/admin/ops/audio-share-revocations/revoke",
      async ({ body, admin }) => ({ success: true as const, ...(await revokeLink(ctx, body.short_code, body.reason, admin.actor, admin.requestId)) }),
      {
        admin: true,
        body: M.revokeBody,
        response: { 200: M.revoked, ...errs },
        detail: { summary: "Revoke a short link: it answers 410 from now on (audited)" },
      },
    )
    .post(
      "/admin/audio-share/track-tokens",
      async ({ body, admin, set }) => {
        const { token, ...view } = await issueTrackToken(ctx, body.name, admin.actor, admin.requestId);
        set.status = 201;
        return { success: true as const, track_token: view, token };
      },
      {
        admin: true,
        body: M.tokenBody,
        response: { 201: M.tokenCreated, ...errs },
        detail: { summary: "Issue a bearer token for POST /api/public/audio-share-links/track (shown once)" },
      },
    )
    .get(
      "/admin/audio-share/track-tokens",
      async ({ query }) => ({ success: true as const, ...listAnswer("track_tokens", await listTrackTokens(ctx, parsePage(query))) }),
      {
        admin: true,
        query: M.tokenListQuery,
        response: { 200: M.tokenList, ...errs },
        detail: { summary: "List track bearer tokens (never the tokens themselves), newest first, paged by limit and offset or cursor" },
      },
    )
    .post(
      "/admin/audio-share/track-tokens/:token_id/revoke",
      async ({ params, admin }) => {
        const { already_revoked, ...view } = await revokeTrackToken(ctx, params.token_id, admin.actor, admin.requestId);
        return { success: true as const, track_token: view, already_revoked };
      },
      { admin: true, params: M.tokenParams, response: { 200: M.tokenRevoked, ...errs }, detail: { summary: "Revoke a track bearer token" } },
    );
}
