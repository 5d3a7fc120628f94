import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { AppError, ValidationError } from "../http/errors/errors";
import { getUserOrThrow, requireActiveUser } from "../partner/service";
import { configDecimalToMinor, exactDecimalOf, formatScaled, maxAmountMinor, minorToNumber, multiplyExact, parseAmountMinor } from "./amounts";
import { appendEntry, emitLedgerEvent } from "./ledger";
import { convertedBetween, insertConversion } from "./store/ledger";
import type { EntryAuthor } from "./service";

export const CONVERSION_REASON = "conversion";
export const CONVERSION_SOURCE = "salutes.convert";

/**
 * The policy as enforced, in minor units. Configured bounds may carry more decimals than salutes do; they are
 * rounded inward (min up, max and cap down) so a conversion the policy shows as allowed always is.
 */
export function effectivePolicy(ctx: Pick<AppContext, "config">) {
  const { decimals, conversion: c } = ctx.config.salutes;
  const maxMinor = Math.min(configDecimalToMinor(c.max, decimals, "floor"), maxAmountMinor(ctx.config.salutes));
  const rate = exactDecimalOf(c.rate)!;
  return {
    enabled: c.enabled,
    target: c.target,
    rate: formatScaled(rate.digits, rate.scale),
    minMinor: Math.max(1, configDecimalToMinor(c.min, decimals, "ceil")),
    maxMinor,
    capMinor: configDecimalToMinor(c.dailyCap, decimals, "floor"),
    decimals,
  };
}

/** GET /api/salutes/conversion-policy. */
export function conversionPolicy(ctx: Pick<AppContext, "config">) {
  const p = effectivePolicy(ctx);
  const n = (minor: number) => minorToNumber(minor, p.decimals);
  return { enabled: p.enabled, target: p.target, rate: p.rate, min: n(p.minMinor), max: n(p.maxMinor), daily_cap: n(p.capMinor), decimals: p.decimals };
}

/** [start, end) of the UTC day containing `now`, as ISO strings (created_at compares as text). */
function utcDay(now: Date): { start: string; end: string } {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { start: new Date(start).toISOString(), end: new Date(start + 86_400_000).toISOString() };
}

/**
 * POST /api/salutes/convert, inside the idempotency transaction `t`: the ledger debit, the cap check, the
 * conversion row and the salutes.debit event commit together. The debit comes first: its conditional update
 * locks the user's balance row until the transaction ends, so of two concurrent conversions of one user (on two
 * instances) the second counts today's total only after the first committed — both cannot fit under the cap.
 */
export async function convert(
  t: Queryable,
  ctx: Pick<AppContext, "config" | "clock" | "rng">,
  owner: Owner,
  author: EntryAuthor,
  body: { user_id: string; amount: unknown },
) {
  const p = effectivePolicy(ctx);
  if (!p.enabled) throw new AppError("conversion_disabled", "Salutes conversion is switched off on this service (see GET /api/salutes/conversion-policy)");
  const amountMinor = parseAmountMinor(body.amount, ctx.config.salutes);
  const n = (minor: number) => minorToNumber(minor, p.decimals);
  if (amountMinor < p.minMinor || amountMinor > p.maxMinor) {
    const problem = `must be between ${n(p.minMinor)} and ${n(p.maxMinor)} for a conversion`;
    throw new ValidationError(`amount ${problem}`, [{ field: "amount", problem }]);
  }
  const user = await getUserOrThrow(t, owner, body.user_id);
  requireActiveUser(user);
  const entry = await appendEntry(t, ctx, owner, {
    userId: user.id,
    deltaMinor: -amountMinor,
    reason: CONVERSION_REASON,
    source: CONVERSION_SOURCE,
    ...author,
  });
  const day = utcDay(ctx.clock.now());
  const used = await convertedBetween(t, owner, user.id, day.start, day.end);
  if (used + amountMinor > p.capMinor) {
    const left = Math.max(0, p.capMinor - used);
    throw new AppError(
      "conversion_limit_exceeded",
      `Daily conversion cap is ${n(p.capMinor)} per user; ${n(used)} converted today, ${n(left)} left until 00:00 UTC`,
      {
        details: { daily_cap: n(p.capMinor), used_today: n(used), remaining_today: n(left) },
      },
    );
  }
  const converted = multiplyExact(amountMinor, p.decimals, p.rate);
  const id = await insertConversion(t, owner, {
    userId: user.id,
    amountMinor,
    rate: p.rate,
    converted,
    target: p.target,
    ledgerEntryId: entry.id,
    at: entry.createdAt,
  });
  const balance = n(entry.balanceAfterMinor);
  const deliveries = await emitLedgerEvent(t, ctx, owner, entry, {
    user_id: String(user.id),
    delta: -n(amountMinor),
    balance,
    reason: CONVERSION_REASON,
    source: CONVERSION_SOURCE,
  });
  const conversion = {
    id,
    user_id: String(user.id),
    amount: n(amountMinor),
    rate: p.rate,
    converted_amount: converted,
    target: p.target,
    status: "completed" as const,
    ledger_entry_id: entry.id,
    created_at: entry.createdAt,
  };
  return { answer: { conversion, balance }, deliveries };
}
