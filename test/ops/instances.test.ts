// The ops domain with two instances on ONE database (test/ops/instances.ts), on the engine HERALD_TEST_ENGINE names:
// what one process could take for granted and two must not — an alert transition applied (and its notice queued)
// twice, a link-inbox message sent twice, a rows-after-id-N cursor that skips a row committed late, the day's
// preflight snapshot taken twice, a silence ended, a rule revoked or a download token redeemed twice.
import { afterEach, describe, expect, test } from "bun:test";
import { recordAlertRun } from "../../src/ops/alerts/service";
import { applyAlertTransitions } from "../../src/ops/alerts/state";
import { createSilence, expireSilence } from "../../src/ops/alerts/silences";
import { createSuppression, revokeSuppression } from "../../src/ops/digest/suppressions";
import { enqueueLinkMessage } from "../../src/ops/link-inbox/notify";
import { linkInboxSender } from "../../src/ops/link-inbox/outbox";
import { issueDownloadToken, redeemDownloadTokenOrThrow } from "../../src/ops/link-inbox/tokens";
import { runPreflightSnapshot } from "../../src/ops/preflight/alerts";
import { type Receiver, startReceiver } from "../support/receiver";
import { openTwoInstances, type TwoInstances } from "./instances";
import { plantAlertRun } from "./support";
import { testOn } from "../support/skipped";

const T0 = "2026-04-01T10:00:00.000Z";
let two: TwoInstances | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await two?.close();
  rx?.stop();
  two = undefined;
  rx = undefined;
});

async function setup(env: Record<string, string> = {}) {
  rx = startReceiver({ status: 200 });
  two = await openTwoInstances({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", LINK_INBOX_WEBHOOK_URLS: rx.url("/chat"), ...env }, T0);
  return two;
}

const admin = (name: string) => ({ actor: { kind: "admin" as const, tokenId: 1, name }, requestId: `req_${name}` });
const outboxOf = (t: TwoInstances) =>
  t.a.store.all<{ id: number; issue_id: string; status: string }>("SELECT id, issue_id, status FROM ops_link_outbox ORDER BY id");

/** Both instances' senders at once, until neither finds anything due (bounded). */
async function drainBoth(t: TwoInstances) {
  for (let i = 0; i < 20; i++) {
    const [x, y] = await Promise.all([linkInboxSender(t.a).runOnce(), linkInboxSender(t.b).runOnce()]);
    if (x === 0 && y === 0) return;
  }
  throw new Error("the outbox did not drain in 20 passes");
}

describe("alert state with two instances", () => {
  test("a row written by hand, applied by both instances at once: one state change, one notice, sent once", async () => {
    const t = await setup();
    const id = await plantAlertRun(t.a.store, { at: T0, source: "status", name: "database", status: "fail", value: "bad" });
    const [x, y] = await Promise.all([applyAlertTransitions(t.a), applyAlertTransitions(t.b)]);
    expect(x + y).toBe(1);
    expect(await t.a.store.all("SELECT alert_key, level, last_row_id, notified_level FROM ops_alert_state")).toEqual([
      { alert_key: "status:database", level: "fail", last_row_id: id, notified_level: "fail" },
    ]);
    expect((await outboxOf(t)).map((o) => o.issue_id)).toEqual(["alert:status:database"]);
    await drainBoth(t);
    expect(rx!.received).toHaveLength(1);
    expect(await t.b.store.all("SELECT status FROM ops_link_outbox")).toEqual([{ status: "sent" }]);
  });

  test("both instances record the same failing alert at once: two evaluations, one firing, one notice", async () => {
    const t = await setup();
    const run = (ctx: TwoInstances["a"]) => recordAlertRun(ctx, { source: "webhooks", alerts: [{ name: "dead_letter_growth", status: "warn", value: 3 }] });
    await Promise.all([run(t.a), run(t.b)]);
    expect(await t.a.store.get("SELECT count(*) AS n FROM ops_alert_runs")).toEqual({ n: 2 });
    const state = await t.a.store.all<{ level: string; last_row_id: number }>("SELECT level, last_row_id FROM ops_alert_state");
    expect(state.map((s) => s.level)).toEqual(["warn"]);
    expect((await outboxOf(t)).map((o) => o.issue_id)).toEqual(["alert:webhooks:dead_letter_growth"]);
    // A sweep afterwards (the link-inbox job on either instance) finds nothing left to apply.
    expect(await applyAlertTransitions(t.b)).toBe(0);
  });

  test("no rows-after-id-N cursor: a row committed after a higher id was applied is still applied; a stale row of the same key is not", async () => {
    const t = await setup();
    // Ids as two instances can leave them on PostgreSQL: 1000 (another key) applied first, 500 committed later.
    const insert = (id: number, name: string, status: string) =>
      t.a.store.run("INSERT INTO ops_alert_runs (id, run_id, at, source, name, status, value) VALUES (?, 'r', ?, 'status', ?, ?, ?)", [
        id,
        T0,
        name,
        status,
        status,
      ]);
    await insert(1000, "database", "ok");
    expect(await applyAlertTransitions(t.a)).toBe(1);
    await insert(500, "jobs", "fail");
    expect(await applyAlertTransitions(t.b)).toBe(1);
    expect(await t.a.store.all("SELECT alert_key, level, last_row_id FROM ops_alert_state ORDER BY alert_key")).toEqual([
      { alert_key: "status:database", level: "ok", last_row_id: 1000 },
      { alert_key: "status:jobs", level: "fail", last_row_id: 500 },
    ]);
    expect((await outboxOf(t)).map((o) => o.issue_id)).toEqual(["alert:status:jobs"]);
    // An evaluation of a key older than the one its state holds is stale: skipped, the state unchanged.
    await insert(400, "jobs", "ok");
    expect(await applyAlertTransitions(t.a)).toBe(0);
    expect(await t.a.store.get("SELECT level, last_row_id FROM ops_alert_state WHERE alert_key = 'status:jobs'")).toEqual({ level: "fail", last_row_id: 500 });
  });

  testOn("postgres", "test/ops/instances.test.ts")(
    "PostgreSQL: a row whose transaction commits after another instance recorded (and applied) a higher id is applied by the next sweep",
    async () => {
      const t = await setup();
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inserted = () => {};
      const insertedYet = new Promise<void>((resolve) => {
        inserted = resolve;
      });
      // Instance a's transaction takes an id and stays open (a slow writer); b records after it, with a higher id.
      const slow = t.a.store.tx(async (q) => {
        await q.run("INSERT INTO ops_alert_runs (run_id, at, source, name, status, value) VALUES ('slow', ?, 'status', 'jobs', 'fail', 'x')", [T0]);
        inserted();
        await gate; // a test-only stand-in for a commit that comes late
      });
      await insertedYet;
      await recordAlertRun(t.b, { source: "status", alerts: [{ name: "database", status: "fail", value: "bad" }] });
      release();
      await slow;
      const ids = await t.a.store.all<{ id: number; name: string }>("SELECT id, name FROM ops_alert_runs ORDER BY id");
      expect(ids.map((r) => r.name)).toEqual(["jobs", "database"]);
      // The late row has the lower id; the old cursor (max last_row_id) would have passed it for ever.
      expect(await applyAlertTransitions(t.a)).toBe(1);
      expect((await outboxOf(t)).map((o) => o.issue_id).sort()).toEqual(["alert:status:database", "alert:status:jobs"]);
    },
  );
});

describe("the link-inbox outbox with two instances", () => {
  test("two senders draining at once deliver each message exactly once", async () => {
    const t = await setup();
    for (let i = 0; i < 12; i++) {
      const link = `http://localhost:3000/admin/ops/incidents/${i}`;
      await enqueueLinkMessage(t.a.store, t.a, { event: "incident.opened", issueId: `incident:${i}`, text: `[Herald] Incident ${i} ${link}`, link });
    }
    await drainBoth(t);
    expect(rx!.received).toHaveLength(12);
    expect(new Set(rx!.received.map((r) => JSON.parse(r.rawBody).text)).size).toBe(12);
    const events = await t.a.store.all<{ outbox_id: number; attempt: number }>("SELECT outbox_id, attempt FROM ops_link_events ORDER BY outbox_id");
    expect(events.map((e) => e.outbox_id)).toEqual((await outboxOf(t)).map((o) => o.id));
    expect(events.every((e) => e.attempt === 1)).toBe(true);
    expect((await outboxOf(t)).every((o) => o.status === "sent")).toBe(true);
  });
});

describe("claims with two instances", () => {
  test("the day's preflight snapshot and its evaluation are taken by one instance", async () => {
    const t = await setup();
    const [x, y] = await Promise.all([runPreflightSnapshot(t.a, false), runPreflightSnapshot(t.b, false)]);
    expect([x.skipped, y.skipped].sort()).toEqual([false, true]);
    const taken = x.skipped ? y : x;
    const rows = await t.a.store.get<{ n: number; at: number }>(
      "SELECT count(*) AS n, count(DISTINCT taken_at) AS at FROM ops_preflight_snapshots WHERE day = '2026-04-01'",
    );
    expect(rows!.at).toBe(1);
    expect(rows!.n).toBeGreaterThan(20);
    const runs = await t.a.store.all<{ run_id: string; n: number }>(
      "SELECT run_id, count(*) AS n FROM ops_alert_runs WHERE source = 'preflight' GROUP BY run_id",
    );
    expect(runs).toHaveLength(1);
    expect(runs[0]!.n).toBe(taken.evaluations.length);
    // Later the same day neither instance takes it again (both started before it was taken).
    t.clock.advanceSeconds(600);
    expect((await Promise.all([runPreflightSnapshot(t.a, false), runPreflightSnapshot(t.b, false)])).map((r) => r.skipped)).toEqual([true, true]);
  });

  test("a silence ended from both instances at once: one ends it, the other is told it already ended; one audit row", async () => {
    const t = await setup();
    const s = await createSilence(t.a, admin("alice"), { matcher: "webhooks:*", reason: "replaying", ends_at: "2026-04-01T12:00:00Z" });
    const outcomes = await Promise.allSettled([expireSilence(t.a, admin("alice"), s.id), expireSilence(t.b, admin("bob"), s.id)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: "conflict" });
    expect(await t.a.store.get("SELECT count(*) AS n FROM admin_audit WHERE action = 'ops.alert_silence.expire'")).toEqual({ n: 1 });
  });

  test("a suppression rule revoked from both instances at once: revoked once, audited once", async () => {
    const t = await setup();
    const rule = await createSuppression(t.a, admin("alice"), {
      client_prefix: "203.0.113.0/24",
      reason: "scanner",
      owner: "secops",
      expires_at: "2026-04-02T00:00:00Z",
    });
    const outcomes = await Promise.allSettled([revokeSuppression(t.a, admin("alice"), rule.id), revokeSuppression(t.b, admin("bob"), rule.id)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(await t.a.store.get("SELECT count(*) AS n FROM admin_audit WHERE action = 'ops.403_suppression.revoke'")).toEqual({ n: 1 });
  });

  test("a download token redeemed on both instances at once works once", async () => {
    const t = await setup();
    const issued = await issueDownloadToken(t.a, "admin:alice#1", "/admin/ops/link-inbox/events/export.csv", { event: ["incident.opened"] });
    const outcomes = await Promise.allSettled([
      redeemDownloadTokenOrThrow(t.a, "admin:alice#1", issued.token),
      redeemDownloadTokenOrThrow(t.b, "admin:alice#1", issued.token),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect((outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult).reason).toMatchObject({ code: "download_token_used" });
  });
});
