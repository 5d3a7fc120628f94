import { afterEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { csrfOf, exportLinksOf, formPost, pageAs, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";
import { applyAlertTransitions } from "../../src/ops/alerts/state";

// The console's alerts page over a real alert: a digest run row made firing by the state machine, shown with a
// link to its page; a silence added by the form (audited) shows who, why and until when, and holds it; ending
// it works once; forms refuse a missing or wrong CSRF token and re-render refusals as the page.

const NOW = "2026-04-01T12:00:00.000Z";
const PAGE = "/admin/console/alerts";
let h: TestApp;
let token = "";
afterEach(() => h?.close());

function seed() {
  h = createTestApp({ clock: new FakeClock(NOW) });
  token = createAdminToken(h, "on-call");
  h.ctx.db.sqlite
    .query("INSERT INTO ops_alert_runs (run_id, at, source, name, status, value, details) VALUES ('ar_01', ?, 'digest', '403_spike', 'warn', '129', ?)")
    .run(NOW, JSON.stringify({ summary: "route /api/partner/users/:id: 129 403s <script>x</script>" }));
  applyAlertTransitions(h.ctx);
}

describe("GET /admin/console/alerts", () => {
  test("what fires, with its page and escaped summary; exports open with the session", async () => {
    seed();
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
    expect((await h.request(PAGE)).status).toBe(303);
  });

  test("a silence from the form: audited, shown with who, why and until when, holds the alert; ended once; CSRF required", async () => {
    seed();
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
    expect(h.ctx.db.sqlite.query("SELECT count(*) AS n FROM admin_audit WHERE action LIKE '%silence%'").get()).toEqual({ n: 1 });

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
