import type { AppContext } from "../context";
import type { AdminRequest } from "../auth/admin-plugin";
import { actorLabel } from "../auth/actors";
import { writeAudit } from "../auth/audit";
import { AppError, NotFoundError } from "../http/errors";
import type { PageRequest } from "../http/pagination";
import { pageOf } from "../http/pagination";
import { bumpState } from "./state";

// Triage: an operator's status per anomalous signature (open, investigating, resolved, false_positive) with an
// owner and an ETA. Only a signature that a complete run flagged can be triaged; each change is audited in the
// same transaction. An anomaly without a triage row is untriaged (triage.json lists only what operators set).

export const TRIAGE_STATUSES = ["open", "investigating", "resolved", "false_positive"] as const;
export type TriageStatus = (typeof TRIAGE_STATUSES)[number];

interface TriageRow {
  signature: string;
  status: TriageStatus;
  owner: string;
  eta_utc: string | null;
  note: string | null;
  updated_at: string;
  updated_by: string;
}

export function listTriage(ctx: AppContext, status: TriageStatus | undefined, page: PageRequest) {
  // Keyset on the rowid is not available for a text key: pages by offset, ordered by signature.
  const where = status ? "WHERE status = ?" : "";
  const args: Array<string | number> = status ? [status] : [];
  const rows = ctx.db.sqlite
    .query(`SELECT signature, status, owner, eta_utc, note, updated_at, updated_by FROM audit_triage ${where} ORDER BY signature LIMIT ? OFFSET ?`)
    .all(...args, page.limit + 1, page.offset) as TriageRow[];
  const p = pageOf(rows, { ...page, after: null, cursor: null }, () => 0);
  const counts = ctx.db.sqlite.query("SELECT status, count(*) AS n FROM audit_triage GROUP BY status").all() as Array<{ status: TriageStatus; n: number }>;
  return {
    status: status ?? null,
    counts: Object.fromEntries(TRIAGE_STATUSES.map((s) => [s, counts.find((c) => c.status === s)?.n ?? 0])) as Record<TriageStatus, number>,
    count: p.count,
    rows: p.items,
    query: { limit: page.limit, offset: page.offset },
    pagination: { has_more: p.pagination.has_more, next_offset: p.pagination.next_offset, next_cursor: null },
  };
}

export interface TriageInput {
  status: TriageStatus;
  owner: string;
  eta_utc?: string | null;
  note?: string | null;
}

export function setTriage(ctx: AppContext, admin: AdminRequest, signature: string, input: TriageInput): TriageRow {
  const flagged = ctx.db.sqlite
    .query("SELECT 1 FROM audit_rows r JOIN audit_runs u ON u.id = r.run_id WHERE r.signature = ? AND r.severity_rank > 0 AND u.is_complete = 1 LIMIT 1")
    .get(signature);
  if (!flagged) throw new NotFoundError("anomaly", signature);
  let eta: string | null = null;
  if (input.eta_utc) {
    const ms = Date.parse(input.eta_utc);
    if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z)?$/.test(input.eta_utc) || Number.isNaN(ms)) {
      throw new AppError("invalid_payload", "eta_utc must be a UTC date or date-time ending in Z", {
        details: [{ field: "eta_utc", problem: "must be a UTC date or date-time ending in Z" }],
      });
    }
    eta = new Date(ms).toISOString();
  }
  const now = ctx.clock.now().toISOString();
  const sqlite = ctx.db.sqlite;
  const before = sqlite.query("SELECT status, owner, eta_utc, note FROM audit_triage WHERE signature = ?").get(signature) as Partial<TriageRow> | null;
  sqlite.transaction(() => {
    sqlite
      .query(
        `INSERT INTO audit_triage (signature, status, owner, eta_utc, note, updated_at, updated_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (signature) DO UPDATE SET status = ?2, owner = ?3, eta_utc = ?4, note = ?5, updated_at = ?6, updated_by = ?7`,
      )
      .run(signature, input.status, input.owner, eta, input.note ?? null, now, actorLabel(admin.actor));
    writeAudit(sqlite, {
      at: now,
      actor: admin.actor,
      action: "transparency.triage.set",
      target: signature,
      details: { before, after: { status: input.status, owner: input.owner, eta_utc: eta, note: input.note ?? null } },
      requestId: admin.requestId,
    });
    bumpState(sqlite, now);
  })();
  return sqlite
    .query("SELECT signature, status, owner, eta_utc, note, updated_at, updated_by FROM audit_triage WHERE signature = ?")
    .get(signature) as TriageRow;
}
