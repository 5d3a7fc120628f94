import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { ListAnswer, PageQuery } from "../../http/pagination";
import type { TInteger, TString } from "@sinclair/typebox";
import { BASELINE_MODES, DIGEST_DEFAULTS, type DigestParams, FindingFields, FindingSchema, Hour } from "./findings";
import { intPath, intQuery } from "../../http/params";
import { nullable as Nullable } from "../../http/routes/declare";
import { EXPORT_COLUMNS, type ExportColumn } from "./export";
import { TREND_DEFAULT_H, TREND_DEFAULT_W } from "./trend-png";
import { CLIENT_PREFIX_PATTERN, END_TIME_PATTERN } from "./suppressions";

const strict = { additionalProperties: false } as const;
const Num = t.Number();
const Int = t.Integer();

const d = DIGEST_DEFAULTS;
/** The parameters a digest was made with: every DIGEST_DEFAULTS entry, in its order. */
const ParamsEcho = Object.fromEntries(Object.entries(d).map(([k, v]) => [k, typeof v === "string" ? t.String() : Int])) as {
  [K in keyof DigestParams]: DigestParams[K] extends string ? TString : TInteger;
};
const digestParams = {
  hours: intQuery({ minimum: 1, maximum: 168, defaultValue: d.hours, description: "window: this many UTC hours ending with the current one" }),
  baseline_mode: t.Optional(
    t.Union(
      BASELINE_MODES.map((m) => t.Literal(m)),
      {
        description: "what an hour is compared with (docs/ops-digest.md); default rolling_24h",
      },
    ),
  ),
  new_path_lookback_days: intQuery({
    minimum: 1,
    maximum: 90,
    defaultValue: d.new_path_lookback_days,
    description: "a route or client is new when it had no 403 in this many days before the window",
  }),
  spike_consecutive_hours: intQuery({
    minimum: 1,
    maximum: 48,
    defaultValue: d.spike_consecutive_hours,
    description: "consecutive spike hours that make a sustained_spike",
  }),
  spike_ratio: intQuery({ minimum: 2, maximum: 100, defaultValue: d.spike_ratio, description: "an hour is a spike at ≥ this × max(baseline, 1)" }),
  spike_min_count: intQuery({ minimum: 1, maximum: 1_000_000, defaultValue: d.spike_min_count, description: "… and at ≥ this many 403s" }),
  new_min_count: intQuery({
    minimum: 1,
    maximum: 1_000_000,
    defaultValue: d.new_min_count,
    description: "403s in the window that make a new route or client a finding",
  }),
  group_limit: intQuery({ minimum: 1, maximum: 200, defaultValue: d.group_limit, description: "values listed per group (most 403s first)" }),
  include_meta: t.Optional(t.String()),
};

const Finding = named("Ops403Finding", FindingSchema);
const SuppressedFinding = named("Ops403SuppressedFinding", t.Object({ ...FindingFields, rule_id: Int }));

const Group = named(
  "Ops403Group",
  t.Object({ distinct: Int, items: t.Array(t.Object({ value: t.String(), count: Int, suppressed: Int, hours: Int, first_hour: Hour, last_hour: Hour })) }),
);

const Digest = {
  generated_at: t.String({ format: "date-time" }),
  window: t.Object({ from_hour: Hour, to_hour: Hour, hours: Int, partial_last_hour: t.Boolean() }),
  params: t.Object(ParamsEcho),
  coverage: t.Object({ data_since: t.Union([Hour, t.Null()]), baseline_complete: t.Boolean(), lookback_complete: t.Boolean() }),
  totals: t.Object({ requests: Int, forbidden: Int, suppressed: Int }),
  hours: t.Array(
    named("Ops403Hour", t.Object({ hour: Hour, requests: Int, forbidden: Int, suppressed: Int, observed: Int, baseline: Num, ratio: Num, spike: t.Boolean() })),
  ),
  groups: t.Object({ route: Group, partner_key: Group, client_prefix: Group }),
  active_rules: t.Array(Int, { description: "ids of the suppression rules in force" }),
  findings_total: Int,
  findings: t.Array(Finding, { description: "at most 500, most significant first" }),
  suppressed_total: Int,
  suppressed: t.Array(SuppressedFinding, { description: "findings that only exist because of 403s an active rule matches" }),
};

const Cell = t.Union([t.String(), t.Number(), t.Null()]);
const ExportRow = named("Ops403ExportRow", t.Object(Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, Cell])) as Record<ExportColumn, typeof Cell>));

const Rule = named(
  "Ops403Suppression",
  t.Object({
    id: Int,
    path_pattern: Nullable(t.String()),
    partner_key_id: Nullable(t.String()),
    client_prefix: Nullable(t.String()),
    reason: t.String(),
    owner: t.String(),
    expires_at: t.String({ format: "date-time" }),
    created_at: t.String({ format: "date-time" }),
    created_by: t.String(),
    revoked_at: Nullable(t.String({ format: "date-time" })),
    state: t.Union([t.Literal("active"), t.Literal("expired"), t.Literal("revoked")]),
  }),
);

export const DigestModel = {
  query: t.Object(digestParams),
  trendQuery: t.Object({
    ...digestParams,
    w: intQuery({ minimum: 320, maximum: 2000, defaultValue: TREND_DEFAULT_W, description: "image width in pixels" }),
    h: intQuery({ minimum: 200, maximum: 1200, defaultValue: TREND_DEFAULT_H, description: "image height in pixels" }),
  }),
  digest: Envelope(Digest),
  exportJson: Envelope({
    generated_at: t.String({ format: "date-time" }),
    params: Digest.params,
    columns: t.Array(t.String()),
    count: Int,
    rows: t.Array(ExportRow),
  }),
  suppressionBody: t.Object(
    {
      path_pattern: t.Optional(
        t.String({ minLength: 1, maxLength: 200, pattern: "^[\\x21-\\x7e]+$", description: "a route template, * matches any characters" }),
      ),
      partner_key_id: t.Optional(t.String({ minLength: 1, maxLength: 128, pattern: "^[\\x21-\\x7e]+$" })),
      client_prefix: t.Optional(t.String({ minLength: 1, maxLength: 64, description: "IPv4 /24 (203.0.113.0/24) or IPv6 /48 (2001:db8:1::/48)" })),
      reason: t.String({ minLength: 1, maxLength: 500 }),
      owner: t.String({ minLength: 1, maxLength: 120 }),
      expires_at: t.String({ minLength: 1, maxLength: 40, description: "ISO 8601; in the future, at most 90 days ahead" }),
    },
    strict,
  ),
  /** suppressionBody's rule, for the document (bodyRule in the route's detail): createSuppression refuses a rule matching everything. */
  suppressionRule: t.Union(
    (
      [
        ["path_pattern", 200],
        ["partner_key_id", 128],
        ["client_prefix", 64],
      ] as const
    ).map(([f, maxLength]) =>
      t.Object({ [f]: t.String({ minLength: 1, maxLength }) }, { title: f, description: `Matches by ${f} (and any other field given)` }),
    ),
  ),
  /** suppressionBody's fields as createSuppression checks them, for the document (bodyChecks in the route's detail). */
  suppressionChecks: {
    // endProblem's form of a time (its date, the future and the 90 days are its own).
    expires_at: { pattern: END_TIME_PATTERN },
    // normalizePrefix's form, on the trimmed text: an address, then /24 or /48 (the address itself is its own check).
    client_prefix: { pattern: CLIENT_PREFIX_PATTERN },
  },
  suppressionListQuery: t.Object({
    ...PageQuery,
    state: t.Optional(t.Union([t.Literal("active"), t.Literal("expired"), t.Literal("revoked")])),
  }),
  suppressionParams: t.Object({ id: intPath() }),
  suppressionOne: Envelope({ rule: Rule }),
  suppressionList: Envelope(ListAnswer("rules", t.Array(Rule), { state: t.Union([t.String(), t.Null()]) })),
  exportQuery: t.Object({ include_meta: t.Optional(t.String()) }),
  suppressionExport: Envelope({ generated_at: t.String({ format: "date-time" }), count: Int, rules: t.Array(Rule) }),
};
