// Docs audit: the parameter tables (bounds and value sets) of docs/ops-*.md against the real app: each documented
// edge answers 2xx, one step past it answers 400 invalid_query.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
let auth: Record<string, string>;
beforeAll(async () => {
  h = await openTestApp();
  auth = { authorization: `Bearer ${await createAdminToken(h)}` };
});
afterAll(async () => {
  await h?.close();
});

type Bound = { doc: string; route: string; param: string; ok: string[]; bad: string[] };
const int = (doc: string, route: string, param: string, min: number, max: number): Bound => ({
  doc,
  route,
  param,
  ok: [String(min), String(max)],
  bad: [String(min - 1), String(max + 1)],
});
const set = (doc: string, route: string, param: string, ok: string[], bad = ["nope"]): Bound => ({ doc, route, param, ok, bad });

const BOUNDS: Bound[] = [
  // docs/ops-preflight.md:95-100, 146-151, 211-214, 262-269
  int("ops-preflight.md:97", "/admin/ops/preflight-guards/delta.json", "day_offset", 1, 30),
  set("ops-preflight.md:98", "/admin/ops/preflight-guards/delta.json", "section", ["all", "responder", "synthetic", "digest", "token", "artifact"]),
  set("ops-preflight.md:100", "/admin/ops/preflight-guards/delta.json", "fields_preset", ["docs_mode", "token_secret", "synthetic_thresholds"]),
  set("ops-preflight.md:59", "/admin/ops/preflight-guards.json", "include_env_rows", ["0", "1"], ["2"]),
  int("ops-preflight.md:213", "/admin/ops/preflight-guards/history.json", "days", 1, 90),
  int("ops-preflight.md:264", "/admin/ops/preflight-guards/anomalies.json", "days", 1, 90),
  int("ops-preflight.md:265", "/admin/ops/preflight-guards/anomalies.json", "baseline_days", 1, 30),
  int("ops-preflight.md:266", "/admin/ops/preflight-guards/anomalies.json", "min_baseline_points", 1, 30),
  int("ops-preflight.md:268", "/admin/ops/preflight-guards/anomalies.json", "min_change_count", 1, 1000),
  {
    doc: "ops-preflight.md:267",
    route: "/admin/ops/preflight-guards/anomalies.json",
    param: "zscore_threshold",
    ok: ["0", "100", "2.5"],
    bad: ["-0.1", "100.1"],
  },
  // docs/ops-readiness.md:36-39, 126-127, 203-204
  set("ops-readiness.md:36", "/admin/ops/readiness/403-noise/export.json", "days", ["7", "14", "30"], ["8", "31"]),
  set("ops-readiness.md:37", "/admin/ops/readiness/403-noise/export.json", "windows", ["7", "14,30", "7,14,30"], ["8", "7,7"]),
  set("ops-readiness.md:38", "/admin/ops/readiness/403-noise/export.json", "compact", ["0", "1"], ["2"]),
  set("ops-readiness.md:39", "/admin/ops/readiness/403-noise/export.json", "include_windows_meta", ["0", "1"], ["2"]),
  set("ops-readiness.md:126", "/admin/ops/readiness/403-noise/export.csv", "mode", ["points", "summary"]),
  int("ops-readiness.md:203", "/admin/ops/readiness/synthetic-zero-history.csv", "limit", 1, 1000),
  int("ops-readiness.md:204", "/admin/ops/readiness/synthetic-zero-history.csv", "days", 1, 90),
  // docs/ops-incidents.md:48-60, 235-238, 308-309
  int("ops-incidents.md:48", "/admin/ops/incidents/draft.json", "hours", 1, 720),
  int("ops-incidents.md:51", "/admin/ops/incidents/draft.json", "limit", 1, 50),
  set("ops-incidents.md:53", "/admin/ops/incidents/draft.json", "source", ["all", "status", "errors", "jobs"]),
  set("ops-incidents.md:54", "/admin/ops/incidents/draft.json", "severity", ["all", "warn", "bad"]),
  set("ops-incidents.md:55", "/admin/ops/incidents/draft.json", "context", ["none", "brief", "full"]),
  set("ops-incidents.md:56", "/admin/ops/incidents/draft.json", "template", ["v1", "minimal"]),
  int("ops-incidents.md:57", "/admin/ops/incidents/draft.json", "preflight_day_offset", 1, 30),
  int("ops-incidents.md:58", "/admin/ops/incidents/draft.json", "top_errors_hours", 1, 168),
  int("ops-incidents.md:59", "/admin/ops/incidents/draft.json", "top_errors_limit", 1, 200000),
  int("ops-incidents.md:60", "/admin/ops/incidents/draft.json", "top_errors_top_n", 1, 50),
  int("ops-incidents.md:235", "/admin/ops/incidents", "limit", 1, 200),
  { doc: "ops-incidents.md:236", route: "/admin/ops/incidents", param: "offset", ok: ["0", "1000000000"], bad: ["-1", "1000000001"] },
  set("ops-incidents.md:237", "/admin/ops/incidents", "status", ["open", "resolved"]),
  set("ops-incidents.md:238", "/admin/ops/incidents", "severity", ["warn", "bad"]),
  // docs/ops-digest.md:106-115
  int("ops-digest.md:108", "/admin/ops/403-digest", "hours", 1, 168),
  set("ops-digest.md:109", "/admin/ops/403-digest", "baseline_mode", ["rolling_24h", "same_hour_yesterday", "same_weekday_hour_4w"]),
  int("ops-digest.md:110", "/admin/ops/403-digest", "new_path_lookback_days", 1, 90),
  int("ops-digest.md:111", "/admin/ops/403-digest", "spike_consecutive_hours", 1, 48),
  int("ops-digest.md:112", "/admin/ops/403-digest", "spike_ratio", 2, 100),
  int("ops-digest.md:113", "/admin/ops/403-digest", "spike_min_count", 1, 1000000),
  int("ops-digest.md:114", "/admin/ops/403-digest", "new_min_count", 1, 1000000),
  int("ops-digest.md:115", "/admin/ops/403-digest", "group_limit", 1, 200),
  // docs/ops-alerts.md:44-48, 289-290, 341-343
  int("ops-alerts.md:44", "/admin/ops/alerts-monitor/export.json", "days", 1, 90),
  set("ops-alerts.md:45", "/admin/ops/alerts-monitor/export.json", "source", ["all", "status", "transparency", "webhooks", "digest", "preflight"]),
  set("ops-alerts.md:46", "/admin/ops/alerts-monitor/export.json", "status", ["all", "ok", "warn", "fail"]),
  int("ops-alerts.md:47", "/admin/ops/alerts-monitor/export.json", "limit", 1, 200),
  { doc: "ops-alerts.md:48", route: "/admin/ops/alerts-monitor/export.json", param: "offset", ok: ["0", "1000000"], bad: ["-1", "1000001"] },
  int("ops-alerts.md:289", "/admin/ops/alerts-monitor/export-usage.json", "days", 1, 90),
  set("ops-alerts.md:290", "/admin/ops/alerts-monitor/export-usage.json", "source", ["all", "export", "token"]),
  int("ops-alerts.md:342", "/admin/ops/alerts-monitor/export-usage.png", "w", 320, 1600),
  int("ops-alerts.md:343", "/admin/ops/alerts-monitor/export-usage.png", "h", 200, 900),
  int("ops-alerts.md:342", "/admin/ops/alerts-monitor/export-usage.svg", "w", 320, 1600),
  int("ops-alerts.md:343", "/admin/ops/alerts-monitor/export-usage.svg", "h", 200, 900),
  // docs/ops-link-inbox.md:107, 202, 261-270
  int("ops-link-inbox.md:107", "/admin/ops/link-inbox/verification-summary.json", "days", 1, 365),
  int("ops-link-inbox.md:202", "/admin/ops/digest/resolved-verification.json", "days", 1, 90),
  set("ops-link-inbox.md:261", "/admin/ops/link-inbox/events/export.json", "event", [
    "incident.opened",
    "alert.fired,alert.resolved",
    "preflight.anomaly",
    "incident.updated",
    "incident.resolved",
  ]),
  set("ops-link-inbox.md:264", "/admin/ops/link-inbox/events/export.json", "status_code_family", ["2xx", "4xx", "5xx", "timeout", "other"]),
  set("ops-link-inbox.md:265", "/admin/ops/link-inbox/events/export.json", "skip_reason", ["no_url", "cooldown", "silenced", "other"]),
  set("ops-link-inbox.md:268", "/admin/ops/link-inbox/events/export.json", "fields", [
    "id,at,event,issue_id,target,url,attempt,status_code,status_code_family,skip_reason,outbox_id,error",
  ]),
  set("ops-link-inbox.md:269", "/admin/ops/link-inbox/events/export.json", "window_preset", ["last_digest_warn", "last_outage"]),
  int("ops-link-inbox.md:270", "/admin/ops/link-inbox/events/export.json", "limit", 1, 50000),
  { doc: "ops-link-inbox.md:262", route: "/admin/ops/link-inbox/events/export.json", param: "event_prefix", ok: ["x".repeat(64)], bad: ["x".repeat(65)] },
  { doc: "ops-link-inbox.md:267", route: "/admin/ops/link-inbox/events/export.json", param: "url_contains", ok: ["x".repeat(200)], bad: ["x".repeat(201)] },
];

describe("docs/ops-*.md parameter tables", () => {
  for (const b of BOUNDS) {
    test(`${b.doc} ${b.route} ${b.param}: ${b.ok.join("|")} accepted, ${b.bad.join("|")} refused`, async () => {
      for (const v of b.ok) {
        const r = await h.request(`${b.route}?${b.param}=${encodeURIComponent(v)}`, { headers: auth });
        const text = r.status >= 300 ? await r.text() : "";
        expect([v, r.status, text.slice(0, 200)]).toEqual([v, 200, ""]);
      }
      for (const v of b.bad) {
        const r = await h.request(`${b.route}?${b.param}=${encodeURIComponent(v)}`, { headers: auth });
        const body = r.headers.get("content-type")?.includes("json") ? ((await r.json()) as any) : {};
        expect([v, r.status, body.error]).toEqual([v, 400, "invalid_query"]);
      }
    });
  }
});
