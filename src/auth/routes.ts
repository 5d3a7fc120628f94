import { Elysia } from "elysia";
import { refuses } from "../http/routes/declare";
import type { Guards } from "./guards";
import { AuthModel } from "./model";
import { listAnswer, parseKeyPage } from "../http/pagination";
import { KEY_LIST_CURSOR } from "./keys";
import { verifyKeyPreview } from "./service";
import { ok } from "../http/envelope";

const errors = refuses(404, 409);
/** A key's answer with its secret, shown this once. */
const withSecret = <K extends { secret: string }>({ secret, ...key }: K) => ok({ key, secret });
/** An operator's verb on the keys: the bearer guard, its answer with the refusals every verb shares, and its summary. */
const verb = <S>(response: S, summary: string) => ({ admin: true as const, response: { ...response, ...errors }, detail: { summary } });

/**
 * Operator key management under /admin/partners/keys (the console's page over them is src/console/keys-page.ts), and
 * the public key preview for onboarding.
 */
export function authRoutes(guards: Guards) {
  const keys = guards.partner.keys;
  return new Elysia({ name: "herald:auth-routes" })
    .use(guards.admin.plugin)
    .use(guards.operator.plugin)
    .get(
      "/admin/partners/keys",
      async ({ query }) => {
        const { partner, mode, status } = query;
        const page = await keys.page({ partner, mode, status }, parseKeyPage(query, KEY_LIST_CURSOR));
        return ok(listAnswer("keys", page, { partner: partner ?? null, mode: mode ?? null, status: status ?? null }));
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
        const input = { partner: body.partner, mode: body.mode, scopes: body.scopes, allowedIps: body.allowed_ips ?? [] };
        const created = await keys.create(input, admin.actor, admin.requestId);
        set.status = 201;
        return withSecret(created);
      },
      { body: AuthModel.createKeyBody, ...verb({ 201: AuthModel.keyWithSecret }, "Create a partner key; the secret is shown once") },
    )
    .post(
      "/admin/partners/keys/:key_id/disable",
      async ({ params, body, admin }) => ok({ key: await keys.disable(params.key_id, body.reason, admin.actor, admin.requestId) }),
      { params: AuthModel.keyParams, body: AuthModel.disableBody, ...verb({ 200: AuthModel.keyOnly }, "Disable a partner key") },
    )
    .post(
      "/admin/partners/keys/:key_id/rotate",
      async ({ params, body, admin }) => withSecret(await keys.rotate(params.key_id, body?.overlap_hours ?? 24, admin.actor, admin.requestId)),
      {
        params: AuthModel.keyParams,
        body: AuthModel.rotateBody,
        ...verb({ 200: AuthModel.keyWithSecret }, "Rotate a key's secret; the old one stays valid for overlap_hours (≤ 24, default 24)"),
      },
    )
    .get("/api/public/quickstart/verify-key", async ({ query }) => ok(await verifyKeyPreview(keys, query.api_key, query.client ?? null)), {
      query: AuthModel.verifyKeyQuery,
      response: { 200: AuthModel.verifyKey },
      detail: { tags: ["public"], summary: "Preview a key id's state and the onboarding order; never a secret" },
    });
}
