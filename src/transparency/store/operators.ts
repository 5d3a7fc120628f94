import { changed, countOf, insertedId, placeholders, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import { auditThresholdHistory, type auditTriage, declaredMovements } from "../tables";
import { columnsOf } from "./columns";

// What operators set: declared movements, thresholds (and their history), triage. Each write runs in the caller's
// transaction, beside its admin_audit row and the audit_state bump.

export type DeclarationRow = RowOf<typeof declaredMovements>;
export type TriageRow = RowOf<typeof auditTriage>;
export type ThresholdHistoryRow = Omit<RowOf<typeof auditThresholdHistory>, "id">;

// ---- declared movements

export function declarations(q: Queryable, status?: "active" | "retracted"): Promise<DeclarationRow[]> {
  const where = status === "active" ? "WHERE retracted_at IS NULL" : status === "retracted" ? "WHERE retracted_at IS NOT NULL" : "";
  return q.all<DeclarationRow>(`SELECT * FROM declared_movements ${where} ORDER BY id`);
}

/** A page of declarations, oldest first, LIMIT `limit`: above id `after` (the previous page's last one) or from `offset`. */
export function declarationsPage(q: Queryable, p: { after: number | null; limit: number; offset: number }): Promise<DeclarationRow[]> {
  if (p.after === null) return q.all<DeclarationRow>("SELECT * FROM declared_movements ORDER BY id LIMIT ? OFFSET ?", [p.limit, p.offset]);
  return q.all<DeclarationRow>("SELECT * FROM declared_movements WHERE id > ? ORDER BY id LIMIT ?", [p.after, p.limit]);
}

export function declarationById(q: Queryable, id: number): Promise<DeclarationRow | null> {
  return q.get<DeclarationRow>("SELECT * FROM declared_movements WHERE id = ?", [id]);
}

export type NewDeclaration = Omit<DeclarationRow, "id" | "retracted_at" | "retracted_by" | "retract_reason">;

const NEW_DECLARATION = columnsOf(declaredMovements, ["id", "retracted_at", "retracted_by", "retract_reason"]);

export async function insertDeclaration(t: Queryable, d: NewDeclaration): Promise<number> {
  const sql = `INSERT INTO declared_movements (${NEW_DECLARATION.join(", ")}) VALUES (${placeholders(NEW_DECLARATION.length)}) RETURNING id`;
  return insertedId(
    t,
    sql,
    NEW_DECLARATION.map((c) => d[c]),
  );
}

/** Retracts an active declaration; false when it was retracted already (by this request's race, or before). */
export async function retract(t: Queryable, id: number, at: string, by: string, reason: string): Promise<boolean> {
  return changed(t, "UPDATE declared_movements SET retracted_at = ?, retracted_by = ?, retract_reason = ? WHERE id = ? AND retracted_at IS NULL", [
    at,
    by,
    reason,
    id,
  ]);
}

// ---- thresholds

export function storedThresholdValues(q: Queryable): Promise<Array<{ parameter: string; value: string }>> {
  return q.all<{ parameter: string; value: string }>("SELECT parameter, value FROM audit_thresholds");
}

const HISTORY = columnsOf(auditThresholdHistory, ["id"]);

export async function setThreshold(t: Queryable, h: ThresholdHistoryRow): Promise<void> {
  await t.run(
    "INSERT INTO audit_thresholds (parameter, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (parameter) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    [h.parameter, h.new_value, h.changed_at],
  );
  await t.run(
    `INSERT INTO audit_threshold_history (${HISTORY.join(", ")}) VALUES (${placeholders(HISTORY.length)})`,
    HISTORY.map((c) => h[c]),
  );
}

/** threshold-history.json rows, newest first, and how many there are. */
export async function thresholdHistoryPage(q: Queryable, limit: number): Promise<{ rows: ThresholdHistoryRow[]; total: number }> {
  const rows = await q.all<ThresholdHistoryRow>(
    "SELECT changed_at, parameter, previous_value, new_value, owner, reason FROM audit_threshold_history ORDER BY id DESC LIMIT ?",
    [limit],
  );
  const total = await countOf(q, "SELECT count(*) AS n FROM audit_threshold_history");
  return { rows, total };
}

// ---- triage

const TRIAGE_COLUMNS = "signature, status, owner, eta_utc, note, updated_at, updated_by";

/** A page of triage rows by signature (a text key: pages by offset), optionally of one status. */
export function triagePage(q: Queryable, status: string | undefined, limit: number, offset: number): Promise<TriageRow[]> {
  return status
    ? q.all<TriageRow>(`SELECT ${TRIAGE_COLUMNS} FROM audit_triage WHERE status = ? ORDER BY signature LIMIT ? OFFSET ?`, [status, limit, offset])
    : q.all<TriageRow>(`SELECT ${TRIAGE_COLUMNS} FROM audit_triage ORDER BY signature LIMIT ? OFFSET ?`, [limit, offset]);
}

export function triageCounts(q: Queryable): Promise<Array<{ status: string; n: number }>> {
  return q.all<{ status: string; n: number }>("SELECT status, count(*) AS n FROM audit_triage GROUP BY status");
}

export function triageOf(q: Queryable, signature: string): Promise<TriageRow | null> {
  return q.get<TriageRow>(`SELECT ${TRIAGE_COLUMNS} FROM audit_triage WHERE signature = ?`, [signature]);
}

export async function upsertTriage(t: Queryable, r: TriageRow): Promise<void> {
  await t.run(
    `INSERT INTO audit_triage (signature, status, owner, eta_utc, note, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (signature) DO UPDATE SET status = excluded.status, owner = excluded.owner, eta_utc = excluded.eta_utc, note = excluded.note,
       updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
    [r.signature, r.status, r.owner, r.eta_utc, r.note, r.updated_at, r.updated_by],
  );
}
