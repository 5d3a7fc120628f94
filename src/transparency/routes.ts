import { Elysia } from "elysia";
import { conditionalGet } from "../http/openapi/contract";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { ContentDates } from "../http/caching/conditional";
import { publicTag, transparencyTag } from "../http/routes/declare";
import { auditRoutes } from "./reports/audit-routes";
import { answerJson } from "./http-cache";
import { TransparencyModel as M } from "./model";
import { UptimeCache } from "../status/service";
import { trustDashboard, trustDocument } from "./service";

/**
 * /trust.json, the trust dashboard and the audit-anomaly routes, all with http-cache.ts's validators. The two live
 * documents are computed per request but dated by the last change of their content (ContentDates), so they
 * revalidate until it changes; the audit answers are dated by the last change of the audit data.
 */
const dated = conditionalGet("etag", "last-modified");

export function transparencyRoutes(ctx: AppContext, _guards: Guards) {
  const cache = new UptimeCache();
  const dates = new ContentDates();
  const now = () => ctx.clock.now();
  const live = (request: Request, headers: Record<string, unknown>, key: string, computed: { generated_at_utc: string }) => {
    const body = dates.stamp(key, computed);
    return answerJson({ request, headers, lastModified: body.generated_at_utc }, body, now);
  };
  return new Elysia({ name: "herald:transparency" })
    .get("/trust.json", async ({ request, set }) => live(request, set.headers, "trust", await trustDocument(ctx)), {
      query: M.metaQuery,
      response: { 200: M.trust },
      detail: { ...publicTag("Trust controls and evidence pointers: proofs, status, data protection, signing schemes"), ...dated },
    })
    .get("/transparency/trust-dashboard.json", async ({ request, set }) => live(request, set.headers, "dashboard", await trustDashboard(ctx, cache)), {
      query: M.metaQuery,
      response: { 200: M.dashboard },
      detail: { ...transparencyTag("Status, uptime, incidents, proof freshness, latency and the latest audit run on one page"), ...dated },
    })
    .use(auditRoutes(ctx));
}
