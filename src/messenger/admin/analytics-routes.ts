import { csvTwin } from "../../http/openapi/contract";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { csvResponse, csvTable } from "../../http/formats/csv";
import { requestedMeta } from "../../http/envelope";
import { foldLedger } from "../daily-stats";
import { answers, messengerErrors, messengerTag, ok, operatorRoutes } from "../route-common";
import { AnalyticsModel as A, PlayersModel as P } from "./analytics-model";
import { rolloutChecklist } from "./checklist";
import { reconGridStats, spinWheelStats } from "./game-stats";
import { manualGrant } from "./manual-grant";
import { gamesOverview } from "./overview";
import { EXPORT_COLUMNS, overviewExport } from "./overview-export";
import { userActivity, userProfiles } from "./players-admin";

/** Operator routes for analytics, players and the manual grant (docs/messenger-admin-analytics.md). */
export function adminAnalyticsRoutes(ctx: AppContext, guards: Guards) {
  return (
    operatorRoutes(ctx, guards, "herald:messenger-admin-analytics")
      // The aggregates these routes read are folded from the ledger first, so every committed play is counted.
      .onBeforeHandle(async () => {
        await foldLedger(ctx);
      })
      .get("/api/messenger/admin/games/overview", async ({ query }) => ok(await gamesOverview(ctx, query)), {
        operator: "api",
        query: A.overviewQuery,
        ...answers(A.overview, "Plays, players, payouts, cost and return-to-player per game, with a per-day series (daily aggregates only)"),
      })
      .get(
        "/api/messenger/admin/games/overview/export",
        async ({ query, request, set }) => {
          const { filename, ...out } = await overviewExport(ctx, query);
          if (query.format === "json") {
            // An attachment built here, so include_meta is honoured here (the core hook adds meta to returned objects).
            const meta = requestedMeta(request, set.headers["x-request-id"], ctx.clock.now());
            return new Response(JSON.stringify({ ...ok(out), ...(meta ? { meta } : {}) }), {
              headers: { "content-type": "application/json", "content-disposition": `attachment; filename="${filename}.json"` },
            });
          }
          return csvResponse(csvTable(out.rows, EXPORT_COLUMNS), `${filename}.csv`);
        },
        {
          operator: "api",
          query: A.exportQuery,
          response: { 200: A.exportJson, ...messengerErrors },
          detail: {
            ...messengerTag("The overview's figures as rows, as an attachment: CSV (text/csv, RFC 4180; default) or with format=json the JSON twin"),
            ...csvTwin("The rows as CSV (the default; RFC 4180, header row)"),
          },
        },
      )
      .get("/api/messenger/admin/games/spin-wheel", async ({ query }) => ok(await spinWheelStats(ctx, query)), {
        operator: "api",
        query: A.gameQuery,
        ...answers(A.spinWheel, "Spin wheel: plays, players, payouts, cost, RTP, and segment counts against each campaign's weights"),
      })
      .get("/api/messenger/admin/games/recon-grid", async ({ query }) => ok(await reconGridStats(ctx, query)), {
        operator: "api",
        query: A.gameQuery,
        ...answers(A.reconGrid, "Recon grid: plays (reveals), players, payouts, cost, RTP, grids started and finished"),
      })
      .get("/api/messenger/admin/games/rollout-checklist", async ({ query }) => ok(await rolloutChecklist(ctx, query)), {
        operator: "api",
        query: A.checklistQuery,
        ...answers(A.checklist, "Named pass/warn/fail checks before widening a campaign, each with its figure, thresholds and fix"),
      })
      .get(
        "/api/messenger/admin/games/user-activity/:telegram_user_id",
        async ({ params, query }) => ok(await userActivity(ctx, params.telegram_user_id, query)),
        {
          operator: "api",
          params: A.activityParams,
          query: A.activityQuery,
          ...answers(P.activity, "One player's profile, balances and ledger entries, newest first (paginated)"),
        },
      )
      .get("/api/messenger/admin/games/user-profiles", async ({ query }) => ok(await userProfiles(ctx, query)), {
        operator: "api",
        query: A.profilesQuery,
        ...answers(P.profiles, "Players with balances, link state and activity counts (paginated)"),
      })
      .post("/api/messenger/admin/games/recon-grid/manual-grant", async ({ admin, body }) => ok(await manualGrant(ctx, admin, body)), {
        admin: true,
        body: A.grantBody,
        ...answers(P.granted, "Grant a player missiles through the game ledger (operator; idempotent by request_id; audited)"),
      })
  );
}
