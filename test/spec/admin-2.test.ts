// Spec conformance (second audit): "Admin operations (operator-only)" — every admin route of the served OpenAPI
// document refuses anonymous callers and partner keys with 403 ("Admin endpoints are operator-only and answer 403
// to others"), and the listed parameters' value sets and bounds are enforced (400, never a 500).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedInit } from "../support/partner";
import { openMessengerApp } from "../messenger/support";

let h: TestApp;
let A: Record<string, string>;
beforeAll(async () => {
  h = await openMessengerApp();
  A = { authorization: `Bearer ${await createAdminToken(h)}` };
});
afterAll(async () => {
  await h?.close();
});

describe("closed by default", () => {
  test("every /admin and messenger-admin operation answers 403 without an operator token and to a signed partner key", async () => {
    const k = await createKey(h);
    const doc = (await h.json("/api/openapi.json")).body;
    // The sign-in page and form, and the console's redirect to it, are how an operator gets a session.
    const open = new Set(["get /admin", "get /admin/sign-in", "post /admin/sign-in"]);
    let checked = 0;
    for (const p of Object.keys(doc.paths)) {
      if (!p.startsWith("/admin") && !p.startsWith("/api/messenger/admin") && p !== "/api/messenger/ops/health") continue;
      for (const m of Object.keys(doc.paths[p])) {
        if (open.has(`${m} ${p}`) || !["get", "post", "put", "patch", "delete"].includes(m)) continue;
        const path = p.replace(/\{[^}]+\}/g, "1");
        const body = m === "get" || m === "delete" ? undefined : "{}";
        const anon = await h.request(path, { method: m.toUpperCase(), headers: { "content-type": "application/json" }, body });
        const partner = await h.request(path, signedInit(h, k, m.toUpperCase(), path, body ? { body: {} } : {}));
        expect(`${m} ${p} ${anon.status} ${partner.status}`).toBe(`${m} ${p} 403 403`);
        expect(((await anon.json()) as any).error).toBe("forbidden");
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50);
  });
});

describe("parameters", () => {
  const status = async (p: string) => (await h.request(p, { headers: A })).status;
  test("value sets of the listed parameters: 200 inside, 400 outside", async () => {
    const cases: Array<[string, number]> = [
      ["/admin/ops/403-digest?baseline_mode=same_weekday_hour_4w", 200],
      ["/admin/ops/403-digest?baseline_mode=bogus", 400],
      ["/admin/ops/readiness/403-noise/export.json?days=14&windows=7,30&compact=1&include_windows_meta=1", 200],
      ["/admin/ops/readiness/403-noise/export.json?include_windows_meta=2", 400],
      ["/admin/ops/readiness/403-noise/export.csv?mode=summary&include_points=1", 200],
      ["/admin/ops/incidents/draft.json?template=minimal&severity=warn", 200],
      ["/admin/ops/incidents/draft.txt?template=v2", 400],
      ["/admin/ops/incidents/draft.json?since=notadate", 400],
      ["/admin/ops/preflight-guards/delta.json?section=synthetic&fields_preset=synthetic_thresholds", 200],
      ["/admin/ops/preflight-guards/delta.json?section=bogus", 400],
      ["/admin/ops/alerts-monitor/export-usage.json?days=14&source=token", 200],
      ["/admin/ops/alerts-monitor/export-usage.csv?source=bogus", 400],
      ["/admin/ops/link-inbox/events/export.json?status_code_family=timeout&skip_reason=cooldown&window_preset=last_outage", 200],
      ["/admin/ops/link-inbox/events/export.json?status_code_family=6xx", 400],
      ["/admin/ops/link-inbox/events/export.json?at_from=bad", 400],
      ["/admin/ops/link-inbox/events/export-download.csv?download_token=nope", 404],
      ["/admin/ops/readiness/synthetic-zero-history.csv?limit=0", 400],
      ["/admin/ops/preflight-guards/history.json?days=0", 400],
      ["/admin/ops/preflight-guards/anomalies.json?zscore_threshold=abc", 400],
      ["/api/messenger/admin/games/overview?preset=last_7d&games=spin_wheel", 200],
      ["/api/messenger/admin/games/overview?preset=bogus", 400],
      ["/api/messenger/admin/games/overview/export?format=xml", 400],
      ["/api/messenger/admin/games/user-profiles?limit=0", 400],
      ["/api/messenger/admin/games/promos?include_disabled=maybe", 400],
    ];
    for (const [p, want] of cases) expect(`${p} ${await status(p)}`).toBe(`${p} ${want}`);
  });

  test("a mission PATCH without X-Expected-Revision is 428; the admin replay of an unknown event is 404", async () => {
    const r = await h.request("/api/messenger/admin/missions/m1", jsonInit("PATCH", { title: "N" }, A));
    expect(r.status).toBe(428);
    const rep = await h.request("/admin/partners/webhook-events/99999/replay", jsonInit("POST", {}, A));
    expect(rep.status).toBe(404);
  });
});
