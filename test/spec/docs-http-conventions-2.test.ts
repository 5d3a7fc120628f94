// Docs audit (second batch): times, NUL and the details bound of docs/http-conventions.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/http-conventions.md (second batch)", () => {
  // docs/http-conventions.md:29 — real instants only; a zone where the route asks for a UTC instant
  test("times that do not exist, or have no zone, are refused", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    for (const [starts, ends] of [
      ["2026-02-30T02:00:00Z", "2026-03-01T03:00:00Z"],
      ["2026-01-01T24:00:00Z", "2026-01-02T03:00:00Z"],
      ["2026-01-01T02:00:00", "2026-01-01T03:00:00Z"],
    ]) {
      const r = await h.json("/admin/status/maintenance", jsonInit("POST", { starts_at: starts, ends_at: ends, title: "x" }, auth));
      expect([starts, r.status, r.body.error]).toEqual([starts, 400, "invalid_payload"]);
    }
    const offset = await h.json(
      "/admin/status/maintenance",
      jsonInit("POST", { starts_at: "2026-01-01T03:00:00+01:00", ends_at: "2026-01-01T04:00:00+01:00", title: "x" }, auth),
    );
    expect(offset.status).toBe(201);
    expect(offset.body.window.starts_at).toBe("2026-01-01T02:00:00.000Z");
    const q = await h.json("/admin/ops/incidents/draft.json?since=2026-02-30T00:00:00Z", { headers: auth });
    expect([q.status, q.body.error]).toEqual([400, "invalid_query"]);
    const nz = await h.json("/admin/ops/incidents?since=2025-12-31T00:00:00", { headers: auth });
    expect([nz.status, nz.body.error]).toEqual([400, "invalid_query"]);
  });

  // docs/http-conventions.md:30 — NUL in a body field or in a query value that reaches the database
  test("U+0000 is refused in bodies and queries", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const b = await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "e1", username: "user1", display_name: "a\u0000b" } });
    expect([b.status, b.body.error]).toEqual([400, "invalid_payload"]);
    const q = await signedJson(h, k, "GET", "/api/partner/users?q=a%00b");
    expect([q.status, q.body.error]).toEqual([400, "invalid_query"]);
    const pub = await h.json("/api/public/audio-share-links?track_url=/t&title=a%00b&use_short=1");
    expect([pub.status, pub.body.error]).toEqual([400, "invalid_query"]);
    expect(pub.body.details).toEqual([{ field: "query.title", problem: "contains U+0000 (NUL), which Herald cannot store" }]);
    expect(q.body.details).toEqual([{ field: "query.q", problem: "contains U+0000 (NUL), which Herald cannot store" }]);
  });

  // docs/http-conventions.md:25 — one details entry per field, at most 20
  test("details are bounded at 20", async () => {
    h = await openTestApp();
    const body: Record<string, number> = { message: 1, request_id: 2 } as any;
    for (let i = 0; i < 30; i++) body[`extra${i}`] = i;
    const r = await h.json("/api/canary/echo", jsonInit("POST", body));
    expect([r.status, r.body.error]).toEqual([400, "invalid_payload"]);
    expect(r.body.details.length).toBeGreaterThan(1);
    expect(r.body.details.length).toBeLessThanOrEqual(20);
  });
});
