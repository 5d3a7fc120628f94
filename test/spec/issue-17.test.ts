// Issue 17 (transparency audit anomalies), "Bad input", re-verified over HTTP: "Unknown run selector, bad metric,
// threshold out of 0–10000 %, limit/top_limit/row_limit out of range, negative min_abs_delta, unknown type or
// severity, from > to: each a 400 or 404 with a catalog code and a message that names the parameter. Never a 500."
import { afterAll, beforeAll, expect, test } from "bun:test";
import { isErrorCode } from "../../src/http/errors/errors";
import { openTestApp, type TestApp } from "../support/app";
import { type ServedDoc, undeclaredQuery } from "./declared-params";

let h: TestApp;
beforeAll(async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
});
afterAll(() => h?.close());

const P = "/transparency/audit-anomalies";
const CASES: Array<[target: string, status: number, names: string]> = [
  ["summary.json?run=999999", 404, ""],
  ["summary.json?run=2026-13-45", 400, "run"],
  ["summary.json?top_limit=0", 400, "top_limit"],
  ["summary.json?top_limit=100000", 400, "top_limit"],
  ["runs.json?run=nope!", 400, "run"],
  ["trend.json?metric=bytes", 400, "metric"],
  ["trend.json?limit=0", 400, "limit"],
  ["trend.json?severity=extreme", 400, "severity"],
  ["trend.json?types=no_such_type", 400, "types"],
  ["trend.json?min_abs_delta=-1", 400, "min_abs_delta"],
  ["alerts.json?sigs_increase_threshold_pct=10001", 400, "sigs_increase_threshold_pct"],
  ["alerts.json?sigs_increase_threshold_pct=-1", 400, "sigs_increase_threshold_pct"],
  ["alerts.json?rows_increase_threshold_pct=10001", 400, "rows_increase_threshold_pct"],
  ["alerts.csv?rows_increase_threshold_pct=abc", 400, "rows_increase_threshold_pct"],
  ["diff/compare.json?run_a=999999&run_b=latest", 404, ""],
  ["diff/compare.json?row_limit=0", 400, "row_limit"],
  ["diff/compare.csv?run_b=bad!", 400, "run_b"],
  ["export.json?min_abs_delta=-1", 400, "min_abs_delta"],
  ["export.json?types=nope", 400, "types"],
  ["export.json?severity=nope", 400, "severity"],
  ["export.json?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z", 400, "from"],
  ["export?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z", 400, "from"],
  ["threshold-history.json?limit=0", 400, "limit"],
  ["triage.json?status=nope", 400, "status"],
];

test("each bad input is a 400 or 404 with a catalog code, naming the parameter; never a 500", async () => {
  const wrong: string[] = [];
  for (const [target, status, names] of CASES) {
    const r = await h.request(`${P}/${target}`);
    const text = await r.text();
    let body: { error?: string; message?: string } = {};
    try {
      body = JSON.parse(text);
    } catch {
      wrong.push(`${target}: not JSON (${r.status})`);
      continue;
    }
    const ok = r.status === status && typeof body.error === "string" && isErrorCode(body.error) && String(body.message).includes(names);
    if (!ok) wrong.push(`${target}: ${r.status} ${body.error} ${String(body.message).slice(0, 120)}`);
  }
  expect(wrong).toEqual([]);
});

// "Every route of the spec, with every listed parameter": each is declared on its route in the served document.
const T = "/transparency/audit-anomalies";
const SPEC_PARAMS: Array<[paths: string[], params: string[]]> = [
  [[`${T}/summary.json`], ["run", "include_top_anomalies", "top_limit"]],
  [[`${T}/runs.json`], ["run"]],
  [[`${T}/trend.json`], ["run", "metric", "include_status_counts", "severity", "signature", "types", "min_abs_delta", "limit"]],
  [[`${T}/alerts.json`], ["run", "sigs_increase_threshold_pct", "rows_increase_threshold_pct", "include_recommendations"]],
  [[`${T}/alerts.csv`], ["run", "sigs_increase_threshold_pct", "rows_increase_threshold_pct"]],
  [
    [`${T}/diff/compare.json`, `${T}/diff/compare.csv`],
    ["run_a", "run_b", "include_rows", "row_limit"],
  ],
  [
    [`${T}/diff/export.json`, `${T}/diff/export`],
    ["run", "include_rows", "row_limit"],
  ],
  [
    [`${T}/export.json`, `${T}/export`],
    ["run", "severity", "types", "signature", "min_abs_delta", "from", "to"],
  ],
  [[`${T}/threshold-history.json`], ["limit"]],
  [[`${T}/triage.json`], ["status"]],
];

test("every parameter the issue and the spec list is declared on its route", async () => {
  const doc = (await h.json("/api/openapi.json")).body as ServedDoc;
  expect(undeclaredQuery(doc, SPEC_PARAMS)).toEqual([]);
});
