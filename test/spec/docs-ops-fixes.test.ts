// Docs audit (docsb): where Herald contradicted docs/api-reference.md, docs/messenger-admin-analytics.md,
// docs/ops-incidents.md and docs/messenger-admin-missions.md; each test failed before its fix (or the doc's).
import { afterEach, describe, expect, test } from "bun:test";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { operator } from "../status/support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/api-reference.md", () => {
  // docs/api-reference.md:25-27 (an operation taking the operator's token belongs to the operators) and :71 (an
  // operator route: Cache-Control on every response, refusals included: the core's private, no-store).
  // GET /api/messenger/ops/health is in /api/openapi/operators.json and takes the admin token, but
  // src/http/caching/cache-control.ts:15 (isOperatorPath) knows only /admin…, /api/messenger/admin/… and /metrics,
  // so its answers (Bot API errors, counters) carry no Cache-Control at all.
  test("GET /api/messenger/ops/health answers with Cache-Control: private, no-store", async () => {
    h = await openMessengerApp();
    const operators = (await h.json("/api/openapi/operators.json")).body;
    expect(operators.paths["/api/messenger/ops/health"]?.get).toBeDefined();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const ok = await h.request("/api/messenger/ops/health", { headers: auth });
    const refused = await h.request("/api/messenger/ops/health");
    expect([ok.status, ok.headers.get("cache-control")]).toEqual([200, "private, no-store"]);
    expect([refused.status, refused.headers.get("cache-control")]).toEqual([403, "private, no-store"]);
  });
});

describe("docs/messenger-admin-analytics.md", () => {
  // docs/messenger-admin-analytics.md:139 (paid_with: daily_free_spin, free_spin_balance) and :165 (the sample with
  // both keys). src/messenger/admin/game-stats.ts:80-83 builds paid_with from the kinds seen only, so a campaign
  // whose spins were all daily free spins has no free_spin_balance key (and one paid only from the balance no
  // daily_free_spin key): a client reading c.paid_with.free_spin_balance gets undefined, not 0.
  test("spin-wheel paid_with names both kinds, 0 when none", async () => {
    h = await openMessengerApp();
    h.clock.set("2026-03-03T10:00:00.000Z");
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const init = initDataFor(h, { id: 4242 });
    await h.request("/api/messenger/init/verify", tmaPost(init));
    const spin = await h.json("/api/messenger/games/spin-wheel/play", tmaPost(init, { request_id: "spin-0001" }));
    expect(spin.body.spin.paid_with).toBe("daily_free_spin");
    const w = (await h.json("/api/messenger/admin/games/spin-wheel?days=1", { headers: auth })).body;
    expect(w.wheel.campaigns[0].paid_with).toEqual({ daily_free_spin: 1, free_spin_balance: 0 });
  });
});

describe("docs/ops-incidents.md", () => {
  // docs/ops-incidents.md:51 — the incidents of the window are those overlapping it: "started before its end, open
  // or ended after its start". The end side is strict (an incident starting at the window's end is left out), but an
  // incident that ENDED exactly at the window's start is listed and drafted: src/status/store/incidents.ts:171
  // (WINDOW_WHERE: ended_at >= since, "ended at/after since" in its comment, shared with the list's `since`, whose
  // doc line 238 does say "at or after"). Fix: `ended_at > ?` for the draft's window (or say "at or after" in the doc).
  test("draft: an incident that ended at the window's start is in the window (at or after, as the list's since)", async () => {
    h = await openTestApp({ clock: new FakeClock("2026-03-10T08:00:00.000Z") });
    const token = await createAdminToken(h);
    const admin = operator(h, token);
    const a = await admin.post("/admin/status/incidents", { title: "A", message: "m", severity: "warn", components: ["api"] });
    h.clock.set("2026-03-10T09:00:00.000Z");
    await admin.post(`/admin/status/incidents/${a.body.incident.id}/updates`, { state: "resolved", message: "done" });
    h.clock.set("2026-03-10T10:00:00.000Z");
    await admin.post("/admin/status/incidents", { title: "B", message: "m", severity: "bad", components: ["api"] });
    h.clock.set("2026-03-10T11:00:00.000Z");
    const get = async (q: string) => (await h.json(`/admin/ops/incidents/draft.json?${q}`, { headers: { authorization: `Bearer ${token}` } })).body;
    // The end side, as documented: B (started 10:00) is not in [08:00, 10:00)…
    expect((await get("since=2026-03-10T08:00:00Z&until=2026-03-10T10:00:00Z")).incidents.map((i: any) => i.title)).toEqual(["A"]);
    // …and the start side, at or after (the doc now says so): A (ended 09:00) is in [09:00, 10:00); not in (09:00:00.001, 10:00).
    const d = await get("since=2026-03-10T09:00:00Z&until=2026-03-10T10:00:00Z");
    expect([d.incidents_total, d.incident?.title]).toEqual([1, "A"]);
    const after = await get("since=2026-03-10T09:00:00.001Z&until=2026-03-10T10:00:00Z");
    expect([after.incidents_total, after.incident]).toEqual([0, null]);
  });
});

describe("docs/ops-incidents.md (job failures)", () => {
  // docs/ops-incidents.md:69 — the job failures listed are at most 50; :90 — the summary counts the window's failed
  // job runs ("1 failed job run in the window."). src/ops/incidents/draft.ts summaryOf() prints failures.length, the
  // capped list's length (src/ops/incidents/sources.ts:64, MAX_JOB_FAILURES), so 51 failed runs are summarised as
  // "50 failed job runs in the window." with nothing saying the list was cut (top_errors has `truncated`). Fix:
  // count the window's failed runs apart from the capped list (or print "at least 50" and add a truncated flag).
  test("51 failed runs: the summary does not say 50", async () => {
    h = await openTestApp({ clock: new FakeClock("2026-03-10T09:00:00.000Z") });
    const token = await createAdminToken(h);
    h.ctx.jobs.register({
      name: "test-docsb-failing-job",
      pattern: "0 0 * * * *",
      description: "throws, for the draft's job failures",
      run: () => {
        throw new Error("disk full");
      },
    });
    for (let i = 0; i < 51; i++) {
      h.clock.set(new Date(Date.parse("2026-03-10T09:00:00.000Z") + i * 1000).toISOString());
      expect((await h.ctx.jobs.runNow("test-docsb-failing-job")).ok).toBe(false);
    }
    h.clock.set("2026-03-10T12:00:00.000Z");
    const d = (await h.json("/admin/ops/incidents/draft.json?source=jobs", { headers: { authorization: `Bearer ${token}` } })).body;
    expect(d.job_failures.length).toBe(50);
    expect(d.summary).toContain("More than 50 failed job runs in the window (the newest 50 listed).");
  });
});

describe("docs/messenger-admin-missions.md (checks first)", () => {
  // docs/messenger-admin-missions.md:5-10 — the schema's checks come before the 503 of an unset bot; the route's own
  // rules after it; a bad window is 400 for any mission, an unknown one included (the lookup came first: 404).
  test("the schema's refusals come before the 503, and a bad window before the unknown mission's 404", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const M = "/api/messenger/admin/missions";
    const limit = await h.json(`${M}?limit=0`, { headers: auth });
    expect([limit.status, limit.body.error]).toEqual([400, "invalid_query"]);
    const unset = await h.json(M, { headers: auth });
    expect([unset.status, unset.body.error]).toEqual([503, "messenger_not_configured"]);
    await h.close();
    h = await openMessengerApp();
    const auth2 = { authorization: `Bearer ${await createAdminToken(h)}` };
    const r = await h.json(`${M}/nope/analytics?days=2&preset=today`, { headers: auth2 });
    expect([r.status, r.body.error]).toEqual([400, "invalid_query"]);
    const unknown = await h.json(`${M}/nope/analytics?days=2`, { headers: auth2 });
    expect([unknown.status, unknown.body.error]).toEqual([404, "mission_not_found"]);
  });
});
