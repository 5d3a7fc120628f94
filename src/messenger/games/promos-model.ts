import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { PageQueryEcho, PaginationSchema } from "../../http/pagination";
import { AdminListAnswer, AdminPageQuery, audienceKey, flag } from "../config/model";
import { initBody, Replayed, Reward, requestId } from "../model";
import { nullable } from "../../http/routes/declare";
import { SELF_REPORTED_LIMITS, SERVER_OBSERVED_EVENTS } from "./mission-sources";

/** A player's own lists page by offset: their events and enrollments are few, so no cursor is issued. */
const MAX_LIST_OFFSET = 100_000;
export const MAX_ENROLLMENTS_PAGE = 500;
/** Why a mission's progress event was refused (its answer's `reason`). */
export const REFUSAL_REASONS = ["not_monotonic", "not_observed", "rate_limited", "daily_cap_reached", "already_completed"] as const;
/** Salutes a promo or mission pays (salutes-reward.ts): an exact decimal string, at most 13 digits and 6 decimals. */
export const SALUTES_AMOUNT_PATTERN = "^[0-9]{1,13}(\\.[0-9]{1,6})?$";

// Promo codes and missions: the request and response schemas of their player routes and operator routes.

const code = t.String({ pattern: "^[A-Za-z0-9_-]{3,48}$", description: "Promo code, 3–48 of A-Z a-z 0-9 _ - (case-sensitive)" });
const missionKey = t.String({ pattern: "^[a-z0-9_-]{1,64}$", description: "Mission key, 1–64 of a-z 0-9 _ -" });
const RewardInput = t.Object(
  {
    free_spins: t.Optional(t.Integer({ minimum: 0, maximum: 1000 })),
    missiles: t.Optional(t.Integer({ minimum: 0, maximum: 1000 })),
    points: t.Optional(t.Integer({ minimum: 0, maximum: 1_000_000 })),
    salutes: t.Optional(
      t.String({ pattern: SALUTES_AMOUNT_PATTERN, description: 'Salutes paid to the linked MESSENGER_SALUTES_PARTNER user, an exact decimal string ("12.5")' }),
    ),
  },
  { additionalProperties: false },
);
export const SalutesPayout = named(
  "MessengerSalutesPayout",
  t.Object({
    amount: t.String(),
    paid: t.Boolean(),
    partner_user_id: nullable(t.String()),
    salutes_ledger_entry_id: nullable(t.Integer()),
    reason: nullable(t.String({ description: "Why it was not paid" })),
  }),
);
export const Promo = named(
  "MessengerPromo",
  t.Object({
    code: t.String(),
    reward: Reward,
    reward_salutes: nullable(t.String()),
    max_claims: t.Integer(),
    claims: t.Integer(),
    audience_group: t.String(),
    expires_at: nullable(t.String()),
    enabled: t.Boolean(),
    created_at: t.String(),
  }),
);
export const progressSource = (
  description = "server: progress is the server's own count of event_type; self_reported: the mini-app reports it (declared by the operator)",
) => t.Union([t.Literal("server"), t.Literal("self_reported")], { description });
export const Mission = t.Object({
  mission_key: t.String(),
  title: t.String(),
  event_type: t.String(),
  progress_source: progressSource(),
  target: t.Integer(),
  reward: Reward,
  reward_salutes: nullable(t.String()),
  daily_cap: t.Integer(),
  per_minute_cap: t.Integer(),
  active: t.Boolean(),
  created_at: t.String(),
});
const MissionDef = named("MessengerMission", Mission);
export const Enrollment = named(
  "MessengerMissionEnrollment",
  t.Object({
    mission_key: t.String(),
    progress: t.Integer(),
    observed: nullable(
      t.Integer({ description: "Server missions: events of the type the server counted since you enrolled; progress catches up on the next progress call" }),
    ),
    target: t.Integer(),
    enrolled_at: t.String(),
    completed_at: nullable(t.String()),
    completed: t.Boolean(),
  }),
);

export const PromoModel = {
  claimBody: initBody({ request_id: requestId, code }),
  claimed: named(
    "MessengerPromoClaim",
    Envelope({ promo: t.Object({ code: t.String(), reward: Reward, claimed_at: t.String() }), salutes: nullable(SalutesPayout), ...Replayed }),
  ),
  createBody: t.Object(
    {
      code,
      update: t.Optional(
        t.Boolean({ description: "true: change this existing code's max_claims, expires_at, audience_group or enabled (without it an existing code is 409)" }),
      ),
      reward: t.Optional(RewardInput),
      max_claims: t.Optional(
        t.Integer({ minimum: 1, maximum: 10_000_000, description: "Total claims allowed (required on create; on update not below the claims made)" }),
      ),
      audience_group: t.Optional(audienceKey),
      expires_at: t.Optional(
        t.Union([t.String({ format: "date-time" }), t.Null()], { description: "ISO 8601; unset = no expiry (null on update removes the expiry)" }),
      ),
      enabled: t.Optional(t.Boolean({ description: "false: the code cannot be claimed (and is listed only with include_disabled)" })),
    },
    { additionalProperties: false },
  ),
  created: named("MessengerPromoCreated", Envelope({ promo: Promo, created: t.Boolean({ description: "false: an existing code was updated" }) })),
  listQuery: t.Object({
    include_disabled: flag("1 or true: list disabled promos too"),
    ...AdminPageQuery,
  }),
  list: named("MessengerPromoList", Envelope(AdminListAnswer("promos", t.Array(Promo), { include_disabled: t.Boolean() }))),
};

const EVENT_TYPE_PATTERN = "^[a-z0-9_.-]{1,64}$";
const OBSERVED = Object.keys(SERVER_OBSERVED_EVENTS);
const SELF = SELF_REPORTED_LIMITS;

/**
 * Where a new mission's progress may come from, as the document states it (docs/messenger.md, "Missions"): the two
 * shapes a mission's body may take, each naming only the fields it constrains beyond createBody. createMission
 * refuses every body outside them (progressSourceOrThrow, checkMissionLimitsOrThrow, with their own messages), so a
 * body valid under createBody and one of these is a body the server accepts.
 */
const missionSources = t.Union([
  t.Object(
    {
      progress_source: t.Optional(t.Literal("server", { description: "Absent or server: the server counts the event" })),
      event_type: t.Union(
        OBSERVED.map((e) => t.Literal(e)),
        { description: "An event type the server observes (docs/messenger.md)" },
      ),
    },
    { title: "server", description: "Counted by the server: an event type it observes, progress_source absent or server" },
  ),
  t.Object(
    {
      progress_source: t.Literal("self_reported"),
      event_type: t.String({ pattern: EVENT_TYPE_PATTERN, not: { enum: OBSERVED }, description: "Any event type the server does not observe" }),
      daily_cap: t.Integer({ minimum: 1, maximum: SELF.daily_cap }),
      per_minute_cap: t.Integer({ minimum: 1, maximum: SELF.per_minute_cap }),
      reward: t.Object({
        free_spins: t.Optional(t.Integer({ minimum: 0, maximum: SELF.reward.free_spins })),
        missiles: t.Optional(t.Integer({ minimum: 0, maximum: SELF.reward.missiles })),
        points: t.Optional(t.Integer({ minimum: 0, maximum: SELF.reward.points })),
        salutes: t.Optional(t.String({ pattern: "^0{1,13}(\\.0{1,6})?$", description: "Zero or absent: no salutes on the client's word" })),
      }),
    },
    {
      title: "self_reported",
      description: `Counted by the mini-app: any other event type, declared self_reported, under tighter limits (daily_cap ≤ ${SELF.daily_cap}, per_minute_cap ≤ ${SELF.per_minute_cap}, no salutes)`,
    },
  ),
]);

export const MissionModel = {
  createBody: t.Object(
    {
      mission_key: missionKey,
      title: t.String({ minLength: 1, maxLength: 200 }),
      event_type: t.String({
        pattern: EVENT_TYPE_PATTERN,
        description: "What is counted: a server-observed type (spin_wheel.play …, docs/messenger.md), or any other with progress_source self_reported",
      }),
      progress_source: t.Optional(
        progressSource(
          "Default server (only for server-observed event types). self_reported must be declared for any other type: caps and rewards are then limited and salutes refused",
        ),
      ),
      target: t.Integer({ minimum: 1, maximum: 1_000_000 }),
      reward: RewardInput,
      daily_cap: t.Integer({ minimum: 1, maximum: 1_000_000, description: "Most progress units accepted per player per UTC day" }),
      per_minute_cap: t.Integer({ minimum: 1, maximum: 1000, description: "Most accepted progress events per player per rolling minute" }),
    },
    { additionalProperties: false },
  ),
  /** createBody's rule across event_type, progress_source and the limits, for the document (bodyRule in the route's detail). */
  createSources: missionSources,
  created: named("MessengerMissionCreated", Envelope({ mission: MissionDef })),
  list: named("MessengerMissionList", Envelope({ missions: t.Array(MissionDef), count: t.Integer() })),
  catalog: named("MessengerMissionCatalog", Envelope({ missions: t.Array(t.Object({ ...Mission.properties, enrollment: nullable(Enrollment) })) })),
  enrollBody: initBody({ mission_key: missionKey }),
  enrolled: named("MessengerMissionEnrolled", Envelope({ enrollment: Enrollment, already_enrolled: t.Boolean() })),
  progressBody: initBody({
    mission_key: missionKey,
    client_event_id: t.String({
      minLength: 1,
      maxLength: 64,
      pattern: "^[A-Za-z0-9_.:-]{1,64}$",
      description: "Unique per event; a repeat replays the first answer",
    }),
    progress: t.Optional(
      t.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description: "Self-reported missions (required): the absolute progress now (must grow). Server missions: not used, progress is the server's count",
      }),
    ),
  }),
  progress: named(
    "MessengerMissionProgress",
    Envelope({
      client_event_id: t.String(),
      mission_key: t.String(),
      accepted: t.Boolean(),
      reason: nullable(t.String({ description: "not_monotonic, not_observed, rate_limited, daily_cap_reached or already_completed" })),
      message: nullable(t.String()),
      progress: t.Integer(),
      target: t.Integer(),
      completed: t.Boolean(),
      progress_source: t.Optional(progressSource("Where the progress came from (absent in answers recorded before it was)")),
      observed: t.Optional(nullable(t.Integer({ description: "Server missions: the server's count since enrolling; null when self-reported" }))),
      reward_paid: nullable(Reward),
      salutes: nullable(SalutesPayout),
      replayed: t.Boolean(),
    }),
  ),
  historyBody: initBody({
    mission_key: t.Optional(missionKey),
    limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, description: "integer 1–200, default 50" })),
    offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_LIST_OFFSET, description: `events to skip, 0–${MAX_LIST_OFFSET}, default 0` })),
  }),
  listBody: initBody({
    limit: t.Optional(
      t.Integer({ minimum: 1, maximum: MAX_ENROLLMENTS_PAGE, description: `integer 1–${MAX_ENROLLMENTS_PAGE}, default ${MAX_ENROLLMENTS_PAGE}` }),
    ),
    offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_LIST_OFFSET, description: `enrollments to skip, 0–${MAX_LIST_OFFSET}, default 0` })),
  }),
  history: named(
    "MessengerMissionHistory",
    Envelope({
      events: t.Array(
        t.Object({
          mission_key: t.String(),
          client_event_id: t.String(),
          value: t.Integer(),
          accepted: t.Boolean(),
          reason: nullable(t.String()),
          created_at: t.String(),
        }),
      ),
      count: t.Integer(),
      query: PageQueryEcho({ mission_key: nullable(t.String()) }),
      pagination: PaginationSchema,
    }),
  ),
  listResult: named(
    "MessengerMissionEnrollments",
    Envelope({
      enrollments: t.Array(t.Object({ ...Enrollment.properties, title: t.String() })),
      count: t.Integer(),
      query: PageQueryEcho(),
      pagination: PaginationSchema,
    }),
  ),
};
