import { apartTask } from "../../db/apart";
import { countOf, type Param, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import { auditRows, type auditTriage } from "../tables";
import { columnsOf } from "./columns";

// audit_rows: written by a run page by page, read by the reports (top anomalies, filtered counts, the console's
// anomaly lines, declaration matches). The exports' pages are in store/exports.ts.

export type AuditRowRow = RowOf<typeof auditRows>;
type Triage = RowOf<typeof auditTriage>;

export type NewAuditRow = Omit<AuditRowRow, "id">;

/** What a run writes of each row: every column but the id. */
const ROW_COLUMNS = columnsOf(auditRows, ["id"]);
/**
 * Rows per INSERT: 11 parameters each, so 1,000 rows stay far below both engines' limits on bound parameters
 * (SQLite 32,766, PostgreSQL 65,535) while a page of 5,000 findings is five statements, not 5,000.
 */
const INSERT_BATCH = 1000;

export async function insertAuditRows(t: Queryable, rows: readonly NewAuditRow[]): Promise<void> {
  const one = `(${ROW_COLUMNS.map(() => "?").join(", ")})`;
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const batch = rows.slice(i, i + INSERT_BATCH);
    const params: Param[] = batch.flatMap((r) => ROW_COLUMNS.map((c) => r[c]));
    await t.run(`INSERT INTO audit_rows (${ROW_COLUMNS.join(", ")}) VALUES ${batch.map(() => one).join(", ")}`, params);
  }
}

export type TopRow = Pick<AuditRowRow, "signature" | "kind" | "types" | "severity_rank" | "delta_raw"> & { triage: Triage["status"] | null };

/** The run's most severe rows, the largest first (audit_rows_top_idx), with their triage status. */
export function topRows(q: Queryable, runId: number, limit: number): Promise<TopRow[]> {
  return q.all<TopRow>(
    `SELECT r.signature, r.kind, r.types, r.severity_rank, r.delta_raw, t.status AS triage FROM audit_rows r LEFT JOIN audit_triage t ON t.signature = r.signature
     WHERE r.run_id = ? AND r.severity_rank > 0 ORDER BY r.severity_rank DESC, r.abs_key DESC, r.id DESC LIMIT ?`,
    [runId, limit],
  );
}

/** Rows of the run passing `conditions` (src/transparency/reports/filters.ts rowConditions; `sigsOnly`: anomalous ones). */
export async function countRows(q: Queryable, runId: number, sigsOnly: boolean, conditions: { sql: string; params: Param[] }): Promise<number> {
  const sql = `SELECT count(*) AS n FROM audit_rows r WHERE r.run_id = ?${sigsOnly ? " AND r.severity_rank > 0" : ""}${conditions.sql}`;
  return countOf(q, sql, [runId, ...conditions.params]);
}

/**
 * A filtered trend's values: each run's rows passing its conditions, counted run by run (up to 1,001 runs, every row
 * of each), apart from the event loop (src/db/apart.ts) — on the public trend.json a filter no answer cache holds yet
 * read every audit row of those runs on the one thread.
 */
export const filteredCountsTask = apartTask(
  "audit-filtered-counts",
  async (q, a: { sigsOnly: boolean; runs: Array<{ id: number; conditions: { sql: string; params: Param[] } }> }) => {
    const counts: number[] = [];
    for (const run of a.runs) counts.push(await countRows(q, run.id, a.sigsOnly, run.conditions));
    return counts;
  },
);

export type AnomalyRow = Pick<
  AuditRowRow,
  "signature" | "kind" | "slot" | "block_time" | "delta_raw" | "types" | "severity_rank" | "declaration_id" | "detail"
> & {
  t_status: Triage["status"] | null;
  t_owner: Triage["owner"] | null;
  t_eta: Triage["eta_utc"];
  t_note: Triage["note"];
  t_by: Triage["updated_by"] | null;
  t_at: Triage["updated_at"] | null;
};

/** A page of the run's anomalous rows, most severe first, with their triage (the console's audit-runs page). */
export function anomalyRows(q: Queryable, runId: number, limit: number, offset: number): Promise<AnomalyRow[]> {
  return q.all<AnomalyRow>(
    `SELECT r.signature, r.kind, r.slot, r.block_time, r.delta_raw, r.types, r.severity_rank, r.declaration_id, r.detail,
       t.status AS t_status, t.owner AS t_owner, t.eta_utc AS t_eta, t.note AS t_note, t.updated_by AS t_by, t.updated_at AS t_at
     FROM audit_rows r LEFT JOIN audit_triage t ON t.signature = r.signature
     WHERE r.run_id = ? AND r.severity_rank > 0 ORDER BY r.severity_rank DESC, r.abs_key DESC, r.id DESC LIMIT ? OFFSET ?`,
    [runId, limit, offset],
  );
}

/** Whether a complete run flagged the signature (only those can be triaged). */
export async function flaggedByCompleteRun(q: Queryable, signature: string): Promise<boolean> {
  const row = await q.get(
    "SELECT 1 AS flagged FROM audit_rows r JOIN audit_runs u ON u.id = r.run_id WHERE r.signature = ? AND r.severity_rank > 0 AND u.is_complete = 1 LIMIT 1",
    [signature],
  );
  return row !== null;
}

/**
 * Matches recorded by complete runs, per declaration: down audit_rows_declaration_idx, the matched rows alone. The
 * CROSS JOIN keeps SQLite's loop on them (with a plain JOIN it walked every row of every complete run: 1.3 s at
 * 2,000,000 rows); PostgreSQL reads it as an inner join and plans it as one.
 */
export async function declarationMatches(q: Queryable): Promise<Map<number, number>> {
  const rows = await q.all<{ id: number; n: number }>(
    `SELECT r.declaration_id AS id, count(*) AS n FROM audit_rows r CROSS JOIN audit_runs u
     WHERE u.id = r.run_id AND r.declaration_id IS NOT NULL AND u.is_complete = 1 GROUP BY r.declaration_id`,
  );
  return new Map(rows.map((r) => [r.id, r.n]));
}
