import type { AppContext } from "../../context";
import { absKey, absOf, parseUnits } from "./amounts";
import { activeDeclarations } from "../operator-inputs/declarations";
import { authorityChanged, balanceMismatch, classifyTransaction, rowDelta, severityOf, type RawLimits } from "./detector";
import { ANOMALY_TYPES, severityRank, type AnomalyType, type Severity } from "./glossary";
import { auditStateChanged } from "../state";
import {
  authoritySnapshotBefore,
  authoritySnapshotsAfter,
  latestDecimals,
  syncedDeltaBetween,
  syncFinishedAfter,
  syncRunsAfter,
  tokenSnapshotBefore,
  tokenSnapshotsAfter,
  unexaminedTransactions,
  type TokenSnapshotFacts,
} from "../store/chain-inputs";
import { insertAuditRows } from "../store/rows";
import { completeRun as completeRunRow, failRun, insertRun, lastWatermarks, newerRun, runningSince, type Watermarks } from "../store/runs";
import { bumpState } from "../store/state";
import { currentThresholds, THRESHOLD_DEFAULTS, type Thresholds } from "../operator-inputs/thresholds";

// One audit run (the audit-anomalies job): every synced transaction of the mint that no complete run examined,
// and the token snapshots, mint-authority snapshots and sync runs after the last complete run's watermarks.
// Rows are written page by page (each page one short transaction, the event loop free between pages); the run
// becomes complete — aggregates, watermarks and the examined signatures — in one final transaction. A run that
// throws, or a process that dies, leaves is_complete = 0: never selected by default, and the next run
// examines everything again from the last complete run.
//
// Several instances: the job registry runs the job on one instance at a time, and the writes are safe even when
// two runs overlap (a manual run, a lease that expired under a slow run). A run starts and completes in
// transactions that bump audit_state FIRST: on PostgreSQL that row lock serialises them, so of two starting at
// once the second sees the first and refuses; a run still going after IN_PROGRESS_MINUTES may be overtaken, and
// then it no longer completes (a newer run exists), so complete runs commit in id order — what the ops monitor's
// "complete runs after id N" relies on (audit-service.ts). Examined signatures are claimed with ON CONFLICT.

export const DEFAULT_PAGE = 5000;
/** An incomplete run without an error younger than this is taken to be still running (another process). */
export const IN_PROGRESS_MINUTES = 10;

interface Finding {
  kind: "transaction" | "token_snapshot" | "mint_authority_snapshot" | "sync_run";
  signature: string;
  slot: number | null;
  blockTime: string | null;
  delta: bigint;
  types: AnomalyType[];
  severity: Severity | null;
  declarationId: number | null;
  detail: Record<string, unknown> | null;
}

class Aggregates {
  rows = 0;
  sigs = 0;
  transactions = 0;
  maxAbs = 0n;
  severity: Record<Severity, number> = { low: 0, medium: 0, high: 0, critical: 0 };
  types: Record<AnomalyType, number> = Object.fromEntries(ANOMALY_TYPES.map((t) => [t, 0])) as Record<AnomalyType, number>;

  add(f: Finding): void {
    this.rows++;
    if (f.kind === "transaction") this.transactions++;
    if (!f.severity) return;
    this.sigs++;
    this.severity[f.severity]++;
    for (const t of f.types) this.types[t]++;
    const abs = absOf(f.delta);
    if (abs > this.maxAbs) this.maxAbs = abs;
  }

  overall(): "ok" | "warn" | "bad" {
    if (this.severity.high + this.severity.critical > 0) return "bad";
    return this.sigs > 0 ? "warn" : "ok";
  }
}

/** A finding's verdict under one anomaly type and no declaration: the rules over snapshots and sync runs. */
const judged = (type: AnomalyType, delta: bigint, limits: RawLimits) => ({
  delta,
  types: [type],
  severity: severityOf([type], absOf(delta), limits),
  declarationId: null,
});

/** The amount thresholds in raw units of the mint; a stored value the mint cannot express falls back to the default. */
export function rawLimits(t: Thresholds, decimals: number): RawLimits {
  const raw = (name: keyof typeof THRESHOLD_DEFAULTS) => parseUnits(t[name], decimals) ?? parseUnits(THRESHOLD_DEFAULTS[name], decimals)!;
  return {
    large: raw("large_transfer_amount"),
    medium: raw("severity_medium_amount"),
    high: raw("severity_high_amount"),
    critical: raw("severity_critical_amount"),
  };
}

async function startRun(
  ctx: AppContext,
  jobRunId: number | null,
  mint: string,
  decimals: number,
  thresholds: Thresholds,
): Promise<{ id: number; marks: Watermarks }> {
  const now = ctx.clock.now();
  const iso = now.toISOString();
  const since = new Date(now.getTime() - IN_PROGRESS_MINUTES * 60_000).toISOString();
  const started = await ctx.store.tx(async (t) => {
    await bumpState(t, iso);
    const running = await runningSince(t, since);
    if (running)
      throw new Error(
        `audit run ${running.id} (started ${running.started_at}) is still in progress; a run left unfinished is ignored after ${IN_PROGRESS_MINUTES} minutes`,
      );
    const last = await lastWatermarks(t, mint);
    const id = await insertRun(t, {
      label: `${iso.slice(0, 19)}Z`,
      day: iso.slice(0, 10),
      startedAt: iso,
      jobRunId,
      mint,
      decimals,
      thresholds: JSON.stringify(thresholds),
    });
    return { id, marks: last ?? { token: 0, authority: 0, sync: 0 } };
  });
  auditStateChanged(ctx);
  return started;
}

/** One short transaction per page; the aggregates count a page once it is written. */
async function writeFindings(ctx: AppContext, runId: number, findings: Finding[], agg: Aggregates): Promise<void> {
  if (findings.length === 0) return;
  await ctx.store.tx((t) =>
    insertAuditRows(
      t,
      findings.map((f) => ({
        run_id: runId,
        kind: f.kind,
        signature: f.signature,
        slot: f.slot,
        block_time: f.blockTime,
        delta_raw: f.delta.toString(),
        abs_key: absKey(f.delta),
        types: f.types.join(","),
        severity_rank: f.severity ? severityRank(f.severity) : 0,
        declaration_id: f.declarationId,
        detail: f.detail ? JSON.stringify(f.detail) : null,
      })),
    ),
  );
  for (const f of findings) agg.add(f);
}

const yieldToLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

async function examineTransactions(ctx: AppContext, run: { id: number; mint: string }, limits: RawLimits, pageSize: number, agg: Aggregates): Promise<void> {
  const declarations = await activeDeclarations(ctx.store);
  let after: { slot: number; signature: string } | null = null;
  for (;;) {
    const page = await unexaminedTransactions(ctx.store, run.mint, after, pageSize);
    if (page.length === 0) return;
    const findings: Finding[] = page.map((r) => {
      const tx = {
        signature: r.signature,
        slot: r.slot,
        blockTime: r.block_time,
        status: r.status,
        delta: BigInt(r.token_delta_raw),
        lpDelta: BigInt(r.lp_delta_raw),
        moved: BigInt(r.amount_moved_raw),
        hasEarlierTwin: r.twin === 1,
      };
      const v = classifyTransaction(tx, declarations, limits);
      // Only rows an LP wallet moved carry detail: both deltas, so the row's delta can be told apart.
      const detail = tx.lpDelta === 0n ? null : { token_delta_raw: r.token_delta_raw, lp_delta_raw: r.lp_delta_raw };
      return {
        kind: "transaction",
        signature: r.signature,
        slot: r.slot,
        blockTime: r.block_time,
        delta: rowDelta(tx),
        types: v.types,
        severity: v.severity,
        declarationId: v.declarationId,
        detail,
      };
    });
    await writeFindings(ctx, run.id, findings, agg);
    const last = page[page.length - 1]!;
    after = { slot: last.slot, signature: last.signature };
    if (page.length < pageSize) return;
    await yieldToLoop();
  }
}

const walletSet = (s: TokenSnapshotFacts) =>
  (JSON.parse(s.wallets_json) as Array<{ role: string; wallet: string }>)
    .map((w) => `${w.role}:${w.wallet}`)
    .sort()
    .join(",");
const tracked = (s: TokenSnapshotFacts) => BigInt(s.treasury_raw) + BigInt(s.reserve_raw);
/** The LP wallets' balance in a snapshot: its wallets_json entries with role lp (no column: they are not excluded from supply). */
const lpBalance = (s: TokenSnapshotFacts) =>
  (JSON.parse(s.wallets_json) as Array<{ role: string; amount_raw: string }>).filter((w) => w.role === "lp").reduce((sum, w) => sum + BigInt(w.amount_raw), 0n);

/**
 * balance_mismatch over the token snapshots after the watermark; stops at the first one no sync has caught up with.
 * Treasury + reserve and the LP wallets are compared apart (token-snapshot:<id> and token-snapshot:<id>:lp).
 */
async function examineTokenSnapshots(ctx: AppContext, mint: string, after: number, limits: RawLimits): Promise<{ findings: Finding[]; mark: number }> {
  const findings: Finding[] = [];
  let mark = after;
  let previous: TokenSnapshotFacts | null = null;
  for (const s of await tokenSnapshotsAfter(ctx.store, mint, after)) {
    if (!(await syncFinishedAfter(ctx.store, mint, s.taken_at))) break; // its transactions may not be stored yet: next run
    const p = previous ?? (await tokenSnapshotBefore(ctx.store, mint, s.id));
    previous = s;
    mark = s.id;
    if (!p || p.slot === null || s.slot === null || walletSet(p) !== walletSet(s)) continue;
    if (s.slot < p.slot) {
      // Read from a node behind the one before: no slot range to sum over, so the change is reported, not skipped.
      findings.push(slotRegression(p, s, limits));
      continue;
    }
    const synced = await syncedDeltaBetween(ctx.store, mint, p.slot, s.slot);
    const sets = [
      { suffix: "", snapshotDelta: tracked(s) - tracked(p), syncedDelta: synced.tracked },
      { suffix: ":lp", snapshotDelta: lpBalance(s) - lpBalance(p), syncedDelta: synced.lp },
    ];
    for (const { suffix, snapshotDelta, syncedDelta } of sets) {
      const diff = balanceMismatch(snapshotDelta, syncedDelta);
      if (diff === null) continue;
      findings.push({
        kind: "token_snapshot",
        signature: `token-snapshot:${s.id}${suffix}`,
        slot: s.slot,
        blockTime: s.taken_at,
        ...judged("balance_mismatch", diff, limits),
        detail: {
          previous_snapshot_id: p.id,
          snapshot_id: s.id,
          wallets: suffix ? "lp" : "treasury+reserve",
          from_slot: p.slot,
          to_slot: s.slot,
          snapshot_delta_raw: snapshotDelta.toString(),
          synced_delta_raw: syncedDelta.toString(),
        },
      });
    }
  }
  return { findings, mark };
}

/** snapshot_slot_regression: S was read at an earlier slot than P; the balance change between them is unverifiable. */
function slotRegression(p: TokenSnapshotFacts, s: TokenSnapshotFacts, limits: RawLimits): Finding {
  const trackedDelta = tracked(s) - tracked(p);
  const lpDelta = lpBalance(s) - lpBalance(p);
  const delta = absOf(lpDelta) > absOf(trackedDelta) ? lpDelta : trackedDelta;
  return {
    kind: "token_snapshot",
    signature: `token-snapshot:${s.id}`,
    slot: s.slot,
    blockTime: s.taken_at,
    ...judged("snapshot_slot_regression", delta, limits),
    detail: {
      previous_snapshot_id: p.id,
      snapshot_id: s.id,
      previous_slot: p.slot,
      slot: s.slot,
      tracked_delta_raw: trackedDelta.toString(),
      lp_delta_raw: lpDelta.toString(),
    },
  };
}

async function examineAuthorities(ctx: AppContext, mint: string, after: number, limits: RawLimits): Promise<{ findings: Finding[]; mark: number }> {
  const findings: Finding[] = [];
  let mark = after;
  let previous = null as Awaited<ReturnType<typeof authoritySnapshotBefore>>;
  for (const a of await authoritySnapshotsAfter(ctx.store, mint, after)) {
    const p = previous ?? (await authoritySnapshotBefore(ctx.store, mint, a.id));
    previous = a;
    mark = a.id;
    const facts = (x: NonNullable<typeof p>) => ({ mintAuthority: x.mint_authority, freezeAuthority: x.freeze_authority, mismatch: x.mismatch === 1 });
    const c = authorityChanged(facts(a), p ? facts(p) : null);
    if (!c.changed) continue;
    findings.push({
      kind: "mint_authority_snapshot",
      signature: `mint-authority-snapshot:${a.id}`,
      slot: a.slot,
      blockTime: a.taken_at,
      ...judged("authority_change", 0n, limits),
      detail: {
        previous_snapshot_id: p?.id ?? null,
        snapshot_id: a.id,
        changed_fields: c.fields,
        new_expectation_mismatch: c.newMismatch,
        mismatch_fields: JSON.parse(a.mismatch_fields),
        mint_authority: a.mint_authority,
        freeze_authority: a.freeze_authority,
        previous_mint_authority: p?.mint_authority ?? null,
        previous_freeze_authority: p?.freeze_authority ?? null,
      },
    });
  }
  return { findings, mark };
}

async function examineSyncRuns(ctx: AppContext, mint: string, after: number, limits: RawLimits): Promise<{ findings: Finding[]; mark: number }> {
  const runs = await syncRunsAfter(ctx.store, mint, after);
  const findings: Finding[] = runs
    .filter((r) => r.gap_detected === 1)
    .map((r) => ({
      kind: "sync_run" as const,
      signature: `sync-run:${r.id}`,
      slot: r.newest_slot,
      blockTime: r.taken_at,
      ...judged("sync_gap", 0n, limits),
      detail: { sync_run_id: r.id, new_signatures: r.new_signatures, stored: r.stored },
    }));
  return { findings, mark: runs.length ? runs[runs.length - 1]!.id : after };
}

/** Aggregates, watermarks and the examined signatures in one transaction; an overtaken run fails instead (see the top). */
async function completeRun(ctx: AppContext, runId: number, agg: Aggregates, marks: Watermarks): Promise<void> {
  const now = ctx.clock.now().toISOString();
  await ctx.store.tx(async (t) => {
    await bumpState(t, now);
    const newer = await newerRun(t, runId);
    if (newer) throw new Error(`audit run ${newer.id} started while this run was still going; this run's rows stay, incomplete`);
    const completed = await completeRunRow(t, runId, {
      finishedAt: now,
      rows: agg.rows,
      sigs: agg.sigs,
      overall: agg.overall(),
      severityCounts: JSON.stringify(agg.severity),
      typeCounts: JSON.stringify(agg.types),
      maxAbsDeltaRaw: agg.maxAbs.toString(),
      transactions: agg.transactions,
      marks,
    });
    if (!completed) throw new Error(`audit run ${runId} was closed by another process before it completed`);
  });
  auditStateChanged(ctx);
}

/** The audit-anomalies job's work. Throws (the job run fails) when TOKEN_MINT has no token snapshot yet. */
export async function runAudit(ctx: AppContext, jobRunId: number | null, opts: { pageSize?: number } = {}) {
  const mint = ctx.config.chain.tokenMint!;
  const decimals = await latestDecimals(ctx.store, mint);
  if (decimals === null) throw new Error("no token snapshot of TOKEN_MINT yet (the audit needs its decimals): run token-snapshot first");
  const thresholds = await currentThresholds(ctx.store);
  const limits = rawLimits(thresholds, decimals);
  const { id, marks } = await startRun(ctx, jobRunId, mint, decimals, thresholds);
  const agg = new Aggregates();
  try {
    await examineTransactions(ctx, { id, mint }, limits, Math.max(1, opts.pageSize ?? DEFAULT_PAGE), agg);
    const token = await examineTokenSnapshots(ctx, mint, marks.token, limits);
    const authority = await examineAuthorities(ctx, mint, marks.authority, limits);
    const sync = await examineSyncRuns(ctx, mint, marks.sync, limits);
    await writeFindings(ctx, id, [...token.findings, ...authority.findings, ...sync.findings], agg);
    await completeRun(ctx, id, agg, { token: token.mark, authority: authority.mark, sync: sync.mark });
  } catch (err) {
    const now = ctx.clock.now().toISOString();
    await ctx.store.tx(async (t) => {
      await failRun(t, id, String((err as Error).message ?? err).slice(0, 500), now, agg.rows);
      await bumpState(t, now);
    });
    auditStateChanged(ctx);
    throw err;
  }
  return { run_id: id, rows_total: agg.rows, signatures_with_anomalies: agg.sigs, overall: agg.overall() };
}
