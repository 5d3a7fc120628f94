import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { PartnerModel } from "./model";
import { PartnerStatusModel as M } from "./status-model";
import { partnerStatus } from "./status-service";
import { usageAnalytics } from "./usage-service";
import { partnerTag, refuses } from "../http/routes/declare";
import { ok } from "../http/envelope";

const errs = refuses(403);
const DEFAULT_USAGE_HOURS = 24;

/**
 * Partner status and usage analytics: any valid key, live or sandbox, no scope; each key sees only its own traffic
 * (a sandbox key its practice calls and sandbox deliveries, which its promotion report's error rate is read from).
 */
export function partnerStatusRoutes(ctx: AppContext, guards: Guards) {
  const anyKey = { mode: "any" as const };
  return new Elysia({ name: "herald:partner-status" })
    .use(guards.partner.plugin)
    .get("/api/partner/status", async ({ partner }) => ok(await partnerStatus(ctx, partner.actor)), {
      partner: anyKey,
      query: PartnerModel.metaQuery,
      response: { 200: M.status, ...errs },
      detail: partnerTag("This key's last hour: status, latency percentiles, request and webhook delivery health"),
    })
    .get("/api/partner/analytics/usage", async ({ partner, query }) => ok(await usageAnalytics(ctx, partner.actor.keyId, query.hours ?? DEFAULT_USAGE_HOURS)), {
      partner: anyKey,
      query: M.usageQuery,
      response: { 200: M.usage, ...errs },
      detail: partnerTag("This key's requests, errors and latency percentiles over the last `hours` (1–720, default 24)"),
    });
}
