import type { Statement } from "bun:sqlite";
import type { AppContext } from "../context";
import { absKey, absOf, parseUnits } from "./amounts";
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
} from "./chain-inputs";
import { activeDeclarations } from "./declarations";
import { authorityChanged, balanceMismatch, classifyTransaction, rowDelta, severityOf, type RawLimits } from "./detector";
import { ANOMALY_TYPES, severityRank, type AnomalyType, type Severity } from "./glossary";
import { bumpState } from "./state";
import { currentThresholds, THRESHOLD_DEFAULTS, type Thresholds } from "./thresholds";

// One audit run (the audit-anomalies job): every synced transaction of the mint that no complete run examined,
// and the token snapshots, mint-authority snapshots and sync runs after the last complete run's watermarks.
// Rows are written page by page (each page one short transaction, the event loop free between pages); the run
// becomes complete — aggregates, watermarks and the examined signatures — in one final transaction. A run that
// throws, or a process that dies, leaves is_complete = 0: never selected by default, and the next run
// examines everything again from the last complete run.

export const DEFAULT_PAGE = 5000;
/** An incomplete run without an error younger than this is taken to be still running (another process). */
const IN_PROGRESS_MINUTES = 10;

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

interface Watermarks {
  token: number;
  authority: number;
  sync: number;
}

function startRun(ctx: AppContext, jobRunId: number | null, mint: string, decimals: number, thresholds: Thresholds): { id: number; marks: Watermarks } {
  const sqlite = ctx.db.sqlite;
  const now = ctx.clock.now();
  const iso = now.toISOString();
  return sqlite.transaction(() => {
    const since = new Date(now.getTime() - IN_PROGRESS_MINUTES * 60_000).toISOString();
    const running = sqlite
      .query("SELECT id, started_at FROM audit_runs WHERE is_complete = 0 AND error IS NULL AND started_at > ? ORDER BY id DESC LIMIT 1")
      .get(since) as { id: number; started_at: string } | null;
    if (running)
      throw new Error(
        `audit run ${running.id} (started ${running.started_at}) is still in progress; a run left unfinished is ignored after ${IN_PROGRESS_MINUTES} minutes`,
      );
    const last = sqlite
      .query(
        "SELECT last_token_snapshot_id AS token, last_authority_snapshot_id AS authority, last_sync_run_id AS sync FROM audit_runs WHERE is_complete = 1 AND mint = ? ORDER BY id DESC LIMIT 1",
      )
      .get(mint) as Watermarks | null;
    const label = `${iso.slice(0, 19)}Z`;
    const { id } = sqlite
      .query("INSERT INTO audit_runs (label, day, started_at, job_run_id, mint, decimals, thresholds) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id")
      .get(label, iso.slice(0, 10), iso, jobRunId, mint, decimals, JSON.stringify(thresholds)) as { id: number };
    bumpState(sqlite, iso);
    return { id, marks: last ?? { token: 0, authority: 0, sync: 0 } };
  })();
}

function insertStatement(ctx: AppContext): Statement {
  return ctx.db.sqlite.prepare(
    "INSERT INTO audit_rows (run_id, kind, signature, slot, block_time, delta_raw, abs_key, types, severity_rank, declaration_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
}

function writeFindings(ctx: AppContext, insert: Statement, runId: number, findings: Finding[], agg: Aggregates): void {
  ctx.db.sqlite.transaction(() => {
    for (const f of findings) {
      insert.run(
        runId,
        f.kind,
        f.signature,
        f.slot,
        f.blockTime,
        f.delta.toString(),
        absKey(f.delta),
        f.types.join(","),
        f.severity ? severityRank(f.severity) : 0,
        f.declarationId,
        f.detail ? JSON.stringify(f.detail) : null,
      );
      agg.add(f);
    }
  })();
}

const yieldToLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

async function examineTransactions(
  ctx: AppContext,
  run: { id: number; mint: string },
  limits: RawLimits,
  pageSize: number,
  insert: Statement,
  agg: Aggregates,
): Promise<void> {
  const declarations = activeDeclarations(ctx);
  let after: { slot: number; signature: string } | null = null;
  for (;;) {
    const page = unexaminedTransactions(ctx, run.mint, after, pageSize);
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
    writeFindings(ctx, insert, run.id, findings, agg);
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
function examineTokenSnapshots(ctx: AppContext, mint: string, after: number, limits: RawLimits): { findings: Finding[]; mark: number } {
  const findings: Finding[] = [];
  let mark = after;
  let previous: TokenSnapshotFacts | null = null;
  for (const s of tokenSnapshotsAfter(ctx, mint, after)) {
    if (!syncFinishedAfter(ctx, mint, s.taken_at)) break; // its transactions may not be stored yet: next run
    const p = previous ?? tokenSnapshotBefore(ctx, mint, s.id);
    previous = s;
    mark = s.id;
    if (!p || p.slot === null || s.slot === null || walletSet(p) !== walletSet(s)) continue;
    if (s.slot < p.slot) {
      // Read from a node behind the one before: no slot range to sum over, so the change is reported, not skipped.
      findings.push(slotRegression(p, s, limits));
      continue;
    }
    const synced = syncedDeltaBetween(ctx, mint, p.slot, s.slot);
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
        delta: diff,
        types: ["balance_mismatch"],
        severity: severityOf(["balance_mismatch"], absOf(diff), limits),
        declarationId: null,
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
    delta,
    types: ["snapshot_slot_regression"],
    severity: severityOf(["snapshot_slot_regression"], absOf(delta), limits),
    declarationId: null,
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

function examineAuthorities(ctx: AppContext, mint: string, after: number, limits: RawLimits): { findings: Finding[]; mark: number } {
  const findings: Finding[] = [];
  let mark = after;
  let previous = null as ReturnType<typeof authoritySnapshotBefore>;
  let first = true;
  for (const a of authoritySnapshotsAfter(ctx, mint, after)) {
    const p = first ? authoritySnapshotBefore(ctx, mint, a.id) : previous;
    first = false;
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
      delta: 0n,
      types: ["authority_change"],
      severity: severityOf(["authority_change"], 0n, limits),
      declarationId: null,
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

function examineSyncRuns(ctx: AppContext, mint: string, after: number, limits: RawLimits): { findings: Finding[]; mark: number } {
  const runs = syncRunsAfter(ctx, mint, after);
  const findings: Finding[] = runs
    .filter((r) => r.gap_detected === 1)
    .map((r) => ({
      kind: "sync_run" as const,
      signature: `sync-run:${r.id}`,
      slot: r.newest_slot,
      blockTime: r.taken_at,
      delta: 0n,
      types: ["sync_gap" as const],
      severity: severityOf(["sync_gap"], 0n, limits),
      declarationId: null,
      detail: { sync_run_id: r.id, new_signatures: r.new_signatures, stored: r.stored },
    }));
  return { findings, mark: runs.length ? runs[runs.length - 1]!.id : after };
}

function completeRun(ctx: AppContext, runId: number, agg: Aggregates, marks: Watermarks): void {
  const sqlite = ctx.db.sqlite;
  const now = ctx.clock.now().toISOString();
  sqlite.transaction(() => {
    sqlite
      .query(
        "INSERT INTO audit_examined (signature, run_id) SELECT signature, run_id FROM audit_rows WHERE run_id = ? AND kind = 'transaction' ON CONFLICT (signature) DO NOTHING",
      )
      .run(runId);
    sqlite
      .query(
        `UPDATE audit_runs SET is_complete = 1, finished_at = ?, rows_total = ?, signatures_with_anomalies = ?, overall = ?, severity_counts = ?, type_counts = ?,
           max_abs_delta_raw = ?, transactions_examined = ?, last_token_snapshot_id = ?, last_authority_snapshot_id = ?, last_sync_run_id = ? WHERE id = ?`,
      )
      .run(
        now,
        agg.rows,
        agg.sigs,
        agg.overall(),
        JSON.stringify(agg.severity),
        JSON.stringify(agg.types),
        agg.maxAbs.toString(),
        agg.transactions,
        marks.token,
        marks.authority,
        marks.sync,
        runId,
      );
    bumpState(sqlite, now);
  })();
}

export interface AuditRunResult {
  run_id: number;
  rows_total: number;
  signatures_with_anomalies: number;
  overall: "ok" | "warn" | "bad";
}

/** The audit-anomalies job's work. Throws (the job run fails) when TOKEN_MINT has no token snapshot yet. */
export async function runAudit(ctx: AppContext, jobRunId: number | null, opts: { pageSize?: number } = {}): Promise<AuditRunResult> {
  const mint = ctx.config.chain.tokenMint!;
  const decimals = latestDecimals(ctx, mint);
  if (decimals === null) throw new Error("no token snapshot of TOKEN_MINT yet (the audit needs its decimals): run token-snapshot first");
  const thresholds = currentThresholds(ctx);
  const limits = rawLimits(thresholds, decimals);
  const { id, marks } = startRun(ctx, jobRunId, mint, decimals, thresholds);
  const agg = new Aggregates();
  try {
    const insert = insertStatement(ctx);
    await examineTransactions(ctx, { id, mint }, limits, Math.max(1, opts.pageSize ?? DEFAULT_PAGE), insert, agg);
    const token = examineTokenSnapshots(ctx, mint, marks.token, limits);
    const authority = examineAuthorities(ctx, mint, marks.authority, limits);
    const sync = examineSyncRuns(ctx, mint, marks.sync, limits);
    writeFindings(ctx, insert, id, [...token.findings, ...authority.findings, ...sync.findings], agg);
    completeRun(ctx, id, agg, { token: token.mark, authority: authority.mark, sync: sync.mark });
  } catch (err) {
    const now = ctx.clock.now().toISOString();
    ctx.db.sqlite.transaction(() => {
      ctx.db.sqlite
        .query("UPDATE audit_runs SET error = ?, finished_at = ?, rows_total = ? WHERE id = ?")
        .run(String((err as Error).message ?? err).slice(0, 500), now, agg.rows, id);
      bumpState(ctx.db.sqlite, now);
    })();
    throw err;
  }
  return { run_id: id, rows_total: agg.rows, signatures_with_anomalies: agg.sigs, overall: agg.overall() };
}
