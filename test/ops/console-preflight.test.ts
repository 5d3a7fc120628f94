import { afterEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { exportLinksOf, pageAs, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";

// The console's preflight page: yesterday's snapshot taken by the real job, one field of it as it was before a
// change (the row a deploy would have left), and the page names that change against the snapshot; secrets show
// only as set/unset; every export link opens with the session.

const PAGE = "/admin/console/preflight";
let h: TestApp;
afterEach(() => h?.close());

describe("GET /admin/console/preflight", () => {
  test("the change since yesterday's snapshot, every guard now (no secret value), exports with the session", async () => {
    h = createTestApp({ clock: new FakeClock("2026-04-01T09:00:00.000Z"), env: { HERALD_MASTER_KEY: "c0ffee".repeat(10) + "c0fe" } });
    const token = createAdminToken(h, "ops");
    expect((await h.ctx.jobs.runNow("preflight-snapshot")).ok).toBe(true);
    const [field] = h.ctx.db.sqlite
      .query("SELECT section, field, value FROM ops_preflight_snapshots WHERE value NOT IN ('set', 'unset') ORDER BY section, field LIMIT 1")
      .all() as Array<{
      section: string;
      field: string;
      value: string;
    }>;
    h.ctx.db.sqlite
      .query("UPDATE ops_preflight_snapshots SET value = 'before-<deploy>', fingerprint = 'aaaaaaaaaaaa' WHERE section = ? AND field = ?")
      .run(field!.section, field!.field);
    h.clock.advance(86_400_000);
    const cookie = await signedInCookie(h, token);
    const { status, html } = await pageAs(h, PAGE, cookie);
    expect(status).toBe(200);
    expect(html).toContain("Changes since 2026-04-01");
    expect(html).toMatch(/id="delta-counts">1 changed, 0 added, 0 removed/);
    expect(html).toContain(`<code>${field!.section}.${field!.field}</code>`);
    expect(html).toContain("before-&lt;deploy&gt;");
    // The master key is a guard: shown as set with a fingerprint, never its value.
    expect(html).not.toContain("c0ffee".repeat(10));
    for (const link of exportLinksOf(html)) expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
    // A day without a snapshot says so.
    expect((await pageAs(h, `${PAGE}?day_offset=5`, cookie)).html).toContain('id="delta-unavailable"');
    expect((await h.request(`${PAGE}?day_offset=31`, { headers: { cookie } })).status).toBe(400);
  });
});
