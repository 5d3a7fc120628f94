import { Elysia } from "elysia";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { bodyChecks } from "../../http/openapi/contract";
import { refuses } from "../../http/routes/declare";
import { END_TIME_PATTERN } from "../digest/suppressions";
import { listAnswer, parsePage, slicePage } from "../../http/pagination";
import { createSilence, expireSilence, listSilences } from "./silences";
import { firingAlerts } from "./views";
import { AlertsFiringModel as M } from "./firing-model";
import { linkTargetHealth } from "../link-inbox/target-health";
import { ok } from "../../http/envelope";

const BASE = "/admin/ops/alerts-monitor";

/**
 * What is firing now, the silences that hold notices back, and whether the link inbox's targets can reach anyone.
 * Bearer token or operator session (a POST with the session also needs X-CSRF-Token); docs/ops-alerts.md.
 */
export function alertsFiringRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:ops-alerts-firing" })
    .use(guards.operator.plugin)
    .get(
      `${BASE}/firing.json`,
      async ({ query }) => {
        // A few dozen rows at most (one per alert key), in an order that moves as alerts change level: paged by offset.
        const alerts = await firingAlerts(ctx, { source: query.source, level: query.level });
        const page = slicePage(alerts, query);
        const silenced = alerts.filter((a) => a.silenced_by !== null).length;
        return ok({
          generated_at: ctx.clock.now().toISOString(),
          ...listAnswer("alerts", page, { source: query.source ?? null, level: query.level ?? null }, { total: page.total, silenced }),
        });
      },
      {
        operator: "api",
        query: M.firingQuery,
        response: { 200: M.firing },
        detail: {
          summary:
            "Alerts firing now (warn or fail), with since when, the latest evaluation, the silence holding them back and what was sent; paged by limit and offset",
        },
      },
    )
    .get(
      `${BASE}/silences`,
      async ({ query }) => ok(listAnswer("silences", await listSilences(ctx, parsePage(query), query.state), { state: query.state ?? null })),
      {
        operator: "api",
        query: M.silenceListQuery,
        response: { 200: M.silenceList },
        detail: { summary: "Alert silences, newest first, each with its state now (active, expired)" },
      },
    )
    .post(
      `${BASE}/silences`,
      async ({ body, operator, set }) => {
        const silence = await createSilence(ctx, operator, body);
        set.status = 201;
        return ok({ silence });
      },
      {
        operator: "api",
        body: M.silenceBody,
        response: { 201: M.silenceOne },
        detail: {
          summary: "Silence alerts matching a key or pattern until a time (≤ 30 days), with a reason; audited. Silenced alerts are recorded, not sent",
          // endProblem's form of a time (its date, the future and the 30 days are its own).
          ...bodyChecks({ ends_at: { pattern: END_TIME_PATTERN } }),
        },
      },
    )
    .post(`${BASE}/silences/:silence_id/expire`, async ({ params, operator }) => ok({ silence: await expireSilence(ctx, operator, params.silence_id) }), {
      operator: "api",
      params: M.silenceParams,
      response: { 200: M.silenceOne, ...refuses(404, 409) },
      detail: { summary: "End a silence now (audited); 409 when it already ended" },
    })
    .get(
      "/admin/ops/link-inbox/targets.json",
      async ({ query }) => {
        const targets = await linkTargetHealth(ctx);
        const page = slicePage(targets, query);
        const down = targets.filter((t) => t.state === "down").length;
        const dead = targets.filter((t) => t.dead).length;
        return ok({ generated_at: ctx.clock.now().toISOString(), ...listAnswer("targets", page, {}, { total: page.total, down, dead }) });
      },
      {
        operator: "api",
        query: M.targetsQuery,
        response: { 200: M.targets },
        detail: {
          summary:
            "Each configured link-inbox target: up or down, dead or not, and why (the target policy's refusal, the newest failure); paged by limit and offset",
        },
      },
    );
}
