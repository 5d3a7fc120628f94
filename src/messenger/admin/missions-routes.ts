import { Elysia, t } from "elysia";
import { requiresHeaders } from "../../http/openapi/contract";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { includeMetaQuery } from "../../http/envelope";
import { refuses } from "../../http/routes/declare";
import { createMission, listMissions } from "../games/missions";
import { MissionModel } from "../games/promos-model";
import { messengerErrors, messengerTag, requireMessengerBot } from "../route-common";
import { expectedRevisionOrThrow, patchMission, setMissionActive, REVISION_HEADER } from "./missions-admin";
import { compareMissions, missionAnalytics, missionStats } from "./missions-analytics";
import { MissionAdminModel as M } from "./missions-model";

/** 428 revision_required is only ever answered by the revision-guarded routes; messengerErrors lacks it. */
const revisionErrors = { ...messengerErrors, ...refuses(428) };

/**
 * Operator routes for missions under /api/messenger/admin (docs/messenger-admin-missions.md). Admin token (the GETs
 * also the operator session cookie: `operator: "api"`); 503 without a bot token. Every change is audited in its own transaction; PATCH names the revision it edits.
 */
export function adminMissionsRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:messenger-admin-missions" })
    .use(guards.admin.plugin)
    .use(guards.operator.plugin)
    .onBeforeHandle(requireMessengerBot(ctx))
    .get("/api/messenger/admin/missions", async ({ query }) => ({ success: true as const, ...(await listMissions(ctx, query)) }), {
      operator: "api",
      query: M.listQuery,
      response: { 200: M.list, ...messengerErrors },
      detail: messengerTag("Missions with revision and state, oldest first (operator; limit/offset/cursor)"),
    })
    .post("/api/messenger/admin/missions", async ({ admin, body }) => ({ success: true as const, ...(await createMission(ctx, admin, body)) }), {
      admin: true,
      body: MissionModel.createBody,
      response: { 200: M.created, ...messengerErrors },
      detail: messengerTag("Create a mission (operator; audited; a duplicate key is 409)"),
    })
    .get("/api/messenger/admin/missions/comparison", async ({ query }) => ({ success: true as const, ...(await compareMissions(ctx, query)) }), {
      operator: "api",
      query: M.comparisonQuery,
      response: { 200: M.comparison, ...messengerErrors },
      detail: messengerTag("Every mission side by side in a window: enrollments, completions, refusals, rewards (operator; limit/offset/cursor)"),
    })
    .patch(
      "/api/messenger/admin/missions/:mission_key",
      async ({ admin, params, headers, body }) => ({
        success: true as const,
        ...(await patchMission(ctx, admin, params.mission_key, expectedRevisionOrThrow(headers["x-expected-revision"], true), body)),
      }),
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
    .post(
      "/api/messenger/admin/missions/:mission_key/activate",
      async ({ admin, params, headers }) => ({
        success: true as const,
        ...(await setMissionActive(ctx, admin, params.mission_key, true, expectedRevisionOrThrow(headers["x-expected-revision"], false))),
      }),
      {
        admin: true,
        params: M.params,
        headers: M.revisionHeaders,
        response: { 200: M.toggled, ...revisionErrors },
        detail: messengerTag("Activate a mission (operator; audited; idempotent; optional X-Expected-Revision)"),
      },
    )
    .post(
      "/api/messenger/admin/missions/:mission_key/deactivate",
      async ({ admin, params, headers }) => ({
        success: true as const,
        ...(await setMissionActive(ctx, admin, params.mission_key, false, expectedRevisionOrThrow(headers["x-expected-revision"], false))),
      }),
      {
        admin: true,
        params: M.params,
        headers: M.revisionHeaders,
        response: { 200: M.toggled, ...revisionErrors },
        detail: messengerTag("Deactivate a mission: out of the catalog, no enrollment or progress (operator; audited; idempotent)"),
      },
    )
    .get(
      "/api/messenger/admin/missions/:mission_key/analytics",
      async ({ params, query }) => ({ success: true as const, ...(await missionAnalytics(ctx, params.mission_key, query)) }),
      {
        operator: "api",
        params: M.params,
        query: M.windowQuery,
        response: { 200: M.analytics, ...messengerErrors },
        detail: messengerTag("One mission per UTC day: enrollments, events by reason, completions, rewards (operator)"),
      },
    )
    .get(
      "/api/messenger/admin/missions/:mission_key/stats",
      async ({ params }) => ({ success: true as const, ...(await missionStats(ctx, params.mission_key)) }),
      {
        operator: "api",
        params: M.params,
        query: t.Object({ ...includeMetaQuery }),
        response: { 200: M.stats, ...messengerErrors },
        detail: messengerTag("One mission all-time: funnel, median progress, events, rewards, revision and state (operator)"),
      },
    );
}
