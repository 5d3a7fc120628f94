import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { AppError } from "../http/errors/errors";
import { emitEvent } from "../webhooks/service";
import { MAX_EXACT_MINOR, minorToNumber } from "./amounts";
import { appendLedgerEntry, balanceOf, type EntryRow } from "./store/ledger";

/** A user's balance in minor units; a user never credited has no row and a balance of 0. */
export const balanceMinorOf = (q: Queryable, userId: number): Promise<number> => balanceOf(q, userId);

/** An entry to append; its time is the clock's. */
export type EntryInput = Omit<EntryRow, "at">;

export interface AppendedEntry {
  id: number;
  balanceAfterMinor: number;
  createdAt: string;
}

/** Why a conditional move was refused: read after the fact, for the message (the move itself decided). */
function refusal(ctx: Pick<AppContext, "config">, before: number, deltaMinor: number): AppError {
  if (deltaMinor < 0) {
    const d = ctx.config.salutes.decimals;
    const balance = minorToNumber(before, d);
    const requested = minorToNumber(-deltaMinor, d);
    return new AppError("insufficient_balance", `Balance is ${balance}; debiting ${requested} would take it below zero`, { details: { balance, requested } });
  }
  return new AppError("conflict", "This credit would take the balance past the largest amount Herald keeps exactly; debit first or split across users");
}

/**
 * Appends one ledger row and moves the balance with it, in the caller's transaction `t`. The move is one
 * conditional statement (src/salutes/store/ledger.ts), so balance = Σ delta and never negative hold with any
 * number of concurrent writers, on one instance or several. The ledger is append-only.
 */
export async function appendEntry(t: Queryable, ctx: Pick<AppContext, "config" | "clock">, owner: Owner, input: EntryInput): Promise<AppendedEntry> {
  const createdAt = ctx.clock.now().toISOString();
  const row: EntryRow = { ...input, at: createdAt };
  const done = await appendLedgerEntry(t, owner, row, MAX_EXACT_MINOR);
  if (!done) throw refusal(ctx, await balanceOf(t, input.userId), input.deltaMinor);
  return { ...done, createdAt };
}

type LedgerEventData = { user_id: string; delta: number; balance: number; reason: string; source: string };

const eventOf = (entry: AppendedEntry, data: LedgerEventData) =>
  [
    data.delta < 0 ? ("salutes.debit" as const) : ("salutes.credit" as const),
    { user_id: data.user_id, delta: data.delta, balance: data.balance, ledger_entry_id: entry.id, reason: data.reason, source: data.source },
  ] as const;

/**
 * `salutes.credit` / `salutes.debit` in the entry's transaction (the outbox row exists exactly when the entry
 * does). Returns how many deliveries it queued: with no subscribed webhook there is nothing to nudge the
 * dispatcher for, and skipping that pass is a fifth of a credit's cost.
 */
export async function emitLedgerEvent(
  t: Queryable,
  ctx: Pick<AppContext, "clock" | "rng">,
  owner: Owner,
  entry: AppendedEntry,
  data: LedgerEventData,
): Promise<number> {
  const [type, payload] = eventOf(entry, data);
  return (await emitEvent(t, ctx, owner, type, payload)).deliveryIds.length;
}
