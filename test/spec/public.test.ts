// Spec conformance: public status, proofs and conventions against the service interface.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const PROOFS = [
  "holder-cache-freshness",
  "holder-growth-freshness",
  "public-stats-cache-freshness",
  "token-distribution-freshness",
  "token-mint-authorities",
  "token-snapshot-jobs-rollup",
  "transaction-sync-freshness",
];

describe("public status", () => {
  test("snapshot, its alias, trend, uptime, incidents and policy carry the spec's fields", async () => {
    h = await openTestApp();
    const s = (await h.json("/api/public/system-status")).body;
    expect(["ok", "warn", "bad"]).toContain(s.overall);
    for (const c of Object.values<any>(s.checks)) expect(["ok", "warn", "bad"]).toContain(c.status);
    expect(Object.keys(s.checks.reliability)).toEqual(
      expect.arrayContaining(["window_days", "job_count", "avg_success_streak", "avg_mttr_minutes", "jobs_with_mttr_samples", "unresolved_failure_jobs"]),
    );
    expect(Object.keys(s.checks.mint_authority)).toEqual(
      expect.arrayContaining(["review_status", "expected_review_status", "expectation_configured", "mismatch"]),
    );
    expect(Array.isArray(s.checks.jobs.jobs)).toBe(true);
    expect((await h.json("/status.json")).body.overall).toBe(s.overall);

    const trend = (await h.json("/api/public/system-status/trend?limit=5")).body;
    expect(trend.limit).toBe(5);
    expect(Object.keys(trend.counts).sort()).toEqual(["bad", "ok", "warn"]);
    const up = (await h.json("/api/public/system-status/uptime?hours=24")).body;
    expect(up.selected_hours).toBe(24);
    expect("degraded_pct" in up.overall).toBe(true);
    for (const c of Object.values<any>(up.checks)) expect("degraded_pct" in c).toBe(true);
    const inc = (await h.json("/api/public/system-status/incidents?hours=24&limit=5")).body;
    expect([inc.hours, inc.limit, Array.isArray(inc.incidents)]).toEqual([24, 5, true]);
    const pol = (await h.json("/api/public/system-status/policy")).body.policy;
    expect(Object.keys(pol)).toEqual(
      expect.arrayContaining(["source", "loaded", "version", "exclude_maintenance_default", "audit_anomalies_warn_degrades", "checks"]),
    );
  });

  test("public-stats: stats and cache blocks; latest transactions list shape", async () => {
    h = await openTestApp();
    const ps = (await h.json("/api/public-stats")).body;
    expect(Object.keys(ps.stats)).toEqual(
      expect.arrayContaining([
        "total_supply",
        "circulating_supply",
        "holders",
        "holders_cached",
        "holders_onchain_lower_bound",
        "holders_source",
        "volume_24h",
      ]),
    );
    expect(Object.keys(ps.cache)).toEqual(
      expect.arrayContaining([
        "source",
        "available",
        "enabled",
        "reason",
        "cached_at_utc",
        "age_hours",
        "max_age_hours",
        "source_error",
        "proof_url",
        "proof_csv_url",
        "proof_page_url",
      ]),
    );
    const tx = (await h.json("/api/transactions/latest?limit=10")).body;
    expect(tx.query).toMatchObject({ limit: 10, offset: 0, cursor: null });
    expect(Object.keys(tx.pagination).sort()).toEqual(["has_more", "next_cursor", "next_offset"]);
  });

  test("every freshness proof has its fields, a trust_context and a .csv variant", async () => {
    h = await openTestApp();
    for (const p of PROOFS) {
      const j = await h.json(`/api/public/${p}.json`);
      expect(j.status).toBe(200);
      expect(j.body.generated_at_utc).toMatch(/Z$/);
      expect("status" in j.body || "freshness_status" in j.body).toBe(true);
      expect("age_hours" in j.body).toBe(true);
      expect("stale_after_hours" in j.body || "max_age_hours" in j.body).toBe(true);
      expect(typeof j.body.trust_context).toBe("object");
      const csv = await h.request(`/api/public/${p}.csv`);
      expect(csv.status).toBe(200);
      expect(csv.headers.get("content-type")).toContain("text/csv");
    }
  });
});

describe("conventions", () => {
  test("include_meta (1, true, bare flag) adds meta {request_id = X-Request-ID, generated_at_utc}; 0 does not", async () => {
    h = await openTestApp();
    for (const q of ["include_meta=1", "include_meta=true", "include_meta"]) {
      const r = await h.json(`/api/public/system-status/policy?${q}`);
      expect(r.body.meta.request_id).toBe(r.headers.get("x-request-id")!);
      expect(r.body.meta.generated_at_utc).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
    }
    expect((await h.json("/api/public/system-status/policy?include_meta=0")).body.meta).toBeUndefined();
  });

  test("public endpoints: 90 per minute, X-RateLimit-* and Retry-After on the 429", async () => {
    h = await openTestApp();
    let last: { status: number; body: Record<string, any>; headers: Headers } | undefined;
    for (let i = 0; i < 91; i++) last = await h.json("/api/public/system-status/policy");
    expect([last!.status, last!.body.error]).toEqual([429, "rate_limited"]);
    expect(last!.headers.get("x-ratelimit-limit")).toBe("90");
    expect(last!.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(last!.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("a body over the guardrail is 413 payload_too_large, with or without Content-Length", async () => {
    h = await openTestApp();
    const big = JSON.stringify({ message: "x".repeat(1_100_000), request_id: "r" });
    const r = await h.json("/api/canary/echo", jsonInit("POST", big));
    expect([r.status, r.body.success, r.body.error]).toEqual([413, false, "payload_too_large"]);
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < bytes.length; i += 65536) c.enqueue(bytes.slice(i, i + 65536));
        c.close();
      },
    });
    const chunked = await h.request("/api/canary/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
  });

  test("canary echo validates strictly; trust.json answers 304 on its ETag", async () => {
    h = await openTestApp();
    const ok = await h.json("/api/canary/echo", jsonInit("POST", { message: "hi", request_id: "r1" }));
    expect(ok.body).toMatchObject({ success: true, message: "hi", request_id: "r1" });
    const extra = await h.json("/api/canary/echo", jsonInit("POST", { message: "hi", request_id: "r1", x: 1 }));
    expect([extra.status, extra.body.success]).toEqual([400, false]);
    const t = await h.request("/trust.json");
    expect((await h.request("/trust.json", { headers: { "if-none-match": t.headers.get("etag")! } })).status).toBe(304);
  });

  test("versioning artifacts: both OpenAPI documents, the deprecation calendar in JSON, RSS and the playbooks", async () => {
    h = await openTestApp();
    for (const p of ["/api/openapi.yaml", "/api/openapi-transparency.yaml", "/developers/deprecations.rss", "/developers/deprecations-playbook.md"]) {
      expect((await h.request(p)).status).toBe(200);
    }
    const dep = (await h.json("/developers/deprecations.json")).body;
    expect(dep.policy).toMatchObject({ minimum_notice_days: 30, reminder_days_before_sunset: [7, 1], webhook_schema_notice_days: [30, 14, 7, 1] });
    expect(dep.sunsets_scheduled).toBe(false);
    expect((await h.json("/developers/deprecations-playbook.json")).status).toBe(200);
  });
});
