import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { ListAnswer, PageQuery } from "../http/pagination";
import { named } from "../http/openapi/names";
import { nullable } from "../http/routes/declare";

/**
 * Reasons and sources are text for people and filters alike (`quest_reward`, `Daily quest`, `game.arena`): 1–64
 * characters, never control characters. The ledger filters on them by exact match.
 */
export const SOURCE_PATTERN = "^[^\\u0000-\\u001f\\u007f]{1,64}$";
export const REASON_PATTERN = SOURCE_PATTERN;

const userId = t.String({ minLength: 1, maxLength: 32, description: "Herald user id (as a string) of one of your users" });
const amount = t.Number({ description: "Positive JSON number with at most SALUTES_DECIMALS decimal places, ≤ SALUTES_MAX_AMOUNT" });

const LedgerEntry = named(
  "LedgerEntry",
  t.Object({
    id: t.Integer(),
    user_id: t.String(),
    delta: t.Number({ description: "Signed: negative for a debit" }),
    balance_after: t.Number(),
    reason: t.String(),
    source: t.String(),
    created_at: t.String(),
  }),
);

const Policy = named(
  "ConversionPolicy",
  t.Object({
    enabled: t.Boolean(),
    target: t.String({ description: "What salutes convert into" }),
    rate: t.String({ description: "Target units per salute, an exact decimal string" }),
    min: t.Number({ description: "Smallest conversion, in salutes" }),
    max: t.Number({ description: "Largest single conversion, in salutes" }),
    daily_cap: t.Number({ description: "Most salutes one user may convert per UTC day" }),
    decimals: t.Integer({ description: "Decimal places salutes amounts may have" }),
  }),
);

const mutationBody = t.Object(
  {
    user_id: userId,
    amount,
    reason: t.String({ pattern: REASON_PATTERN, description: "1–64 characters, no control characters: why, e.g. quest_reward" }),
    source: t.String({ pattern: SOURCE_PATTERN, description: "1–64 characters naming what caused it, e.g. game.arena" }),
  },
  { additionalProperties: false },
);

export const SalutesModel = {
  balanceQuery: t.Object({ user_id: userId, include_meta: t.Optional(t.String()) }),
  balance: named("Balance", Envelope({ user_id: t.String(), balance: t.Number(), partner_key_id: t.String() })),
  mutationBody,
  // On the sandbox mount every field is optional: what is left out comes from the fixture (src/sandbox/defaults.ts).
  sandboxMutationBody: t.Partial(mutationBody),
  /** What the sandbox's balance adds to the live answer. */
  sandboxBalance: { currency: t.Literal("salutes") },
  mutationQuery: t.Object({ include_meta: t.Optional(t.String()) }),
  mutationResult: named(
    "SalutesEntryResult",
    Envelope({
      user_id: t.String(),
      balance: t.Number({ description: "Balance after this entry" }),
      delta: t.Number({ description: "Signed: negative for a debit" }),
      ledger_entry_id: t.Integer(),
      idempotency_key: nullable(t.String()),
    }),
  ),
  ledgerQuery: t.Object({
    ...PageQuery,
    user_id: userId,
    order: t.Optional(t.Union([t.Literal("asc"), t.Literal("desc")], { description: "by entry id; default desc (newest first)" })),
    reason: t.Optional(t.String({ pattern: REASON_PATTERN })),
    source: t.Optional(t.String({ pattern: SOURCE_PATTERN })),
  }),
  ledger: named(
    "Ledger",
    Envelope({
      user_id: t.String(),
      balance: t.Number(),
      ...ListAnswer("ledger", t.Array(LedgerEntry), {
        order: t.Union([t.Literal("asc"), t.Literal("desc")]),
        reason: nullable(t.String()),
        source: nullable(t.String()),
      }),
    }),
  ),
  policyQuery: t.Object({ include_meta: t.Optional(t.String()) }),
  policy: Envelope({ policy: Policy }),
  convertBody: t.Object({ user_id: userId, amount }, { additionalProperties: false }),
  converted: Envelope({
    conversion: named(
      "Conversion",
      t.Object({
        id: t.Integer(),
        user_id: t.String(),
        amount: t.Number({ description: "Salutes debited" }),
        rate: t.String(),
        converted_amount: t.String({ description: "amount × rate, exact decimal string" }),
        target: t.String(),
        status: t.Union([t.Literal("pending"), t.Literal("completed"), t.Literal("rejected")]),
        ledger_entry_id: t.Integer(),
        created_at: t.String(),
      }),
    ),
    balance: t.Number({ description: "Balance after the conversion" }),
  }),
};
