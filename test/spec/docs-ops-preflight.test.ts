// Docs audit: docs/ops-preflight.md's delta, CSV, summary echoes and validators across a real configuration change
// (two instances on one database, a day apart).
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock, seededRng } from "../support/clock";
import { createAdminToken } from "../support/partner";

let h: TestApp;
let h2: TestApp | undefined;
afterEach(async () => {
  await h2?.close();
  h2 = undefined;
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/ops-preflight.md", () => {
  // docs/ops-preflight.md:103-200
  test("a changed WEBHOOK_TIMEOUT_SECONDS shows in delta, CSV and summary", async () => {
    const clock = new FakeClock("2026-04-06T10:00:00.000Z");
    h = await openTestApp({ clock, env: { WEBHOOK_TIMEOUT_SECONDS: "13" } });
    expect((await h.ctx.jobs.runNow("preflight-snapshot")).ok).toBe(true);
    clock.set("2026-04-07T10:00:00.000Z");
    const env: Record<string, string> = { WEBHOOK_TIMEOUT_SECONDS: "14" };
    if (h.ctx.store.dialect === "postgres") env.DATABASE_URL = h.ctx.config.database.url!;
    else env.HERALD_DB_PATH = h.ctx.config.dbPath;
    h2 = await openTestApp({ clock, rng: seededRng("second-instance"), env });
    const auth = { authorization: `Bearer ${await createAdminToken(h2)}` };
    const d = await h2.json("/admin/ops/preflight-guards/delta.json?section=responder", { headers: auth });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({
      current_day: "2026-04-07",
      compare_day: "2026-04-06",
      day_offset: 1,
      compare_available: true,
      compare_taken_at: "2026-04-06T10:00:00.000Z",
      section: "responder",
      fields: null,
      counts: { added: 0, removed: 0, changed: 1, unchanged: 9 },
    });
    expect(d.body.changes).toEqual([
      expect.objectContaining({ section: "responder", field: "WEBHOOK_TIMEOUT_SECONDS", change: "changed", before: "13", after: "14" }),
    ]);
    expect(d.body.changes[0].before_fingerprint).toMatch(/^[0-9a-f]{12}$/);
    const csv = await h2.request("/admin/ops/preflight-guards/delta.csv?section=responder", { headers: auth });
    expect(csv.headers.get("content-disposition")).toContain("herald-preflight-delta-2026-04-06.csv");
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toBe("section,field,change,before,after,before_fingerprint,after_fingerprint");
    expect(lines[1]).toStartWith("responder,WEBHOOK_TIMEOUT_SECONDS,changed,13,14,");
    const s = await h2.request("/admin/ops/preflight-guards/delta.summary.json?include_fields=1&include_fields_max=abc", { headers: auth });
    const sb = (await s.json()) as any;
    expect(sb.include_fields_max).toEqual({ requested: "abc", value: 200, clamped: false });
    expect(sb.include_fields_bytes_limit).toEqual({ requested: null, value: 0, clamped: false });
    expect(sb.counts).toEqual({ added: 0, removed: 0, changed: 1, unchanged: sb.counts.unchanged });
    expect(sb).toMatchObject({ changes_total: 1, changes_returned: 1, changes_truncated: false, truncated_by: null });
    expect(s.headers.get("cache-control")).toBe("private, no-cache");
    const etag = s.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const star = await h2.request("/admin/ops/preflight-guards/delta.summary.json?include_fields=1&include_fields_max=abc", {
      headers: { ...auth, "if-none-match": "*" },
    });
    expect(star.status).toBe(304);
    expect(star.headers.get("etag")).toBe(etag);
    const ts = (await h2.json("/admin/ops/preflight-guards/delta.summary.json?include_compare_timestamps=1", { headers: auth })).body;
    expect(ts.timestamps).toMatchObject({ compare_taken_at: "2026-04-06T10:00:00.000Z" });
    const tiny = (await h2.json("/admin/ops/preflight-guards/delta.summary.json?include_fields=1&include_fields_bytes_limit=1", { headers: auth })).body;
    expect(tiny).toMatchObject({ changes_returned: 0, changes_truncated: true, truncated_by: "bytes" });
    const none = await h2.json("/admin/ops/preflight-guards/delta.json?day_offset=2", { headers: auth });
    expect(none.body.compare_available).toBe(false);
    const hist = await h2.json("/admin/ops/preflight-guards/history.json", { headers: auth });
    expect(hist.status).toBe(200);
  });
});
