import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { BROWSER_ACCEPT, columnOf, csrfOf, exportLinksOf, formPost, hrefOf, pageAs, signedInCookie, tableOf } from "../support/console";
import { createAdminToken } from "../support/partner";
import { recordAlertRun } from "../../src/ops/alerts/service";
import { runAlertsMonitor } from "../../src/ops/alerts/monitor";
import { applyAlertTransitions } from "../../src/ops/alerts/state";
import { plantAlertRun } from "./support";

// The console's alerts page over a real alert: a digest run row made firing by the state machine, shown with a
// link to its page; a silence added by the form (audited) shows who, why and until when, and holds it; ending
// it works once; forms refuse a missing or wrong CSRF token and re-render refusals as the page.

const NOW = "2026-04-01T12:00:00.000Z";
const PAGE = "/admin/console/alerts";
let h: TestApp;
let token = "";
afterEach(async () => {
  await h?.close();
});

async function seed() {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  token = await createAdminToken(h, "on-call");
  await plantAlertRun(h.ctx.store, {
    runId: "ar_01",
    at: NOW,
    source: "digest",
    name: "403_spike",
    status: "warn",
    value: "129",
    details: JSON.stringify({ summary: "route /api/partner/users/:id: 129 403s <script>x</script>" }),
  });
  await applyAlertTransitions(h.ctx);
}

describe("GET /admin/console/alerts", () => {
  test("what fires, with its page and escaped summary; exports open with the session", async () => {
    await seed();
    const cookie = await signedInCookie(h, token);
    const { status, html } = await pageAs(h, PAGE, cookie);
    expect(status).toBe(200);
    expect(html).toMatch(/id="firing-count">1</);
    expect(html).toMatch(/href="\/admin\/ops\/alerts-monitor\/alerts\/\d+"><code>digest:403_spike<\/code>/);
    expect(html).toContain("&lt;script&gt;x&lt;/script&gt;");
    expect(html).not.toContain("<script>x");
    for (const link of exportLinksOf(html)) expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
    const alertPage = /href="(\/admin\/ops\/alerts-monitor\/alerts\/\d+)"/.exec(html)![1]!;
    expect((await h.request(alertPage, { headers: { cookie } })).status).toBe(200);
    expect((await h.request(PAGE, { headers: { accept: BROWSER_ACCEPT } })).status).toBe(303);
  });

  test("a silence from the form: audited, shown with who, why and until when, holds the alert; ended once; CSRF required", async () => {
    await seed();
    const cookie = await signedInCookie(h, token);
    const first = await pageAs(h, `${PAGE}?matcher=digest%3A403_spike`, cookie);
    expect(first.html).toContain('value="digest:403_spike"');
    const csrf = csrfOf(first.html);
    const fields = { matcher: "digest:403_spike", reason: "scanner known, blocked at the edge", hours: "4" };
    expect((await formPost(h, `${PAGE}/silences`, cookie, fields)).status).toBe(403);
    expect((await formPost(h, `${PAGE}/silences`, cookie, { ...fields, csrf_token: "nope" })).status).toBe(403);

    const done = await formPost(h, `${PAGE}/silences`, cookie, { ...fields, csrf_token: csrf });
    expect(done.status).toBe(303);
    const location = done.headers.get("location")!;
    expect(location).toMatch(/^\/admin\/console\/alerts\?done=silenced&silence=\d+$/);
    const after = await pageAs(h, location, cookie);
    expect(after.html).toMatch(/Silence #\d+ added\./);
    expect(after.html).toContain("scanner known, blocked at the edge");
    expect(after.html).toContain("until 2026-04-01 16:00:00 UTC");
    const firing = await h.json("/admin/ops/alerts-monitor/firing.json", { headers: { cookie } });
    expect(firing.body.silenced).toBe(1);
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM admin_audit WHERE action LIKE '%silence%'")).toEqual({ n: 1 });

    const id = /done=silenced&silence=(\d+)/.exec(location)![1]!;
    expect((await formPost(h, `${PAGE}/silences/${id}/end`, cookie, { csrf_token: csrf })).status).toBe(303);
    const twice = await formPost(h, `${PAGE}/silences/${id}/end`, cookie, { csrf_token: csrf });
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain('id="form-error"');
    // Refusals re-render the page: hours out of range, a matcher with spaces.
    expect((await formPost(h, `${PAGE}/silences`, cookie, { ...fields, hours: "9999", csrf_token: csrf })).status).toBe(400);
    const bad = await formPost(h, `${PAGE}/silences`, cookie, { ...fields, matcher: "not a key", csrf_token: csrf });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("text/html");
    // A script posting the same form (no text/html in Accept) gets the JSON envelope.
    const script = await formPost(h, `${PAGE}/silences`, cookie, { ...fields, hours: "0", csrf_token: csrf }, null);
    expect(script.status).toBe(400);
    expect(await script.json()).toMatchObject({ success: false, error: "invalid_payload" });
  });
});

describe("GET /admin/console/alerts: checks with nothing to judge", () => {
  test("a status check that is not configured (no TOKEN_MINT) reads 'not configured' in grey, on the page and its own page; a configured ok stays ok", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    token = await createAdminToken(h, "on-call");
    await runAlertsMonitor(h.ctx);
    const cookie = await signedInCookie(h, token);
    const { html } = await pageAs(h, `${PAGE}?source=status`, cookie);
    const rows = tableOf(html, "history-rows").filter((r) => r.cells.Alert!.startsWith("status:"));
    const now = Object.fromEntries(rows.map((r) => [r.cells.Alert, r.cells.Now]));
    const status = (await h.json("/api/public/system-status")).body;
    const unconfigured = Object.entries(status.checks as Record<string, { configured?: boolean; status: string }>)
      .filter(([, c]) => c.configured === false && c.status === "ok")
      .map(([name]) => `status:${name}`);
    expect(unconfigured.length).toBeGreaterThan(0);
    for (const key of unconfigured) expect([key, now[key]]).toEqual([key, "not configured"]);
    // Checks that are configured keep their level; none of the unconfigured ones is shown green.
    expect(Object.entries(now).filter(([key, level]) => !unconfigured.includes(key) && level === "not configured")).toEqual([]);
    for (const r of rows.filter((r) => unconfigured.includes(r.cells.Alert!))) {
      expect(r.html).not.toContain('class="badge ok"');
      expect(r.cells["Last change"]).toStartWith("not configured since");
    }
    expect(columnOf(html, "run-rows", "Status").filter((s) => s === "not configured").length).toBe(unconfigured.length);
    // The alert's own page: its state and each evaluation.
    const page = /href="(\/admin\/ops\/alerts-monitor\/alerts\/\d+)"><code>([^<]+)<\/code>/g;
    const links = Object.fromEntries([...html.matchAll(page)].map((m) => [m[2]!, m[1]!]));
    const own = await pageAs(h, links[unconfigured[0]!]!, cookie);
    expect(own.html).toContain('id="alert-state">not configured</span>');
    expect(own.html).toContain("Not configured in this deployment");
    expect(columnOf(own.html, "history-rows", "Status")).toEqual(["not configured"]);
  });
});

describe("GET /admin/console/alerts: history, evaluations and silences, paged", () => {
  test("30 alerts: the recent changes and the evaluations page with Older/Newer links, as export.json does", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    token = await createAdminToken(h, "on-call");
    await recordAlertRun(h.ctx, {
      source: "webhooks",
      alerts: Array.from({ length: 30 }, (_, i) => ({ name: `check_${String(i).padStart(2, "0")}`, status: i < 3 ? "fail" : "ok", value: i })),
    });
    const cookie = await signedInCookie(h, token);
    const first = await pageAs(h, PAGE, cookie);
    expect(first.status).toBe(200);
    expect(first.html).toMatch(/id="firing-count">3</);
    expect([...first.html.matchAll(/<tr><td data-label="Alert">/g)].length).toBe(3 + 25);
    expect(first.html).toContain("1–25 of 30");
    const older = /id="history-pages-older" href="([^"]+)"/.exec(first.html)![1]!.replaceAll("&amp;", "&");
    expect(older).toBe(`${PAGE}?changes=25#history`);
    // (A browser never sends the #fragment; the test strips it.)
    const second = await pageAs(h, older.split("#")[0]!, cookie);
    expect(second.html).toContain("26–30 of 30");
    expect(second.html).toMatch(/id="history-pages-newer" href="\/admin\/console\/alerts#history"/);
    expect(second.html).not.toContain('id="history-pages-older"');

    // Evaluations: the fail ones only, from the GET filter, then the same page as JSON.
    const fails = await pageAs(h, `${PAGE}?days=7&source=webhooks&status=fail`, cookie);
    expect([...fails.html.matchAll(/<td data-label="At">/g)].length).toBe(3);
    expect(fails.html).toMatch(
      /<a href="\/admin\/ops\/alerts-monitor\/alerts\/\d+"><code>webhooks:check_0[0-2]<\/code><\/a><\/td><td data-label="Status"><span class="badge bad">fail/,
    );
    const all = await pageAs(h, `${PAGE}?runs=25`, cookie);
    expect(all.html).toContain("26–30 of 30");
    const json = /id="runs-json" href="([^"]+)"/.exec(all.html)![1]!.replaceAll("&amp;", "&");
    const page = await h.json(json, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(30);
    expect(page.body.count).toBe(5);
    // A number out of its bounds (refused by the schema) and an unknown word alike: the page with defaults and an
    // error line, 400; a script gets the 400 envelope naming the parameter.
    const outOfRange = await pageAs(h, `${PAGE}?days=0`, cookie);
    expect(outOfRange.status).toBe(400);
    expect(outOfRange.html).toContain('id="form-error"');
    expect(outOfRange.html).toContain("query.days must be an integer from 1 to 90");
    expect((await h.json(`${PAGE}?days=0`, { headers: { cookie } })).body).toMatchObject({ error: "invalid_query", details: [{ field: "query.days" }] });
    const bad = await pageAs(h, `${PAGE}?status=maybe`, cookie);
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('id="form-error"');
    expect(bad.html).toContain("status must be one of all, ok, warn, fail");
  });

  test("a silence until a time: bounded to 30 days ahead, in the future; ended silences page by cursor", async () => {
    await seed();
    const cookie = await signedInCookie(h, token);
    const csrf = csrfOf((await pageAs(h, PAGE, cookie)).html);
    const fields = { matcher: "digest:*", reason: "maintenance <window>", hours: "4", csrf_token: csrf };
    const count = async () => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM ops_alert_silences"))!.n;

    for (const [until, says] of [
      ["2026-05-15T00:00", "at most 30 days ahead"],
      ["2026-04-01T11:00", "must be in the future"],
      ["tomorrow", "a date and time in UTC"],
    ] as const) {
      const refused = await formPost(h, `${PAGE}/silences`, cookie, { ...fields, until });
      expect({ until, status: refused.status }).toEqual({ until, status: 400 });
      const html = await refused.text();
      expect(html).toContain(says);
      // The person's own values come back in the form, escaped.
      expect(html).toContain('value="maintenance &lt;window&gt;"');
    }
    expect(await count()).toBe(0);
    const done = await formPost(h, `${PAGE}/silences`, cookie, { ...fields, until: "2026-04-02T09:30" });
    expect(done.status).toBe(303);
    const active = await h.json("/admin/ops/alerts-monitor/silences?state=active", { headers: { cookie } });
    expect(active.body.silences).toHaveLength(1);
    expect(active.body.silences[0]).toMatchObject({ matcher: "digest:*", reason: "maintenance <window>", ends_at: "2026-04-02T09:30:00.000Z" });
    const shown = await pageAs(h, done.headers.get("location")!, cookie);
    expect(tableOf(shown.html, "silence-rows")[0]!.cells).toMatchObject({ Matches: "digest:*", Why: "maintenance <window>", Until: "2026-04-02 09:30:00 UTC" });
    expect(shown.html).toContain("maintenance &lt;window&gt;");

    // Twelve more silences, each ended: the ended list shows ten, then the Older link the rest.
    for (let i = 0; i < 12; i++) {
      const s = await formPost(h, `${PAGE}/silences`, cookie, { ...fields, matcher: `status:check_${i}` });
      const id = /silence=(\d+)/.exec(s.headers.get("location")!)![1]!;
      expect((await formPost(h, `${PAGE}/silences/${id}/end`, cookie, { csrf_token: csrf })).status).toBe(303);
    }
    const page = await pageAs(h, PAGE, cookie);
    const endedRows = (html: string) => tableOf(html, "ended-rows").length;
    expect(endedRows(page.html)).toBe(10);
    expect(columnOf(page.html, "silence-rows", "Matches")).toContain("digest:*");
    const older = /id="ended-older" href="([^"]+)"/.exec(page.html)![1]!.replaceAll("&amp;", "&");
    const rest = await pageAs(h, older.split("#")[0]!, cookie);
    expect(rest.status).toBe(200);
    expect(endedRows(rest.html)).toBe(2);
    expect(rest.html).toContain('id="ended-newest"');
    expect((await pageAs(h, `${PAGE}?ended=bm9wZQ`, cookie)).status).toBe(400);
  });

  test("the forms audit as the JSON routes do; a wrong or missing token changes nothing; the bearer token opens the page", async () => {
    await seed();
    const cookie = await signedInCookie(h, token);
    const csrf = csrfOf((await pageAs(h, PAGE, cookie)).html);
    const viaJson = await h.json("/admin/ops/alerts-monitor/silences", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ matcher: "status:*", reason: "by script", ends_at: "2026-04-01T13:00:00Z" }),
    });
    expect(viaJson.status).toBe(201);
    const form = await formPost(h, `${PAGE}/silences`, cookie, { matcher: "digest:403_spike", reason: "by hand", hours: "1", until: "", csrf_token: csrf });
    expect(form.status).toBe(303);
    const audit = await h.ctx.store.all<{ actor: string; action: string }>(
      "SELECT actor, action, target FROM admin_audit WHERE action LIKE 'ops.alert_silence.%' ORDER BY id",
    );
    expect(audit.map((a) => a.action)).toEqual(["ops.alert_silence.create", "ops.alert_silence.create"]);
    expect(audit[1]!.actor).toBe(audit[0]!.actor);

    const id = viaJson.body.silence.id as number;
    expect((await formPost(h, `${PAGE}/silences/${id}/end`, cookie, {})).status).toBe(403);
    expect((await formPost(h, `${PAGE}/silences/${id}/end`, cookie, { csrf_token: `${csrf}x` })).status).toBe(403);
    expect((await h.json("/admin/ops/alerts-monitor/silences?state=active", { headers: { cookie } })).body.count).toBe(2);
    expect((await formPost(h, `${PAGE}/silences/99999/end`, cookie, { csrf_token: csrf })).status).toBe(404);

    const bearer = await h.request(PAGE, { headers: { authorization: `Bearer ${token}` } });
    expect(bearer.status).toBe(200);
    const html = await bearer.text();
    expect(html).toContain('id="silence-form"');
    expect(html).not.toContain('name="csrf_token"');
    // The alert's own page leads back here.
    const alertPage = /href="(\/admin\/ops\/alerts-monitor\/alerts\/\d+)"/.exec(html)![1]!;
    expect(hrefOf((await pageAs(h, alertPage, cookie)).html, "← Alerts: everything firing, silences")).toBe(PAGE);
  });
});
