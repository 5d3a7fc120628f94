import { Elysia, type TSchema } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { refuses } from "../http/routes/declare";
import { listAnswer, parsePage } from "../http/pagination";
import { revokeLink } from "./link-verbs";
import { AudioShareModel as M } from "./model";
import { issueTrackToken, listTrackTokens, revokeTrackToken } from "./track";
import { ok } from "../http/envelope";

/** An operator route's answers (each refuses an unknown link or token with 404) and its summary. */
const answers = <R extends Record<number, TSchema>>(response: R, summary: string) => ({
  admin: true as const,
  response: { ...response, ...refuses(404) },
  detail: { summary },
});

/** Operator routes: revoke a short link; issue, list and revoke /track bearer tokens. Each write is audited. */
export function adminRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:audio-share-admin" })
    .use(guards.admin.plugin)
    .post(
      "/admin/ops/audio-share-revocations/revoke",
      async ({ body, admin }) => ok(await revokeLink(ctx, body.short_code, body.reason, admin.actor, admin.requestId)),
      { body: M.revokeBody, ...answers({ 200: M.revoked }, "Revoke a short link: it answers 410 from now on (audited)") },
    )
    .post(
      "/admin/audio-share/track-tokens",
      async ({ body, admin, set }) => {
        const { token, ...view } = await issueTrackToken(ctx, body.name, admin.actor, admin.requestId);
        set.status = 201;
        return ok({ track_token: view, token });
      },
      { body: M.tokenBody, ...answers({ 201: M.tokenCreated }, "Issue a bearer token for POST /api/public/audio-share-links/track (shown once)") },
    )
    .get("/admin/audio-share/track-tokens", async ({ query }) => ok(listAnswer("track_tokens", await listTrackTokens(ctx, parsePage(query)))), {
      query: M.tokenListQuery,
      ...answers({ 200: M.tokenList }, "List track bearer tokens (never the tokens themselves), newest first, paged by limit and offset or cursor"),
    })
    .post(
      "/admin/audio-share/track-tokens/:token_id/revoke",
      async ({ params, admin }) => {
        const { already_revoked, ...view } = await revokeTrackToken(ctx, params.token_id, admin.actor, admin.requestId);
        return ok({ track_token: view, already_revoked });
      },
      { params: M.tokenParams, ...answers({ 200: M.tokenRevoked }, "Revoke a track bearer token") },
    );
}
