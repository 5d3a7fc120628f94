import type { TProperties } from "@sinclair/typebox";
import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { named } from "../http/openapi/names";
import { LatestQueryEcho, PaginationSchema } from "../http/pagination";
import { intPath, intQuery } from "../http/params";
import { nullable } from "../http/routes/declare";

/** Telegram's init data is a few hundred bytes; anything far larger is not init data. */
export const INIT_DATA_MAX_LENGTH = 4096;

export const initData = t.Optional(
  t.String({ maxLength: INIT_DATA_MAX_LENGTH, description: "Telegram init data (alternatively `Authorization: tma <init data>`)" }),
);
/** A client-chosen id that makes a spending or rewarding call idempotent: the same id answers the stored result. */
export const requestId = t.String({
  minLength: 1,
  maxLength: 64,
  pattern: "^[A-Za-z0-9_.:-]{1,64}$",
  description: "Client request id (1–64 of A-Z a-z 0-9 _ . : -; a UUID works); a retry with the same id replays the first answer",
});

export const Balances = named(
  "MessengerBalances",
  t.Object({
    free_spin_balance: t.Integer({ minimum: 0 }),
    missile_balance: t.Integer({ minimum: 0 }),
    points_balance: t.Integer({ minimum: 0 }),
  }),
);

export const Player = named(
  "MessengerPlayer",
  t.Object({
    telegram_user_id: t.Integer(),
    username: nullable(t.String()),
    first_name: nullable(t.String()),
    language_code: nullable(t.String()),
    is_premium: t.Boolean(),
    linked_user_id: nullable(t.String({ description: "Partner user id of MESSENGER_SALUTES_PARTNER, when linked" })),
    linked_by: nullable(t.String({ description: "wallet_proof or operator" })),
    referred_by: nullable(t.Integer({ description: "Telegram user id of the player who invited this one (/start ref_<id>)" })),
    created_at: t.String(),
  }),
);

export const Reward = named(
  "MessengerReward",
  t.Object({
    free_spins: t.Integer({ minimum: 0 }),
    missiles: t.Integer({ minimum: 0 }),
    points: t.Integer({ minimum: 0 }),
  }),
);

/** A POST body: the init data, then the route's own fields, and nothing else. */
export const initBody = <P extends TProperties>(fields: P) => t.Object({ init_data: initData, ...fields }, { additionalProperties: false });
export const InitOnlyBody = initBody({});
export const InitQuery = t.Object({ init_data: initData, include_meta: t.Optional(t.String()) });

export const MessengerModel = {
  verified: named(
    "MessengerIdentity",
    Envelope({
      identity: t.Object({
        telegram_user_id: t.Integer(),
        username: nullable(t.String()),
        is_premium: t.Boolean(),
        language_code: nullable(t.String()),
        auth_date: t.Integer({ description: "Unix seconds Telegram signed the init data at" }),
        scheme: t.Union([t.Literal("hmac"), t.Literal("ed25519")]),
        start_param: nullable(t.String()),
      }),
      player: Player,
      linked_user_id: nullable(t.String()),
      balances: Balances,
    }),
  ),
};

const seedHashField = (description: string) => t.String({ pattern: "^[0-9a-f]{64}$", description });
/** When a seed's hash was first published, and when its client seed was set: the first precedes the second. */
const SeedTimes = {
  committed_at: t.String({ description: "When server_seed_hash was first published (as next_server_seed_hash, for a pair you chose the client seed of)" }),
  client_seed_set_at: t.String({ description: "When the client seed was set and the pair became active" }),
};
/** The hash of the server seed committed for the NEXT pair or grid, published before you choose its client seed. */
const NextSeed = {
  next_server_seed_hash: t.String({ description: "hex SHA-256 of the next server seed: the one your next client seed (wheel) or grid start will use" }),
  next_committed_at: t.String({ description: "When next_server_seed_hash was committed to" }),
};
const Fairness = named(
  "MessengerFairness",
  t.Object({
    server_seed_hash: t.String({ description: "hex SHA-256 of the server seed, committed before play" }),
    client_seed: t.String(),
    next_nonce: t.Integer({ minimum: 0 }),
    ...SeedTimes,
    ...NextSeed,
  }),
);
const Segment = t.Object({ label: t.String(), weight: t.Integer({ minimum: 1 }), reward: Reward });
const Campaign = named(
  "MessengerWheelCampaign",
  t.Object({
    campaign_key: t.String(),
    title: t.String(),
    cooldown_seconds: t.Integer(),
    segments: t.Array(Segment),
  }),
);
const RevealedSeed = named(
  "MessengerRevealedSeed",
  t.Object({
    server_seed: t.String(),
    server_seed_hash: t.String(),
    client_seed: t.String(),
    nonces_used: t.Integer({ description: "Nonces 0 … nonces_used-1 were played with this seed" }),
    revealed_at: t.String(),
    ...SeedTimes,
  }),
);
export const Replayed = {
  replayed: t.Boolean({ description: "true: this request_id was answered before; this is the stored answer and nothing happened again" }),
  ledger_entry_id: t.Integer(),
  balances: Balances,
};
const clientSeed = t.String({
  pattern: "^[A-Za-z0-9_.:-]{1,64}$",
  description:
    "Your client seed (1–64 of A-Z a-z 0-9 _ . : -); setting it reveals the old server seed and activates the next one, whose hash an earlier answer published",
});
const quantity = t.Integer({ minimum: 1, maximum: 100, description: "How many, 1–100" });

/** A game as the catalog lists it; the operators' catalog preview shows the same, without the descriptions. */
export const catalogGame = (reason?: string, campaign?: string) =>
  t.Object({
    game_key: t.String(),
    title: t.String(),
    audience_group: t.String(),
    available: t.Boolean(),
    open_to_you: t.Boolean({
      description: "Whether the game is open to this player now (the catalog campaigns and their audiences), whatever the balances; false: `reason` says why",
    }),
    reason: nullable(t.String({ description: reason })),
    cost: t.Object({ kind: t.String(), amount: t.Integer(), note: t.String() }),
    campaign_id: nullable(t.Integer({ description: campaign })),
  });

export const GamesModel = {
  catalog: named(
    "MessengerGameCatalog",
    Envelope({
      games: t.Array(
        catalogGame("Why it is not available now, or what it needs", "The catalog campaign that opens the game to this player; null when the game has none"),
      ),
      items: t.Array(t.Object({ item_key: t.String(), title: t.String(), price_points: t.Integer(), grants: Reward })),
      welcome_gift: t.Object(
        {
          reward: Reward,
          available: t.Boolean({ description: "true: POST /api/messenger/games/welcome-gift/open credits the reward now" }),
          open_until: t.String({ description: "The end of the player's first days, when the gift can no longer be opened" }),
        },
        { description: "Once per player, in their first days: what makes every game playable on day one" },
      ),
      balances: Balances,
    }),
  ),
  welcomeGift: named("MessengerWelcomeGift", Envelope({ welcome_gift: t.Object({ reward: Reward, opened_at: t.String() }), ...Replayed })),
  wheelStatusBody: initBody({
    client_seed: t.Optional(clientSeed),
    next_server_seed_hash: t.Optional(
      seedHashField("With client_seed: the next_server_seed_hash you were shown; another pending commitment is 409 game_state_conflict"),
    ),
  }),
  wheelStatus: named(
    "MessengerWheelStatus",
    Envelope({
      available: t.Boolean(),
      free_spin_available: t.Boolean(),
      cooldown_seconds_remaining: t.Integer({ minimum: 0 }),
      next_free_spin_at: t.String(),
      free_spin_balance: t.Integer({ minimum: 0 }),
      campaign: Campaign,
      fairness: Fairness,
      revealed_seed: nullable(RevealedSeed),
      revealed_seeds: t.Array(RevealedSeed, { description: "Earlier seeds, newest first (at most 10)" }),
    }),
  ),
  playBody: initBody({ request_id: requestId }),
  play: named(
    "MessengerSpinResult",
    Envelope({
      spin: t.Object({
        id: t.Integer(),
        campaign_key: t.String(),
        segment_index: t.Integer(),
        segment_label: t.String(),
        reward: Reward,
        paid_with: t.Union([t.Literal("daily_free_spin"), t.Literal("free_spin_balance")]),
        fairness: t.Object({
          server_seed_hash: t.String(),
          client_seed: t.String(),
          nonce: t.Integer(),
          committed_at: t.Optional(t.String({ description: "When server_seed_hash was first published (absent in answers stored before it was recorded)" })),
        }),
        created_at: t.String(),
      }),
      ...Replayed,
    }),
  ),
  purchaseBody: initBody({ request_id: requestId, item_key: t.Union([t.Literal("spin_play"), t.Literal("missile")]), quantity: t.Optional(quantity) }),
  purchase: named(
    "MessengerPurchase",
    Envelope({
      purchase: t.Object({ item_key: t.String(), quantity: t.Integer(), price_points: t.Integer(), total_points: t.Integer(), granted: Reward }),
      ...Replayed,
    }),
  ),
};

const Cell = t.Integer({ minimum: 0, maximum: 24, description: "Cell index 0–24, row by row" });
const GridView = named(
  "MessengerReconGrid",
  t.Object({
    grid_id: t.Integer(),
    status: t.Union([t.Literal("active"), t.Literal("completed"), t.Literal("abandoned")]),
    cells_total: t.Integer(),
    prizes_total: t.Integer(),
    prizes_found: t.Integer(),
    revealed_cells: t.Array(t.Object({ cell: t.Integer(), reward: Reward })),
    fairness: t.Object({
      server_seed_hash: t.String(),
      client_seed: t.String(),
      nonce: t.Integer(),
      server_seed: nullable(t.String({ description: "Shown once the grid has ended" })),
      layout: nullable(t.Array(t.Integer(), { description: "Once ended: for each cell, its index in the documented cell list" })),
      ...SeedTimes,
    }),
    created_at: t.String(),
    ended_at: nullable(t.String()),
  }),
);

export const GridModel = {
  status: named("MessengerReconGridStatus", Envelope({ active_grid: nullable(GridView), last_grid: nullable(GridView), balances: Balances, ...NextSeed })),
  startBody: initBody({
    client_seed: t.Optional(clientSeed),
    abandon_active: t.Optional(t.Boolean()),
    next_server_seed_hash: t.Optional(seedHashField("The next_server_seed_hash you were shown; another pending commitment is 409 game_state_conflict")),
  }),
  started: named("MessengerReconGridStarted", Envelope({ grid: GridView, abandoned_grid: nullable(GridView), ...NextSeed })),
  revealBody: initBody({ request_id: requestId, grid_id: t.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), cell: Cell }),
  revealed: named("MessengerReconGridReveal", Envelope({ cell: t.Integer(), reward: Reward, grid: GridView, ...Replayed })),
  purchaseBody: initBody({ request_id: requestId, quantity }),
};

// Shape only (the base58 check is the verb's, which answers invalid_payload naming the field).
const address = t.String({ minLength: 32, maxLength: 44, description: "Solana address (base58, 32 bytes)" });
export const WalletModel = {
  challengeBody: initBody({ address }),
  challenge: named(
    "MessengerWalletChallenge",
    Envelope({
      challenge: t.Object({
        nonce: t.String(),
        address: t.String(),
        domain: t.String(),
        statement: t.String(),
        message: t.String({ description: "The Sign-In-With-Solana message to sign, exactly" }),
        issued_at: t.String(),
        expires_at: t.String(),
      }),
    }),
  ),
  verifyBody: initBody({
    address,
    nonce: t.String({ minLength: 32, maxLength: 32, description: "The challenge's nonce (32 hex characters)" }),
    message: t.String({ minLength: 1, maxLength: 2000, description: "The challenge's message, unchanged" }),
    signature: t.String({
      minLength: 1,
      maxLength: 200,
      description: "Ed25519 signature of the message's UTF-8 bytes, base58 (64 bytes); anything else is 401 wallet_signature_invalid",
    }),
  }),
  verified: named(
    "MessengerWalletClaim",
    Envelope({
      wallet: t.Object({ address: t.String(), verified_at: t.String() }),
      linked_user_id: nullable(t.String()),
      partner_wallet_links_verified: t.Integer({ description: "Partner wallet links holding this address, now verified" }),
    }),
  ),
};

const counts = t.Record(t.String(), t.Integer());
/** The query of a read-only preview: the player's init data and how many rows (1–50). */
const previewQuery = (defaultValue: number, description: string) =>
  t.Object({ init_data: initData, limit: intQuery({ minimum: 1, maximum: 50, defaultValue, description }), include_meta: t.Optional(t.String()) });
/** The tail of a preview's answer: the newest `count` rows only, so no next page. */
const latest = (description: string) => ({ count: t.Integer({ description }), query: LatestQueryEcho(), pagination: PaginationSchema });
export const EngagementModel = {
  activityQuery: previewQuery(20, "recent ledger rows"),
  activity: named(
    "MessengerActivityPreview",
    Envelope({
      totals: t.Object({ spins: t.Integer(), grids: t.Integer(), missions_completed: t.Integer(), promos_claimed: t.Integer(), points_earned: t.Integer() }),
      recent: t.Array(
        t.Object({
          id: t.Integer(),
          action: t.String(),
          game_key: nullable(t.String()),
          deltas: t.Object({ free_spins: t.Integer(), missiles: t.Integer(), points: t.Integer() }),
          created_at: t.String(),
        }),
      ),
      balances: Balances,
      ...latest("rows in recent"),
    }),
  ),
  leaderboardQuery: previewQuery(10, "leaders listed"),
  leaderboard: named(
    "MessengerLeaderboardPreview",
    Envelope({
      leaders: t.Array(t.Object({ rank: t.Integer(), display_name: t.String(), points_earned: t.Integer(), is_you: t.Boolean() })),
      you: t.Object({ rank: nullable(t.Integer()), points_earned: t.Integer() }),
      ...latest("leaders listed"),
    }),
  ),
  healthQuery: t.Object({
    hours: intQuery({ minimum: 1, maximum: 720, defaultValue: 24, description: "hours of counters" }),
    limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 20, description: "recent Bot API errors listed" }),
    include_meta: t.Optional(t.String()),
  }),
  health: named(
    "MessengerOpsHealth",
    Envelope({
      configured: t.Object({ bot_token: t.Boolean(), webhook_secret: t.Boolean(), init_data_mode: t.String() }),
      window: t.Object({ hours: t.Integer(), since_hour_utc: t.String() }),
      updates: t.Object({ received: t.Integer(), replays_suppressed: t.Integer(), by_kind: counts, ignored: t.Integer(), ignored_by_reason: counts }),
      init_data_failures: t.Object({ total: t.Integer(), by_reason: counts }),
      plays: t.Object({ total: t.Integer(), by_game: counts }),
      bot_api: t.Object({
        messages_sent: t.Integer(),
        errors: t.Integer(),
        errors_by_status: counts,
        recent_errors: t.Array(t.Object({ id: t.Integer(), status: t.String(), attempts: t.Integer(), last_error: t.String(), next_attempt_at: t.String() })),
      }),
      outbox: t.Object({ pending: t.Integer(), dead: t.Integer(), oldest_pending_at: nullable(t.String()) }),
    }),
  ),
};

export const PlayerLinkModel = {
  params: t.Object({ telegram_user_id: intPath({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "Telegram user id" }) }),
  body: t.Object(
    {
      user_id: t.Union([t.String({ minLength: 1, maxLength: 32, description: "Herald user id of a MESSENGER_SALUTES_PARTNER user" }), t.Null()], {
        description: "null unlinks",
      }),
      reason: t.String({ minLength: 1, maxLength: 500, description: "Why (kept in the audit log)" }),
    },
    { additionalProperties: false },
  ),
  linked: named("MessengerPlayerLinked", Envelope({ player: Player })),
};
