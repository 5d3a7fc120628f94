import { type Static, t } from "elysia";
import { parseCalendarStrict } from "../../clock";
import type { AppContext } from "../../context";
import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import type { Queryable } from "../../db/port";
import { AppError, found } from "../../http/errors/errors";
import { type PageRequest, pageOf } from "../../http/pagination";
import { formatUnits } from "../../chain/service";
import { schemaView } from "../../http/schema-view";
import { DeclarationSchema } from "../reports/audit-model";
import { parseUnitsOrThrow } from "../audit/amounts";
import type { ActiveDeclaration } from "../audit/detector";
import { operatorChange } from "../state";
import { declarationById, declarations, declarationsPage, insertDeclaration, retract, type DeclarationRow } from "../store/operators";
import { declarationMatches } from "../store/rows";
import { bumpState } from "../store/state";

// Declared movements: what the operators say the treasury will do. A synced transaction that matches an active
// declaration (direction, exact amount, block time inside the window, the signature when one is named, and a
// match left of max_transactions) is not an anomaly, and its row names the declaration. Retracting keeps the
// row: the runs that matched it still point at it.

const view = (r: DeclarationRow, matched: number) =>
  schemaView(DeclarationSchema, r, {
    amount: formatUnits(BigInt(r.amount_raw), r.decimals),
    window_start_utc: r.window_start,
    window_end_utc: r.window_end,
    matched_transactions: matched,
    status: r.retracted_at ? "retracted" : "active",
  });
export type DeclarationView = ReturnType<typeof view>;

export async function listDeclarations(ctx: AppContext, status?: "active" | "retracted"): Promise<DeclarationView[]> {
  const rows = await declarations(ctx.store, status);
  const matched = await declarationMatches(ctx.store);
  return rows.map((r) => view(r, matched.get(r.id) ?? 0));
}

/** A page of every declaration (active and retracted), oldest first: the operators' list, by offset or by cursor (the last id). */
export async function declarationsPageOf(ctx: AppContext, page: PageRequest) {
  const p = pageOf(await declarationsPage(ctx.store, { after: page.after, limit: page.limit + 1, offset: page.offset }), page, (r) => r.id);
  const matched = await declarationMatches(ctx.store);
  return { ...p, items: p.items.map((r) => view(r, matched.get(r.id) ?? 0)) };
}

/** What the detector matches against: active declarations with the matches they have left. */
export async function activeDeclarations(q: Queryable): Promise<ActiveDeclaration[]> {
  const rows = await declarations(q, "active");
  const matched = await declarationMatches(q);
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

export const strict = { additionalProperties: false } as const;
export const Reason = t.String({ minLength: 3, maxLength: 1000, description: "why; published with the change" });
/** utcOrThrow's form of a UTC date or date-time ending in Z (the calendar check is its own), the document's pattern. */
export const UTC_TEXT_PATTERN = "^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,3})?)?Z)?$";
const UTC_TEXT = new RegExp(UTC_TEXT_PATTERN);
/**
 * declareMovement's amount on the trimmed text (parseUnitsOrThrow's decimal), above zero (a digit other than 0): the
 * document's pattern; the mint's fractional digits are the route's.
 */
export const DECLARED_AMOUNT_PATTERN = "^\\s*(?=[0-9.]*[1-9])[0-9]{1,30}(\\.[0-9]{1,30})?\\s*$";
export const UtcText = (description: string) =>
  t.String({ minLength: 10, maxLength: 30, description: `${description}: a UTC date (2026-01-31) or date-time ending in Z` });

export const declareBody = t.Object(
  {
    direction: t.Union([t.Literal("outflow"), t.Literal("inflow")], {
      description: "outflow: tokens leave the treasury/reserve wallets; inflow: they arrive",
    }),
    amount: t.String({ minLength: 1, maxLength: 48, description: "exact decimal token amount, e.g. 25000 or 1250.5" }),
    counterparty: t.Optional(
      t.String({
        minLength: 32,
        maxLength: 44,
        pattern: "^[1-9A-HJ-NP-Za-km-z]+$",
        description: "the other side's address (published; not matched: the sync stores net deltas, not parties)",
      }),
    ),
    signature: t.Optional(t.String({ minLength: 64, maxLength: 88, pattern: "^[1-9A-HJ-NP-Za-km-z]+$", description: "only this transaction matches" })),
    window_start_utc: UtcText("the earliest block time that matches"),
    window_end_utc: UtcText("the latest block time that matches (a date: the whole day)"),
    max_transactions: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: "how many transactions it may cover (default 1)" })),
    reason: Reason,
  },
  strict,
);

/** A UTC date or date-time ending in Z as ISO text, or a 400 naming the field (`example` follows "a UTC date" in its message). */
export const utcOrThrow = (text: string, field: string, example = " (2026-01-31)"): string => {
  const ms = parseCalendarStrict(text);
  if (!UTC_TEXT.test(text) || Number.isNaN(ms)) {
    throw new AppError("invalid_payload", `${field} must be a UTC date${example} or date-time ending in Z`, {
      details: [{ field, problem: "must be a UTC date or date-time ending in Z" }],
    });
  }
  return new Date(ms).toISOString();
};

export async function declareMovement(ctx: AppContext, admin: AdminRequest, input: Static<typeof declareBody>, decimals: number): Promise<DeclarationView> {
  const amountRaw = parseUnitsOrThrow(input.amount, decimals, "amount", "invalid_payload");
  if (amountRaw === 0n) throw new AppError("invalid_payload", "amount must be above zero", { details: [{ field: "amount", problem: "must be above zero" }] });
  const start = utcOrThrow(input.window_start_utc, "window_start_utc");
  // A bare date as the end means the whole day.
  const end = /^\d{4}-\d{2}-\d{2}$/.test(input.window_end_utc)
    ? utcOrThrow(input.window_end_utc, "window_end_utc").replace("T00:00:00.000Z", "T23:59:59.999Z")
    : utcOrThrow(input.window_end_utc, "window_end_utc");
  if (start > end)
    throw new AppError("invalid_payload", "window_start_utc is after window_end_utc", {
      details: [{ field: "window_start_utc", problem: "must not be after window_end_utc" }],
    });
  const now = ctx.clock.now().toISOString();
  const id = await operatorChange(ctx, admin, now, async (t, audit) => {
    const id = await insertDeclaration(t, {
      direction: input.direction,
      amount_raw: amountRaw.toString(),
      decimals,
      counterparty: input.counterparty ?? null,
      signature: input.signature ?? null,
      window_start: start,
      window_end: end,
      max_transactions: input.max_transactions ?? 1,
      reason: input.reason,
      created_at: now,
      created_by: actorLabel(admin.actor),
    });
    await audit("transparency.declaration.create", String(id), { ...input, amount_raw: amountRaw.toString() });
    await bumpState(t, now);
    return id;
  });
  return getDeclarationOrThrow(ctx, id);
}

export async function getDeclarationOrThrow(ctx: AppContext, id: number): Promise<DeclarationView> {
  const row = found(await declarationById(ctx.store, id), "declared movement", id);
  return view(row, (await declarationMatches(ctx.store)).get(id) ?? 0);
}

const alreadyRetracted = (id: number, at: string | null) => new AppError("conflict", `declared movement ${id} was already retracted at ${at}`);

export async function retractDeclaration(ctx: AppContext, admin: AdminRequest, id: number, reason: string): Promise<DeclarationView> {
  const current = await getDeclarationOrThrow(ctx, id);
  if (current.status === "retracted") throw alreadyRetracted(id, current.retracted_at);
  const now = ctx.clock.now().toISOString();
  await operatorChange(ctx, admin, now, async (t, audit) => {
    // Conditional: of two operators retracting at once, one retracts and the other gets the 409 (no second audit row).
    if (!(await retract(t, id, now, actorLabel(admin.actor), reason))) throw alreadyRetracted(id, (await declarationById(t, id))?.retracted_at ?? null);
    await audit("transparency.declaration.retract", String(id), { reason, declaration: current });
    await bumpState(t, now);
  });
  return getDeclarationOrThrow(ctx, id);
}
