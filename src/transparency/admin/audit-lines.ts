import { formatUnits } from "../../chain/service";
import type { AppContext } from "../../context";
import { triggersOf } from "../../jobs/store";
import { IN_PROGRESS_MINUTES } from "../audit/audit-run";
import { type AnomalyType, severityOfRank } from "../audit/glossary";
import { parseCounts, type RunRow } from "../reports/runs";
import { type AnomalyRow, anomalyRows, countRows } from "../store/rows";
import { listRunsPage, runCounts } from "../store/runs";
import { storedThresholds } from "../operator-inputs/thresholds";

// What the console's audit-runs page (audit-runs-page.ts) reads: the runs (newest first) with how each was started — the job run's
// trigger, from job_runs — and one run's anomalous rows with their triage, each put in words: what it is
// about (subject), what the audit found and what it expected instead (from the row's delta and detail, as the
// glossary's rules define them). Reads only; the page's actions are setTriage and the audit job's own runNow.

export type Verdict = "ok" | "warn" | "bad" | "failed" | "running" | "incomplete";

function verdictOf(r: RunRow, now: Date): Verdict {
  if (r.is_complete === 1) return r.overall ?? "ok";
  if (r.error !== null) return "failed";
  return Date.parse(r.started_at) > now.getTime() - IN_PROGRESS_MINUTES * 60_000 ? "running" : "incomplete";
}

/** One page of runs, newest first, and the total. */
export async function runLines(ctx: AppContext, offset: number, limit: number) {
  const rows = await listRunsPage(ctx.store, limit + 1, offset, null);
  const page = rows.slice(0, limit);
  const runIds = page.flatMap((r) => r.job_run_id ?? []);
  const triggers = await triggersOf(ctx.store, runIds);
  const now = ctx.clock.now();
  const lines = page.map((r) => {
    const trigger = r.job_run_id === null ? undefined : triggers.get(r.job_run_id);
    const s = parseCounts<"critical" | "high" | "medium" | "low">(r.severity_counts);
    return {
      id: r.id,
      label: r.label,
      started: r.started_at,
      finished: r.finished_at,
      trigger: trigger === "schedule" ? "scheduled" : trigger === "manual" ? "manual" : "unknown",
      verdict: verdictOf(r, now),
      error: r.error,
      rows: r.rows_total,
      transactions: r.transactions_examined,
      anomalous: r.is_complete === 1 ? r.signatures_with_anomalies : 0,
      severities: { critical: s.critical ?? 0, high: s.high ?? 0, medium: s.medium ?? 0, low: s.low ?? 0 },
    };
  });
  return { lines, hasMore: rows.length > limit, total: (await runCounts(ctx.store)).total };
}

export type RunLine = Awaited<ReturnType<typeof runLines>>["lines"][number];

/** 1234567.5 → 1,234,567.5 and -4321 → −4,321: amounts as a person reads them (the exports keep the plain decimal). */
export function grouped(decimal: string): string {
  const negative = decimal.startsWith("-");
  const [whole, frac] = (negative ? decimal.slice(1) : decimal).split(".");
  const w = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${negative ? "−" : ""}${w}${frac ? `.${frac}` : ""}`;
}

const signed = (raw: bigint, decimals: number) => {
  const g = grouped(formatUnits(raw, decimals));
  return raw > 0n ? `+${g}` : g;
};

type Detail = Record<string, unknown>;
const str = (v: unknown) => (v === null || v === undefined ? "none" : String(v));

/** What a row is about, what was found and what the rules expected instead (glossary.ts has the rules). */
function describe(r: AnomalyRow, run: RunRow): { subject: string; found: string; expected: string } {
  const d = (r.detail ? JSON.parse(r.detail) : {}) as Detail;
  const types = r.types.split(",") as AnomalyType[];
  const amount = (raw: unknown) => signed(BigInt(String(raw ?? "0")), run.decimals);
  const delta = signed(BigInt(r.delta_raw), run.decimals);
  const large = grouped(storedThresholds(run.thresholds).large_transfer_amount);
  switch (r.kind) {
    case "token_snapshot": {
      const wallets = String(d.wallets ?? "treasury+reserve");
      if (types.includes("snapshot_slot_regression")) {
        return {
          subject: `token snapshot #${str(d.snapshot_id)} after #${str(d.previous_snapshot_id)}`,
          found: `read at slot ${str(d.slot)}, before the previous snapshot's slot ${str(d.previous_slot)}; balance change ${amount(d.tracked_delta_raw)} (treasury+reserve), ${amount(d.lp_delta_raw)} (LP), unverifiable`,
          expected: `a slot at or after ${str(d.previous_slot)}, so the change can be checked against the synced transactions`,
        };
      }
      return {
        subject: `token snapshot #${str(d.snapshot_id)} against #${str(d.previous_snapshot_id)} (${wallets}, slots ${str(d.from_slot)}–${str(d.to_slot)})`,
        found: `balance changed by ${amount(d.snapshot_delta_raw)}`,
        expected: `${amount(d.synced_delta_raw)}, the synced transactions' sum (unexplained: ${delta})`,
      };
    }
    case "mint_authority_snapshot": {
      const fields = Array.isArray(d.changed_fields) ? (d.changed_fields as string[]) : [];
      return {
        subject: `mint-authority snapshot #${str(d.snapshot_id)}`,
        found: `mint authority ${str(d.mint_authority)}, freeze authority ${str(d.freeze_authority)}${fields.length ? ` (changed: ${fields.join(", ")})` : ""}`,
        expected: d.new_expectation_mismatch
          ? `the published EXPECTED_MINT_AUTHORITY / EXPECTED_FREEZE_AUTHORITY (mismatch: ${str((d.mismatch_fields as string[] | undefined)?.join(", "))})`
          : `unchanged: mint ${str(d.previous_mint_authority)}, freeze ${str(d.previous_freeze_authority)}`,
      };
    }
    case "sync_run":
      return {
        subject: `transaction sync run #${str(d.sync_run_id)}`,
        found: `${str(d.stored)} of ${str(d.new_signatures)} new signatures stored (more than CHAIN_TX_MAX_PER_RUN)`,
        expected: "every new signature stored, so the audit can examine it",
      };
    default: {
      const expected: string[] = [];
      if (types.includes("untracked_outflow") || types.includes("untracked_inflow")) expected.push("a declared movement covering it (none matched)");
      if (types.includes("large_transfer")) expected.push(`a net change below large_transfer_amount ${large}`);
      if (types.includes("duplicate_signature")) expected.push("one signature per movement (an identical transaction in the same slot sorts first)");
      const lp = d.lp_delta_raw === undefined ? "" : ` (treasury+reserve ${amount(d.token_delta_raw)}, LP ${amount(d.lp_delta_raw)})`;
      return {
        subject: `transaction ${r.signature}${r.slot === null ? "" : ` at slot ${r.slot}`}${r.block_time ? `, ${r.block_time.slice(0, 19).replace("T", " ")} UTC` : ""}`,
        found: `net change ${delta}${lp}`,
        expected: expected.join("; "),
      };
    }
  }
}

/** One page of a run's anomalous rows, most severe first (audit_rows_top_idx), with their triage; and how many in all. */
export async function anomalyLines(ctx: AppContext, run: RunRow, offset: number, limit: number) {
  const rows = await anomalyRows(ctx.store, run.id, limit + 1, offset);
  const total = run.is_complete === 1 ? run.signatures_with_anomalies : await countRows(ctx.store, run.id, true, { sql: "", params: [] });
  const lines = rows.slice(0, limit).map((r) => ({
    signature: r.signature,
    kind: r.kind,
    types: r.types.split(",") as AnomalyType[],
    ...describe(r, run),
    severity: severityOfRank(r.severity_rank) ?? "low",
    triage: r.t_status === null ? null : { status: r.t_status, owner: r.t_owner ?? "", eta: r.t_eta, note: r.t_note, by: r.t_by ?? "", at: r.t_at ?? "" },
  }));
  return { lines, hasMore: rows.length > limit, total };
}

export type AnomalyLine = Awaited<ReturnType<typeof anomalyLines>>["lines"][number];
