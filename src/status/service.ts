import type { Static } from "elysia";
import type { AppContext } from "../context";
import { queryProblem } from "../http/errors/errors";
import { evaluateChecks, type EvaluationOptions } from "./checks/engine";
import { staleAfterMs } from "./checks/jobs";
import { componentViews } from "./components";
import { listIncidents, openIncidents } from "./incidents/incidents";
import { latencyPercentiles } from "./latency";
import { maintenanceSummary } from "./incidents/maintenance";
import type { ChecksSchema } from "./model";
import { loadPolicy } from "./checks/policy";
import { trend } from "./snapshots";
import { newestSnapshotAt } from "./store/snapshots";
import { MAX_UPTIME_HOURS, uptime, uptimeFrom, uptimeSource, UptimeCache } from "./uptime";

// The status domain's verbs for routes and for other domains (transparency reads them).

export { latencyPercentiles, listIncidents, trend, uptime, UptimeCache };
export { getIncidentOrThrow } from "./incidents/operator";
export { incidentListeners, type StatusEventType } from "./incidents/notify";
export type { IncidentView } from "./incidents/incidents";
export { FRESHNESS_PROOFS } from "./checks/chain";
export type { Level } from "./checks/types";

export function flagQuery(field: string, raw: string | undefined): boolean | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (raw === "1" || raw === "true") return true;
  if (raw === "0" || raw === "false") return false;
  throw queryProblem(field, "must be one of: 1, true, 0, false");
}

/**
 * Each job's stale limit in seconds under the policy in force, for the jobs expected to run here (the jobs check's
 * rule, checks/jobs.ts): what /metrics publishes for Prometheus to judge job ages the same way.
 */
export function jobStaleLimits(ctx: AppContext): Array<{ name: string; seconds: number }> {
  const { policy } = loadPolicy(ctx);
  const now = ctx.clock.now();
  // From the schedules alone: a scrape reads no job runs for it.
  return ctx.jobs.schedules().flatMap((j) => {
    const ms = staleAfterMs(ctx, policy, j, now);
    return ms === null ? [] : [{ name: j.name, seconds: ms / 1000 }];
  });
}

/** GET /api/public/system-status: every check evaluated now (not the last snapshot), under the policy in force. */
export async function systemStatus(ctx: AppContext, options: EvaluationOptions = {}) {
  const { policy } = loadPolicy(ctx);
  const e = await evaluateChecks(ctx, policy, options);
  const open = await openIncidents(ctx);
  return {
    ...e,
    // Typed loosely by the engine (a record of checks); the response schema names each one.
    checks: e.checks as unknown as Static<typeof ChecksSchema>,
    components: componentViews(e.checks, open),
    last_snapshot_at: await newestSnapshotAt(ctx.store),
    // The newest open incident of either source (kept for clients that read one); all of them below.
    open_incident: open[0] ?? null,
    open_incidents: open,
    maintenance: await maintenanceSummary(ctx),
    links: {
      page: "/status",
      trend: "/api/public/system-status/trend",
      uptime: "/api/public/system-status/uptime",
      incidents: "/api/public/system-status/incidents",
      policy: "/api/public/system-status/policy",
      latency: "/api/public/latency-percentiles",
      feed: "/status/feed.rss",
      feed_json: "/status/feed.json",
      badge: "/status/badge/overall.svg",
    },
  };
}

/** GET /api/public/system-status/policy: the policy in force and where it came from. */
export function policyView(ctx: AppContext) {
  const l = loadPolicy(ctx);
  // The policy's own fields keep the default's order: a file's values are merged over it (mergeOver).
  return { policy: { source: l.source, file: l.file, loaded: l.loaded, error: l.error, ...l.policy } };
}

/** POST /api/canary/echo: the body was validated strictly by its schema; echo it with our own request id. */
export function canaryEcho(ctx: AppContext, body: { message: string; request_id: string }, serverRequestId: string) {
  return { message: body.message, request_id: body.request_id, server_request_id: serverRequestId, received_at: ctx.clock.now().toISOString() };
}

/** Overall uptime over the badge windows (24h, 7d, 30d, 90d), read once: for dashboards. */
export async function uptimeSummary(ctx: AppContext, cache?: UptimeCache) {
  const exclude = loadPolicy(ctx).policy.exclude_maintenance_default;
  const src = await uptimeSource(ctx, MAX_UPTIME_HOURS, cache);
  const at = (hours: number) => uptimeFrom(src, hours, exclude).overall;
  return { exclude_maintenance: exclude, windows: { "24h": at(24), "7d": at(168), "30d": at(720), "90d": at(2160) } };
}
