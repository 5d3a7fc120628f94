import { afterEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { exportLinksOf, pageAs, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";
import { operator } from "../status/support";

// The console's incidents page over incidents made through the admin API: the open one first, linking to its
// page; the resolved one below; the Markdown draft in the text area equals draft.md, which the session cookie
// now downloads (it was bearer-only); every export opens with the session.

const NOW = "2026-04-01T12:00:00.000Z";
const PAGE = "/admin/console/incidents";
let h: TestApp;
afterEach(() => h?.close());

describe("GET /admin/console/incidents", () => {
  test("open first, resolved below, the draft to copy equals draft.md; exports with the session", async () => {
    h = createTestApp({ clock: new FakeClock(NOW) });
    const token = createAdminToken(h, "ops");
    const admin = operator(h, token);
    const old = await admin.post("/admin/status/incidents", { title: "Old outage", message: "Down.", severity: "bad", components: ["webhooks"] });
    h.clock.advance(10 * 60_000);
    await admin.post(`/admin/status/incidents/${old.body.incident.id}/updates`, { state: "resolved", message: "Back." });
    h.clock.advance(10 * 60_000);
    const now = await admin.post("/admin/status/incidents", {
      title: "Slow <deliveries> & retries",
      message: "Queued.",
      severity: "warn",
      components: ["webhooks"],
    });
    expect(now.status, JSON.stringify(now.body)).toBe(201);
    h.clock.advance(60_000);
    const cookie = await signedInCookie(h, token);

    // draft.md with the session cookie (403 before this page existed).
    const md = await h.request("/admin/ops/incidents/draft.md?hours=24&index=0", { headers: { cookie } });
    expect(md.status).toBe(200);
    const mdText = await md.text();
    expect(mdText).toContain(String.raw`# Incident report: Slow \<deliveries\> \& retries`);

    const { status, html } = await pageAs(h, PAGE, cookie);
    expect(status).toBe(200);
    expect(html).toMatch(/id="open-count">1</);
    expect(html).toContain(`href="/admin/ops/incidents/${now.body.incident.id}">#${now.body.incident.id} Slow &lt;deliveries&gt; &amp; retries</a>`);
    expect(html).toContain(`href="/admin/ops/incidents/${old.body.incident.id}">#${old.body.incident.id} Old outage</a>`);
    const area = /<textarea[^>]*id="draft"[^>]*>([\s\S]*?)<\/textarea>/.exec(html)![1]!;
    const decoded = area.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&amp;", "&");
    expect(decoded).toBe(mdText);
    for (const link of exportLinksOf(html)) expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
    expect((await h.request("/admin/ops/incidents/draft.md")).status).toBe(403);
    expect((await h.request(`${PAGE}?hours=0`, { headers: { cookie } })).status).toBe(400);
  });
});
