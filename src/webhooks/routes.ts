import { deadLettersPageRoutes } from "./dead-letters-page";
import { Elysia, t } from "elysia";
import { ownerOf } from "../auth/actors";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { ErrorBody, includeMetaQuery } from "../http/envelope";
import { parsePage } from "../http/pagination";
import { adminReplay, deadLetterSummary, listDeliveries, recoverIds, replaySummary, requeue, requeueRefs } from "./deliveries";
import { eventTypeCatalog } from "./event-types";
import { WebhooksModel as M } from "./model";
import { createWebhook, deleteWebhook, listWebhooks, rotateWebhookSecret, testWebhook, verifyWebhookSignatureFor } from "./service";

const errs = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody };
const tag = (summary: string) => ({ tags: ["partner"], summary });

/** Partner webhook routes (scope `webhooks`, live keys) and the operator's replay. */
export function webhookRoutes(ctx: AppContext, guards: Guards) {
  const idem = guards.partner.idempotency;
  const read = { scope: "webhooks" as const };
  const write = { scope: "webhooks" as const, mutation: true };
  return (
    new Elysia({ name: "herald:webhooks" })
      .use(guards.partner.plugin)
      .use(guards.admin.plugin)
      // The console page over the dead letters (replay with a reason from the browser).
      .use(deadLettersPageRoutes(ctx, guards))
      .get(
        "/api/partner/webhooks/event-types",
        () => {
          const types = eventTypeCatalog();
          return { success: true as const, count: types.length, event_types: types };
        },
        { query: t.Object(includeMetaQuery), response: { 200: M.eventTypes }, detail: tag("Event types a webhook can subscribe to (public)") },
      )
      .get(
        "/api/partner/webhooks",
        async ({ partner, query }) => {
          const is_active = query.is_active === undefined ? undefined : query.is_active === "1" || query.is_active === "true";
          const page = parsePage(query);
          const r = await listWebhooks(ctx, ownerOf(partner.actor), { event_type: query.event_type, is_active }, page);
          return {
            success: true as const,
            count: r.count,
            webhooks: r.items,
            query: { ...r.query, event_type: query.event_type ?? null, is_active: is_active ?? null },
            pagination: r.pagination,
          };
        },
        { partner: read, query: M.listQuery, response: { 200: M.list, ...errs }, detail: tag("List webhooks") },
      )
      .post(
        "/api/partner/webhooks",
        async ({ partner, body, set }) => {
          const out = await idem.run(
            partner.idempotency,
            async (t) => ({ success: true as const, webhook: await createWebhook(t, ctx, ownerOf(partner.actor), body) }),
            201,
          );
          set.status = 201;
          return out;
        },
        { partner: write, body: M.createBody, response: { 201: M.created, ...errs }, detail: tag("Register a webhook; the secret is returned once") },
      )
      .delete(
        "/api/partner/webhooks/:webhook_id",
        ({ partner, params }) =>
          idem.run(partner.idempotency, async (t) => ({ success: true as const, ...(await deleteWebhook(t, ctx, ownerOf(partner.actor), params.webhook_id)) })),
        { partner: write, params: M.idParams, response: { 200: M.deleted, ...errs }, detail: tag("Delete a webhook; its pending deliveries are cancelled") },
      )
      .post(
        "/api/partner/webhooks/:webhook_id/test",
        async ({ partner, params }) => {
          const out = await idem.run(partner.idempotency, async (t) => ({
            success: true as const,
            ...(await testWebhook(t, ctx, ownerOf(partner.actor), params.webhook_id)),
          }));
          ctx.dispatcher.nudge();
          return out;
        },
        { partner: write, params: M.idParams, response: { 200: M.tested, ...errs }, detail: tag("Queue a real signed webhook.test delivery") },
      )
      .post(
        "/api/partner/webhooks/:webhook_id/rotate-secret",
        ({ partner, params, body }) =>
          idem.run(partner.idempotency, async (t) => ({
            success: true as const,
            webhook: await rotateWebhookSecret(t, ctx, ownerOf(partner.actor), params.webhook_id, body?.overlap_hours ?? 24),
          })),
        {
          partner: write,
          params: M.idParams,
          body: M.rotateBody,
          response: { 200: M.rotated, ...errs },
          detail: tag("New secret; deliveries are signed with both for overlap_hours (≤ 24)"),
        },
      )
      .post(
        "/api/partner/webhooks/:webhook_id/recover",
        async ({ partner, params, body }) => {
          const owner = ownerOf(partner.actor);
          const reasonTag = body.reason_tag ?? "recover";
          const note = body.note ?? null;
          const out = await idem.run(partner.idempotency, async (t) => {
            const ids = await recoverIds(t, ctx, owner, params.webhook_id, body.since, body.until);
            return { success: true as const, ...replaySummary(await requeue(t, ctx, owner, ids, reasonTag, note), reasonTag, note) };
          });
          ctx.dispatcher.nudge();
          return out;
        },
        {
          partner: write,
          params: M.idParams,
          body: M.recoverBody,
          response: { 200: M.replay, ...errs },
          detail: tag("Replay every failed or dead-lettered delivery of a webhook in a time range (≤ 1000)"),
        },
      )
      .get(
        "/api/partner/webhooks/dlq",
        async ({ partner, query }) => ({
          success: true as const,
          ...(await deadLetterSummary(ctx, ownerOf(partner.actor), query.hours ?? 24)),
        }),
        { partner: read, query: M.dlqQuery, response: { 200: M.dlq, ...errs }, detail: tag("Dead-letter summary for the last `hours` (default 24)") },
      )
      .post("/api/partner/webhooks/signature/verify", ({ body }) => ({ success: true as const, ...verifyWebhookSignatureFor(body) }), {
        partner: read,
        body: M.verifyBody,
        response: { 200: M.verified, ...errs },
        detail: tag("Check a delivery signature the way a receiver should"),
      })
      .get(
        "/api/partner/webhook-events",
        async ({ partner, query }) => {
          const page = parsePage(query);
          const r = await listDeliveries(ctx, ownerOf(partner.actor), { ...query, webhook_id: query.webhook_id }, page);
          return {
            success: true as const,
            count: r.count,
            events: r.items,
            query: { ...r.query, ...r.filters, event_type: query.event_type ?? null },
            pagination: r.pagination,
          };
        },
        {
          partner: read,
          query: M.eventsQuery,
          response: { 200: M.events, ...errs },
          detail: tag("Delivery records; a dead letter is status failed with is_dead_letter true (?status=dead_letter lists them alone)"),
        },
      )
      .post(
        "/api/partner/webhook-events/replay",
        async ({ partner, body }) => {
          const owner = ownerOf(partner.actor);
          const reasonTag = body.reason_tag ?? "manual_replay";
          const note = body.note ?? null;
          const out = await idem.run(partner.idempotency, async (t) => ({
            success: true as const,
            ...replaySummary(await requeueRefs(t, ctx, owner, body.event_ids, reasonTag, note), reasonTag, note),
          }));
          ctx.dispatcher.nudge();
          return out;
        },
        {
          partner: write,
          body: M.replayBody,
          response: { 200: M.replay, ...errs },
          detail: tag("Re-queue deliveries by delivery id or evt_ event id; ids that are not yours answer not_found"),
        },
      )
      .post(
        "/admin/partners/webhook-events/:event_id/replay",
        async ({ params, admin }) => {
          const out = await adminReplay(ctx, params.event_id, (details) => ({
            at: ctx.clock.now().toISOString(),
            actor: admin.actor,
            action: "webhook_event.replay",
            target: params.event_id,
            details,
            requestId: admin.requestId,
          }));
          ctx.dispatcher.nudge();
          return { success: true as const, ...out };
        },
        {
          admin: true,
          params: M.adminReplayParams,
          response: { 200: M.adminReplayed, 403: ErrorBody, 404: ErrorBody },
          detail: { summary: "Operator replay of a delivery id or an evt_ event id" },
        },
      )
  );
}
