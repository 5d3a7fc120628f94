import { afterEach, describe, expect, test } from "bun:test";
import { PLANTED_AMOUNTS } from "../../src/chain/fixture-anomalies";
import { runAudit } from "../../src/transparency/audit/audit-run";
import { openTestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { chainEnv, decimalString, startSolanaRpc } from "../support/solana-rpc";
import { jsonInit } from "../support/app";
import { chainRound, job, P, plantedRun, plantedWorld, rows, T0, type AuditWorld } from "./support";

// The audit run end to end: the planted fixture of `herald dev-rpc --plant` (one case per anomaly type, exact
// amounts), a clean history, a declared movement, a crashed run and the next run after it.

let w: AuditWorld | undefined;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await w?.close();
  w = undefined;
  while (cleanups.length) await cleanups.pop()!();
});

const anomalies = (w: AuditWorld, runId: number) =>
  rows(
    w.h,
    "SELECT kind, signature, delta_raw, types, severity_rank, declaration_id, detail FROM audit_rows WHERE run_id = ? AND severity_rank > 0 ORDER BY id",
    runId,
  );

describe("planted anomalies: every type detected with its exact delta and severity", () => {
  test("all seven types, the run's aggregates, and nothing else flagged", async () => {
    w = await plantedWorld();
    const ran = await plantedRun(w);
    const cases = w.rpc.plan!.cases;
    const sig = (type: string) => cases.find((c) => c.type === type)!.signature!;
    const found = await anomalies(w, 1);
    const byType = (t: string) => found.filter((r) => r.types.split(",").includes(t));
    expect(
      byType("untracked_outflow")
        .map((r) => r.signature)
        .sort(),
    ).toEqual([sig("untracked_outflow"), sig("large_transfer")].sort());
    expect(found.find((r) => r.signature === sig("untracked_outflow"))).toMatchObject({
      kind: "transaction",
      delta_raw: `-${PLANTED_AMOUNTS.untracked_outflow}`,
      types: "untracked_outflow",
      severity_rank: 2,
    });
    expect(found.find((r) => r.signature === sig("untracked_inflow"))).toMatchObject({
      delta_raw: `${PLANTED_AMOUNTS.untracked_inflow}`,
      types: "untracked_inflow",
      severity_rank: 1,
    });
    expect(found.find((r) => r.signature === sig("large_transfer"))).toMatchObject({
      delta_raw: `-${PLANTED_AMOUNTS.large_transfer}`,
      types: "untracked_outflow,large_transfer",
      severity_rank: 4,
    });
    expect(found.find((r) => r.signature === sig("duplicate_signature"))).toMatchObject({ delta_raw: "0", types: "duplicate_signature", severity_rank: 1 });
    const mismatch = byType("balance_mismatch");
    expect(mismatch).toHaveLength(1);
    expect(mismatch[0]).toMatchObject({
      kind: "token_snapshot",
      signature: "token-snapshot:2",
      delta_raw: `${PLANTED_AMOUNTS.balance_mismatch}`,
      severity_rank: 3,
    });
    expect(JSON.parse(mismatch[0]!.detail)).toMatchObject({
      previous_snapshot_id: 1,
      snapshot_id: 2,
      snapshot_delta_raw: `${PLANTED_AMOUNTS.balance_mismatch}`,
      synced_delta_raw: "0",
    });
    expect(byType("authority_change")[0]).toMatchObject({
      kind: "mint_authority_snapshot",
      signature: "mint-authority-snapshot:2",
      delta_raw: "0",
      severity_rank: 4,
    });
    expect(JSON.parse(byType("authority_change")[0]!.detail)).toMatchObject({
      changed_fields: ["mint_authority"],
      new_expectation_mismatch: true,
      previous_mint_authority: null,
      mint_authority: w.rpc.fixture.authority(0),
    });
    expect(byType("sync_gap")[0]).toMatchObject({ kind: "sync_run", signature: "sync-run:2", severity_rank: 2 });
    expect(found).toHaveLength(7);

    // 8 act-1 transactions + the 5 newest act-2 transfers the capped sync stored + 3 snapshot/sync findings.
    const run = (await rows(w.h, "SELECT * FROM audit_runs"))[0]!;
    expect(run).toMatchObject({
      is_complete: 1,
      job_run_id: ran.run_id,
      rows_total: 16,
      transactions_examined: 13,
      signatures_with_anomalies: 7,
      overall: "bad",
      max_abs_delta_raw: `${PLANTED_AMOUNTS.large_transfer}`,
      decimals: 6,
    });
    expect(JSON.parse(run.severity_counts)).toEqual({ low: 2, medium: 2, high: 1, critical: 2 });
    expect(JSON.parse(run.type_counts)).toEqual({
      untracked_outflow: 2,
      untracked_inflow: 1,
      large_transfer: 1,
      balance_mismatch: 1,
      authority_change: 1,
      sync_gap: 1,
      duplicate_signature: 1,
      snapshot_slot_regression: 0,
    });

    // The summary shows them most severe first, amounts as exact decimal strings.
    const s = (await w.h.json(`${P}/summary.json?top_limit=3`)).body;
    expect(s.top_anomalies.map((a: any) => [a.severity, a.signature, a.max_abs_delta])).toEqual([
      ["critical", sig("large_transfer"), decimalString(PLANTED_AMOUNTS.large_transfer, 6)],
      ["critical", "mint-authority-snapshot:2", "0"],
      ["high", "token-snapshot:2", "4321"],
    ]);
    expect(s.run).toMatchObject({ overall: "bad", max_abs_delta: "1250000", rows_total: 16 });
  });

  test("a second run examines only what is new: nothing, then one new outflow", async () => {
    w = await plantedWorld(["untracked_outflow"]);
    await plantedRun(w);
    await job(w.h, "audit-anomalies");
    expect(await rows(w.h, "SELECT id, rows_total, signatures_with_anomalies, overall FROM audit_runs WHERE id = 2")).toEqual([
      { id: 2, rows_total: 0, signatures_with_anomalies: 0, overall: "ok" },
    ]);
    const f = w.rpc.fixture;
    const tx = f.appendTransfer({ from: f.walletParty(f.treasury[0]!), to: f.holderParty(9), amount: 5_000_000n, applyToBalances: true });
    await chainRound(w.h);
    await job(w.h, "audit-anomalies");
    expect(await anomalies(w, 3)).toEqual([
      { kind: "transaction", signature: tx.signature, delta_raw: "-5000000", types: "untracked_outflow", severity_rank: 2, declaration_id: null, detail: null },
    ]);
  });
});

describe("a token snapshot whose slot went backwards", () => {
  test("is reported as snapshot_slot_regression with the change it hides (it was skipped silently before)", async () => {
    w = await plantedWorld(["balance_mismatch"]);
    await chainRound(w.h);
    await chainRound(w.h);
    // Snapshot 2 (the treasury grew by 4,321 without a transaction) as if read from a node 5 slots behind snapshot 1.
    const [p] = await rows(w.h, "SELECT slot FROM chain_token_snapshots WHERE id = 1");
    await w.h.ctx.store.run("UPDATE chain_token_snapshots SET slot = ? WHERE id = 2", [p!.slot - 5]);
    await job(w.h, "audit-anomalies");
    const found = (await anomalies(w, 1)).filter((r) => r.kind === "token_snapshot");
    expect(found).toEqual([
      {
        kind: "token_snapshot",
        signature: "token-snapshot:2",
        delta_raw: `${PLANTED_AMOUNTS.balance_mismatch}`,
        types: "snapshot_slot_regression",
        severity_rank: 2, // medium: its base severity (4,321 is below severity_high_amount)
        declaration_id: null,
        detail: JSON.stringify({
          previous_snapshot_id: 1,
          snapshot_id: 2,
          previous_slot: p!.slot,
          slot: p!.slot - 5,
          tracked_delta_raw: `${PLANTED_AMOUNTS.balance_mismatch}`,
          lp_delta_raw: "0",
        }),
      },
    ]);
    // The published rules say so (glossary.json), and the run's counts carry the type.
    const glossary = (await w.h.json(`${P}/glossary.json`)).body;
    expect(JSON.stringify(glossary)).toContain("S.slot < P.slot");
    expect(JSON.parse((await rows(w.h, "SELECT type_counts FROM audit_runs WHERE id = 1"))[0]!.type_counts).snapshot_slot_regression).toBe(1);
  });
});

describe("a clean history", () => {
  test("internal moves and holder transfers, balances that agree: nothing flagged, overall ok", async () => {
    const rpc = startSolanaRpc({ holders: 30, transactions: 0, seed: "clean" });
    cleanups.push(() => rpc.stop());
    const h = await openTestApp({ clock: new FakeClock(T0), env: chainEnv(rpc) });
    cleanups.push(() => h.close());
    const f = rpc.fixture;
    const internal = () =>
      f.appendTransfer({ from: f.walletParty(f.reserve[0]!), to: f.walletParty(f.treasury[1]!), amount: 3_000_000n, applyToBalances: true });
    internal();
    f.appendTransfer({ from: f.holderParty(1), to: f.holderParty(2), amount: 9_000_000n });
    await chainRound(h);
    internal();
    f.appendTransfer({ from: f.holderParty(3), to: f.holderParty(4), amount: 1_000_000n });
    await chainRound(h);
    await job(h, "audit-anomalies");
    const run = (await rows(h, "SELECT rows_total, signatures_with_anomalies, overall, severity_counts FROM audit_runs"))[0]!;
    expect(run).toEqual({ rows_total: 4, signatures_with_anomalies: 0, overall: "ok", severity_counts: '{"low":0,"medium":0,"high":0,"critical":0}' });
    expect((await rows(h, "SELECT count(*) AS n FROM audit_rows WHERE types <> ''"))[0]!.n).toBe(0);
    expect((await h.json(`${P}/summary.json`)).body).toMatchObject({ summary_available: true, top_anomalies: [], run: { overall: "ok" } });
  });
});

describe("declared movements", () => {
  test("a declaration covering the outflow clears it and is named on its row; a retracted one clears nothing after", async () => {
    w = await plantedWorld(["untracked_outflow"]);
    const token = await createAdminToken(w.h);
    const auth = { authorization: `Bearer ${token}` };
    await chainRound(w.h); // decimals known
    const outflow = w.rpc.plan!.cases[0]!;
    const tx = w.rpc.fixture.transaction(outflow.signature!)!;
    const at = new Date(tx.blockTime * 1000).toISOString();
    const declared = await w.h.json(
      "/admin/transparency/declared-movements",
      jsonInit(
        "POST",
        { direction: "outflow", amount: "12345.678901", window_start_utc: at, window_end_utc: at, reason: "market-maker top-up, board minute 12" },
        auth,
      ),
    );
    expect(declared.status).toBe(201);
    expect(declared.body.movement).toMatchObject({
      id: 1,
      direction: "outflow",
      amount: "12345.678901",
      amount_raw: "12345678901",
      status: "active",
      max_transactions: 1,
      matched_transactions: 0,
    });
    await chainRound(w.h);
    await job(w.h, "audit-anomalies");
    const row = (await rows(w.h, "SELECT types, severity_rank, declaration_id FROM audit_rows WHERE signature = ?", outflow.signature))[0];
    expect(row).toEqual({ types: "", severity_rank: 0, declaration_id: 1 });
    expect((await rows(w.h, "SELECT signatures_with_anomalies, overall FROM audit_runs WHERE id = 1"))[0]).toEqual({
      signatures_with_anomalies: 0,
      overall: "ok",
    });
    const pub = (await w.h.json(`${P}/declared-movements.json`)).body;
    expect(pub.movements[0]).toMatchObject({ id: 1, matched_transactions: 1, reason: "market-maker top-up, board minute 12" });
    // Used up (max_transactions 1): the same amount again in the window is an anomaly; so after a retraction.
    const retract = await w.h.json("/admin/transparency/declared-movements/1/retract", jsonInit("POST", { reason: "entered twice" }, auth));
    expect(retract.body.movement).toMatchObject({ status: "retracted", retract_reason: "entered twice" });
    expect((await w.h.json("/admin/transparency/declared-movements/1/retract", jsonInit("POST", { reason: "again" }, auth))).status).toBe(409);
  });

  test("the amount must match exactly and the block time fall inside the window", async () => {
    w = await plantedWorld(["untracked_outflow"]);
    const auth = { authorization: `Bearer ${await createAdminToken(w.h)}` };
    await chainRound(w.h);
    const tx = w.rpc.fixture.transaction(w.rpc.plan!.cases[0]!.signature!)!;
    const at = new Date(tx.blockTime * 1000);
    const before = new Date(at.getTime() - 1).toISOString();
    for (const body of [
      { direction: "outflow", amount: "12345.6789", window_start_utc: "2025-01-01", window_end_utc: "2027-01-01" }, // amount differs
      { direction: "inflow", amount: "12345.678901", window_start_utc: "2025-01-01", window_end_utc: "2027-01-01" }, // direction differs
      { direction: "outflow", amount: "12345.678901", window_start_utc: "2025-01-01", window_end_utc: before }, // ends 1 ms before
    ]) {
      expect((await w.h.json("/admin/transparency/declared-movements", jsonInit("POST", { ...body, reason: "test case" }, auth))).status).toBe(201);
    }
    await chainRound(w.h);
    await job(w.h, "audit-anomalies");
    expect((await rows(w.h, "SELECT types, declaration_id FROM audit_rows WHERE signature = ?", tx.signature))[0]).toEqual({
      types: "untracked_outflow",
      declaration_id: null,
    });
  });
});

describe("a crashed run", () => {
  test("stays incomplete with its error, is never the default selection, and the next run examines everything again", async () => {
    w = await plantedWorld(["untracked_outflow", "untracked_inflow"]);
    await chainRound(w.h);
    await chainRound(w.h);
    // A row the run cannot read, sorted last: the run dies after writing its first pages.
    await w.h.ctx.store.run(
      "INSERT INTO chain_transactions (signature, mint, slot, block_time, status, token_delta_raw, amount_moved_raw, found_via, sync_run_id, synced_at) VALUES ('zzzz', ?, 999999999, NULL, 'ok', 'not-a-number', '0', 'test', NULL, ?)",
      [w.rpc.fixture.mint, T0],
    );
    await expect(runAudit(w.h.ctx, null, { pageSize: 2 })).rejects.toThrow();
    const crashed = (await rows(w.h, "SELECT id, is_complete, error, rows_total FROM audit_runs"))[0]!;
    expect(crashed).toMatchObject({ id: 1, is_complete: 0 });
    expect(crashed.error).toBeTruthy();
    expect(crashed.rows_total).toBeGreaterThan(0);
    expect((await rows(w.h, "SELECT count(*) AS n FROM audit_examined"))[0]!.n).toBe(0);

    const summary = await w.h.json(`${P}/summary.json`);
    expect(summary.body).toMatchObject({ selected_run: null, summary_available: false });
    expect((await w.h.json(`${P}/summary.json?run=latest`)).status).toBe(404);
    expect((await w.h.json(`${P}/summary.json?run=1`)).body).toMatchObject({
      selected_run: 1,
      summary_available: false,
      run: { is_complete: false, overall: null },
    });
    const crashedView = (await w.h.json(`${P}/runs.json`)).body.runs;
    expect(crashedView).toMatchObject([{ run: 1, is_complete: false, is_selected: false }]);
    // No aggregates were stored, yet every key is there, at zero, as on a complete run.
    expect(crashedView[0].severity_counts).toEqual({ low: 0, medium: 0, high: 0, critical: 0 });
    expect(Object.values(crashedView[0].type_counts).every((n) => n === 0)).toBe(true);
    expect(Object.keys(crashedView[0].type_counts)).toContain("untracked_outflow");

    await w.h.ctx.store.run("DELETE FROM chain_transactions WHERE signature = 'zzzz'");
    w.h.clock.advanceSeconds(60);
    const next = await runAudit(w.h.ctx, null);
    expect(next).toMatchObject({ run_id: 2, signatures_with_anomalies: 2 });
    const runs = (await w.h.json(`${P}/runs.json`)).body;
    expect(runs).toMatchObject({ selected_run: 2, total_runs: 2 });
    expect(runs.runs.map((r: any) => [r.run, r.is_complete, r.is_selected])).toEqual([
      [2, true, true],
      [1, false, false],
    ]);
  });

  test("a run still in progress (another process) blocks a second one; after ten minutes it is ignored", async () => {
    w = await plantedWorld(["untracked_outflow"]);
    await chainRound(w.h);
    await w.h.ctx.store.run("INSERT INTO audit_runs (label, day, started_at, mint, decimals, thresholds) VALUES ('x', '2026-01-01', ?, ?, 6, '{}')", [
      w.h.clock.now().toISOString(),
      w.rpc.fixture.mint,
    ]);
    await expect(runAudit(w.h.ctx, null)).rejects.toThrow(/still in progress/);
    w.h.clock.advanceSeconds(601);
    expect((await runAudit(w.h.ctx, null)).run_id).toBe(2);
  });
});
