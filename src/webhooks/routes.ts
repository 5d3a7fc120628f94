import { deadLettersPageRoutes } from "./dead-letters-page";
import { Elysia, t } from "elysia";
import { ownerOf } from "../auth/actors";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { includeMetaQuery, ok } from "../http/envelope";
import { nullable, partnerTag, readErrors, refuses, writeErrors } from "../http/routes/declare";
import { listAnswer, parsePage } from "../http/pagination";
import { partnerMutation } from "../auth/partner-mutation";
import { LIVE, mountWrites, type PartnerMount } from "../auth/partner-mount";
import { adminReplay, deadLetterSummary, replayAudit, listDeliveries, recoverIds, replaySummary, requeue, requeueRefs } from "./deliveries";
import { eventTypeCatalog } from "./event-types";
import { ReplayResultItem, WebhooksModel as M } from "./model";
import { cancelRestAfterDelete, createWebhook, deleteWebhook, listWebhooks, rotateWebhookSecret, testWebhook, verifyWebhookSignatureFor } from "./service";

/**
 * Partner webhooks and the replay of their deliveries on a mount (scope `webhooks`): live keys at /api/partner,
 * sandbox keys at /api/partner/sandbox. Both mounts run the same verbs, so sandbox deliveries are REAL signed POSTs
 * by the same dispatcher, their envelope carrying "sandbox": true; the sandbox's answers add each delivery's
 * `simulation`, the headers and body that are (or would be) sent.
 */
export function webhookRoutesFor(ctx: AppContext, guards: Guards, m: PartnerMount) {
  const mutation = partnerMutation(ctx, guards.partner.idempotency);
  const simulation = m.simulation;
  // What the sandbox's answers add: a test's simulation, and each replayed delivery's (null for one not replayed).
  const tested = simulation && { simulation: simulation.schema };
  const replayed = simulation && { results: t.Array(t.Object({ ...ReplayResultItem.properties, simulation: nullable(simulation.schema) })) };
  const read = { scope: "webhooks" as const, mode: m.mode };
  const write = { scope: "webhooks" as const, mutation: true, mode: m.mode };
  const held = mountWrites(m, mutation);
  return new Elysia({ name: m.plugin("webhooks") })
    .use(guards.partner.plugin)
    .get(
      `${m.prefix}/webhooks`,
      async ({ partner, query }) => {
        const { owner } = await m.open(partner.actor);
        const is_active = query.is_active === undefined ? undefined : query.is_active === "1" || query.is_active === "true";
        const r = await listWebhooks(ctx, owner, { event_type: query.event_type, is_active }, parsePage(query));
        return { success: true as const, ...m.read, ...listAnswer("webhooks", r, { event_type: query.event_type ?? null, is_active: is_active ?? null }) };
      },
      { partner: read, query: M.listQuery, response: { 200: m.readOf(M.list), ...readErrors }, detail: m.detail("List webhooks", "list sandbox webhooks") },
    )
    .post(
      `${m.prefix}/webhooks`,
      ({ partner, body, set }) => held(partner, async (t, owner) => ({ webhook: await createWebhook(t, ctx, owner, body) }), { created: set, nudge: false }),
      {
        partner: write,
        body: M.createBody,
        response: { 201: m.writeOf(M.created), ...writeErrors },
        detail: m.detail("Register a webhook; the secret is returned once", "register a sandbox webhook; the secret is returned once"),
      },
    )
    .delete(
      `${m.prefix}/webhooks/:webhook_id`,
      async ({ partner, params }) => {
        const answer = await held(partner, (t, owner) => deleteWebhook(t, ctx, owner, params.webhook_id), { nudge: false });
        cancelRestAfterDelete(ctx, answer);
        return answer;
      },
      {
        partner: write,
        params: M.idParams,
        response: { 200: m.writeOf(M.deleted), ...writeErrors },
        detail: m.detail("Delete a webhook; its pending deliveries are cancelled", "delete a sandbox webhook"),
      },
    )
    .post(
      `${m.prefix}/webhooks/:webhook_id/test`,
      ({ partner, params }) =>
        held(partner, async (t, owner) => {
          const r = await testWebhook(t, ctx, owner, params.webhook_id);
          return { ...r, ...(simulation && { simulation: await simulation.of(t, owner, r.delivery_id) }) };
        }),
      {
        partner: write,
        params: M.idParams,
        response: { 200: m.writeOf(M.tested, tested), ...writeErrors },
        detail: m.detail("Queue a real signed webhook.test delivery", "queue a real signed webhook.test delivery; returns the headers it carries"),
      },
    )
    .post(
      `${m.prefix}/webhook-events/replay`,
      ({ partner, body }) => {
        const reasonTag = body.reason_tag ?? "manual_replay";
        const note = body.note ?? null;
        return held(partner, async (t, owner) => {
          const summary = replaySummary(await requeueRefs(t, ctx, owner, body.event_ids, reasonTag, note), reasonTag, note);
          if (!simulation) return summary;
          const results = [];
          for (const r of summary.results) results.push({ ...r, simulation: r.replayed ? await simulation.of(t, owner, r.delivery_id!) : null });
          return { ...summary, results };
        });
      },
      {
        partner: write,
        query: t.Object(includeMetaQuery),
        body: M.replayBody,
        response: { 200: m.writeOf(M.replay, replayed), ...writeErrors },
        detail: m.detail(
          "Re-queue deliveries by delivery id or evt_ event id; ids that are not yours answer not_found",
          "re-queue sandbox deliveries by id; results carry the headers they will be sent with",
        ),
      },
    );
}

/** The live webhook routes: the mounted ones, and the public catalog, the secret's rotation, recovery, the dead letters, signature checks, the delivery records and the operator's replay. */
export function webhookRoutes(ctx: AppContext, guards: Guards) {
  const mutation = partnerMutation(ctx, guards.partner.idempotency);
  const read = { scope: "webhooks" as const };
  const write = { scope: "webhooks" as const, mutation: true };
  return new Elysia({ name: "herald:webhooks" })
    .use(guards.partner.plugin)
    .use(guards.admin.plugin)
    .use(deadLettersPageRoutes(ctx, guards))
    .get(
      "/api/partner/webhooks/event-types",
      () => {
        const types = eventTypeCatalog();
        return ok({ count: types.length, event_types: types });
      },
      { query: t.Object(includeMetaQuery), response: { 200: M.eventTypes }, detail: partnerTag("Event types a webhook can subscribe to (public)") },
    )
    .use(webhookRoutesFor(ctx, guards, LIVE))
    .post(
      "/api/partner/webhooks/:webhook_id/rotate-secret",
      ({ partner, params, body }) =>
        mutation(
          partner,
          async (t) => ok({ webhook: await rotateWebhookSecret(t, ctx, ownerOf(partner.actor), params.webhook_id, body?.overlap_hours ?? 24) }),
          {
            nudge: false,
          },
        ),
      {
        partner: write,
        params: M.idParams,
        body: M.rotateBody,
        response: { 200: M.rotated, ...writeErrors },
        detail: partnerTag("New secret; deliveries are signed with both for overlap_hours (≤ 24)"),
      },
    )
    .post(
      "/api/partner/webhooks/:webhook_id/recover",
      ({ partner, params, body }) => {
        const owner = ownerOf(partner.actor);
        const reasonTag = body.reason_tag ?? "recover";
        const note = body.note ?? null;
        return mutation(partner, async (t) => {
          const ids = await recoverIds(t, ctx, owner, params.webhook_id, body.since, body.until);
          return ok(replaySummary(await requeue(t, ctx, owner, ids, reasonTag, note), reasonTag, note));
        });
      },
      {
        partner: write,
        params: M.idParams,
        body: M.recoverBody,
        response: { 200: M.replay, ...writeErrors },
        detail: partnerTag("Replay every failed or dead-lettered delivery of a webhook in a time range (≤ 1000)"),
      },
    )
    .get("/api/partner/webhooks/dlq", async ({ partner, query }) => ok(await deadLetterSummary(ctx, ownerOf(partner.actor), query.hours ?? 24)), {
      partner: read,
      query: M.dlqQuery,
      response: { 200: M.dlq, ...readErrors },
      detail: partnerTag("Dead-letter summary for the last `hours` (default 24)"),
    })
    .post("/api/partner/webhooks/signature/verify", ({ body }) => ok(verifyWebhookSignatureFor(body)), {
      partner: read,
      body: M.verifyBody,
      response: { 200: M.verified, ...readErrors },
      detail: partnerTag("Check a delivery signature the way a receiver should"),
    })
    .get(
      "/api/partner/webhook-events",
      async ({ partner, query }) => {
        const r = await listDeliveries(ctx, ownerOf(partner.actor), query, parsePage(query));
        return ok(listAnswer("events", r, { ...r.filters, event_type: query.event_type ?? null }));
      },
      {
        partner: read,
        query: M.eventsQuery,
        response: { 200: M.events, ...readErrors },
        detail: partnerTag(
          "Delivery records; a dead letter is status failed with is_dead_letter true (?status=dead_letter lists them alone). With a filter a page looks through at most 10,000 deliveries: a short page can have has_more, follow next_cursor",
        ),
      },
    )
    .post(
      "/admin/partners/webhook-events/:event_id/replay",
      async ({ params, admin }) => {
        const out = await adminReplay(ctx, params.event_id, replayAudit(ctx, admin, params.event_id));
        ctx.dispatcher.nudge();
        return ok(out);
      },
      {
        admin: true,
        params: M.adminReplayParams,
        response: { 200: M.adminReplayed, ...refuses(404) },
        detail: { summary: "Operator replay of a delivery id or an evt_ event id" },
      },
    );
}
