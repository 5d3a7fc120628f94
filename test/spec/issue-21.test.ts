// Issue 21 (operator console II), re-verified against the spec's "Admin operations (operator-only)" table: every
// parameter it lists for the preflight guards, the alerts monitor's usage exports and the link inbox is declared on
// the route in the served document (the routes refuse an undeclared query field, so a dropped one is a 400).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { type ServedDoc, undeclaredQuery } from "./declared-params";

let h: TestApp;
beforeAll(async () => {
  h = await openTestApp();
});
afterAll(() => h?.close());

const SECTION = ["section", "fields", "fields_preset"];
const LINK = [
  "event",
  "event_prefix",
  "at_from",
  "at_to",
  "status_code_family",
  "skip_reason",
  "issue_id",
  "url_contains",
  "fields",
  "window_preset",
  "count_only",
  "checksum",
  "compress",
  "download_token",
  "debug",
];
const SPEC_PARAMS: Array<[paths: string[], params: string[]]> = [
  [["/admin/ops/preflight-guards.json", "/admin/ops/preflight-guards/export.csv"], ["include_env_rows"]],
  [
    ["/admin/ops/preflight-guards/delta.json", "/admin/ops/preflight-guards/delta.csv"],
    ["day_offset", ...SECTION],
  ],
  [
    ["/admin/ops/preflight-guards/delta.summary.json"],
    ["day_offset", ...SECTION, "include_compare_timestamps", "include_fields", "include_fields_max", "include_fields_bytes_limit"],
  ],
  [
    ["/admin/ops/preflight-guards/history.csv", "/admin/ops/preflight-guards/history.json"],
    ["days", ...SECTION],
  ],
  [
    ["/admin/ops/preflight-guards/anomalies.json", "/admin/ops/preflight-guards/anomalies.csv"],
    ["days", "baseline_days", "min_baseline_points", "zscore_threshold", "min_change_count", ...SECTION],
  ],
  [
    ["/admin/ops/alerts-monitor/export-usage.csv", "/admin/ops/alerts-monitor/export-usage.json"],
    ["days", "source"],
  ],
  [
    ["/admin/ops/alerts-monitor/export-usage.png", "/admin/ops/alerts-monitor/export-usage.svg"],
    ["days", "source", "w", "h"],
  ],
  [["/admin/ops/link-inbox/events/export.json", "/admin/ops/link-inbox/events/export.csv"], LINK],
  [["/admin/ops/link-inbox/events/export-download.csv"], ["download_token"]],
  [["/admin/ops/link-inbox/events/export-telemetry.json"], ["requested_by"]],
];

test("every parameter the spec's admin table lists for these routes is declared on them", async () => {
  const doc = (await h.json("/api/openapi.json")).body as ServedDoc;
  expect(undeclaredQuery(doc, SPEC_PARAMS)).toEqual([]);
});
