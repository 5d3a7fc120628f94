import type { TInteger, TObject, TProperties } from "@sinclair/typebox";
import { t } from "elysia";
import { AuthModel } from "../auth/model";
import { SCOPES } from "../auth/scopes";
import { DonationsModel } from "../donations/model";
import { Envelope } from "../http/envelope";
import { intQuery } from "../http/params";
import { nullable } from "../http/routes/declare";

const Source = t.Union([t.Literal("sandbox_fixture"), t.Literal("sandbox_state")], {
  description: "sandbox_fixture: fixed data of the fixture profile; sandbox_state: your sandbox practice database",
});
const readFields = { mode: t.Literal("sandbox"), fixture_profile: t.String({ description: "e.g. herald-sandbox-v1" }), source: Source };
const writeFields = { ...readFields, live_side_effects_performed: t.Literal(false, { description: "Always false: sandbox calls never touch live state" }) };

/** A sandbox answer: the fields, plus mode, fixture_profile and source (and success/meta). */
export const SandboxRead = <P extends TProperties>(fields: P) => Envelope({ ...fields, ...readFields });
/** A sandbox mutation's answer: also live_side_effects_performed=false. */
export const SandboxWrite = <P extends TProperties>(fields: P) => Envelope({ ...fields, ...writeFields });
/**
 * The live route's answer schema with the sandbox fields added, so both stay one shape; `extra` adds fields of the
 * sandbox's own after the live ones (one named like a live field replaces it, after them).
 */
const widen = (live: TObject, extra: TProperties, fields: TProperties) => {
  const props: TProperties = { ...live.properties };
  for (const name of Object.keys(extra)) delete props[name];
  return t.Object({ ...props, ...extra, ...fields });
};
export const readOf = <T extends TObject>(live: T, extra: TProperties = {}) => widen(live, extra, readFields) as TObject<T["properties"] & typeof readFields>;
export const writeOf = <T extends TObject>(live: T, extra: TProperties = {}) =>
  widen(live, extra, writeFields) as TObject<T["properties"] & typeof writeFields>;

const metaQuery = t.Object({ include_meta: t.Optional(t.String()) });

/** What a reset's answer counts as `deleted`, each by the table it is deleted from (in the answer's order). */
export const RESET_DELETED = {
  users: "partner_users",
  wallets: "wallet_links",
  ledger_entries: "salutes_ledger",
  balances: "salutes_balances",
  conversions: "salutes_conversions",
  donation_claims: "donation_claims",
  webhooks: "webhooks",
  deliveries: "webhook_deliveries",
  delivery_attempts: "webhook_attempts",
  events: "events",
} as const;

export const FixtureSummary = t.Object({
  profile: t.String(),
  seed_key_id: t.String({ description: "The key whose id seeded the fixture generator" }),
  plan_digest: t.String({ description: "sha256 of the generated fixture plan" }),
  seeded_at: t.String(),
  reset_count: t.Integer(),
  user_ids: t.Array(t.Integer()),
  users: t.Array(t.Object({ id: t.Integer(), external_id: t.String() })),
});

/** One item of the promotion checklist (src/sandbox/promotion.ts). */
export const Check = t.Object({
  id: t.String(),
  title: t.String(),
  required: t.Boolean(),
  status: t.Union([t.Literal("pass"), t.Literal("fail")]),
  observed: nullable(t.Number()),
  threshold: t.String(),
  detail: t.String(),
  links: t.Record(t.String(), t.String()),
});

/** The signed calls of the partner's sandbox keys in the report's window, by outcome (src/sandbox/store.ts). */
export const Metrics = t.Object({
  total_requests: t.Integer(),
  successful_requests: t.Integer(),
  error_requests: t.Integer(),
  rate_limited_requests: t.Integer(),
  idempotent_replays: t.Integer(),
});

/** A refused call of the partner's sandbox keys, as request_log has it (src/sandbox/store.ts). */
export const RecentError = t.Object({
  at: t.String(),
  method: t.String(),
  route: t.String(),
  status: t.Integer(),
  error_code: nullable(t.String()),
  key_id: t.String(),
});

const Score = t.Object({ passed: t.Integer(), required: t.Integer(), percent: t.Integer() });

const reportFields = {
  partner: t.String(),
  promotion_policy: t.Literal("sandbox_to_live_manual_approval"),
  ready: t.Boolean(),
  score: Score,
  window: t.Object({ days: t.Integer(), start_utc: t.String(), end_utc: t.String() }),
  metrics: Metrics,
  checklist: t.Array(Check),
  sandbox_keys: t.Array(t.Object({ key_id: t.String(), status: t.String(), scopes: t.Array(t.String()), last_used_at: nullable(t.String()) })),
  active_live_keys: t.Integer(),
  recent_errors: t.Array(RecentError),
  user: nullable(
    t.Object({
      user_id: t.String(),
      external_id: t.String(),
      status: t.String(),
      wallets: t.Integer(),
      ledger_entries: t.Integer(),
      idempotent_ledger_entries: t.Integer(),
    }),
  ),
  next_step: t.String(),
  links: t.Record(t.String(), t.String()),
};

const Simulation = t.Object({
  headers: t.Record(t.String(), t.String(), { description: "Exactly the headers sent (or that would be sent), signed with the webhook's secret" }),
  body: t.String({ description: "The exact raw body the signature covers" }),
  target_url: t.String(),
  delivery_id: t.Integer(),
});

/** The token's amounts, as the fixture's chain view and its raw units give them. */
const supplies = {
  total_supply: t.String(),
  treasury_balance: t.String(),
  reserve_balance: t.String(),
  tracked_treasury_balance: t.String(),
  circulating_supply: t.String(),
};

const RequestedClaim = t.Object({
  campaign_id: t.String(),
  amount: t.String({ description: "Exact decimal string" }),
  recipient: t.Object({ email: nullable(t.String()), wallet_address: nullable(t.String()) }),
  user_id: nullable(t.String()),
});

export const SandboxModel = {
  metaQuery,
  verify: SandboxRead({
    verified: t.Literal(true),
    partner: t.String(),
    key_id: t.String(),
    key_mode: t.Literal("sandbox"),
    scopes: t.Array(t.String()),
    signature: t.Object({ valid: t.Literal(true), timestamp_skew_seconds: t.Integer() }),
    policy: t.Object({ nonce_required_on_mutations: t.Boolean(), idempotency_key_required: t.Boolean(), rate_limit_per_minute: t.Integer() }),
    fixtures: FixtureSummary,
    next_steps: t.Array(t.String()),
  }),
  tokenStatus: SandboxRead({
    mint: t.String(),
    decimals: t.Integer(),
    rpc_url: t.String({ description: "A placeholder: the sandbox never calls a chain" }),
    chain: t.Object({ ...supplies, holders: t.Integer(), holders_source: t.Literal("sandbox_fixture") }),
    raw: t.Object(supplies),
    snapshot: t.Object({ taken_at_utc: t.String(), freshness_status: t.Literal("fixture") }),
  }),
  reportQuery: t.Object({
    user_id: t.Optional(t.String({ maxLength: 32, description: "Add a section on one of your sandbox users" })),
    limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 10, description: "how many recent failed calls to list" }),
    include_meta: t.Optional(t.String()),
  }),
  report: SandboxRead(reportFields),
  claimBody: t.Partial(DonationsModel.issueBody),
  claim: SandboxWrite({
    status: t.Literal("sandbox_preview"),
    claim_status: t.Literal("sandbox_preview"),
    claim_code: t.String(),
    claim_id: t.Integer(),
    partner_key_id: t.String(),
    claim_url: t.String({ description: "The claim page as a preview (/claim/{code}?sandbox=1): it says the code cannot be claimed" }),
    email_sent: t.Literal(false),
    email_status: t.Literal("not_sent_sandbox"),
    claim_campaign_id: t.String(),
    requested_claim: RequestedClaim,
    created_at: t.String(),
  }),
  resetBody: t.Optional(t.Object({}, { additionalProperties: false })),
  reset: SandboxWrite({
    reset: t.Literal(true),
    deleted: t.Object(Object.fromEntries(Object.keys(RESET_DELETED).map((name) => [name, t.Integer()])) as Record<keyof typeof RESET_DELETED, TInteger>),
    fixtures: FixtureSummary,
  }),
  simulation: Simulation,
  promoteParams: t.Object({ partner: t.String({ minLength: 1, maxLength: 64 }) }),
  promoteBody: t.Optional(
    t.Object(
      {
        scopes: t.Optional(
          t.Array(t.Union(SCOPES.map((s) => t.Literal(s))), {
            minItems: 1,
            maxItems: SCOPES.length,
            description: "Default: the scopes of the partner's active sandbox keys",
          }),
        ),
        allowed_ips: t.Optional(t.Array(t.String({ maxLength: 64 }), { maxItems: 100 })),
        force: t.Optional(t.Boolean({ description: "Promote although the report does not pass; needs a reason" })),
        reason: t.Optional(t.String({ maxLength: 500 })),
      },
      { additionalProperties: false },
    ),
  ),
  promoted: Envelope({
    partner: t.String(),
    promoted: t.Literal(true),
    promotion_policy: t.Literal("sandbox_to_live_manual_approval"),
    forced: t.Boolean({ description: "True when the report did not pass and the operator forced it" }),
    reason: nullable(t.String()),
    key: AuthModel.key,
    secret: t.String({ description: "The live key's secret, shown once" }),
    report: t.Object({
      ready: t.Boolean(),
      score: Score,
      checklist: t.Array(t.Pick(Check, ["id", "required", "status"])),
    }),
  }),
};
