// Docs audit: the /metrics series named in docs/monitoring.md and docs/http-conventions.md ("Metrics") against the
// real app's Prometheus text.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/monitoring.md and docs/http-conventions.md (Metrics)", () => {
  // docs/http-conventions.md:337-370 and docs/monitoring.md:74-81 — series names (process metrics are off under NODE_ENV=test);
  // admin token unless METRICS_PUBLIC=1
  test("/metrics names the documented series", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    await h.request("/api/public-stats");
    expect((await h.request("/metrics")).status).toBe(403);
    const text = await (await h.request("/metrics", { headers: auth })).text();
    for (const s of [
      "herald_http_requests_total",
      "herald_http_request_duration_seconds",
      "herald_group_commits",
      "herald_grouped_effects",
      "herald_http_resumed_total",
      "herald_alert_firing",
      "herald_job_stale_after_seconds",
      "herald_db_commits_total",
      "herald_db_transactions_total",
      "herald_db_pool_exhausted_total",
      "herald_event_loop_lag_seconds",
      "herald_event_loop_lag_max_seconds",
    ])
      expect([s, text.includes(`\n# TYPE ${s} `) || text.includes(`\n${s}{`) || text.includes(`\n${s} `)]).toEqual([s, true]);
    expect(text).not.toContain("nodejs_heap_space_size");
    // docs/monitoring.md:126 — the backup age is SQLite's (HeraldBackupMissing: "SQLite only")
    if (h.ctx.store.dialect === "sqlite") expect(text).toContain("herald_backup_age_seconds +Inf");
  });

  // docs/http-conventions.md:337 — METRICS_PUBLIC=1 opens it
  test("METRICS_PUBLIC=1", async () => {
    h = await openTestApp({ env: { METRICS_PUBLIC: "1" } });
    expect((await h.request("/metrics")).status).toBe(200);
  });
});
