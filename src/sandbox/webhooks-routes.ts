import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { ErrorBody } from "../http/envelope";
import { parsePage } from "../http/pagination";
import { replaySummary, requeueRefs } from "../webhooks/service";
import { createWebhook, deleteWebhook, listWebhooks, testWebhook } from "../webhooks/service";
import { holdingSandbox, openSandbox } from "./fixtures";
import { sandboxRead, sandboxWrite } from "./profile";
import { RUN_METADATA, runScenario, scenarioList, simulateDelivery } from "./simulator";
import { listSandboxDeliveries } from "./webhook-events";
import { SandboxWebhooksModel as M } from "./webhooks-model";

const errs = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody };
const tag = (summary: string) => ({ tags: ["partner"], summary: `Sandbox: ${summary}` });

/**
 * Sandbox webhooks, their delivery records and the signature simulator. Webhooks and replays use the live
 * verbs with the sandbox owner: deliveries are REAL signed POSTs by the same dispatcher, and their envelope
 * carries "sandbox": true. Answers add `simulation` — the headers and body that are (or would be) sent.
 */
export function sandboxWebhookRoutes(ctx: AppContext, guards: Guards) {
  const idem = guards.partner.idempotency;
  const read = { scope: "webhooks" as const, mode: "sandbox" as const };
  const write = { scope: "webhooks" as const, mutation: true, mode: "sandbox" as const };
  return new Elysia({ name: "herald:sandbox-webhooks" })
    .use(guards.partner.plugin)
    .get(
      "/api/partner/sandbox/webhooks",
      async ({ partner, query }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const is_active = query.is_active === undefined ? undefined : query.is_active === "1" || query.is_active === "true";
        const r = await listWebhooks(ctx, owner, { event_type: query.event_type, is_active }, parsePage(query));
        return {
          success: true as const,
          ...sandboxRead("sandbox_state"),
          count: r.count,
          webhooks: r.items,
          query: { ...r.query, event_type: query.event_type ?? null, is_active: is_active ?? null },
          pagination: r.pagination,
        };
      },
      { partner: read, query: M.listQuery, response: { 200: M.list, ...errs }, detail: tag("list sandbox webhooks") },
    )
    .post(
      "/api/partner/sandbox/webhooks",
      async ({ partner, body, set }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const out = await idem.run(
          partner.idempotency,
          holdingSandbox(owner, async (t) => ({ success: true as const, ...sandboxWrite(), webhook: await createWebhook(t, ctx, owner, body) })),
          201,
        );
        set.status = 201;
        return out;
      },
      { partner: write, body: M.createBody, response: { 201: M.created, ...errs }, detail: tag("register a sandbox webhook; the secret is returned once") },
    )
    .delete(
      "/api/partner/sandbox/webhooks/:webhook_id",
      async ({ partner, params }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        return await idem.run(
          partner.idempotency,
          holdingSandbox(owner, async (t) => ({
            success: true as const,
            ...sandboxWrite(),
            ...(await deleteWebhook(t, ctx, owner, params.webhook_id)),
          })),
        );
      },
      { partner: write, params: M.idParams, response: { 200: M.deleted, ...errs }, detail: tag("delete a sandbox webhook") },
    )
    .post(
      "/api/partner/sandbox/webhooks/:webhook_id/test",
      async ({ partner, params }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const out = await idem.run(
          partner.idempotency,
          holdingSandbox(owner, async (t) => {
            const r = await testWebhook(t, ctx, owner, params.webhook_id);
            return { success: true as const, ...sandboxWrite(), ...r, simulation: await simulateDelivery(t, ctx, owner, r.delivery_id) };
          }),
        );
        ctx.dispatcher.nudge();
        return out;
      },
      {
        partner: write,
        params: M.idParams,
        response: { 200: M.tested, ...errs },
        detail: tag("queue a real signed webhook.test delivery; returns the headers it carries"),
      },
    )
    .get(
      "/api/partner/sandbox/webhook-events",
      async ({ partner, query }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const r = await listSandboxDeliveries(
          ctx,
          owner,
          { user_id: query.user_id, event_type: query.event_type, order: query.order ?? "desc" },
          parsePage(query),
        );
        return { success: true as const, ...sandboxRead("sandbox_state"), ...r };
      },
      {
        partner: read,
        query: M.eventsQuery,
        response: { 200: M.events, ...errs },
        detail: tag("sandbox delivery records, filtered by user_id and event_type"),
      },
    )
    .post(
      "/api/partner/sandbox/webhook-events/replay",
      async ({ partner, body }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const reasonTag = body.reason_tag ?? "manual_replay";
        const out = await idem.run(
          partner.idempotency,
          holdingSandbox(owner, async (t) => {
            // The note is kept in each delivery's replay history, as on the live route.
            const results = await requeueRefs(t, ctx, owner, body.event_ids, reasonTag, body.note ?? null);
            const summary = replaySummary(results, reasonTag, body.note ?? null);
            const simulated = [];
            for (const r of results) simulated.push({ ...r, simulation: r.replayed ? await simulateDelivery(t, ctx, owner, r.delivery_id!) : null });
            return { success: true as const, ...sandboxWrite(), ...summary, results: simulated };
          }),
        );
        ctx.dispatcher.nudge();
        return out;
      },
      {
        partner: write,
        body: M.replayBody,
        response: { 200: M.replay, ...errs },
        detail: tag("re-queue sandbox deliveries by id; results carry the headers they will be sent with"),
      },
    )
    .get(
      "/api/partner/sandbox/webhook-simulator/scenarios",
      async ({ partner }) => {
        await openSandbox(ctx, partner.actor);
        const scenarios = scenarioList();
        return { success: true as const, ...sandboxRead("sandbox_fixture"), scenarios_count: scenarios.length, scenarios };
      },
      { partner: read, query: M.metaQuery, response: { 200: M.scenarios, ...errs }, detail: tag("webhook scenarios the simulator can sign") },
    )
    .get(
      "/api/partner/sandbox/webhook-simulator/run",
      async ({ partner }) => {
        await openSandbox(ctx, partner.actor);
        return { success: true as const, ...sandboxRead("sandbox_fixture"), ...RUN_METADATA };
      },
      { partner: read, query: M.metaQuery, response: { 200: M.runMeta, ...errs }, detail: tag("how to call the simulator (POST)") },
    )
    .post(
      "/api/partner/sandbox/webhook-simulator/run",
      async ({ partner, body }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        return { success: true as const, ...sandboxWrite("sandbox_fixture"), ...(await runScenario(ctx, owner, partner.actor.keyId, body)) };
      },
      {
        partner: read,
        query: M.metaQuery,
        body: M.runBody,
        response: { 200: M.run, ...errs },
        detail: tag("sign a scenario's payload as a delivery would be; sends nothing"),
      },
    );
}
