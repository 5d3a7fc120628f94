import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { BROWSER_ACCEPT, columnOf, exportLinksOf, headingOf, pageAs, signedInCookie, tableOf, textById } from "../support/console";
import { createAdminToken } from "../support/partner";

// The console's preflight page: yesterday's snapshot taken by the real job, one field of it as it was before a
// change (the row a deploy would have left), and the page names that change against the snapshot; secrets show
// only as set/unset; the history names the day's changed field once today's snapshot is taken; every export link
// opens with the session (and the bearer token).

const PAGE = "/admin/console/preflight";
let h: TestApp;
afterEach(async () => {
  await h?.close();
});

describe("GET /admin/console/preflight", () => {
  test("the change since yesterday's snapshot, every guard now (no secret value), exports with the session", async () => {
    h = await openTestApp({ clock: new FakeClock("2026-04-01T09:00:00.000Z"), env: { HERALD_MASTER_KEY: "c0ffee".repeat(10) + "c0fe" } });
    const token = await createAdminToken(h, "ops");
    expect((await h.ctx.jobs.runNow("preflight-snapshot")).ok).toBe(true);
    const [field] = await h.ctx.store.all<{ section: string; field: string; value: string }>(
      "SELECT section, field, value FROM ops_preflight_snapshots WHERE value NOT IN ('set', 'unset') ORDER BY section, field LIMIT 1",
    );
    await h.ctx.store.run("UPDATE ops_preflight_snapshots SET value = 'before-<deploy>', fingerprint = 'aaaaaaaaaaaa' WHERE section = ? AND field = ?", [
      field!.section,
      field!.field,
    ]);
    h.clock.advance(86_400_000);
    expect((await h.request(PAGE, { headers: { accept: BROWSER_ACCEPT } })).headers.get("location")).toBe(`/admin/sign-in?next=${encodeURIComponent(PAGE)}`);
    const cookie = await signedInCookie(h, token);
    const { status, html } = await pageAs(h, PAGE, cookie);
    expect(status).toBe(200);
    expect(headingOf(html)).toBe("Preflight guards");
    expect(textById(html, "delta")).toContain("Changes since 2026-04-01");
    expect(textById(html, "delta-counts")).toStartWith("1 changed, 0 added, 0 removed");
    expect(tableOf(html, "change-rows").map((r) => r.cells)).toEqual([
      { Field: `${field!.section}.${field!.field}`, Change: "changed", Before: "before-<deploy>", Now: expect.any(String) },
    ]);
    // The master key is a guard: shown as set with a fingerprint, never its value.
    expect(html).not.toContain("c0ffee".repeat(10));
    expect(columnOf(html, "guard-rows", "Value")).toContain("secret set");
    // History: only yesterday has a snapshot, with none before it to compare with.
    expect(textById(html, "history-count")).toStartWith("1 of the last 30 days have a snapshot");
    expect(tableOf(html, "history-rows").map((r) => [r.cells.Day, r.cells.Changed])).toEqual([["2026-04-01", "no snapshot the day before"]]);
    const links = exportLinksOf(html);
    expect(links).toHaveLength(9);
    for (const link of links) expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
    const csv = await h.request("/admin/ops/preflight-guards/export.csv", { headers: { cookie } });
    expect(csv.headers.get("content-type")).toContain("text/csv");
    expect(csv.headers.get("content-disposition")).toContain("attachment");
    expect((await h.request("/admin/ops/preflight-guards/delta.csv")).status).toBe(403);
    expect((await h.request(PAGE, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);

    // Today's snapshot: the history shows today against yesterday, naming the field that changed.
    expect((await h.ctx.jobs.runNow("preflight-snapshot")).ok).toBe(true);
    const later = (await pageAs(h, PAGE, cookie)).html;
    expect(textById(later, "history-count")).toStartWith("2 of the last 30 days have a snapshot");
    expect(tableOf(later, "history-rows")[0]!.cells).toMatchObject({ Day: "2026-04-02", Changed: "1", Which: `${field!.section}.${field!.field}` });
    // A day without a snapshot says so.
    expect(textById((await pageAs(h, `${PAGE}?day_offset=5`, cookie)).html, "delta")).toContain("No snapshot was taken on 2026-03-28");
    expect((await h.request(`${PAGE}?day_offset=31`, { headers: { cookie } })).status).toBe(400);
  });
});
