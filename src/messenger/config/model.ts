// Request and response schemas of the games-configuration operator routes (docs/messenger-admin-games.md).
import type { TInteger, TProperties, TSchema } from "@sinclair/typebox";
import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { PageQuery, PageQueryEcho } from "../../http/pagination";
import { intQuery } from "../../http/params";
import { catalogGame, Reward } from "../model";
import { nullable } from "../../http/routes/declare";

const MAX_ID = Number.MAX_SAFE_INTEGER;
/** A wheel campaign's bounds, here with its schema; saveWheelCampaign checks the segments against the same. */
export const MAX_SEGMENTS = 24;
/** fairInt's bias stays below 2^-32 only for n ≤ 2^20 (src/messenger/games/fair.ts), so the weights sum to at most this. */
export const MAX_TOTAL_WEIGHT = 2 ** 20;
export const MIN_COOLDOWN_SECONDS = 60;
export const MAX_COOLDOWN_SECONDS = 7 * 86_400;
/** Bounds of an audience rule: the id list is for pilots and testers, not for mailing lists. */
const MAX_RULE_USER_IDS = 1000;
const MAX_RULE_LANGUAGES = 50;

/** A yes/no query parameter: 1 or true, 0 or false. */
export const flag = (description: string) => t.Optional(t.Union([t.Literal("0"), t.Literal("1"), t.Literal("true"), t.Literal("false")], { description }));

/**
 * limit/offset/cursor of every list here (src/http/pagination.ts), with a limit of their own: the cursor holds the
 * last row's sort key, so it pages lists keyed by text (a start time, then a key) as well as by id; past MAX_OFFSET
 * parseKeyPage refuses with offset_too_large, as the offset's description says.
 */
export const AdminPageQuery = {
  ...PageQuery,
  limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 50, description: "rows per page" }),
};
/** The spec's pagination object, with the applied limit and offset these lists always answered. */
export const AdminPage = named(
  "MessengerAdminPage",
  t.Object({
    limit: t.Integer(),
    offset: t.Integer(),
    has_more: t.Boolean(),
    next_offset: nullable(t.Integer({ description: "null past the last page, and when paging by cursor" })),
    next_cursor: nullable(t.String({ description: "pass as cursor for the next page; null past the last page" })),
  }),
);

type NoFields = Record<never, never>;
/**
 * The fields of a messenger operator list, declared once in the order these lists have always answered: the items
 * under `key`, `count`, the list's own figures (`between`), `pagination`, then the `query` echo with the list's
 * filters (src/http/pagination.ts's ListAnswer puts `count` first and `query` before `pagination`). `pagination` is
 * MessengerAdminPage where the list answers the applied limit and offset in it (`paged`), the plain Pagination
 * elsewhere. A `count` in `between`, or a filter named like an echo field (`cursor`), replaces it where it stands.
 */
export const AdminListAnswer = <
  K extends string,
  I extends TSchema,
  F extends TProperties = NoFields,
  B extends TProperties = NoFields,
  P extends TSchema = typeof AdminPage,
>(
  key: K,
  items: I,
  filters?: F,
  between?: B,
  pagination: P = AdminPage as TSchema as P,
) =>
  ({ [key]: items, count: t.Integer(), ...between, pagination, query: PageQueryEcho(filters) }) as { [X in K]: I } & { count: TInteger } & B & {
      pagination: P;
      query: ReturnType<typeof PageQueryEcho<F>>;
    };

export const audienceKey = t.String({
  pattern: "^[a-z0-9_-]{2,48}$",
  description: "Audience group: all, premium, linked, unlinked, or an operator group key (2–48 of a-z 0-9 _ -)",
});
const instant = t.String({ format: "date-time", description: "ISO 8601 UTC, e.g. 2026-01-01T00:00:00Z" });
const openEnd = t.Optional(t.Union([instant, t.Null()], { description: "ISO 8601 UTC; null or absent = open-ended" }));
const update = t.Optional(t.Boolean({ description: "true: change the existing one with this key (omitted fields keep their value)" }));

const Rule = named(
  "MessengerAudienceRule",
  t.Object(
    {
      premium: t.Optional(t.Boolean()),
      linked: t.Optional(t.Boolean({ description: "linked to a MESSENGER_SALUTES_PARTNER user" })),
      language_codes: t.Optional(
        t.Array(t.String({ pattern: "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$" }), {
          minItems: 1,
          maxItems: MAX_RULE_LANGUAGES,
          description: 'Telegram language codes; "en" also matches "en-GB"',
        }),
      ),
      min_points_earned: t.Optional(t.Integer({ minimum: 0, maximum: 1_000_000_000_000 })),
      telegram_user_ids: t.Optional(t.Array(t.Integer({ minimum: 1, maximum: MAX_ID }), { minItems: 1, maxItems: MAX_RULE_USER_IDS })),
      created_after: t.Optional(instant),
      created_before: t.Optional(instant),
    },
    { additionalProperties: false, description: "Every stated condition must hold (AND)" },
  ),
);
const AudienceGroup = named(
  "MessengerAudienceGroup",
  t.Object({
    group_key: t.String(),
    title: t.String(),
    builtin: t.Boolean(),
    description: nullable(t.String()),
    rule: nullable(Rule),
    created_by: nullable(t.String()),
    created_at: nullable(t.String()),
  }),
);

export const CatalogCampaign = named(
  "MessengerCatalogCampaign",
  t.Object({
    id: t.Integer(),
    game_key: t.String(),
    audience_group: t.String(),
    title: t.String(),
    starts_at: t.String(),
    ends_at: nullable(t.String()),
    enabled: t.Boolean(),
    active_now: t.Boolean(),
    created_by: t.String(),
    created_at: t.String(),
  }),
);

const Fraction = named(
  "MessengerFraction",
  t.Object({ numerator: t.Integer(), denominator: t.Integer(), decimal: t.String({ description: "rounded half-up to 6 decimals" }) }),
);
const ExpectedValue = named(
  "MessengerWheelExpectedValue",
  t.Object({ total_weight: t.Integer(), free_spins: Fraction, missiles: Fraction, points: Fraction }, { description: "Expected reward of one spin" }),
);
export const Segment = t.Object({ label: t.String(), weight: t.Integer(), reward: Reward });
export const WheelCampaign = named(
  "MessengerAdminWheelCampaign",
  t.Object({
    campaign_key: t.String(),
    title: t.String(),
    audience_group: t.String(),
    starts_at: t.String(),
    ends_at: nullable(t.String()),
    cooldown_seconds: t.Integer(),
    segments: t.Array(Segment),
    enabled: t.Boolean(),
    active_now: t.Boolean(),
    expected_value: ExpectedValue,
    created_by: t.String(),
    created_at: t.String(),
  }),
);
const DefaultWheel = t.Object({
  campaign_key: t.String(),
  title: t.String(),
  cooldown_seconds: t.Integer(),
  segments: t.Array(Segment),
  source: t.String(),
  expected_value: ExpectedValue,
});
const SegmentInput = t.Object(
  {
    label: t.String({ minLength: 1, maxLength: 40 }),
    weight: t.Integer({ minimum: 1, maximum: MAX_TOTAL_WEIGHT, description: "positive integer; the weights sum to at most 2^20" }),
    reward: t.Object(
      {
        free_spins: t.Optional(t.Integer({ minimum: 0, maximum: 100 })),
        missiles: t.Optional(t.Integer({ minimum: 0, maximum: 1000 })),
        points: t.Optional(t.Integer({ minimum: 0, maximum: 1_000_000 })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** What the catalog preview says of every campaign it considered, catalog or wheel. */
const Considered = {
  title: t.String(),
  audience_group: t.String(),
  starts_at: t.String(),
  ends_at: nullable(t.String()),
  enabled: t.Boolean(),
  in_audience: t.Boolean(),
  in_window: t.Boolean(),
};
export const ConsideredCampaign = t.Object(Considered);

export const GamesConfigModel = {
  groupsQuery: t.Object(AdminPageQuery),
  groups: named("MessengerAudienceGroupList", Envelope(AdminListAnswer("audience_groups", t.Array(AudienceGroup), {}, { total: t.Integer() }))),
  groupBody: t.Object(
    {
      group_key: audienceKey,
      title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
      rule: t.Optional(Rule),
      update,
    },
    { additionalProperties: false },
  ),
  groupSaved: named("MessengerAudienceGroupSaved", Envelope({ audience_group: AudienceGroup, created: t.Boolean() })),

  campaignsQuery: t.Object({
    ...AdminPageQuery,
    game_key: t.Optional(t.Union([t.Literal("spin_wheel"), t.Literal("recon_grid")])),
    include_disabled: flag("1 or true: list disabled campaigns too"),
  }),
  campaigns: named(
    "MessengerCatalogCampaignList",
    Envelope(AdminListAnswer("campaigns", t.Array(CatalogCampaign), { game_key: nullable(t.String()), include_disabled: t.Boolean() })),
  ),
  campaignBody: t.Object(
    {
      id: t.Optional(t.Integer({ minimum: 1, maximum: MAX_ID, description: "An existing campaign's id: update it (omitted fields keep their value)" })),
      game_key: t.Optional(t.Union([t.Literal("spin_wheel"), t.Literal("recon_grid")])),
      audience_group: t.Optional(audienceKey),
      title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
      starts_at: t.Optional(t.String({ format: "date-time", description: "ISO 8601 UTC; default now (on create)" })),
      ends_at: openEnd,
      enabled: t.Optional(t.Boolean({ description: "false: disable (the campaign no longer gates or opens the game)" })),
    },
    { additionalProperties: false },
  ),
  campaignSaved: named("MessengerCatalogCampaignSaved", Envelope({ campaign: CatalogCampaign, created: t.Boolean() })),

  wheelsQuery: t.Object({ ...AdminPageQuery, include_disabled: flag("1 or true: list disabled campaigns too") }),
  wheels: named(
    "MessengerWheelCampaignList",
    Envelope({ ...AdminListAnswer("campaigns", t.Array(WheelCampaign), { include_disabled: t.Boolean() }), default_campaign: DefaultWheel }),
  ),
  wheelBody: t.Object(
    {
      campaign_key: t.String({ pattern: "^[a-z0-9_-]{2,48}$", description: "2–48 of a-z 0-9 _ -" }),
      update,
      title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
      audience_group: t.Optional(audienceKey),
      starts_at: t.Optional(t.String({ format: "date-time", description: "ISO 8601 UTC; default now (on create)" })),
      ends_at: openEnd,
      cooldown_seconds: t.Optional(
        t.Integer({ minimum: MIN_COOLDOWN_SECONDS, maximum: MAX_COOLDOWN_SECONDS, description: "between daily free spins, 60 s to 7 days" }),
      ),
      segments: t.Optional(t.Array(SegmentInput, { minItems: 1, maxItems: MAX_SEGMENTS, description: `1–${MAX_SEGMENTS} segments, index 0 first` })),
      enabled: t.Optional(t.Boolean()),
    },
    { additionalProperties: false },
  ),
  wheelSaved: named("MessengerWheelCampaignSaved", Envelope({ campaign: WheelCampaign, created: t.Boolean() })),

  previewQuery: t.Object({
    telegram_user_id: intQuery({ minimum: 1, maximum: MAX_ID, description: "a player (absent: a hypothetical new player)" }),
    linked_user_id: intQuery({ minimum: 0, maximum: MAX_ID, description: "pretend the player is linked to this partner user; 0 = unlinked" }),
    admin_view: flag("1 or true: every campaign and audience group with why it matched or not, disabled ones included"),
    include_meta: t.Optional(t.String()),
  }),
  preview: named(
    "MessengerCatalogPreview",
    Envelope({
      at: t.String(),
      admin_view: t.Boolean(),
      player: t.Object({
        telegram_user_id: nullable(t.Integer()),
        exists: t.Boolean({ description: "false: no such player yet; a new player's defaults are shown" }),
        hypothetical: t.Boolean({ description: "true: not a stored player as is (unknown id, or linked_user_id overridden)" }),
        is_premium: t.Boolean(),
        linked_user_id: nullable(t.String()),
        language_code: nullable(t.String()),
        points_earned: t.Integer(),
        created_at: t.String(),
      }),
      games: t.Array(catalogGame(), { description: "Exactly what GET /api/messenger/games/catalog answers this player" }),
      explain: t.Array(
        t.Object({
          game_key: t.String(),
          builtin_audience_group: t.String(),
          in_builtin_audience: t.Boolean(),
          gated: t.Boolean({ description: "the game has enabled catalog campaigns" }),
          allowed: t.Boolean(),
          matched_campaign_id: nullable(t.Integer()),
          reason: nullable(t.String()),
          campaigns: t.Array(t.Object({ id: t.Integer(), ...Considered, matched: t.Boolean() })),
        }),
      ),
      wheel: t.Object({
        campaign_key: t.String(),
        title: t.String(),
        source: t.String({ description: "campaign or default" }),
        cooldown_seconds: t.Integer(),
        expected_value: ExpectedValue,
        candidates: t.Array(t.Object({ campaign_key: t.String(), ...Considered, applies: t.Boolean() })),
      }),
      audience_groups: t.Array(
        t.Object({
          group_key: t.String(),
          builtin: t.Boolean(),
          member: t.Boolean(),
          failed_conditions: t.Array(t.String(), { description: "the rule conditions this player fails (empty: a member)" }),
        }),
      ),
    }),
  ),
};
