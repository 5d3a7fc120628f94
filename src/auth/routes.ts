import { keysPageRoutes } from "./keys-page";
import { signInRoutes } from "./sign-in-routes";
import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { refuses } from "../http/routes/declare";
import type { Guards } from "./guards";
import { AuthModel } from "./model";
import { listAnswer, parseKeyPage } from "../http/pagination";
import { KEY_LIST_CURSOR } from "./keys";
import { verifyKeyPreview } from "./service";

const errors = refuses(404, 409);

/** Operator key management under /admin/partners/keys, and the public key preview for onboarding. */
export function authRoutes(_ctx: AppContext, guards: Guards) {
  const keys = guards.partner.keys;
  return (
    new Elysia({ name: "herald:auth-routes" })
      .use(guards.admin.plugin)
      .use(guards.operator.plugin)
      // Operator sign-in, sign-out and sessions: the door to every console page, on every engine.
      .use(signInRoutes(_ctx, guards))
      // The console page over the same keys (list, disable, rotate from the browser).
      .use(keysPageRoutes(_ctx, guards))
      .get(
        "/admin/partners/keys",
        async ({ query }) => {
          const { partner, mode, status } = query;
          const page = await keys.page({ partner, mode, status }, parseKeyPage(query, KEY_LIST_CURSOR));
          return { success: true as const, ...listAnswer("keys", page, { partner: partner ?? null, mode: mode ?? null, status: status ?? null }) };
        },
        {
          // Also the operator session (a GET): the console's partners page links it.
          operator: "api",
          query: AuthModel.keyListQuery,
          response: { 200: AuthModel.keyList, ...errors },
          detail: { summary: "List partner keys (never secrets), oldest first, paged by limit and offset or cursor" },
        },
      )
      .post(
        "/admin/partners/keys",
        async ({ body, admin, set }) => {
          const { secret, ...key } = await keys.create(
            { partner: body.partner, mode: body.mode, scopes: body.scopes, allowedIps: body.allowed_ips ?? [] },
            admin.actor,
            admin.requestId,
          );
          set.status = 201;
          return { success: true as const, key, secret };
        },
        {
          admin: true,
          body: AuthModel.createKeyBody,
          response: { 201: AuthModel.keyWithSecret, ...errors },
          detail: { summary: "Create a partner key; the secret is shown once" },
        },
      )
      .post(
        "/admin/partners/keys/:key_id/disable",
        async ({ params, body, admin }) => ({
          success: true as const,
          key: await keys.disable(params.key_id, body.reason, admin.actor, admin.requestId),
        }),
        {
          admin: true,
          params: AuthModel.keyParams,
          body: AuthModel.disableBody,
          response: { 200: AuthModel.keyOnly, ...errors },
          detail: { summary: "Disable a partner key" },
        },
      )
      .post(
        "/admin/partners/keys/:key_id/rotate",
        async ({ params, body, admin }) => {
          const { secret, ...key } = await keys.rotate(params.key_id, body?.overlap_hours ?? 24, admin.actor, admin.requestId);
          return { success: true as const, key, secret };
        },
        {
          admin: true,
          params: AuthModel.keyParams,
          body: AuthModel.rotateBody,
          response: { 200: AuthModel.keyWithSecret, ...errors },
          detail: { summary: "Rotate a key's secret; the old one stays valid for overlap_hours (≤ 24, default 24)" },
        },
      )
      .get(
        "/api/public/quickstart/verify-key",
        async ({ query }) => ({
          success: true as const,
          ...(await verifyKeyPreview(keys, query.api_key, query.client ?? null)),
        }),
        {
          query: AuthModel.verifyKeyQuery,
          response: { 200: AuthModel.verifyKey },
          detail: { tags: ["public"], summary: "Preview a key id's state and the onboarding order; never a secret" },
        },
      )
  );
}
