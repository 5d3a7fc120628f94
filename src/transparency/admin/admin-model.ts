import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { ListAnswer, PageQuery } from "../../http/pagination";
import { intPath } from "../../http/params";
import { DeclarationSchema, TriageRowSchema, TriageStatusSchema } from "../reports/audit-model";
import { THRESHOLD_NAMES, type ThresholdName } from "../operator-inputs/thresholds";
import { DECLARED_AMOUNT_PATTERN, declareBody, Reason, strict, UTC_TEXT_PATTERN, UtcText } from "../operator-inputs/declarations";

// Bodies of the operators' transparency routes. Unknown fields are refused (a typo must not be a silent no-op).

/**
 * A threshold's value as changeThresholds reads it (thresholds.ts problemOf), the document's pattern: an amount is a
 * decimal (parseUnits; the mint's fractional digits are the route's), a percentage 0–10000 with two decimals at most
 * (pctHundredths).
 */
const thresholdPattern = (n: ThresholdName) =>
  n.endsWith("_pct") ? "^(?:(?:0[0-9]{4}|[0-9]{1,4})(?:\\.[0-9]{1,2})?|10000(?:\\.0{1,2})?)$" : "^[0-9]{1,30}(?:\\.[0-9]{1,30})?$";

export const AdminAuditModel = {
  declareBody,
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
  /** thresholdsBody's values as the route checks them, for the document (bodyChecks in the route's detail). */
  thresholdsChecks: Object.fromEntries(THRESHOLD_NAMES.map((n) => [n, { pattern: thresholdPattern(n) }])),
  /** thresholdsBody's rule, for the document (bodyRule in the route's detail): changeThresholds refuses a body naming no threshold. */
  thresholdsRule: t.Union(
    THRESHOLD_NAMES.map((n) =>
      t.Object({ [n]: t.String({ pattern: thresholdPattern(n) }) }, { title: n, description: `Changes ${n} (and any other threshold named)` }),
    ),
  ),
  /** declareBody's fields as declareMovement checks them, for the document (bodyChecks in the route's detail). */
  declareChecks: {
    amount: { pattern: DECLARED_AMOUNT_PATTERN, description: "exact decimal token amount above zero, e.g. 25000 or 1250.5" },
    window_start_utc: { pattern: UTC_TEXT_PATTERN },
    window_end_utc: { pattern: UTC_TEXT_PATTERN },
  },
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
