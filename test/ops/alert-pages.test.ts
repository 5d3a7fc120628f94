import { afterEach, describe, expect, test } from "bun:test";
import { linkInboxSender } from "../../src/ops/link-inbox/outbox";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";
import { operator } from "../status/support";
import { plantAlertRun } from "./support";
import { BROWSER_ACCEPT, csrfOf, factsOf, signedInCookie, textById } from "../support/console";

// Item 4 of issue 31: every link a person is sent opens a page with that incident or alert for a signed-in
// operator (the session cookie), where the incident link used to point at a bearer-only JSON route and the alert
// link at a generic 7-day export. The links are taken from the messages a real chat receiver got.

const T0 = "2026-04-01T10:00:00.000Z";
let h: TestApp;
let rx: Receiver | undefined;
afterEach(async () => {
  await h?.close();
  rx?.stop();
});

async function setup() {
  rx = startReceiver({ status: 200 });
  h = await openTestApp({ clock: new FakeClock(T0), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", LINK_INBOX_WEBHOOK_URLS: rx.url("/chat") } });
  const token = await createAdminToken(h, "pager");
  return { token, admin: operator(h, token) };
}

/** The link a message ends with, as a path on this app. */
const linkOf = (text: string) => new URL(text.split(" ").pop()!).pathname;

describe("incident links", () => {
  test("the incident notice links to /admin/ops/incidents/<id>, which opens for the session cookie (the old JSON route does not)", async () => {
    const { token, admin } = await setup();
    const created = await admin.post("/admin/status/incidents", {
      title: "Deliveries <delayed>",
      message: "Late & slow.",
      severity: "bad",
      components: ["webhooks"],
    });
    const id = created.body.incident.id as number;
    await linkInboxSender(h.ctx).runOnce();
    const text = JSON.parse(rx!.received[0]!.rawBody).text as string;
    const path = linkOf(text);
    expect(path).toBe(`/admin/ops/incidents/${id}`);

    const cookie = await signedInCookie(h, token);
    expect((await h.request(`/admin/status/incidents/${id}`, { headers: { cookie } })).status).toBe(403); // bearer only, as before
    const page = await h.request(path, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("cache-control")).toContain("no-store");
    const html = await page.text();
    expect(html).toContain("Deliveries &lt;delayed&gt;");
    expect(html).not.toContain("<delayed>");
    expect(html).toContain("Late &amp; slow.");
    expect(textById(html, "incident-state")).toBe("open: bad");
    expect(html).not.toContain("<script");
    // The notice itself is listed on the page.
    expect(html).toContain("incident.opened");

    // With the bearer token too; without anything, the sign-in form, which comes back here.
    expect((await h.request(path, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const anon = await h.request(path, { headers: { accept: BROWSER_ACCEPT } });
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toBe(`/admin/sign-in?next=${encodeURIComponent(path)}`);
    expect((await h.request("/admin/ops/incidents/999", { headers: { cookie } })).status).toBe(404);
    expect((await h.request("/admin/ops/incidents/0", { headers: { cookie } })).status).toBe(400);
    expect((await h.request("/admin/ops/incidents/abc", { headers: { cookie } })).status).toBe(400);
    // The JSON routes beside it are untouched.
    expect((await h.request("/admin/ops/incidents/export.json", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });
});

describe("alert links", () => {
  test("the alert notice links to the alert's page: state, latest evaluation, history and notices, every value escaped", async () => {
    const { token } = await setup();
    await plantAlertRun(h.ctx.store, {
      runId: "ar_1",
      at: T0,
      source: "status",
      name: "database",
      status: "fail",
      value: "bad",
      details: JSON.stringify({ summary: "disk <full> & read-only" }),
    });
    await linkInboxSender(h.ctx).runOnce();
    const text = JSON.parse(rx!.received[0]!.rawBody).text as string;
    expect(text).toStartWith("[Herald] Alert fired: status/database [fail] (bad) — disk <full> & read-only at 2026-04-01T10:00:00.000Z http://localhost:3000/");
    const path = linkOf(text);
    expect(path).toBe("/admin/ops/alerts-monitor/alerts/1");

    const cookie = await signedInCookie(h, token);
    const res = await h.request(path, { headers: { cookie } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(factsOf(html).Alert).toBe("status:database");
    expect(textById(html, "alert-state")).toBe("firing: fail");
    expect(html).toContain("disk &lt;full&gt; &amp; read-only");
    expect(html).not.toContain("<full>");
    expect(html).toContain("alert.fired");
    expect(html).toContain("ar_1");

    // Resolved: the page says so.
    h.clock.advanceSeconds(60);
    await plantAlertRun(h.ctx.store, { runId: "ar_2", at: h.clock.now().toISOString(), source: "status", name: "database", status: "ok", value: "ok" });
    await linkInboxSender(h.ctx).runOnce();
    const after = await (await h.request(path, { headers: { cookie } })).text();
    expect(textById(after, "alert-state")).toBe("resolved");
    expect(after).toContain("alert.resolved");
    // When it fired stays on the page beside when it resolved (it used to read "Fired at –" once resolved).
    expect(textById(after, "alert-headline")).toBe("Resolved at 2026-04-01 10:01:00 UTC; it had fired at 2026-04-01 10:00:00 UTC.");
    expect(factsOf(after)).toMatchObject({ "Fired at": "2026-04-01 10:00:00 UTC", "Resolved at": "2026-04-01 10:01:00 UTC" });
    // The resolved notice says what resolved, in words.
    const resolved = JSON.parse(rx!.received[1]!.rawBody).text as string;
    expect(resolved).toStartWith(
      "[Herald] Alert resolved: status/database (was fail since 2026-04-01T10:00:00.000Z) — now: value ok; while firing: disk <full> & read-only http://localhost:3000/",
    );
    // The console's list of recent changes keeps both times too.
    const changes = await (await h.request("/admin/console/alerts", { headers: { cookie } })).text();
    expect(changes).toContain("resolved 2026-04-01 10:01:00 UTC (fired 2026-04-01 10:00:00 UTC)");
    expect((await h.request("/admin/ops/alerts-monitor/alerts/42", { headers: { cookie } })).status).toBe(404);
    expect((await h.request(path, { headers: { accept: BROWSER_ACCEPT } })).status).toBe(303);
  });
});

describe("silences from a browser session", () => {
  test("a POST with the session cookie needs X-CSRF-Token (the token its pages carry); with it the silence is made and audited", async () => {
    const { token } = await setup();
    const cookie = await signedInCookie(h, token);
    const body = JSON.stringify({ matcher: "digest:*", reason: "pen test, OPS-9", ends_at: "2026-04-01T18:00:00Z" });
    const headers = { cookie, "content-type": "application/json" };
    const refused = await h.request("/admin/ops/alerts-monitor/silences", { method: "POST", headers, body });
    expect(refused.status).toBe(403);
    const page = await (await h.request("/admin/ops/readiness", { headers: { cookie } })).text();
    const csrf = csrfOf(page);
    const made = await h.json("/admin/ops/alerts-monitor/silences", { method: "POST", headers: { ...headers, "x-csrf-token": csrf }, body });
    expect(made.status).toBe(201);
    expect(made.body.silence).toMatchObject({ matcher: "digest:*", created_by: "admin:pager#1", state: "active" });
    expect(await h.ctx.store.all("SELECT actor, action FROM admin_audit WHERE action = 'ops.alert_silence.create'")).toEqual([
      { actor: "admin:pager#1", action: "ops.alert_silence.create" },
    ]);
  });
});
