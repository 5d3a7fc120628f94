import { Elysia, t } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { includeMetaQuery } from "../http/envelope";
import { refuses } from "../http/routes/declare";
import { listAnswer, parsePage } from "../http/pagination";
import { createMaintenance, deleteMaintenance, listMaintenance } from "./incidents/maintenance";
import { StatusAdminModel as M, IdempotencyHeaders } from "./model-admin";
import { statusNotifier, STATUS_EVENT_TYPES } from "./incidents/notify";
import { createOperatorIncident, editOperatorIncident, getIncidentOrThrow, listAdminIncidents, postIncidentUpdate } from "./incidents/operator";
import { createSubscriber, deleteSubscriber, listSubscribers } from "./incidents/subscribers";

const summary = (s: string) => ({ summary: s });

/** The operators' status routes: maintenance windows, operator incidents and their updates, subscribers. */
export function statusAdminRoutes(ctx: AppContext, guards: Guards) {
  const ok = <T extends object>(body: T) => ({ success: true as const, ...body });
  // Sending happens after the commit, off the request: a slow subscriber never holds an operator's POST.
  const nudge = () => statusNotifier(ctx).nudge();
  const keyOf = (headers: Record<string, string | undefined>) => headers["idempotency-key"] ?? null;
  return new Elysia({ name: "herald:status-admin" })
    .use(guards.admin.plugin)
    .get("/admin/status/maintenance", async ({ query }) => ok(listAnswer("windows", await listMaintenance(ctx, parsePage(query)))), {
      admin: true,
      query: M.maintenanceListQuery,
      response: { 200: M.maintenanceList },
      detail: summary("Maintenance windows, newest first"),
    })
    .post(
      "/admin/status/maintenance",
      async ({ body, admin, set }) => {
        set.status = 201;
        return ok({ window: await createMaintenance(ctx, admin, body) });
      },
      {
        admin: true,
        body: M.maintenanceBody,
        response: { 201: M.maintenanceOne },
        detail: summary("Schedule a maintenance window (excluded from uptime by default; audited)"),
      },
    )
    .delete("/admin/status/maintenance/:id", async ({ params, admin }) => ok({ window: await deleteMaintenance(ctx, admin, params.id) }), {
      admin: true,
      params: M.maintenanceParams,
      response: { 200: M.maintenanceOne, ...refuses(404) },
      detail: summary("Delete a maintenance window (audited with its full content)"),
    })
    .get(
      "/admin/status/incidents",
      async ({ query }) => {
        const r = await listAdminIncidents(ctx, parsePage(query), { source: query.source, status: query.status });
        return ok(listAnswer("incidents", r, { source: query.source ?? null, status: query.status ?? null }));
      },
      {
        admin: true,
        query: M.incidentListQuery,
        response: { 200: M.incidentList },
        detail: summary("Every incident of both sources, newest first (filters: source, status)"),
      },
    )
    .get("/admin/status/incidents/:incident_id", async ({ params }) => ok({ incident: await getIncidentOrThrow(ctx, params.incident_id) }), {
      admin: true,
      params: M.incidentParams,
      query: t.Object(includeMetaQuery),
      response: { 200: M.incidentOne, ...refuses(404) },
      detail: summary("One incident with its updates"),
    })
    .post(
      "/admin/status/incidents",
      async ({ body, admin, headers, set }) => {
        const r = await createOperatorIncident(ctx, admin, body, keyOf(headers), nudge);
        set.status = r.replayed ? 200 : 201;
        if (r.replayed) set.headers["idempotent-replayed"] = "true";
        return ok(r);
      },
      {
        admin: true,
        headers: IdempotencyHeaders,
        body: M.incidentCreateBody,
        response: { 200: M.incidentWritten, 201: M.incidentWritten, ...refuses(409) },
        detail: summary("Open an operator incident with its first update (audited; subscribers get status.incident.created)"),
      },
    )
    .post(
      "/admin/status/incidents/:incident_id/updates",
      async ({ params, body, admin, headers, set }) => {
        const r = await postIncidentUpdate(ctx, admin, params.incident_id, body, keyOf(headers), nudge);
        set.status = r.replayed ? 200 : 201;
        if (r.replayed) set.headers["idempotent-replayed"] = "true";
        return ok(r);
      },
      {
        admin: true,
        headers: IdempotencyHeaders,
        params: M.incidentParams,
        body: M.incidentUpdateBody,
        response: { 200: M.incidentWritten, 201: M.incidentWritten, ...refuses(404, 409) },
        detail: summary("Post an update: investigating, identified, monitoring or resolved (resolved ends it; audited)"),
      },
    )
    .patch(
      "/admin/status/incidents/:incident_id",
      async ({ params, body, admin }) => ok({ incident: await editOperatorIncident(ctx, admin, params.incident_id, body, nudge) }),
      {
        admin: true,
        params: M.incidentParams,
        body: M.incidentEditBody,
        response: { 200: M.incidentOne, ...refuses(404, 409) },
        detail: summary("Correct an operator incident's title or components (updates are never edited; audited)"),
      },
    )
    .get("/admin/status/subscribers", async ({ query }) => ok(listAnswer("subscribers", await listSubscribers(ctx, parsePage(query)))), {
      admin: true,
      query: M.subscriberListQuery,
      response: { 200: M.subscriberList },
      detail: summary("Status subscribers with their delivery health, newest first"),
    })
    .post(
      "/admin/status/subscribers",
      async ({ body, admin, set }) => {
        const r = await createSubscriber(ctx, admin, body, STATUS_EVENT_TYPES);
        set.status = r.created ? 201 : 200;
        return ok(r);
      },
      {
        admin: true,
        body: M.subscriberBody,
        response: { 200: M.subscriberCreated, 201: M.subscriberCreated, ...refuses(409) },
        detail: summary("Subscribe a URL to incident events, signed like partner webhooks (secret shown once; the same URL again is a no-op)"),
      },
    )
    .delete(
      "/admin/status/subscribers/:subscriber_id",
      async ({ params, admin }) => ok({ subscriber: await deleteSubscriber(ctx, admin, params.subscriber_id) }),
      {
        admin: true,
        params: M.subscriberParams,
        response: { 200: M.subscriberOne, ...refuses(404) },
        detail: summary("Remove a subscriber and its pending deliveries (audited)"),
      },
    );
}
