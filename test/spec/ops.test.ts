// Spec conformance: admin operations parameters of the service interface ("Admin operations", "Limits").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";

let h: TestApp;
let A: Record<string, string>;
beforeAll(async () => {
  h = await openTestApp();
  A = { authorization: `Bearer ${await createAdminToken(h)}` };
});
afterAll(async () => {
  await h?.close();
});
const get = (p: string, headers: Record<string, string> = {}) => h.json(p, { headers: { ...A, ...headers } });
const S = "/admin/ops/preflight-guards/delta.summary.json";

describe("delta summary clamps", () => {
  test("include_fields_max: integer clamped to 10..500, default 200; a non-numeric value → 200 with clamped=false", async () => {
    const cases: Array<[string, number, boolean]> = [
      ["", 200, false],
      ["?include_fields_max=abc", 200, false],
      ["?include_fields_max=5", 10, true],
      ["?include_fields_max=10", 10, false],
      ["?include_fields_max=321", 321, false],
      ["?include_fields_max=500", 500, false],
      ["?include_fields_max=1000", 500, true],
    ];
    for (const [q, value, clamped] of cases) {
      const r = await get(S + q);
      expect(r.status).toBe(200);
      expect(r.body.include_fields_max).toMatchObject({ value, clamped });
    }
  });

  test("include_fields_bytes_limit: clamped at 250000; 0 or unset disables it", async () => {
    expect((await get(`${S}?include_fields_bytes_limit=999999`)).body.include_fields_bytes_limit).toMatchObject({ value: 250000, clamped: true });
    expect((await get(`${S}?include_fields_bytes_limit=250000`)).body.include_fields_bytes_limit).toMatchObject({ value: 250000, clamped: false });
    expect((await get(`${S}?include_fields_bytes_limit=0`)).body.include_fields_bytes_limit.value).toBe(0);
    expect((await get(S)).body.include_fields_bytes_limit.value).toBe(0);
  });

  test("ETag, Last-Modified and 304 via If-None-Match and If-Modified-Since (also the digest read-model)", async () => {
    for (const p of [S, "/admin/ops/digest/resolved-verification.json"]) {
      const r = await get(p);
      const etag = r.headers.get("etag")!;
      const lm = r.headers.get("last-modified")!;
      expect(etag).toBeTruthy();
      expect(lm).toBeTruthy();
      expect(r.headers.get("cache-control")).toBeTruthy();
      expect((await h.request(p, { headers: { ...A, "if-none-match": etag } })).status).toBe(304);
      expect((await h.request(p, { headers: { ...A, "if-modified-since": lm } })).status).toBe(304);
    }
  });
});

describe("parameters and defaults", () => {
  test("preflight delta day_offset is 1..30", async () => {
    expect((await get("/admin/ops/preflight-guards/delta.json?day_offset=1")).status).toBe(200);
    expect((await get("/admin/ops/preflight-guards/delta.json?day_offset=30")).status).toBe(200);
    expect((await get("/admin/ops/preflight-guards/delta.json?day_offset=0")).status).toBe(400);
    expect((await get("/admin/ops/preflight-guards/delta.json?day_offset=31")).status).toBe(400);
    for (const section of ["all", "responder", "synthetic", "digest", "token", "artifact"]) {
      expect((await get(`/admin/ops/preflight-guards/delta.json?section=${section}`)).status).toBe(200);
    }
    for (const preset of ["docs_mode", "token_secret", "synthetic_thresholds"]) {
      expect((await get(`/admin/ops/preflight-guards/delta.json?fields_preset=${preset}`)).status).toBe(200);
    }
  });

  test("detector defaults: days 30, baseline_days 7, min_baseline_points 3, zscore_threshold 2.0, min_change_count 2; history days 30", async () => {
    const a = (await get("/admin/ops/preflight-guards/anomalies.json")).body;
    expect(a.params).toEqual({ days: 30, baseline_days: 7, min_baseline_points: 3, zscore_threshold: 2, min_change_count: 2 });
    expect((await get("/admin/ops/preflight-guards/history.json")).body.days).toBe(30);
  });

  test("403-noise export: days 7/14/30, windows default 7,14,30", async () => {
    const d = (await get("/admin/ops/readiness/403-noise/export.json")).body;
    expect(d.windows.map((w: any) => w.window_days)).toEqual([7, 14, 30]);
    for (const days of [7, 14, 30])
      expect((await get(`/admin/ops/readiness/403-noise/export.json?days=${days}&compact=1&include_windows_meta=1`)).status).toBe(200);
    expect((await get("/admin/ops/readiness/403-noise/export.json?days=10")).status).toBe(400);
    expect((await get("/admin/ops/readiness/403-noise/export.json?windows=7,14")).body.windows.map((w: any) => w.window_days)).toEqual([7, 14]);
    expect((await h.request("/admin/ops/readiness/403-noise/export.csv?mode=summary&include_points=1", { headers: A })).status).toBe(200);
  });

  test("403 digest baseline modes; incident draft templates v1 and minimal", async () => {
    for (const m of ["rolling_24h", "same_hour_yesterday", "same_weekday_hour_4w"]) {
      expect((await get(`/admin/ops/403-digest?baseline_mode=${m}&new_path_lookback_days=3&spike_consecutive_hours=2`)).status).toBe(200);
    }
    expect((await get("/admin/ops/403-digest?baseline_mode=bogus")).status).toBe(400);
    expect((await get("/admin/ops/incidents/draft.json?template=minimal")).body.template).toBe("minimal");
    expect((await get("/admin/ops/incidents/draft.json")).body.template).toBe("v1");
    for (const ext of ["md", "txt"]) expect((await h.request(`/admin/ops/incidents/draft.${ext}`, { headers: A })).status).toBe(200);
  });

  test("usage charts send X-Usage-Legend; link-inbox checksum=1 sends X-Export-SHA256", async () => {
    for (const ext of ["png", "svg"]) {
      const r = await h.request(`/admin/ops/alerts-monitor/export-usage.${ext}`, { headers: A });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-usage-legend")).toBeTruthy();
    }
    for (const ext of ["json", "csv"]) {
      const r = await h.request(`/admin/ops/link-inbox/events/export.${ext}?checksum=1`, { headers: A });
      const bytes = new Uint8Array(await r.arrayBuffer());
      expect(r.headers.get("x-export-sha256")).toBe(new Bun.CryptoHasher("sha256").update(bytes).digest("hex"));
    }
  });

  test("admin routes answer 403 without an operator token, and to a partner key", async () => {
    const k = await createKey(h);
    for (const p of ["/admin/ops/readiness", S, "/admin/ops/link-inbox/events/export.json"]) {
      expect((await h.request(p)).status).toBe(403);
      expect((await signedJson(h, k, "GET", p)).status).toBe(403);
    }
  });
});
