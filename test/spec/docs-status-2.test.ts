// Docs audit (second batch): docs/status.md's policy file, automatic incidents and uptime answer against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  await h?.close();
  h = undefined as unknown as TestApp;
});
const DEFAULTS_YAML = `version: ops-2026-01
exclude_maintenance_default: true
audit_anomalies_warn_degrades: false
checks:
  database:
    migrations_behind: bad
  reliability:
    window_days: 7
    unresolved_failure_jobs_warn: 1
    unresolved_failure_jobs_bad: 3
    avg_mttr_minutes_warn: 120
  jobs:
    stale_factor: 3
    min_stale_minutes: 5
    warn_at: 1
    bad_at: 3
  chain_rpc:
    window_minutes: 15
    min_calls: 5
    error_rate_warn_pct: 10
    error_rate_bad_pct: 50
  freshness:
    fresh: ok
    stale: bad
    missing: warn
    not_configured: ok
  mint_authority:
    mismatch: bad
    expectation_missing: ok
  webhooks:
    backlog_warn: 1000
    backlog_bad: 10000
    dead_letters_warn: 0
    dead_letters_bad: 0
  request_errors:
    window_minutes: 15
    min_requests: 20
    error_rate_warn_pct: 5
    error_rate_bad_pct: 25
  uptime:
    max_sample_gap_seconds: 180
`;

describe("docs/status.md (second batch)", () => {
  // docs/status.md:140-184 — the documented file loads; the defaults are the file's values except freshness.stale (warn)
  test("the documented policy file loads, and the built-in default matches it", async () => {
    h = await openTestApp();
    const def = (await h.json("/api/public/system-status/policy")).body.policy;
    expect(def.loaded).toBe(false);
    expect(def.exclude_maintenance_default).toBe(true);
    expect(def.audit_anomalies_warn_degrades).toBe(false);
    expect(def.checks.freshness).toEqual({ fresh: "ok", stale: "warn", missing: "warn", not_configured: "ok" });
    expect(def.checks.request_errors).toMatchObject({ window_minutes: 15, min_requests: 20, error_rate_warn_pct: 5, error_rate_bad_pct: 25 });
    expect(def.checks.jobs).toMatchObject({ stale_factor: 3, min_stale_minutes: 5, warn_at: 1, bad_at: 3 });
    expect(def.checks.webhooks).toMatchObject({ backlog_warn: 1000, backlog_bad: 10000, dead_letters_warn: 0, dead_letters_bad: 0 });
    expect(def.checks.uptime).toMatchObject({ max_sample_gap_seconds: 180 });
    expect(def.checks.reliability).toMatchObject({
      window_days: 7,
      unresolved_failure_jobs_warn: 1,
      unresolved_failure_jobs_bad: 3,
      avg_mttr_minutes_warn: 120,
    });
    expect(def.checks.chain_rpc).toMatchObject({ window_minutes: 15, min_calls: 5, error_rate_warn_pct: 10, error_rate_bad_pct: 50 });
    expect(def.checks.mint_authority).toMatchObject({ mismatch: "bad", expectation_missing: "ok" });
    expect(def.checks.database).toMatchObject({ migrations_behind: "bad" });
    await h.close();
    const dir = mkdtempSync(join(tmpdir(), "policy-"));
    dirs.push(dir);
    writeFileSync(join(dir, "status-policy.yaml"), DEFAULTS_YAML);
    writeFileSync(join(dir, "bad-policy.yaml"), `${DEFAULTS_YAML}typo_key: 1\n`);
    h = await openTestApp({ env: { STATUS_POLICY_PATH: join(dir, "status-policy.yaml") } });
    const p = (await h.json("/api/public/system-status/policy")).body.policy;
    expect(p).toMatchObject({ loaded: true, version: "ops-2026-01" });
    expect(p.checks.freshness.stale).toBe("bad");
    expect((await h.json("/api/public/system-status")).body.policy_version).toBe("ops-2026-01");
    await h.close();
    h = await openTestApp({ env: { STATUS_POLICY_PATH: join(dir, "bad-policy.yaml") } });
    const bad = (await h.json("/api/public/system-status/policy")).body.policy;
    expect(bad.loaded).toBe(false);
    expect(String(bad.error)).toContain("bad-policy.yaml");
    expect(String(bad.error)).not.toContain(dir);
  });

  // docs/status.md:204-221 — a degraded snapshot opens an automatic incident; an operator update to it is 409; ok closes it
  test("automatic incidents follow the snapshots", async () => {
    const dir = mkdtempSync(join(tmpdir(), "policy-"));
    dirs.push(dir);
    const file = join(dir, "p.yaml");
    writeFileSync(file, "checks:\n  freshness:\n    not_configured: warn\n");
    h = await openTestApp({ env: { STATUS_POLICY_PATH: file } });
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    await h.ctx.jobs.runNow("status-snapshot");
    const s = (await h.json("/api/public/system-status")).body;
    expect(s.overall).toBe("warn");
    expect(s.open_incident).toMatchObject({ source: "automatic", status: "open", severity: "warn", current_severity: "warn", state: null, ended_at: null });
    expect(s.open_incident.title).toStartWith("Degraded service: ");
    expect(s.open_incident.components).toEqual(["chain_data"]);
    const id = s.open_incident.id;
    const upd = await h.json(`/admin/status/incidents/${id}/updates`, jsonInit("POST", { state: "identified", message: "x" }, auth));
    expect([upd.status, upd.body.error]).toEqual([409, "conflict"]);
    writeFileSync(file, "checks:\n  freshness:\n    not_configured: ok\n");
    h.clock.advanceSeconds(60);
    await h.ctx.jobs.runNow("status-snapshot");
    const one = (await h.json(`/api/public/system-status/incidents/${id}`)).body;
    const inc = one.incident ?? one;
    expect(inc).toMatchObject({ status: "resolved", current_severity: null, ended_at: "2026-01-01T00:01:00.000Z", duration_minutes: 1 });
    const feed = (await (await h.request("/status/feed.json")).json()) as any;
    expect(feed.items[0].id).toBe(`herald-incident-${id}`);
    expect(feed.items[0].title).toContain("[Resolved]");
    expect(feed.items[0]._herald).toMatchObject({ source: "automatic", status: "resolved" });
    const up = (await h.json("/api/public/system-status/uptime?hours=1")).body;
    expect(up).toMatchObject({ selected_hours: 1, observed_since: "2026-01-01T00:00:00.000Z", partial_window: true });
    expect(Object.keys(up.overall)).toEqual(expect.arrayContaining(["observed_minutes", "degraded_minutes", "degraded_pct", "uptime_pct"]));
    expect(up.overall.degraded_pct + up.overall.uptime_pct).toBeCloseTo(100, 6);
    expect(up.components).toBeDefined();
  });
});
