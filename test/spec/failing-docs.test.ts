// Docs audit: claims of docs/ that Herald does not hold today. Each test FAILS until the bug is fixed.
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
  // docs/http-conventions.md:349 — "`herald_db_round_trips_total`, `herald_db_statements_total` | PostgreSQL only
  // (0 on SQLite)": the two counters are to be published at 0 on SQLite, so a rule or panel over them has a series.
  test("/metrics on SQLite publishes herald_db_round_trips_total and herald_db_statements_total at 0", async () => {
    h = await openTestApp({ env: { METRICS_PUBLIC: "1" } });
    if (h.ctx.store.dialect !== "sqlite") return;
    const text = await (await h.request("/metrics")).text();
    expect(text).toMatch(/\nherald_db_round_trips_total 0\n/);
    expect(text).toMatch(/\nherald_db_statements_total 0\n/);
  });
});
