import { afterEach, describe, expect, test } from "bun:test";
import { PNG } from "pngjs";
import type { RequestLogEntry } from "../../src/http/request-log/log";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import {
  BROWSER_ACCEPT,
  columnOf,
  csrfOf,
  currentNavOf,
  doneLineOf,
  errorLineOf,
  exportLinksOf,
  formPost,
  hrefOf,
  pageAs,
  signedInCookie,
  tableOf,
  textById,
} from "../support/console";
import { createAdminToken } from "../support/partner";

// The console's 403 digest page over real traffic written through the request log: the spike is a finding
// with its reason and its suppression state, the chart is the digest's PNG (opened with the session), every
// digest export downloads with the session cookie (export.csv as a CSV attachment), a rule added by the form
// hides the scanner and is audited, ending it brings the finding back; forms refuse a missing or wrong CSRF token.

const NOW = "2026-02-01T12:30:00.000Z";
const PAGE = "/admin/console/403-digest";
let h: TestApp;
let token = "";
afterEach(async () => {
  await h?.close();
});

function entries(at: string, route: string, status: number, key: string | null, ip: string, n: number): RequestLogEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    at,
    method: "GET",
    route,
    status,
    latencyUs: 100,
    partnerKeyId: key,
    clientIp: ip,
    requestId: `r_${at}_${i}`,
    errorCode: null,
  }));
}

async function seed() {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  token = await createAdminToken(h, "ops");
  const nowHour = Date.parse("2026-02-01T12:00:00.000Z");
  const at = (back: number) => new Date(nowHour - back * 3_600_000 + 300_000).toISOString();
  for (let back = 48; back >= 0; back--) {
    for (const r of [
      ...entries(at(back), "/api/partner/users/:id", 403, "hk_a", "198.51.100.7", 1),
      ...entries(at(back), "/api/status", 200, null, "192.0.2.8", 4),
    ])
      h.ctx.requestLog.record(r);
  }
  // The scanner <script>: 40 403s on an admin path from one /24 two hours ago and one hour ago.
  for (const back of [2, 1]) for (const r of entries(at(back), "/admin/backups", 403, null, "100.64.5.77", 40)) h.ctx.requestLog.record(r);
  await h.ctx.requestLog.flush();
}

describe("GET /admin/console/403-digest", () => {
  test("findings with their reasons, the chart, the exports — all with the session; 303 without it", async () => {
    await seed();
    expect((await h.request(PAGE, { headers: { accept: BROWSER_ACCEPT } })).headers.get("location")).toBe(`/admin/sign-in?next=${encodeURIComponent(PAGE)}`);
    const cookie = await signedInCookie(h, token);
    const { status, html } = await pageAs(h, PAGE, cookie);
    expect(status).toBe(200);
    expect(currentNavOf(html)).toBe(PAGE);
    expect(textById(html, "findings-total")).toMatch(/^[1-9]/);
    expect(columnOf(html, "finding-rows", "Value")).toEqual(expect.arrayContaining(["/admin/backups", "100.64.5.0/24"]));
    // Each finding says whether a rule hides it: none yet.
    expect(new Set(columnOf(html, "finding-rows", "Suppression"))).toEqual(new Set(["not suppressed"]));
    expect(textById(html, "suppressed-rows-none")).toBe("None.");
    // Herald holds 49 hours of data: a new path says so instead of claiming the 14-day lookback (JSON and page).
    const digest = await h.json("/admin/ops/403-digest", { headers: { cookie } });
    expect(digest.body.coverage.lookback_complete).toBe(false);
    const newPath = digest.body.findings.find((f: { kind: string; value: string }) => f.kind === "new_path" && f.value === "/admin/backups");
    expect(newPath.why).toContain("none before it in the history Herald holds (since 2026-01-30T12, less than the 14-day lookback)");
    expect(newPath.why).not.toContain("none in the 14 days");
    expect(html).toContain("less than the 14-day lookback");
    expect(html).toContain('id="coverage"');
    const links = exportLinksOf(html);
    expect(links.length).toBeGreaterThanOrEqual(8);
    for (const link of links) expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
    const img = /id="trend-chart" src="([^"]+)"/.exec(html)![1]!.replaceAll("&amp;", "&");
    const png = await h.request(img, { headers: { cookie } });
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(PNG.sync.read(Buffer.from(await png.arrayBuffer())).width).toBe(960);
    // The bearer token opens it too.
    expect((await h.request(PAGE, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    // The window form's bounds are the schema's: a bad hours is the 400 envelope.
    expect((await h.request(`${PAGE}?hours=999`, { headers: { cookie } })).status).toBe(400);
  });

  test("export.csv and every other digest GET export download with the session cookie (and still with the bearer token)", async () => {
    await seed();
    const cookie = await signedInCookie(h, token);
    const csv = await h.request("/admin/ops/403-digest/export.csv?hours=24", { headers: { cookie } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename="[^"]+\.csv"$/);
    const lines = (await csv.text()).trim().split(/\r?\n/);
    expect(lines[0]).toBe("section,hour,dimension,value,kind,first_hour,last_hour,hours,requests,forbidden,suppressed,observed,baseline,ratio,rule_id,why");
    expect(lines.some((l) => l.startsWith("finding,") && l.includes("/admin/backups"))).toBe(true);
    for (const path of [
      "/admin/ops/403-digest",
      "/admin/ops/403-digest/export.json",
      "/admin/ops/403-digest/probe-trend.png",
      "/admin/ops/403-digest/suppressions",
      "/admin/ops/403-digest/suppressions/export.json",
    ])
      expect({ path, status: (await h.request(path, { headers: { cookie } })).status }).toEqual({ path, status: 200 });
    // Without credentials an export is refused (403, not a sign-in redirect: it is not a page); the bearer token still works.
    expect((await h.request("/admin/ops/403-digest/export.csv")).status).toBe(403);
    expect((await h.request("/admin/ops/403-digest/export.csv", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    // The rule changes stay bearer-only on the JSON API: the session cannot POST there (the page has its own CSRF forms).
    const viaSession = await h.request("/admin/ops/403-digest/suppressions", {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ client_prefix: "100.64.5.0/24", reason: "x", owner: "x", expires_at: "2026-02-03T00:00:00Z" }),
    });
    expect(viaSession.status).toBe(403);
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM ops_403_suppressions")).toEqual({ n: 0 });
  });

  test("a rule added by the form hides the scanner (audited); ending it brings the finding back; CSRF is required", async () => {
    await seed();
    const cookie = await signedInCookie(h, token);
    const csrf = csrfOf((await pageAs(h, PAGE, cookie)).html);
    const fields = { client_prefix: "100.64.5.0/24", reason: "known scanner <script>alert(1)</script>", owner: "", expires_in_days: "7" };
    expect((await formPost(h, `${PAGE}/rules`, cookie, fields)).status).toBe(403);
    expect((await formPost(h, `${PAGE}/rules`, cookie, { ...fields, csrf_token: "x".repeat(43) })).status).toBe(403);
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM ops_403_suppressions")).toEqual({ n: 0 });

    const added = await formPost(h, `${PAGE}/rules`, cookie, { ...fields, csrf_token: csrf });
    expect(added.status).toBe(303);
    expect(added.headers.get("location")).toBe(`${PAGE}?done=added&rule=1`);
    const after = await pageAs(h, added.headers.get("location")!, cookie);
    expect(doneLineOf(after.html)).toBe("Rule #1 added.");
    expect(after.html).toContain("known scanner &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(after.html).not.toContain("<script>alert(1)");
    // The scanner's findings are now listed as hidden, each naming its rule, the rule's state and reason.
    const hidden = tableOf(after.html, "suppressed-rows").find((r) => r.cells.Value === "100.64.5.0/24")!;
    expect(hidden.cells.Suppression).toStartWith("hidden by rule #1 (active until 2026-02-08 12:30:00 UTC: known scanner <script>");
    expect(hrefOf(hidden.html, "hidden by rule #1")).toBe("#rule-1");
    expect(tableOf(after.html, "rule-rows").map((r) => r.id)).toEqual(["rule-1"]);
    // The effect through the JSON API: the rule is there, active, made by the signed-in operator.
    const listed = await h.json("/admin/ops/403-digest/suppressions", { headers: { authorization: `Bearer ${token}` } });
    expect(listed.body.rules).toHaveLength(1);
    expect(listed.body.rules[0]).toMatchObject({ id: 1, state: "active", client_prefix: "100.64.5.0/24", owner: expect.stringContaining("ops") });
    const digest = await h.json("/admin/ops/403-digest", { headers: { cookie } });
    expect(digest.body.suppressed.every((f: { rule_id: number }) => f.rule_id === 1)).toBe(true);
    expect(digest.body.findings.some((f: { value: string }) => f.value === "100.64.5.0/24")).toBe(false);
    const audit = await h.ctx.store.all<{ actor: string; action: string }>(
      "SELECT actor, action FROM admin_audit WHERE action LIKE '%suppression%' ORDER BY id",
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor).toContain("ops");

    // Ending needs the token too.
    expect((await formPost(h, `${PAGE}/rules/1/end`, cookie, {})).status).toBe(403);
    const ended = await formPost(h, `${PAGE}/rules/1/end`, cookie, { csrf_token: csrf });
    expect(ended.headers.get("location")).toBe(`${PAGE}?done=ended&rule=1`);
    const back = await pageAs(h, ended.headers.get("location")!, cookie);
    expect(doneLineOf(back.html)).toBe("Rule #1 ended now.");
    expect(textById(back.html, "suppressed-rows-none")).toBe("None.");
    expect(columnOf(back.html, "finding-rows", "Value")).toContain("100.64.5.0/24");
    expect((await h.json("/admin/ops/403-digest/suppressions?state=revoked", { headers: { cookie } })).body.count).toBe(1);
    const again = await formPost(h, `${PAGE}/rules/1/end`, cookie, { csrf_token: csrf });
    expect(again.status).toBe(409);
    expect(again.headers.get("content-type")).toContain("text/html");
    expect(errorLineOf(await again.text())).not.toBeNull();
    expect((await formPost(h, `${PAGE}/rules/99/end`, cookie, { csrf_token: csrf })).status).toBe(404);
    // A rule without any matcher, and days out of range: the page with the error, nothing written.
    const bad = await formPost(h, `${PAGE}/rules`, cookie, { csrf_token: csrf, reason: "x", expires_in_days: "7" });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("text/html");
    expect(errorLineOf(await bad.text())).toMatch(/^Nothing was changed: .*needs at least one of path_pattern, partner_key_id, client_prefix/);
    expect((await formPost(h, `${PAGE}/rules`, cookie, { ...fields, expires_in_days: "365", csrf_token: csrf })).status).toBe(400);
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM ops_403_suppressions")).toEqual({ n: 1 });
  });
});
