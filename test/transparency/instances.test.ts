import { afterEach, describe, expect, test } from "bun:test";
import { runAudit } from "../../src/transparency/audit/audit-run";
import { auditAlertsAfter } from "../../src/transparency/audit-service";
import { STATE_POLL_MS } from "../../src/transparency/state";
import { tokenSnapshotsAfter } from "../../src/transparency/store/chain-inputs";
import { anotherInstance, type Instance } from "../audio-share/support";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { chainEnv } from "../support/solana-rpc";
import { type AuditWorld, chainRound, P, plantedWorld, rows, T0 } from "./support";

// Two instances over ONE database (the SQLite file, or with HERALD_TEST_ENGINE=postgres one PostgreSQL
// database), each with its own context: the answer cache follows another instance's change within a second,
// overlapping audit runs never both complete (and complete runs commit in id order), and the audit's chain
// watermarks never skip a row still being inserted.

let w: AuditWorld | undefined;
let h: TestApp | undefined;
let b: Instance | undefined;
afterEach(async () => {
  await b?.close();
  b = undefined;
  await w?.close();
  w = undefined;
  await h?.close();
  h = undefined;
});

const worldEnv = (w: AuditWorld) => chainEnv(w.rpc, [w.rpc.url], w.rpc.plan?.env ?? {});

describe("two instances on one database", () => {
  test("the answer cache: another instance's change is served within a second (audit_state re-read), this one's at once", async () => {
    w = await plantedWorld(["untracked_outflow"]);
    b = await anotherInstance(w.h, { env: worldEnv(w) });
    const path = `${P}/threshold-history.json`;
    const before = await w.h.request(path);
    expect(before.status).toBe(200);
    const etag = before.headers.get("etag")!;
    const auth = { authorization: `Bearer ${await createAdminToken(w.h)}` };
    const patched = await b.json("/admin/transparency/thresholds", jsonInit("PATCH", { large_transfer_amount: "500000", reason: "review" }, auth));
    expect(patched.status).toBe(200);
    // The instance that changed it answers with the change at once.
    expect((await b.json(path)).body.current.large_transfer_amount).toBe("500000");
    // The other read audit_state less than a second ago: it may still answer what it had...
    const stale = await w.h.request(path);
    expect(stale.headers.get("etag")).toBe(etag);
    // ...and once a second has passed it reads the version again and answers the new data.
    w.h.clock.advanceSeconds(STATE_POLL_MS / 1000);
    const fresh = await w.h.request(path, { headers: { "if-none-match": etag } });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("etag")).not.toBe(etag);
    expect(((await fresh.json()) as any).current.large_transfer_amount).toBe("500000");
  });

  test("audit runs started on both instances at once: one runs, the other refuses; signatures examined once", async () => {
    w = await plantedWorld(["untracked_outflow", "untracked_inflow"]);
    await chainRound(w.h);
    await chainRound(w.h);
    b = await anotherInstance(w.h, { env: worldEnv(w) });
    const outcomes = await Promise.allSettled([runAudit(w.h.ctx, null), runAudit(b.ctx, null)]);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect(String(refused.reason)).toMatch(/still in progress/);
    expect(await rows(w.h, "SELECT id, is_complete FROM audit_runs ORDER BY id")).toEqual([{ id: 1, is_complete: 1 }]);
    const examined = await rows(w.h, "SELECT signature, count(*) AS n FROM audit_examined GROUP BY signature");
    expect(examined.length).toBeGreaterThan(0);
    expect(examined.every((r) => r.n === 1)).toBe(true);
    expect((await auditAlertsAfter(b.ctx, 0)).map((a) => a.selected_run)).toEqual([1]);
  });

  test("a run overtaken by a newer one (it outlived ten minutes) fails instead of completing: complete runs commit in id order", async () => {
    w = await plantedWorld(["untracked_outflow"]);
    await chainRound(w.h);
    await chainRound(w.h);
    b = await anotherInstance(w.h, { env: worldEnv(w), clock: new FakeClock(w.h.clock.now().toISOString()) });
    // Instance A's run stalls on its first read of the transactions (a slow process), until released.
    let release!: () => void;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atRead = new Promise<void>((resolve) => (reached = resolve));
    const all = w.h.ctx.store.all.bind(w.h.ctx.store);
    w.h.ctx.store.all = (async (sql: string, params?: readonly unknown[]) => {
      if (sql.includes("FROM chain_transactions c")) {
        reached();
        await stalled;
      }
      return all(sql, params as never);
    }) as typeof w.h.ctx.store.all;
    const slow = runAudit(w.h.ctx, null);
    await atRead;
    // Eleven minutes later on B: A's run is taken for abandoned, and B's run starts and completes.
    b.clock.advanceSeconds(660);
    expect((await runAudit(b.ctx, null)).run_id).toBe(2);
    release();
    await expect(slow).rejects.toThrow(/started while this run was still going/);
    expect(await rows(w.h, "SELECT id, is_complete, CASE WHEN error IS NULL THEN 0 ELSE 1 END AS failed FROM audit_runs ORDER BY id")).toEqual([
      { id: 1, is_complete: 0, failed: 1 },
      { id: 2, is_complete: 1, failed: 0 },
    ]);
    expect(await rows(w.h, "SELECT DISTINCT run_id FROM audit_examined")).toEqual([{ run_id: 2 }]);
    expect((await auditAlertsAfter(w.h.ctx, 0)).map((a) => a.selected_run)).toEqual([2]);
  });
});

describe("the audit's chain watermarks", () => {
  const snapshot = (mint: string, takenAt: string) =>
    [
      "INSERT INTO chain_token_snapshots (taken_at, mint, decimals, slot, supply_raw, treasury_raw, reserve_raw, tracked_treasury_raw, circulating_raw, wallets_json, rpc_host, method) VALUES (?, ?, 6, 1, '0', '0', '0', '0', '0', '[]', 'test', 'test') RETURNING id",
      [takenAt, mint],
    ] as const;

  test("rows after the watermark, in id order; on PostgreSQL a row still being inserted below the newest is waited for, not skipped", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const [sql, params] = snapshot("M", T0);
    const first = (await h.ctx.store.get<{ id: number }>(sql, [...params]))!.id;
    if (h.ctx.store.dialect === "sqlite") {
      // One writer commits each insert before the next begins: ids commit in order, and the read needs nothing more.
      const second = (await h.ctx.store.get<{ id: number }>(sql, [...params]))!.id;
      expect((await tokenSnapshotsAfter(h.ctx.store, "M", first)).map((s) => s.id)).toEqual([second]);
      return;
    }
    b = await anotherInstance(h);
    // B inserts a snapshot and holds its transaction open (a slow writer): its id is drawn, its row uncommitted.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let drawn!: (id: number) => void;
    const drawnId = new Promise<number>((resolve) => (drawn = resolve));
    const slowWriter = b.ctx.store.tx(async (t) => {
      drawn((await t.get<{ id: number }>(sql, [...params]))!.id);
      await held;
    });
    const inFlight = await drawnId;
    let read: ReturnType<typeof tokenSnapshotsAfter> | undefined;
    try {
      // A later insert commits first, with a higher id.
      const later = (await h.ctx.store.get<{ id: number }>(sql, [...params]))!.id;
      expect(later).toBeGreaterThan(inFlight);
      read = tokenSnapshotsAfter(h.ctx.store, "M", first);
      // The read waits on the lock until the slow writer ends (bounded: a few seconds at most).
      let waiting = false;
      for (let i = 0; i < 500 && !waiting; i++) {
        const r = await h.ctx.store.get<{ n: number }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'LOCK TABLE chain_token_snapshots%'",
        );
        waiting = r!.n > 0;
        if (!waiting) await Bun.sleep(10);
      }
      expect(waiting).toBe(true);
    } finally {
      release();
      await slowWriter;
    }
    const ids = [inFlight, (await h.ctx.store.get<{ id: number }>("SELECT max(id) AS id FROM chain_token_snapshots"))!.id];
    expect((await read!).map((s) => s.id)).toEqual(ids);
  });
});
