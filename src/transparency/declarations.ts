import type { AppContext } from "../context";
import type { AdminRequest } from "../auth/admin-plugin";
import { actorLabel } from "../auth/actors";
import { writeAudit } from "../auth/audit";
import { AppError, NotFoundError } from "../http/errors";
import { formatUnits } from "../chain/service";
import { parseUnitsOrThrow } from "./amounts";
import type { ActiveDeclaration } from "./detector";
import { bumpState } from "./state";

// Declared movements: what the operators say the treasury will do. A synced transaction that matches an active
// declaration (direction, exact amount, block time inside the window, the signature when one is named, and a
// match left of max_transactions) is not an anomaly, and its row names the declaration. Retracting keeps the
// row: the runs that matched it still point at it.

interface DeclarationRow {
  id: number;
  direction: "outflow" | "inflow";
  amount_raw: string;
  decimals: number;
  counterparty: string | null;
  signature: string | null;
  window_start: string;
  window_end: string;
  max_transactions: number;
  reason: string;
  created_at: string;
  created_by: string;
  retracted_at: string | null;
  retracted_by: string | null;
  retract_reason: string | null;
}

/** Matches recorded by complete runs, per declaration. */
function matchedCounts(ctx: AppContext): Map<number, number> {
  const rows = ctx.db.sqlite
    .query(
      `SELECT r.declaration_id AS id, count(*) AS n FROM audit_rows r JOIN audit_runs u ON u.id = r.run_id
       WHERE r.declaration_id IS NOT NULL AND u.is_complete = 1 GROUP BY r.declaration_id`,
    )
    .all() as Array<{ id: number; n: number }>;
  return new Map(rows.map((r) => [r.id, r.n]));
}

function view(r: DeclarationRow, matched: number) {
  return {
    id: r.id,
    direction: r.direction,
    amount: formatUnits(BigInt(r.amount_raw), r.decimals),
    amount_raw: r.amount_raw,
    counterparty: r.counterparty,
    signature: r.signature,
    window_start_utc: r.window_start,
    window_end_utc: r.window_end,
    max_transactions: r.max_transactions,
    matched_transactions: matched,
    reason: r.reason,
    created_at: r.created_at,
    created_by: r.created_by,
    status: r.retracted_at ? ("retracted" as const) : ("active" as const),
    retracted_at: r.retracted_at,
    retracted_by: r.retracted_by,
    retract_reason: r.retract_reason,
  };
}
export type DeclarationView = ReturnType<typeof view>;

export function listDeclarations(ctx: AppContext, status?: "active" | "retracted"): DeclarationView[] {
  const where = status === "active" ? "WHERE retracted_at IS NULL" : status === "retracted" ? "WHERE retracted_at IS NOT NULL" : "";
  const rows = ctx.db.sqlite.query(`SELECT * FROM declared_movements ${where} ORDER BY id`).all() as DeclarationRow[];
  const matched = matchedCounts(ctx);
  return rows.map((r) => view(r, matched.get(r.id) ?? 0));
}

/** What the detector matches against: active declarations with the matches they have left. */
export function activeDeclarations(ctx: AppContext): ActiveDeclaration[] {
  const rows = ctx.db.sqlite.query("SELECT * FROM declared_movements WHERE retracted_at IS NULL ORDER BY id").all() as DeclarationRow[];
  const matched = matchedCounts(ctx);
  return rows.map((r) => ({
    id: r.id,
    direction: r.direction,
    amountRaw: BigInt(r.amount_raw),
    signature: r.signature,
    windowStart: r.window_start,
    windowEnd: r.window_end,
    remaining: r.max_transactions - (matched.get(r.id) ?? 0),
  }));
}

export interface DeclareInput {
  direction: "outflow" | "inflow";
  amount: string;
  counterparty?: string;
  signature?: string;
  window_start_utc: string;
  window_end_utc: string;
  max_transactions?: number;
  reason: string;
}

const utc = (text: string, field: string): string => {
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z)?$/.test(text) || Number.isNaN(ms)) {
    throw new AppError("invalid_payload", `${field} must be a UTC date (2026-01-31) or date-time ending in Z`, {
      details: [{ field, problem: "must be a UTC date or date-time ending in Z" }],
    });
  }
  return new Date(ms).toISOString();
};

export function declareMovement(ctx: AppContext, admin: AdminRequest, input: DeclareInput, decimals: number): DeclarationView {
  const amountRaw = parseUnitsOrThrow(input.amount, decimals, "amount", "invalid_payload");
  if (amountRaw === 0n) throw new AppError("invalid_payload", "amount must be above zero", { details: [{ field: "amount", problem: "must be above zero" }] });
  const start = utc(input.window_start_utc, "window_start_utc");
  // A bare date as the end means the whole day.
  const end = /^\d{4}-\d{2}-\d{2}$/.test(input.window_end_utc)
    ? utc(input.window_end_utc, "window_end_utc").replace("T00:00:00.000Z", "T23:59:59.999Z")
    : utc(input.window_end_utc, "window_end_utc");
  if (start > end)
    throw new AppError("invalid_payload", "window_start_utc is after window_end_utc", {
      details: [{ field: "window_start_utc", problem: "must not be after window_end_utc" }],
    });
  const now = ctx.clock.now().toISOString();
  const sqlite = ctx.db.sqlite;
  const id = sqlite.transaction(() => {
    const { id } = sqlite
      .query(
        `INSERT INTO declared_movements (direction, amount_raw, decimals, counterparty, signature, window_start, window_end, max_transactions, reason, created_at, created_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      )
      .get(
        input.direction,
        amountRaw.toString(),
        decimals,
        input.counterparty ?? null,
        input.signature ?? null,
        start,
        end,
        input.max_transactions ?? 1,
        input.reason,
        now,
        actorLabel(admin.actor),
      ) as { id: number };
    writeAudit(sqlite, {
      at: now,
      actor: admin.actor,
      action: "transparency.declaration.create",
      target: String(id),
      details: { ...input, amount_raw: amountRaw.toString() },
      requestId: admin.requestId,
    });
    bumpState(sqlite, now);
    return id;
  })();
  return getDeclarationOrThrow(ctx, id);
}

export function getDeclarationOrThrow(ctx: AppContext, id: number): DeclarationView {
  const row = ctx.db.sqlite.query("SELECT * FROM declared_movements WHERE id = ?").get(id) as DeclarationRow | null;
  if (!row) throw new NotFoundError("declared movement", id);
  return view(row, matchedCounts(ctx).get(id) ?? 0);
}

export function retractDeclaration(ctx: AppContext, admin: AdminRequest, id: number, reason: string): DeclarationView {
  const current = getDeclarationOrThrow(ctx, id);
  if (current.status === "retracted") throw new AppError("conflict", `declared movement ${id} was already retracted at ${current.retracted_at}`);
  const now = ctx.clock.now().toISOString();
  const sqlite = ctx.db.sqlite;
  sqlite.transaction(() => {
    sqlite
      .query("UPDATE declared_movements SET retracted_at = ?, retracted_by = ?, retract_reason = ? WHERE id = ? AND retracted_at IS NULL")
      .run(now, actorLabel(admin.actor), reason, id);
    writeAudit(sqlite, {
      at: now,
      actor: admin.actor,
      action: "transparency.declaration.retract",
      target: String(id),
      details: { reason, declaration: current },
      requestId: admin.requestId,
    });
    bumpState(sqlite, now);
  })();
  return getDeclarationOrThrow(ctx, id);
}
