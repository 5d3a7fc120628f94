// Request and response schemas of the operators' games analytics (analytics-routes.ts).
import { t } from "elysia";
import { Envelope, includeMetaQuery } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { PageQuery, PaginationSchema } from "../../http/pagination";
import { AdminListAnswer } from "../config/model";
import { intPath, intQuery } from "../../http/params";
import { requestId } from "../model";
import { nullable } from "../../http/routes/declare";
import type { ProfileSort } from "../store/players";
import { windowQueryFields } from "./window";

export const PROFILE_SORTS = ["points_earned", "last_seen", "telegram_user_id"] as const satisfies readonly ProfileSort[];

export const MAX_GRANT_MISSILES = 1000;

const gamesParam = t.Optional(t.String({ maxLength: 200, description: "comma-separated game keys (spin_wheel, recon_grid); absent = every game" }));

const Window = named(
  "MessengerReportWindow",
  t.Object({
    from: t.String({ description: "first UTC day, inclusive (YYYY-MM-DD)" }),
    to: t.String({ description: "last UTC day, inclusive" }),
    days: t.Integer(),
    label: t.String({ description: "the preset, or last_<n>d" }),
    since: t.String({ description: "the window's start instant (ISO 8601)" }),
    until: t.String({ description: "the instant after its end (exclusive)" }),
  }),
);

const Amounts = named("MessengerGameAmounts", t.Object({ free_spins: t.Integer(), missiles: t.Integer(), points: t.Integer() }));

const SeriesPoint = t.Object({
  day: t.String(),
  plays: t.Integer(),
  players: t.Integer(),
  payout_points_value: t.Integer(),
  cost_points_value: t.Integer(),
  rtp_percent: nullable(t.Number()),
});

const GameFigures = named(
  "MessengerGameFigures",
  t.Object({
    game_key: t.String({ description: "the game, or total" }),
    plays: t.Integer(),
    players: t.Integer({ description: "distinct players with a ledger entry in the game (plays, its purchases, grants) in the window" }),
    payout: Amounts,
    cost: Amounts,
    payout_points_value: t.Integer(),
    cost_points_value: t.Integer(),
    rtp_percent: nullable(t.Number({ description: "payout value ÷ cost value × 100, 2 decimals; null when nothing was spent" })),
    purchases: t.Object({ entries: t.Integer(), points_spent: t.Integer(), free_spins_bought: t.Integer(), missiles_bought: t.Integer() }),
    manual_grants: t.Object({ entries: t.Integer(), free_spins: t.Integer(), missiles: t.Integer(), points: t.Integer() }),
    series: t.Array(SeriesPoint),
  }),
);

const Scan = t.Object({ table: t.String(), rows_examined: t.Integer(), limit: t.Integer(), bounded: t.Boolean() });
const CheckStatus = t.Union([t.Literal("pass"), t.Literal("warn"), t.Literal("fail")]);
export const RolloutCheck = named(
  "MessengerRolloutCheck",
  t.Object({
    name: t.String(),
    game_key: nullable(t.String()),
    status: CheckStatus,
    figure: nullable(t.Number()),
    unit: t.String(),
    threshold: t.String(),
    message: t.String(),
    fix: nullable(t.String({ description: "what to do; null when the check passes" })),
  }),
);

export const AnalyticsModel = {
  overviewQuery: t.Object({ ...windowQueryFields(30), games: gamesParam, ...includeMetaQuery }),
  exportQuery: t.Object({
    ...windowQueryFields(30),
    games: gamesParam,
    format: t.Optional(t.Union([t.Literal("csv"), t.Literal("json")], { description: "csv (default) or json: the same rows" })),
    ...includeMetaQuery,
  }),
  checklistQuery: t.Object({ ...windowQueryFields(7), games: gamesParam, ...includeMetaQuery }),
  gameQuery: t.Object({ ...windowQueryFields(7), ...includeMetaQuery }),
  overview: named(
    "MessengerGamesOverview",
    Envelope({
      window: Window,
      games_selected: t.Array(t.String()),
      points_value: named("MessengerPointsValue", t.Object({ free_spins: t.Integer(), missiles: t.Integer(), points: t.Integer() })),
      games: t.Array(GameFigures),
      total: GameFigures,
    }),
  ),
  exportJson: named(
    "MessengerGamesOverviewExport",
    Envelope({
      window: Window,
      games_selected: t.Array(t.String()),
      columns: t.Array(t.String()),
      rows: t.Array(t.Record(t.String(), t.Union([t.String(), t.Number(), t.Null()]))),
    }),
  ),
  spinWheel: named(
    "MessengerSpinWheelStats",
    Envelope({
      window: Window,
      game: GameFigures,
      wheel: t.Object({
        campaigns: t.Array(
          t.Object({
            campaign_key: t.String(),
            known_campaign: t.Boolean(),
            spins: t.Integer(),
            paid_with: t.Record(t.String(), t.Integer()),
            gross_payout: nullable(t.Object({ free_spins: t.Integer(), missiles: t.Integer(), points: t.Integer(), points_value: t.Integer() })),
            max_abs_z_score: nullable(t.Number()),
            segments: t.Array(
              t.Object({
                segment_index: t.Integer(),
                label: nullable(t.String()),
                weight: nullable(t.Number()),
                expected_share: nullable(t.Number()),
                count: t.Integer(),
                observed_share: t.Number(),
                drift_points: nullable(t.Number({ description: "observed − expected share, in percentage points" })),
                z_score: nullable(t.Number()),
              }),
            ),
          }),
        ),
        scan: Scan,
      }),
    }),
  ),
  reconGrid: named(
    "MessengerReconGridStats",
    Envelope({
      window: Window,
      game: GameFigures,
      grids: t.Object({
        started: t.Integer(),
        completed: t.Integer(),
        abandoned: t.Integer(),
        active: t.Integer(),
        finished: t.Integer(),
        reveals_in_these_grids: t.Integer(),
        average_reveals_per_grid: nullable(t.Number()),
        average_reveals_per_finished_grid: nullable(t.Number()),
      }),
      scan: Scan,
    }),
  ),
  checklist: named(
    "MessengerRolloutChecklist",
    Envelope({
      window: Window,
      games_selected: t.Array(t.String()),
      overall: CheckStatus,
      counts: t.Object({ pass: t.Integer(), warn: t.Integer(), fail: t.Integer() }),
      checks: t.Array(RolloutCheck),
    }),
  ),
  activityParams: t.Object({ telegram_user_id: intPath({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "the player's Telegram user id" }) }),
  activityQuery: t.Object({ ...PageQuery }),
  profilesQuery: t.Object({
    limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 50, description: "players per page" }),
    offset: intQuery({ minimum: 0, maximum: 1_000_000_000, defaultValue: 0, description: "players to skip" }),
    sort: t.Optional(
      t.Union(
        PROFILE_SORTS.map((s) => t.Literal(s)),
        { description: "points_earned (default, highest first), last_seen (newest first) or telegram_user_id" },
      ),
    ),
    linked: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { description: "only linked (true) or unlinked (false) players" })),
    include_meta: t.Optional(t.String()),
  }),
  grantBody: named(
    "MessengerManualGrantRequest",
    t.Object(
      {
        telegram_user_id: t.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
        missiles: t.Integer({ minimum: 1, maximum: MAX_GRANT_MISSILES, description: `missiles to add, 1–${MAX_GRANT_MISSILES}` }),
        reason: t.String({ minLength: 1, maxLength: 500, description: "why (kept in the audit row and the ledger fingerprint)" }),
        request_id: requestId,
      },
      { additionalProperties: false },
    ),
  ),
};

const Balances = t.Object({ free_spin_balance: t.Integer(), missile_balance: t.Integer(), points_balance: t.Integer() });
const Activity = t.Object({
  ledger_entries: t.Integer(),
  active_days: t.Integer(),
  last_active_day: nullable(t.String()),
  entries_by_game: t.Record(t.String(), t.Integer()),
});
const Profile = {
  telegram_user_id: t.Integer(),
  username: nullable(t.String()),
  first_name: nullable(t.String()),
  language_code: nullable(t.String()),
  is_premium: t.Boolean(),
  linked_user_id: nullable(t.String()),
  linked_by: nullable(t.String()),
  referred_by: nullable(t.Integer()),
  created_at: t.String(),
  points_earned: t.Integer(),
  last_free_spin_at: nullable(t.String()),
  last_seen_at: t.String(),
  linked: t.Boolean(),
  balances: Balances,
};
/** A player as the operators see them: the stored profile, the figures kept with it, and the balances. */
export const PlayerProfile = t.Object(Profile);

export const PlayersModel = {
  activity: named(
    "MessengerPlayerActivity",
    Envelope({
      player: PlayerProfile,
      activity: t.Object({
        ...Activity.properties,
        spins: t.Integer(),
        grids: t.Integer(),
        promos_claimed: t.Integer(),
        missions_completed: t.Integer(),
      }),
      ...AdminListAnswer(
        "ledger",
        t.Array(
          t.Object({
            id: t.Integer(),
            request_id: t.String(),
            action: t.String(),
            game_key: nullable(t.String()),
            deltas: Amounts,
            balances_after: Balances,
            created_at: t.String(),
          }),
        ),
        {},
        {},
        PaginationSchema,
      ),
    }),
  ),
  profiles: named(
    "MessengerPlayerProfiles",
    Envelope(
      AdminListAnswer(
        "players",
        t.Array(t.Object({ ...Profile, activity: Activity })),
        { cursor: t.Null({ description: "paged by offset: never a cursor" }), sort: t.String(), linked: nullable(t.String()) },
        {
          total: t.Integer({ description: "players matching `linked`, counted up to 10,000 (total_capped says there are more)" }),
          total_capped: t.Boolean({ description: "true when more than 10,000 players match: total is then 10,000, a lower bound" }),
        },
        PaginationSchema,
      ),
    ),
  ),
  granted: named(
    "MessengerManualGrant",
    Envelope({
      grant: t.Object({ telegram_user_id: t.Integer(), missiles: t.Integer(), reason: t.String(), request_id: t.String(), granted_at: t.String() }),
      balances: Balances,
      replayed: t.Boolean(),
      ledger_entry_id: t.Integer(),
    }),
  ),
};
