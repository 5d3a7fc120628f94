import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { ListAnswer, PageQuery } from "../../http/pagination";
import { intPath } from "../../http/params";
import { DeclarationSchema, TriageRowSchema, TriageStatusSchema } from "../reports/audit-model";
import { THRESHOLD_NAMES } from "../operator-inputs/thresholds";

// Bodies of the operators' transparency routes. Unknown fields are refused (a typo must not be a silent no-op).

const strict = { additionalProperties: false } as const;
const Reason = t.String({ minLength: 3, maxLength: 1000, description: "why; published with the change" });
const UtcText = (description: string) =>
  t.String({ minLength: 10, maxLength: 30, description: `${description}: a UTC date (2026-01-31) or date-time ending in Z` });

export const AdminAuditModel = {
  declareBody: t.Object(
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
  ),
  retractBody: t.Object({ reason: Reason }, strict),
  declarationParams: t.Object({ declaration_id: intPath() }),
  thresholdsBody: t.Object(
    {
      ...Object.fromEntries(
        THRESHOLD_NAMES.map((n) => [
          n,
          t.Optional(
            t.String({
              minLength: 1,
              maxLength: 48,
              description: n.endsWith("_pct") ? "percent as text, 0–10000, two decimals at most" : "decimal token amount as text",
            }),
          ),
        ]),
      ),
      reason: Reason,
      owner: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "who answers for the change (default: the admin token's name)" })),
    },
    strict,
  ),
  triageParams: t.Object({
    signature: t.String({
      minLength: 1,
      maxLength: 128,
      pattern: "^[A-Za-z0-9:-]+$",
      description: "the anomalous signature, or a snapshot reference such as token-snapshot:12",
    }),
  }),
  triageBody: t.Object(
    {
      status: TriageStatusSchema,
      owner: t.String({ minLength: 1, maxLength: 100 }),
      eta_utc: t.Optional(t.Union([UtcText("when it should be settled"), t.Null()])),
      note: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
    },
    strict,
  ),
  declarationOne: Envelope({ movement: DeclarationSchema }),
  thresholdsAnswer: Envelope({ thresholds: t.Record(t.String(), t.String()), changed: t.Array(t.String()) }),
  triageOne: Envelope({ triage: TriageRowSchema }),
  declarationListQuery: t.Object(PageQuery),
  declarationList: Envelope(ListAnswer("movements", t.Array(DeclarationSchema, { description: "oldest first" }))),
};
