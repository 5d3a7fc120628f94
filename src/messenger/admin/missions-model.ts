import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { PageQuery, PaginationSchema } from "../../http/pagination";
import { AdminListAnswer } from "../config/model";
import { intQuery } from "../../http/params";
import { nullable } from "../../http/routes/declare";
import { Mission, progressSource as missionProgressSource, REFUSAL_REASONS, SALUTES_AMOUNT_PATTERN } from "../games/promos-model";
import { windowQueryFields } from "./window";

// The operator's mission routes (docs/messenger-admin-missions.md): request and response schemas.

export const MISSION_WINDOW_DEFAULT_DAYS = 30;

const progressSource = missionProgressSource(
  "server: progress is the server's own count of event_type; self_reported: reported by the mini-app (declared at creation, tighter limits)",
);

const salutes = t.String({ pattern: SALUTES_AMOUNT_PATTERN, description: 'An exact decimal string ("12.5")' });

const AdminMission = named(
  "MessengerAdminMission",
  // The player-facing mission's fields (games/promos-model.ts), its source described for operators, then the revision.
  t.Object({
    ...Mission.properties,
    progress_source: progressSource,
    revision: t.Integer({ description: "Bumped by every change; send it back in X-Expected-Revision" }),
    updated_at: t.String(),
  }),
);

const EventCounts = named(
  "MessengerMissionEventCounts",
  t.Object({
    accepted: t.Integer({ description: "Accepted progress events" }),
    accepted_units: t.Integer({ description: "Progress units the accepted events added" }),
    refused: t.Integer({ description: "Refused progress events, all reasons" }),
    refused_by_reason: t.Object(
      Object.fromEntries(REFUSAL_REASONS.map((r) => [r, t.Integer()])) as Record<(typeof REFUSAL_REASONS)[number], ReturnType<typeof t.Integer>>,
    ),
  }),
);

const RewardsPaid = named(
  "MessengerMissionRewardsPaid",
  t.Object({
    completions_paid: t.Integer({ description: "Completions that paid the reward" }),
    free_spins: t.Integer(),
    missiles: t.Integer(),
    points: t.Integer(),
    salutes: t.String({ description: "Salutes actually credited, an exact decimal string" }),
  }),
);

const Window = named(
  "MessengerMissionWindow",
  t.Object({
    from: t.String({ description: "First UTC day, YYYY-MM-DD" }),
    to: t.String({ description: "Last UTC day, YYYY-MM-DD (inclusive)" }),
    days: t.Integer(),
    label: t.String({ description: "The preset, or last_<n>d" }),
  }),
);

const Figures = {
  enrollments: t.Integer({ description: "Players who enrolled in the window" }),
  completions: t.Integer({ description: "Enrollments completed in the window (whenever they enrolled)" }),
  events: EventCounts,
  rewards_paid: RewardsPaid,
};

const rate = nullable(t.Number({ description: "Share 0–1, 4 decimals; null without enrollments" }));

export const MissionAdminModel = {
  params: t.Object({ mission_key: t.String({ minLength: 1, maxLength: 64, description: "The mission's key" }) }),
  listQuery: t.Object({ ...PageQuery }),
  list: named("MessengerAdminMissionList", Envelope(AdminListAnswer("missions", t.Array(AdminMission), {}, { total: t.Integer() }, PaginationSchema))),
  created: named("MessengerAdminMissionCreated", Envelope({ mission: AdminMission })),
  revisionHeaders: t.Object({
    "x-expected-revision": t.Optional(
      t.String({ description: "The revision you read (a positive integer); a stale one is 409 revision_conflict with details.current_revision" }),
    ),
  }),
  patchBody: t.Object(
    {
      title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
      event_type: t.Optional(
        t.String({ pattern: "^[a-z0-9_.-]{1,64}$", description: "What is counted: server-observed for a server mission, any other for a self-reported one" }),
      ),
      target: t.Optional(t.Integer({ minimum: 1, maximum: 1_000_000, description: "Must stay above every unfinished player's progress" })),
      reward: t.Optional(
        t.Object(
          {
            free_spins: t.Optional(t.Integer({ minimum: 0, maximum: 1000 })),
            missiles: t.Optional(t.Integer({ minimum: 0, maximum: 1000 })),
            points: t.Optional(t.Integer({ minimum: 0, maximum: 1_000_000 })),
            salutes: t.Optional(nullable(salutes)),
          },
          { additionalProperties: false, description: "Only the fields sent change; salutes null removes the salutes reward" },
        ),
      ),
      daily_cap: t.Optional(t.Integer({ minimum: 1, maximum: 1_000_000 })),
      per_minute_cap: t.Optional(t.Integer({ minimum: 1, maximum: 1000 })),
    },
    { additionalProperties: false },
  ),
  patched: named("MessengerMissionPatched", Envelope({ mission: AdminMission, changed_fields: t.Array(t.String()) })),
  toggled: named("MessengerMissionToggled", Envelope({ mission: AdminMission, changed: t.Boolean({ description: "false: it already was in that state" }) })),
  windowQuery: t.Object({ ...windowQueryFields(MISSION_WINDOW_DEFAULT_DAYS), include_meta: t.Optional(t.String()) }),
  comparisonQuery: t.Object({
    ...windowQueryFields(MISSION_WINDOW_DEFAULT_DAYS),
    ...PageQuery,
    limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 200, description: "missions compared, oldest first" }),
  }),
  comparison: named(
    "MessengerMissionComparison",
    Envelope({
      window: Window,
      ...AdminListAnswer(
        "missions",
        t.Array(
          t.Object({
            mission_key: t.String(),
            title: t.String(),
            active: t.Boolean(),
            progress_source: progressSource,
            revision: t.Integer(),
            target: t.Integer(),
            ...Figures,
            enrolled_and_completed: t.Integer({ description: "Of the window's enrollments, those completed by the window's end" }),
            completion_rate: rate,
          }),
        ),
        { days: t.Integer({ description: "the window's length in days" }), preset: nullable(t.String()) },
        { has_more: t.Boolean({ description: "More missions than limit exist (the same as pagination.has_more)" }) },
        PaginationSchema,
      ),
    }),
  ),
  analytics: named(
    "MessengerMissionAnalytics",
    Envelope({
      mission_key: t.String(),
      window: Window,
      totals: t.Object({ ...Figures }),
      series: t.Array(t.Object({ day: t.String({ description: "UTC day, YYYY-MM-DD" }), ...Figures })),
    }),
  ),
  stats: named(
    "MessengerMissionStats",
    Envelope({
      mission: AdminMission,
      funnel: t.Object({
        enrolled: t.Integer(),
        started: t.Integer({ description: "Progress above 0 (completed included)" }),
        in_progress: t.Integer({ description: "Started, not completed" }),
        completed: t.Integer(),
      }),
      completion_rate: rate,
      median_progress: nullable(t.Number({ description: "Over every enrollment; the mean of the two middle values for an even count" })),
      events: EventCounts,
      rewards_paid: RewardsPaid,
      first_enrolled_at: nullable(t.String()),
      last_event_at: nullable(t.String()),
    }),
  ),
};
