import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { pageOf, type PageRequest } from "../http/pagination";
import { getUserOrThrow, requireActiveUser } from "../partner/service";
import { minorToNumber, parseAmountMinor } from "./amounts";
import { appendEntry, balanceMinorOf, emitLedgerEvent } from "./ledger";

/** Who wrote an entry: the key, and the Idempotency-Key that makes a retry of it a no-op. */
export interface EntryAuthor {
  keyId: string;
  idempotencyKey: string | null;
}

export interface EntryBody {
  user_id: string;
  amount: unknown;
  reason: string;
  source: string;
}

const rulesOf = (ctx: AppContext) => ctx.config.salutes;

/** GET /api/salutes/balance. Suspended users can still be read. */
export function getBalance(ctx: AppContext, owner: Owner, keyId: string, rawUserId: string) {
  const user = getUserOrThrow(ctx, owner, rawUserId);
  return { user_id: String(user.id), balance: minorToNumber(balanceMinorOf(ctx.db.sqlite, user.id), rulesOf(ctx).decimals), partner_key_id: keyId };
}

/**
 * A credit or a debit. Call inside the idempotency transaction: the user check, the balance read, the entry, the
 * balance row and the outbox event commit together or not at all. `answer` is the response body; `deliveries`
 * says whether the dispatcher has anything to send.
 */
export function postEntry(ctx: AppContext, owner: Owner, author: EntryAuthor, kind: "credit" | "debit", body: EntryBody) {
  const amountMinor = parseAmountMinor(body.amount, rulesOf(ctx));
  const user = getUserOrThrow(ctx, owner, body.user_id);
  requireActiveUser(user);
  const deltaMinor = kind === "credit" ? amountMinor : -amountMinor;
  const entry = appendEntry(ctx, owner, {
    userId: user.id,
    deltaMinor,
    reason: body.reason,
    source: body.source,
    keyId: author.keyId,
    idempotencyKey: author.idempotencyKey,
  });
  const d = rulesOf(ctx).decimals;
  const answer = {
    user_id: String(user.id),
    balance: minorToNumber(entry.balanceAfterMinor, d),
    delta: minorToNumber(deltaMinor, d),
    ledger_entry_id: entry.id,
    idempotency_key: author.idempotencyKey,
  };
  const deliveries = emitLedgerEvent(ctx, owner, entry, {
    user_id: answer.user_id,
    delta: answer.delta,
    balance: answer.balance,
    reason: body.reason,
    source: body.source,
  });
  return { answer, deliveries };
}

interface LedgerRow {
  id: number;
  user_id: number;
  delta_minor: number;
  balance_after_minor: number;
  reason: string;
  source: string;
  created_at: string;
}

export interface LedgerFilters {
  user_id: string;
  order?: "asc" | "desc";
  reason?: string;
  source?: string;
}

/** GET /api/salutes/ledger: one user's entries, newest first unless order=asc; keyset cursor on id. */
export function listLedger(ctx: AppContext, owner: Owner, filters: LedgerFilters, page: PageRequest) {
  const user = getUserOrThrow(ctx, owner, filters.user_id);
  const order = filters.order ?? "desc";
  const where = ["user_id = ?", "partner = ?", "mode = ?"];
  const args: Array<string | number> = [user.id, owner.partner, owner.mode];
  if (filters.reason !== undefined) where.push("reason = ?"), args.push(filters.reason);
  if (filters.source !== undefined) where.push("source = ?"), args.push(filters.source);
  if (page.after !== null) where.push(order === "desc" ? "id < ?" : "id > ?"), args.push(page.after);
  // Served by salutes_ledger_user_idx (user_id, id): the filters on reason/source narrow one user's rows only.
  const rows = ctx.db.sqlite
    .query(
      `SELECT id, user_id, delta_minor, balance_after_minor, reason, source, created_at FROM salutes_ledger WHERE ${where.join(" AND ")} ORDER BY id ${order === "desc" ? "DESC" : "ASC"} LIMIT ? OFFSET ?`,
    )
    .all(...args, page.limit + 1, page.offset) as LedgerRow[];
  const r = pageOf(rows, page, (row) => row.id);
  const d = rulesOf(ctx).decimals;
  return {
    user_id: String(user.id),
    balance: minorToNumber(balanceMinorOf(ctx.db.sqlite, user.id), d),
    count: r.count,
    ledger: r.items.map((row) => ({
      id: row.id,
      user_id: String(row.user_id),
      delta: minorToNumber(row.delta_minor, d),
      balance_after: minorToNumber(row.balance_after_minor, d),
      reason: row.reason,
      source: row.source,
      created_at: row.created_at,
    })),
    query: { ...r.query, order, reason: filters.reason ?? null, source: filters.source ?? null },
    pagination: r.pagination,
  };
}
