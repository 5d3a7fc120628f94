import { Elysia, t, type TSchema } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { includeMetaQuery, ok } from "../http/envelope";
import { refuses } from "../http/routes/declare";
import { listAnswer, parsePage } from "../http/pagination";
import { createMaintenance, deleteMaintenance, listMaintenance } from "./incidents/maintenance";
import { StatusAdminModel as M, IdempotencyHeaders } from "./model-admin";
import { statusNotifier, STATUS_EVENT_TYPES } from "./incidents/notify";
import { createOperatorIncident, editOperatorIncident, getIncidentOrThrow, listAdminIncidents, postIncidentUpdate } from "./incidents/operator";
import { createSubscriber, deleteSubscriber, listSubscribers } from "./incidents/subscribers";

const answers = <R extends Record<number, TSchema>, const S extends readonly number[]>(response: R, summary: string, ...refusals: S) => ({
  admin: true as const,
  response: { ...response, ...refuses(...refusals) },
  detail: { summary },
});

/** The operators' status routes: maintenance windows, operator incidents and their updates, subscribers. */
export function statusAdminRoutes(ctx: AppContext, guards: Guards) {
  // Sending happens after the commit, off the request: a slow subscriber never holds an operator's POST.
  const nudge = () => statusNotifier(ctx).nudge();
  const keyOf = (headers: Record<string, string | undefined>) => headers["idempotency-key"] ?? null;
  /** An idempotent POST's answer: 201 when it wrote, 200 and Idempotent-Replayed when its key was used before. */
  const written = <T extends { replayed: boolean }>(r: T, set: { status?: unknown; headers: Record<string, unknown> }) => {
    set.status = r.replayed ? 200 : 201;
    if (r.replayed) set.headers["idempotent-replayed"] = "true";
    return ok(r);
  };
  return new Elysia({ name: "herald:status-admin" })
    .use(guards.admin.plugin)
    .get("/admin/status/maintenance", async ({ query }) => ok(listAnswer("windows", await listMaintenance(ctx, parsePage(query)))), {
      query: M.maintenanceListQuery,
      ...answers({ 200: M.maintenanceList }, "Maintenance windows, newest first"),
    })
    .post(
      "/admin/status/maintenance",
      async ({ body, admin, set }) => {
        set.status = 201;
        return ok({ window: await createMaintenance(ctx, admin, body) });
      },
      { body: M.maintenanceBody, ...answers({ 201: M.maintenanceOne }, "Schedule a maintenance window (excluded from uptime by default; audited)") },
    )
    .delete("/admin/status/maintenance/:id", async ({ params, admin }) => ok({ window: await deleteMaintenance(ctx, admin, params.id) }), {
      params: M.maintenanceParams,
      ...answers({ 200: M.maintenanceOne }, "Delete a maintenance window (audited with its full content)", 404),
    })
    .get(
      "/admin/status/incidents",
      async ({ query }) => {
        const r = await listAdminIncidents(ctx, parsePage(query), { source: query.source, status: query.status });
        return ok(listAnswer("incidents", r, { source: query.source ?? null, status: query.status ?? null }));
      },
      { query: M.incidentListQuery, ...answers({ 200: M.incidentList }, "Every incident of both sources, newest first (filters: source, status)") },
    )
    .get("/admin/status/incidents/:incident_id", async ({ params }) => ok({ incident: await getIncidentOrThrow(ctx, params.incident_id) }), {
      params: M.incidentParams,
      query: t.Object(includeMetaQuery),
      ...answers({ 200: M.incidentOne }, "One incident with its updates", 404),
    })
    .post(
      "/admin/status/incidents",
      async ({ body, admin, headers, set }) => written(await createOperatorIncident(ctx, admin, body, keyOf(headers), nudge), set),
      {
        headers: IdempotencyHeaders,
        body: M.incidentCreateBody,
        ...answers(
          { 200: M.incidentWritten, 201: M.incidentWritten },
          "Open an operator incident with its first update (audited; subscribers get status.incident.created)",
          409,
        ),
      },
    )
    .post(
      "/admin/status/incidents/:incident_id/updates",
      async ({ params, body, admin, headers, set }) => written(await postIncidentUpdate(ctx, admin, params.incident_id, body, keyOf(headers), nudge), set),
      {
        headers: IdempotencyHeaders,
        params: M.incidentParams,
        body: M.incidentUpdateBody,
        ...answers(
          { 200: M.incidentWritten, 201: M.incidentWritten },
          "Post an update: investigating, identified, monitoring or resolved (resolved ends it; audited)",
          404,
          409,
        ),
      },
    )
    .patch(
      "/admin/status/incidents/:incident_id",
      async ({ params, body, admin }) => ok({ incident: await editOperatorIncident(ctx, admin, params.incident_id, body, nudge) }),
      {
        params: M.incidentParams,
        body: M.incidentEditBody,
        ...answers({ 200: M.incidentOne }, "Correct an operator incident's title or components (updates are never edited; audited)", 404, 409),
      },
    )
    .get("/admin/status/subscribers", async ({ query }) => ok(listAnswer("subscribers", await listSubscribers(ctx, parsePage(query)))), {
      query: M.subscriberListQuery,
      ...answers({ 200: M.subscriberList }, "Status subscribers with their delivery health, newest first"),
    })
    .post(
      "/admin/status/subscribers",
      async ({ body, admin, set }) => {
        const r = await createSubscriber(ctx, admin, body, STATUS_EVENT_TYPES);
        set.status = r.created ? 201 : 200;
        return ok(r);
      },
      {
        body: M.subscriberBody,
        ...answers(
          { 200: M.subscriberCreated, 201: M.subscriberCreated },
          "Subscribe a URL to incident events, signed like partner webhooks (secret shown once; the same URL again is a no-op)",
          409,
        ),
      },
    )
    .delete(
      "/admin/status/subscribers/:subscriber_id",
      async ({ params, admin }) => ok({ subscriber: await deleteSubscriber(ctx, admin, params.subscriber_id) }),
      { params: M.subscriberParams, ...answers({ 200: M.subscriberOne }, "Remove a subscriber and its pending deliveries (audited)", 404) },
    );
}
