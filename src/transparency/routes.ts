import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { ErrorBody } from "../http/envelope";
import { TransparencyModel as M } from "./model";
import { UptimeCache } from "../status/service";
import { trustDashboard, trustDocument } from "./service";

// Spec: "Transparency snapshots: cache at least 60 seconds".
const CACHE = "public, max-age=60";

/** /trust.json and the trust dashboard; the audit-anomaly routes will join this domain. */
export function transparencyRoutes(ctx: AppContext, _guards: Guards) {
  const cache = new UptimeCache();
  return new Elysia({ name: "herald:transparency" })
    .onAfterHandle(({ set }) => {
      set.headers["cache-control"] = CACHE;
    })
    .get("/trust.json", () => ({ success: true as const, ...trustDocument(ctx) }), {
      query: M.metaQuery,
      response: { 200: M.trust, 400: ErrorBody, 429: ErrorBody },
      detail: { tags: ["public"], summary: "Trust controls and evidence pointers: proofs, status, data protection, signing schemes" },
    })
    .get("/transparency/trust-dashboard.json", () => ({ success: true as const, ...trustDashboard(ctx, cache) }), {
      query: M.metaQuery,
      response: { 200: M.dashboard, 400: ErrorBody, 429: ErrorBody },
      detail: { tags: ["transparency"], summary: "Status, uptime, incidents, proof freshness and latency on one page" },
    });
}
