import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { ListAnswer, OffsetListAnswer, OffsetPageQuery, PageQuery } from "../../http/pagination";
import { intPath } from "../../http/params";
import { nullable as Nullable } from "../../http/routes/declare";
import { MAX_SILENCE_DAYS } from "./silences";

// Schemas of the "firing now" view, the silences and the link-inbox targets' health (docs/ops-alerts.md,
// docs/ops-link-inbox.md).

const strict = { additionalProperties: false } as const;
const Time = t.String({ format: "date-time" });
const Level = t.Union([t.Literal("ok"), t.Literal("warn"), t.Literal("fail")]);

const Silence = named(
  "OpsAlertSilence",
  t.Object({
    id: t.Integer(),
    matcher: t.String({ description: "alert keys (<source>:<name>) it holds back; * matches any characters" }),
    reason: t.String(),
    created_by: t.String({ description: "who: the operator's label, admin:<name>#<token id>" }),
    created_at: Time,
    ends_at: Time,
    expired_at: Nullable(Time),
    expired_by: Nullable(t.String()),
    state: t.Union([t.Literal("active"), t.Literal("expired")]),
  }),
);

const FiringAlert = named(
  "OpsFiringAlert",
  t.Object({
    id: t.Integer({ description: "the alert's id: its page is /admin/ops/alerts-monitor/alerts/{id}" }),
    key: t.String({ description: "<source>:<name>" }),
    source: t.String(),
    name: t.String(),
    level: Level,
    since: Time,
    fired_at: Nullable(Time),
    resolved_at: Nullable(Time),
    last_evaluated_at: Time,
    value: Nullable(t.String()),
    summary: Nullable(t.String()),
    details: Nullable(t.Record(t.String(), t.Unknown())),
    silenced_by: Nullable(
      t.Object(
        { id: t.Integer(), matcher: t.String(), reason: t.String(), created_by: t.String(), ends_at: Time },
        { description: "the silence holding its notices back" },
      ),
    ),
    notified_level: Nullable(Level),
    notified_at: Nullable(Time),
    page: t.String(),
  }),
);

const TargetHealth = named(
  "OpsLinkTargetHealth",
  t.Object({
    target: t.String({ description: "the redacted label" }),
    state: t.Union([t.Literal("up"), t.Literal("down")]),
    dead: t.Boolean({ description: "refused by the target policy, or its newest message was given up on" }),
    reason: Nullable(t.String()),
    policy_problem: Nullable(t.String()),
    last_attempt_at: Nullable(Time),
    last_success_at: Nullable(Time),
    last_error: Nullable(t.String()),
    failing_streak: t.Integer(),
    dead_messages: t.Integer(),
  }),
);

export const AlertsFiringModel = {
  firingQuery: t.Object({
    source: t.Optional(
      t.Union([t.Literal("status"), t.Literal("transparency"), t.Literal("webhooks"), t.Literal("digest"), t.Literal("preflight")], {
        description: "only alerts of this source",
      }),
    ),
    level: t.Optional(t.Union([t.Literal("warn"), t.Literal("fail")], { description: "only alerts firing at this level" })),
    ...OffsetPageQuery,
  }),
  firing: Envelope({
    generated_at: Time,
    ...OffsetListAnswer(
      "alerts",
      t.Array(FiringAlert, { description: "fail first, then the longest firing first" }),
      { source: Nullable(t.String()), level: Nullable(t.String()) },
      {
        count: t.Integer({ description: "alerts in this answer" }),
        total: t.Integer({ description: "alerts firing now (of this source and level)" }),
        silenced: t.Integer({ description: "how many of the alerts firing now a silence holds back (all of them, not only this page's)" }),
      },
    ),
  }),
  silenceListQuery: t.Object({
    ...PageQuery,
    state: t.Optional(t.Union([t.Literal("active"), t.Literal("expired")])),
  }),
  silenceList: Envelope(ListAnswer("silences", t.Array(Silence), { state: Nullable(t.String()) })),
  silenceBody: t.Object(
    {
      matcher: t.String({ minLength: 1, maxLength: 200, description: "an alert key (digest:403_spike) or a pattern (digest:*, *:overall)" }),
      reason: t.String({ minLength: 1, maxLength: 500, description: "why: a ticket, a maintenance window" }),
      ends_at: t.String({ minLength: 1, maxLength: 40, description: `ISO 8601; in the future, at most ${MAX_SILENCE_DAYS} days ahead` }),
    },
    strict,
  ),
  silenceParams: t.Object({ silence_id: intPath() }),
  silenceOne: Envelope({ silence: Silence }),
  targetsQuery: t.Object(OffsetPageQuery),
  targets: Envelope({
    generated_at: Time,
    ...OffsetListAnswer(
      "targets",
      t.Array(TargetHealth, { description: "in the order of LINK_INBOX_WEBHOOK_URLS" }),
      {},
      {
        count: t.Integer({ description: "targets in this answer" }),
        total: t.Integer({ description: "configured targets" }),
        down: t.Integer({ description: "of all the targets" }),
        dead: t.Integer({ description: "of all the targets" }),
      },
    ),
  }),
};
