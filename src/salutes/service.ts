import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { TxScope } from "../db/port";
import { listAnswer, pageOf, type PageRequest } from "../http/pagination";
import { getUserOrThrow, requireActiveUser, type UserRow } from "../partner/service";
import { minorToNumber, parseAmountMinor } from "./amounts";
import { type AppendedEntry, appendEntry, balanceMinorOf, emitLedgerEvent } from "./ledger";
import type { SalutesModel } from "./model";
import { ledgerPage } from "./store/ledger";

/** Who wrote an entry: the key, and the Idempotency-Key that makes a retry of it a no-op. */
export interface EntryAuthor {
  keyId: string;
  idempotencyKey: string | null;
}

/** A credit's or debit's body; its amount is checked by parseAmountMinor, which takes any JSON value. */
export type EntryBody = Omit<typeof SalutesModel.mutationBody.static, "amount"> & { amount: unknown };

type SalutesCtx = Pick<AppContext, "config" | "clock" | "rng">;

const rulesOf = (ctx: Pick<AppContext, "config">) => ctx.config.salutes;

/** An amount in minor units under this deployment's rules (SALUTES_DECIMALS, SALUTES_MAX_AMOUNT), or the 400 naming `field`. */
export const amountMinorOrThrow = (ctx: Pick<AppContext, "config">, value: unknown, field: string) => parseAmountMinor(value, rulesOf(ctx), field);

/** GET /api/salutes/balance. Suspended users can still be read. */
export async function getBalance(ctx: AppContext, owner: Owner, keyId: string, rawUserId: string) {
  const user = await getUserOrThrow(ctx.store, owner, rawUserId);
  return { user_id: String(user.id), balance: minorToNumber(await balanceMinorOf(ctx.store, user.id), rulesOf(ctx).decimals), partner_key_id: keyId };
}

function answerOf(ctx: SalutesCtx, user: UserRow, deltaMinor: number, entry: AppendedEntry, author: EntryAuthor) {
  const d = rulesOf(ctx).decimals;
  return {
    user_id: String(user.id),
    balance: minorToNumber(entry.balanceAfterMinor, d),
    delta: minorToNumber(deltaMinor, d),
    ledger_entry_id: entry.id,
    idempotency_key: author.idempotencyKey,
  };
}

/**
 * A credit or a debit, in the idempotency transaction `t`: the user check, the conditional balance move, the
 * entry and the outbox event commit together or not at all. `answer` is the response body; `deliveries` says
 * how many deliveries the event queued (whether the dispatcher has anything to send). The event is left in flight
 * with the transaction (`t.behind`): IdempotencyStore.run sends the stored answer with it, one round trip for both
 * on PostgreSQL.
 */
export async function postEntry(
  t: TxScope,
  ctx: SalutesCtx,
  owner: Owner,
  author: EntryAuthor,
  kind: "credit" | "debit",
  body: EntryBody,
): Promise<{ answer: ReturnType<typeof answerOf>; deliveries: Promise<number> }> {
  const amountMinor = parseAmountMinor(body.amount, rulesOf(ctx));
  const user = await getUserOrThrow(t, owner, body.user_id);
  requireActiveUser(user);
  const deltaMinor = kind === "credit" ? amountMinor : -amountMinor;
  const entry = await appendEntry(t, ctx, owner, { userId: user.id, deltaMinor, reason: body.reason, source: body.source, ...author });
  const answer = answerOf(ctx, user, deltaMinor, entry, author);
  const deliveries = emitLedgerEvent(t, ctx, owner, entry, { ...answer, reason: body.reason, source: body.source });
  t.behind(deliveries);
  return { answer, deliveries };
}

/** The group key of a transaction that moves this user's balance (TxOptions.group). */
export const balanceGroup = (userId: string): string => `salutes:${userId}`;

export type LedgerFilters = Pick<typeof SalutesModel.ledgerQuery.static, "user_id" | "order" | "reason" | "source">;

/** GET /api/salutes/ledger: one user's entries, newest first unless order=asc; keyset cursor on id. */
export async function listLedger(ctx: AppContext, owner: Owner, filters: LedgerFilters, page: PageRequest) {
  const user = await getUserOrThrow(ctx.store, owner, filters.user_id);
  const order = filters.order ?? "desc";
  const rows = await ledgerPage(ctx.store, owner, {
    userId: user.id,
    order,
    reason: filters.reason ?? null,
    source: filters.source ?? null,
    afterId: page.after as number | null,
    limit: page.limit + 1,
    offset: page.offset,
  });
  const r = pageOf(rows, page, (row) => row.id);
  const d = rulesOf(ctx).decimals;
  return {
    user_id: String(user.id),
    balance: minorToNumber(await balanceMinorOf(ctx.store, user.id), d),
    ...listAnswer(
      "ledger",
      {
        ...r,
        items: r.items.map((row) => ({
          id: row.id,
          user_id: String(row.user_id),
          delta: minorToNumber(row.delta_minor, d),
          balance_after: minorToNumber(row.balance_after_minor, d),
          reason: row.reason,
          source: row.source,
          created_at: row.created_at,
        })),
      },
      { order, reason: filters.reason ?? null, source: filters.source ?? null },
    ),
  };
}
