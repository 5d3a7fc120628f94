import { auditRunsPageRoutes } from "./audit-runs-page";
import { Elysia } from "elysia";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { bodyChecks, bodyRule } from "../../http/openapi/contract";
import { refuses } from "../../http/routes/declare";
import { listAnswer, parsePage } from "../../http/pagination";
import { AdminAuditModel as M } from "./admin-model";
import { declarationsPageOf, declareMovement, retractDeclaration } from "../operator-inputs/declarations";
import { decimalsForInput } from "../audit-service";
import { changeThresholds, type ThresholdName } from "../operator-inputs/thresholds";
import { setTriage } from "../operator-inputs/triage";
import { ok } from "../../http/envelope";

// The operators' transparency routes: declare and retract expected treasury movements, change the thresholds,
// triage anomalies. Each change writes admin_audit in its own transaction (src/auth/audit.ts).

const summary = (s: string) => ({ summary: s });
const P = "/admin/transparency";

export function transparencyAdminRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:transparency-admin" })
    .use(guards.admin.plugin)
    .use(guards.operator.plugin)
    .use(auditRunsPageRoutes(ctx, guards))
    .get(`${P}/declared-movements`, async ({ query }) => ok(listAnswer("movements", await declarationsPageOf(ctx, parsePage(query)))), {
      // The bearer token or the operator session: the console's audit-runs page links it.
      operator: "api",
      query: M.declarationListQuery,
      response: { 200: M.declarationList },
      detail: summary("Declared movements, active and retracted, oldest first, paged by limit and offset or cursor"),
    })
    .post(
      `${P}/declared-movements`,
      async ({ body, admin, set }) => {
        const movement = await declareMovement(ctx, admin, body, await decimalsForInput(ctx));
        set.status = 201;
        return ok({ movement });
      },
      {
        admin: true,
        body: M.declareBody,
        response: { 201: M.declarationOne },
        detail: {
          ...summary("Declare an expected treasury movement: a matching transaction is not an anomaly (audited)"),
          ...bodyChecks(M.declareChecks),
        },
      },
    )
    .post(
      `${P}/declared-movements/:declaration_id/retract`,
      async ({ params, body, admin }) => ok({ movement: await retractDeclaration(ctx, admin, params.declaration_id, body.reason) }),
      {
        admin: true,
        params: M.declarationParams,
        body: M.retractBody,
        response: { 200: M.declarationOne, ...refuses(404, 409) },
        detail: summary("Retract a declared movement: later runs no longer match it; past matches stay (audited)"),
      },
    )
    .patch(
      `${P}/thresholds`,
      async ({ body, admin }) => {
        const { reason, owner, ...values } = body as Record<string, string | undefined> & { reason: string; owner?: string };
        return ok(await changeThresholds(ctx, admin, { values: values as Partial<Record<ThresholdName, string>>, reason, owner }, await decimalsForInput(ctx)));
      },
      {
        admin: true,
        body: M.thresholdsBody,
        response: { 200: M.thresholdsAnswer },
        detail: {
          ...summary("Change thresholds; each change is recorded with owner and reason (threshold-history.json; audited)"),
          ...bodyRule(M.thresholdsRule),
          ...bodyChecks(M.thresholdsChecks),
        },
      },
    )
    .put(`${P}/triage/:signature`, async ({ params, body, admin }) => ok({ triage: await setTriage(ctx, admin, params.signature, body) }), {
      admin: true,
      params: M.triageParams,
      body: M.triageBody,
      response: { 200: M.triageOne, ...refuses(404) },
      detail: summary("Set the triage of an anomalous signature: status, owner, eta_utc (audited)"),
    });
}
