import { t } from "elysia";
import { bodyRule, requiresHeaders } from "../../http/openapi/contract";
import type { AdminRequest } from "../../auth/admin-plugin";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { includeMetaQuery } from "../../http/envelope";
import { refuses } from "../../http/routes/declare";
import { createMission, listMissions } from "../games/missions";
import { MissionModel } from "../games/promos-model";
import { answers, messengerErrors, messengerTag, ok, operatorRoutes } from "../route-common";
import { expectedRevisionOrThrow, patchMission, setMissionActive, REVISION_HEADER } from "./missions-admin";
import { compareMissions, missionAnalytics, missionStats } from "./missions-analytics";
import { MissionAdminModel as M } from "./missions-model";

/** 428 revision_required is only ever answered by the revision-guarded routes; messengerErrors lacks it. */
const revisionErrors = { ...messengerErrors, ...refuses(428) };

/** Operator routes for missions (docs/messenger-admin-missions.md): every change is audited in its own transaction. */
export function adminMissionsRoutes(ctx: AppContext, guards: Guards) {
  // Activate and deactivate differ only in the state they ask for; the revision header is optional on both.
  const toggle =
    (active: boolean) =>
    async ({ admin, params, headers }: { admin: AdminRequest; params: { mission_key: string }; headers: { "x-expected-revision"?: string } }) =>
      ok(await setMissionActive(ctx, admin, params.mission_key, active, expectedRevisionOrThrow(headers["x-expected-revision"], false)));
  const toggleHook = { admin: true, params: M.params, headers: M.revisionHeaders, response: { 200: M.toggled, ...revisionErrors } } as const;
  return operatorRoutes(ctx, guards, "herald:messenger-admin-missions")
    .get("/api/messenger/admin/missions", async ({ query }) => ok(await listMissions(ctx, query)), {
      operator: "api",
      query: M.listQuery,
      ...answers(M.list, "Missions with revision and state, oldest first (operator; limit/offset/cursor)"),
    })
    .post("/api/messenger/admin/missions", async ({ admin, body }) => ok(await createMission(ctx, admin, body)), {
      admin: true,
      body: MissionModel.createBody,
      ...answers(
        M.created,
        "Create a mission (operator; audited; a duplicate key is 409): an event type the server observes, or any other declared self_reported",
        bodyRule(MissionModel.createSources),
      ),
    })
    .get("/api/messenger/admin/missions/comparison", async ({ query }) => ok(await compareMissions(ctx, query)), {
      operator: "api",
      query: M.comparisonQuery,
      ...answers(M.comparison, "Every mission side by side in a window: enrollments, completions, refusals, rewards (operator; limit/offset/cursor)"),
    })
    .patch(
      "/api/messenger/admin/missions/:mission_key",
      async ({ admin, params, headers, body }) =>
        ok(await patchMission(ctx, admin, params.mission_key, expectedRevisionOrThrow(headers["x-expected-revision"], true), body)),
      {
        admin: true,
        params: M.params,
        headers: M.revisionHeaders,
        body: M.patchBody,
        response: { 200: M.patched, ...revisionErrors },
        detail: {
          ...messengerTag("Edit a mission at the revision in X-Expected-Revision (operator; audited; 428 without it, 409 if stale)"),
          ...requiresHeaders(REVISION_HEADER),
        },
      },
    )
    .post("/api/messenger/admin/missions/:mission_key/activate", toggle(true), {
      ...toggleHook,
      detail: messengerTag("Activate a mission (operator; audited; idempotent; optional X-Expected-Revision)"),
    })
    .post("/api/messenger/admin/missions/:mission_key/deactivate", toggle(false), {
      ...toggleHook,
      detail: messengerTag("Deactivate a mission: out of the catalog, no enrollment or progress (operator; audited; idempotent)"),
    })
    .get("/api/messenger/admin/missions/:mission_key/analytics", async ({ params, query }) => ok(await missionAnalytics(ctx, params.mission_key, query)), {
      operator: "api",
      params: M.params,
      query: M.windowQuery,
      ...answers(M.analytics, "One mission per UTC day: enrollments, events by reason, completions, rewards (operator)"),
    })
    .get("/api/messenger/admin/missions/:mission_key/stats", async ({ params }) => ok(await missionStats(ctx, params.mission_key)), {
      operator: "api",
      params: M.params,
      query: t.Object({ ...includeMetaQuery }),
      ...answers(M.stats, "One mission all-time: funnel, median progress, events, rewards, revision and state (operator)"),
    });
}
