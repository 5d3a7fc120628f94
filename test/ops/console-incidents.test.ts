import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { BROWSER_ACCEPT, exportLinksOf, formOf, hrefOf, pageAs, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";
import { operator } from "../status/support";

// The console's incidents page over incidents made through the admin API: the open one first, linking to its
// page; the resolved one below; the Markdown draft in the text area equals draft.md, which the session cookie
// now downloads (it was bearer-only); every export opens with the session.

const NOW = "2026-04-01T12:00:00.000Z";
const PAGE = "/admin/console/incidents";
let h: TestApp;
afterEach(async () => {
  await h?.close();
});

describe("GET /admin/console/incidents", () => {
  test("open first, resolved below, the draft to copy equals draft.md; exports with the session", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const token = await createAdminToken(h, "ops");
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

describe("GET /admin/console/incidents: paging, the draft form, the exports", () => {
  test("22 resolved: twenty, then the Older link the rest; the draft's parameters kept across pages", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const token = await createAdminToken(h, "ops");
    const admin = operator(h, token);
    for (let i = 0; i < 22; i++) {
      const made = await admin.post("/admin/status/incidents", { title: `Blip ${i}`, message: "Down.", severity: "warn", components: ["webhooks"] });
      h.clock.advance(60_000);
      await admin.post(`/admin/status/incidents/${made.body.incident.id}/updates`, { state: "resolved", message: "Back." });
      h.clock.advance(60_000);
    }
    const cookie = await signedInCookie(h, token);
    const first = await pageAs(h, `${PAGE}?hours=2&template=minimal`, cookie);
    expect(first.status).toBe(200);
    expect(first.html).toMatch(/id="open-count">0</);
    expect([...first.html.matchAll(/<tr id="incident-/g)].length).toBe(20);
    expect(first.html).toContain(">1–20 of 22<");
    const older = /id="recent-pages-older" href="([^"]+)"/.exec(first.html)![1]!.replaceAll("&amp;", "&");
    expect(older).toBe(`${PAGE}?hours=2&index=0&template=minimal&offset=20#recent`);
    const second = await pageAs(h, older.split("#")[0]!, cookie);
    expect([...second.html.matchAll(/<tr id="incident-/g)].length).toBe(2);
    expect(second.html).toContain(">21–22 of 22<");
    expect(formOf(second.html, `${PAGE}#draft-section`)).toMatchObject({ template: "minimal" });
    expect(second.html).toMatch(/id="recent-pages-newer" href="\/admin\/console\/incidents\?hours=2&amp;index=0&amp;template=minimal#recent"/);
  });

  test("the draft form: window, incident, template — the text area equals draft.md of the same parameters; refusals on the page", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const token = await createAdminToken(h, "ops");
    const admin = operator(h, token);
    await admin.post("/admin/status/incidents", { title: "First", message: "Down.", severity: "bad", components: ["webhooks"] });
    h.clock.advance(30 * 60_000);
    await admin.post("/admin/status/incidents", { title: "Second", message: "Slow.", severity: "warn", components: ["webhooks"] });
    h.clock.advance(60_000);
    const cookie = await signedInCookie(h, token);
    const area = (html: string) =>
      /<textarea[^>]*id="draft"[^>]*>([\s\S]*?)<\/textarea>/
        .exec(html)![1]!
        .replaceAll("&lt;", "<")
        .replaceAll("&gt;", ">")
        .replaceAll("&quot;", '"')
        .replaceAll("&#39;", "'")
        .replaceAll("&amp;", "&");

    const chosen = await pageAs(
      h,
      `${PAGE}?hours=24&since=2026-04-01T11:00&until=2026-04-01T13:00&index=1&severity=all&context=full&template=v1&source=all`,
      cookie,
    );
    expect(chosen.status).toBe(200);
    const text = area(chosen.html);
    expect(text).toContain("# Incident report: First");
    const md = /id="draft-md" href="([^"]+)" download="incident-draft.md"/.exec(chosen.html)![1]!.replaceAll("&amp;", "&");
    expect(md).toBe("/admin/ops/incidents/draft.md?hours=24&index=1&since=2026-04-01T11%3A00%3A00.000Z&until=2026-04-01T13%3A00%3A00.000Z&context=full");
    const download = await h.request(md, { headers: { cookie } });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toContain("text/markdown");
    expect(await download.text()).toBe(text);
    expect(chosen.html).toContain('value="2026-04-01T11:00"');

    // A number out of its bounds (refused by the schema): the page with the message in the draft's place, 400; a
    // script gets the 400 envelope naming the parameter.
    const outOfRange = await pageAs(h, `${PAGE}?hours=0`, cookie);
    expect(outOfRange.status).toBe(400);
    expect(outOfRange.html).toContain('id="form-error"');
    expect(outOfRange.html).toContain("query.hours must be an integer from 1 to 720");
    expect(outOfRange.html).not.toContain('id="draft"');
    expect((await h.json(`${PAGE}?hours=0`, { headers: { cookie } })).body.details[0].field).toBe("query.hours");
    for (const [query, status, says] of [
      ["index=9&hours=2", 404, "No incident at index 9"],
      ["since=2026-04-01T13:00&until=2026-04-01T11:00", 400, "until must be after since"],
      ["since=yesterday", 400, "Since must be a date and time in UTC"],
      ["template=v9", 400, "Template must be one of v1, minimal"],
    ] as const) {
      const refused = await pageAs(h, `${PAGE}?${query}`, cookie);
      expect({ query, status: refused.status }).toEqual({ query, status });
      expect(refused.html).toContain('id="form-error"');
      expect(refused.html).toContain(says);
      expect(refused.html).not.toContain('id="draft"');
      // The list is still there.
      expect(refused.html).toMatch(/id="open-count">2</);
    }
  });

  test("every incidents GET export opens with the session cookie and the bearer token; the page with the bearer; back-link from an incident", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const token = await createAdminToken(h, "ops");
    const made = await operator(h, token).post("/admin/status/incidents", { title: "Down", message: "Down.", severity: "bad", components: ["webhooks"] });
    h.clock.advance(60_000);
    const cookie = await signedInCookie(h, token);
    const bearer = { authorization: `Bearer ${token}` };
    for (const path of [
      "/admin/ops/incidents/draft.md",
      "/admin/ops/incidents/draft.json",
      "/admin/ops/incidents/draft.txt",
      "/admin/ops/incidents/export",
      "/admin/ops/incidents/export.json",
      "/admin/ops/incidents/detail.json",
      "/admin/ops/incidents",
    ]) {
      expect({ path, cookie: (await h.request(path, { headers: { cookie } })).status }).toEqual({ path, cookie: 200 });
      expect({ path, bearer: (await h.request(path, { headers: bearer })).status }).toEqual({ path, bearer: 200 });
      expect({ path, none: (await h.request(path)).status }).toEqual({ path, none: 403 });
    }
    const page = await h.request(PAGE, { headers: bearer });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`href="/admin/ops/incidents/${made.body.incident.id}"`);
    const none = await h.request(PAGE, { headers: { accept: BROWSER_ACCEPT } });
    expect(none.status).toBe(303);
    expect(none.headers.get("location")).toBe(`/admin/sign-in?next=${encodeURIComponent(PAGE)}`);
    const detail = await pageAs(h, `/admin/ops/incidents/${made.body.incident.id}`, cookie);
    expect(hrefOf(detail.html, "← Incidents: all of them, the draft")).toBe(PAGE);
  });
});
