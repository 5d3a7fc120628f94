// The docs audit's two findings, each failing before its fix: the messenger report window's "both given" refusal
// without details, and http-conventions.md promising 0 for two PostgreSQL counters SQLite does not publish.
import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { openMessengerApp } from "../messenger/support";
import { openTestApp } from "../support/app";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/http-conventions.md", () => {
  // docs/http-conventions.md:90-93 ("A route's own checks after the schema's … answer in the same shape:
  // invalid_query, details: [{ field, problem }], message `Invalid request parameters: query.…`") and
  // docs/messenger-admin-analytics.md:17-18 ("Both at once is 400 invalid_query naming query.days and query.preset").
  test("messenger admin windows: days together with preset answers details naming both parameters", async () => {
    h = await openMessengerApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    for (const path of ["/api/messenger/admin/games/overview", "/api/messenger/admin/missions/comparison"]) {
      const r = await h.json(`${path}?days=7&preset=today`, { headers: auth });
      expect([path, r.status, r.body.error]).toEqual([path, 400, "invalid_query"]);
      expect([path, (r.body.details ?? []).map((d: { field: string }) => d.field).sort()]).toEqual([path, ["query.days", "query.preset"]]);
      expect(r.body.message).toStartWith("Invalid request parameters: ");
    }
  });
});

describe("docs/http-conventions.md (Metrics)", () => {
  // docs/http-conventions.md, Metrics: "`herald_db_round_trips_total`, `herald_db_statements_total` | PostgreSQL only
  // (not published on SQLite …)": a dashboard finds the series on PostgreSQL and none on SQLite (bench/credit.ts
  // prints n/a for them there).
  test("/metrics publishes herald_db_round_trips_total and herald_db_statements_total on PostgreSQL only", async () => {
    h = await openTestApp({ env: { METRICS_PUBLIC: "1" } });
    const text = await (await h.request("/metrics")).text();
    const published = ["herald_db_round_trips_total", "herald_db_statements_total"].map((name) => new RegExp(`\\n${name} \\d+\\n`).test(text));
    expect(published).toEqual(h.ctx.store.dialect === "postgres" ? [true, true] : [false, false]);
  });
});
