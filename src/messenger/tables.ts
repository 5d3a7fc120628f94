import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { outboxMessage } from "../db/columns";

/** The player a row is about: messenger_players' key, the Telegram user id. */
const playerId = () => integer("telegram_user_id").notNull();

/** A provably-fair server seed and its hash, published before the seed is used (the seed is shown after). */
const serverSeed = () => ({ serverSeed: text("server_seed").notNull(), serverSeedHash: text("server_seed_hash").notNull() });

/** What a promo code or a mission pays: balances to add, and salutes to the linked partner user. */
const reward = () => ({
  rewardFreeSpins: integer("reward_free_spins").notNull().default(0),
  rewardMissiles: integer("reward_missiles").notNull().default(0),
  rewardPoints: integer("reward_points").notNull().default(0),
  /** Salutes paid to the linked MESSENGER_SALUTES_PARTNER user, an exact decimal string ("12.5"); null = none. */
  rewardSalutes: text("reward_salutes"),
});

/**
 * A messenger player, keyed by the Telegram user id. Balances are exact integers, never negative (CHECKs in the
 * migration would not survive drizzle-kit; the ledger verbs guard them and a test proves it under concurrency),
 * and always equal the sum of the player's game-ledger deltas.
 */
export const messengerPlayers = sqliteTable(
  "messenger_players",
  {
    telegramUserId: integer("telegram_user_id").primaryKey(),
    username: text("username"),
    firstName: text("first_name"),
    languageCode: text("language_code"),
    isPremium: integer("is_premium").notNull().default(0),
    linkedUserId: integer("linked_user_id"),
    linkedBy: text("linked_by"),
    /** Who invited the player (`/start ref_<telegram user id>`); set once, never to the player itself. */
    referredBy: integer("referred_by"),
    freeSpinBalance: integer("free_spin_balance").notNull().default(0),
    missileBalance: integer("missile_balance").notNull().default(0),
    pointsBalance: integer("points_balance").notNull().default(0),
    /** Points ever earned (never decremented): the leaderboard aggregate. */
    pointsEarned: integer("points_earned").notNull().default(0),
    /** When the daily free spin was last used (ISO); the wheel's cooldown counts from here. */
    lastFreeSpinAt: text("last_free_spin_at"),
    createdAt: text("created_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
  },
  (t) => [
    // The leaderboard, the operators' list by last seen, by linked, and linked=true in each order: index walks, no scan.
    index("messenger_players_points_idx").on(t.pointsEarned, t.telegramUserId),
    index("messenger_players_seen_idx").on(sql`last_seen_at DESC`, t.telegramUserId),
    index("messenger_players_linked_idx").on(t.linkedUserId),
    index("messenger_players_linked_points_idx").on(sql`points_earned DESC`, t.telegramUserId).where(sql`linked_user_id IS NOT NULL`),
    index("messenger_players_linked_seen_idx").on(sql`last_seen_at DESC`, t.telegramUserId).where(sql`linked_user_id IS NOT NULL`),
    index("messenger_players_linked_id_idx").on(t.telegramUserId).where(sql`linked_user_id IS NOT NULL`),
  ],
);

/** The append-only game ledger: one row per client action, with every balance delta and the answer it gave. */
export const messengerLedger = sqliteTable(
  "messenger_ledger",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    telegramUserId: playerId(),
    /** The client's request id: the same id replays the stored answer and never applies twice. */
    requestId: text("request_id").notNull(),
    action: text("action").notNull(),
    /** sha256 of the action and its inputs: the same request id with other inputs is request_id_reused. */
    fingerprint: text("fingerprint").notNull(),
    freeSpinDelta: integer("free_spin_delta").notNull(),
    missileDelta: integer("missile_delta").notNull(),
    pointsDelta: integer("points_delta").notNull(),
    freeSpinAfter: integer("free_spin_after").notNull(),
    missileAfter: integer("missile_after").notNull(),
    pointsAfter: integer("points_after").notNull(),
    gameKey: text("game_key"),
    result: text("result").notNull(),
    createdAt: text("created_at").notNull(),
    /**
     * 1 once the row is counted in the daily aggregates (src/messenger/daily-stats.ts). A flag per row, not a
     * watermark over ids: on PostgreSQL ids commit out of order, so "ids up to N" could skip a row committed late.
     */
    folded: integer("folded").notNull().default(0),
  },
  (t) => [
    uniqueIndex("messenger_ledger_request_idx").on(t.telegramUserId, t.requestId),
    // Ops health and activity preview: recent rows by time (and per player).
    index("messenger_ledger_created_idx").on(t.createdAt),
    index("messenger_ledger_player_idx").on(t.telegramUserId, t.id),
    // The fold's query: the rows not yet counted, oldest first (a partial index: it holds the backlog only).
    index("messenger_ledger_unfolded_idx").on(t.id).where(sql`folded = 0`),
  ],
);

/** Bot updates seen, by update_id: the durable replay filter of POST /api/messenger/webhook. */
export const messengerUpdates = sqliteTable(
  "messenger_updates",
  {
    updateId: integer("update_id").primaryKey(),
    kind: text("kind").notNull(),
    chatId: integer("chat_id"),
    command: text("command"),
    receivedAt: text("received_at").notNull(),
  },
  // The operators' bot preview reads the updates of the last hours.
  (t) => [index("messenger_updates_received_idx").on(t.receivedAt)],
);

/** Bot replies waiting for the Bot API: written with the update, sent by the messenger-bot-outbox job. */
export const messengerBotOutbox = sqliteTable(
  "messenger_bot_outbox",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    updateId: integer("update_id"),
    chatId: integer("chat_id").notNull(),
    method: text("method").notNull(),
    ...outboxMessage(),
  },
  (t) => [
    // The sender's query: due pending rows, oldest first.
    index("messenger_bot_outbox_due_idx").on(t.status, t.nextAttemptAt),
    // The messenger-prune job: WHERE status IN ('sent', 'dead') AND created_at < ?, in batches (created_at never
    // changes: one entry written per row; nearly every row that old is sent or dead).
    index("messenger_bot_outbox_created_idx").on(t.createdAt),
    // GET /api/messenger/ops/health: the newest unsent messages with an error (few: the others are sent or clean);
    // its statement names the same literal condition.
    index("messenger_bot_outbox_errors_idx").on(t.id).where(sql`last_error IS NOT NULL AND status <> 'sent'`),
  ],
);

/** Hourly counters for GET /api/messenger/ops/health (updates, replays, init-data failures, plays, Bot API errors). */
export const messengerCounters = sqliteTable(
  "messenger_counters",
  {
    hour: text("hour").notNull(),
    metric: text("metric").notNull(),
    label: text("label").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.metric, t.label] })],
);

/** Provably-fair seed pairs of the spin wheel: the hash is shown before play, the seed after rotation. */
export const messengerSeeds = sqliteTable(
  "messenger_seeds",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    telegramUserId: playerId(),
    ...serverSeed(),
    clientSeed: text("client_seed").notNull(),
    nextNonce: integer("next_nonce").notNull().default(0),
    status: text("status", { enum: ["active", "revealed"] }).notNull(),
    /** When the client seed was set and the pair became active. */
    createdAt: text("created_at").notNull(),
    revealedAt: text("revealed_at"),
    /**
     * When server_seed_hash was first published: the pending commitment's time (messenger_seed_commitments) for a
     * pair the player activated with a client seed, before created_at; created_at for a server-made default pair.
     */
    committedAt: text("committed_at"),
  },
  (t) => [index("messenger_seeds_player_idx").on(t.telegramUserId, t.status)],
);

/**
 * The NEXT server seed of a player's wheel or recon grid, committed to (its hash published) before the player
 * chooses the client seed it will be used with (docs/messenger.md, "Provably fair"). At most one per player and
 * game; setting a wheel client seed or starting a grid consumes it (its seed moves to messenger_seeds or
 * messenger_grids with this committed_at) and a new one is committed in the same transaction.
 */
export const messengerSeedCommitments = sqliteTable(
  "messenger_seed_commitments",
  {
    telegramUserId: playerId(),
    gameKey: text("game_key", { enum: ["spin_wheel", "recon_grid"] }).notNull(),
    ...serverSeed(),
    committedAt: text("committed_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.telegramUserId, t.gameKey] })],
);

/** Every wheel spin, with the seed and nonce that decided it (so a player can recompute it after reveal). */
export const messengerSpins = sqliteTable(
  "messenger_spins",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    telegramUserId: playerId(),
    seedId: integer("seed_id").notNull(),
    nonce: integer("nonce").notNull(),
    campaignKey: text("campaign_key").notNull(),
    segmentIndex: integer("segment_index").notNull(),
    paidWith: text("paid_with").notNull(),
    createdAt: text("created_at").notNull(),
  },
  // A player's spins; campaignHasSpins: whether a wheel campaign was used (its segments are then fixed).
  (t) => [index("messenger_spins_player_idx").on(t.telegramUserId, t.id), index("messenger_spins_campaign_idx").on(t.campaignKey)],
);

/** Recon grids: a hidden layout derived from its own seed, revealed cell by cell; the seed is shown at the end. */
export const messengerGrids = sqliteTable(
  "messenger_grids",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    telegramUserId: playerId(),
    ...serverSeed(),
    clientSeed: text("client_seed").notNull(),
    layout: text("layout").notNull(),
    revealed: text("revealed").notNull(),
    status: text("status", { enum: ["active", "completed", "abandoned"] }).notNull(),
    /** When the grid was started: the client seed was set then. */
    createdAt: text("created_at").notNull(),
    endedAt: text("ended_at"),
    /** When server_seed_hash was first published (the commitment it came from), before created_at. */
    committedAt: text("committed_at"),
  },
  (t) => [index("messenger_grids_player_idx").on(t.telegramUserId, t.status)],
);

/** One-time promo codes (operator-made): per-player once, a total cap, an expiry and an audience group. */
export const messengerPromos = sqliteTable("messenger_promos", {
  code: text("code").primaryKey(),
  ...reward(),
  maxClaims: integer("max_claims").notNull(),
  claims: integer("claims").notNull().default(0),
  audienceGroup: text("audience_group").notNull(),
  expiresAt: text("expires_at"),
  enabled: integer("enabled").notNull().default(1),
  createdAt: text("created_at").notNull(),
});

export const messengerPromoClaims = sqliteTable(
  "messenger_promo_claims",
  {
    code: text("code").notNull(),
    telegramUserId: playerId(),
    claimedAt: text("claimed_at").notNull(),
  },
  // countClaimsOf: a player's claims (the key leads with the code).
  (t) => [primaryKey({ columns: [t.code, t.telegramUserId] }), index("messenger_promo_claims_player_idx").on(t.telegramUserId)],
);

/** Missions (operator-made): an event type to count up to a target, a reward and the abuse limits. */
export const messengerMissions = sqliteTable("messenger_missions", {
  missionKey: text("mission_key").primaryKey(),
  title: text("title").notNull(),
  eventType: text("event_type").notNull(),
  /**
   * `server`: progress is counted by the server from its own records (src/messenger/games/mission-sources.ts);
   * `self_reported`: the mini-app reports it, declared so by the operator, under tighter limits.
   */
  progressSource: text("progress_source", { enum: ["server", "self_reported"] })
    .notNull()
    .default("server"),
  target: integer("target").notNull(),
  ...reward(),
  dailyCap: integer("daily_cap").notNull(),
  perMinuteCap: integer("per_minute_cap").notNull(),
  active: integer("active").notNull().default(1),
  createdAt: text("created_at").notNull(),
  /** Bumped by every operator change (PATCH, activate, deactivate); PATCH names the revision it edits (X-Expected-Revision). */
  revision: integer("revision").notNull().default(1),
  updatedAt: text("updated_at"),
});

export const messengerMissionEnrollments = sqliteTable(
  "messenger_mission_enrollments",
  {
    telegramUserId: playerId(),
    missionKey: text("mission_key").notNull(),
    progress: integer("progress").notNull().default(0),
    /** Server-observed events of the mission's type since enrolling (server missions); progress catches up to it. */
    observed: integer("observed").notNull().default(0),
    enrolledAt: text("enrolled_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [
    primaryKey({ columns: [t.telegramUserId, t.missionKey] }),
    // The operators' mission stats: enrollments and completions of one mission.
    index("messenger_mission_enrollments_mission_idx").on(t.missionKey, t.completedAt),
    // An operator lowering a target reads the highest unfinished progress (highestUnfinishedProgress): one entry,
    // walked backwards, instead of every unfinished enrollment of the mission.
    index("messenger_mission_enrollments_progress_idx").on(t.missionKey, t.completedAt, t.progress),
  ],
);

/** Progress events, accepted or refused, by client_event_id (replay suppression) and time (rate and daily caps). */
export const messengerMissionEvents = sqliteTable(
  "messenger_mission_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    telegramUserId: playerId(),
    missionKey: text("mission_key").notNull(),
    clientEventId: text("client_event_id").notNull(),
    value: integer("value").notNull(),
    accepted: integer("accepted").notNull(),
    reason: text("reason"),
    result: text("result").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("messenger_mission_events_client_idx").on(t.telegramUserId, t.clientEventId),
    // The rate and daily caps count a player's accepted events on one mission since a time.
    index("messenger_mission_events_caps_idx").on(t.telegramUserId, t.missionKey, t.createdAt),
    // The operators' mission analytics: one mission's events in a window.
    index("messenger_mission_events_mission_idx").on(t.missionKey, t.createdAt),
  ],
);

/** Sign-In-With-Solana challenges: single use, short-lived. */
export const messengerWalletChallenges = sqliteTable(
  "messenger_wallet_challenges",
  {
    nonce: text("nonce").primaryKey(),
    telegramUserId: playerId(),
    address: text("address").notNull(),
    message: text("message").notNull(),
    issuedAt: text("issued_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    consumedAt: text("consumed_at"),
  },
  // The messenger-prune job: WHERE expires_at < ?, in batches.
  (t) => [index("messenger_wallet_challenges_expires_idx").on(t.expiresAt)],
);

/** Wallets a player proved with a signature. */
export const messengerWallets = sqliteTable(
  "messenger_wallets",
  {
    telegramUserId: playerId(),
    address: text("address").notNull(),
    verifiedAt: text("verified_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.telegramUserId, t.address] }), index("messenger_wallets_address_idx").on(t.address)],
);

/**
 * Salutes rewards paid, once per partner user and reward (`promo:<code>`, `mission:<mission_key>`), whichever
 * player claims it: two players linked to one partner user (the same wallet proven twice, or an operator link)
 * cannot collect a reward's salutes twice. Written in the payout's savepoint, so a refused payout leaves no row.
 */
export const messengerSalutesRewards = sqliteTable(
  "messenger_salutes_rewards",
  {
    partner: text("partner").notNull(),
    partnerUserId: integer("partner_user_id").notNull(),
    rewardKey: text("reward_key").notNull(),
    telegramUserId: playerId(),
    amount: text("amount").notNull(),
    salutesLedgerEntryId: integer("salutes_ledger_entry_id"),
    paidAt: text("paid_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.partner, t.partnerUserId, t.rewardKey] })],
);

/**
 * Daily aggregates of the game ledger, folded in from the ledger by src/messenger/daily-stats.ts (a job every two
 * seconds, and before every read): the operators' overview and analytics sum these (a few rows per day and
 * action), never the ledger itself. `game_key` is "" for actions outside a game. granted = positive deltas paid
 * to players, spent = negative deltas, per balance.
 */
export const messengerDailyStats = sqliteTable(
  "messenger_daily_stats",
  {
    day: text("day").notNull(),
    action: text("action").notNull(),
    gameKey: text("game_key").notNull(),
    entries: integer("entries").notNull().default(0),
    freeSpinsGranted: integer("free_spins_granted").notNull().default(0),
    freeSpinsSpent: integer("free_spins_spent").notNull().default(0),
    missilesGranted: integer("missiles_granted").notNull().default(0),
    missilesSpent: integer("missiles_spent").notNull().default(0),
    pointsGranted: integer("points_granted").notNull().default(0),
    pointsSpent: integer("points_spent").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.day, t.action, t.gameKey] })],
);

/** Who was active on a day in a game ("" = in any ledger action, games or not): distinct players per window without a ledger scan. */
export const messengerDailyPlayers = sqliteTable(
  "messenger_daily_players",
  {
    day: text("day").notNull(),
    gameKey: text("game_key").notNull(),
    telegramUserId: playerId(),
    entries: integer("entries").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.day, t.gameKey, t.telegramUserId] }), index("messenger_daily_players_player_idx").on(t.telegramUserId, t.day)],
);

/**
 * Version counters of what instances keep in memory, by name (src/messenger/store/versions.ts): `games_config` is
 * bumped in the transaction of every change to the audience groups and campaigns, `daily_players` when a fold
 * writes a day that a reader may already treat as closed. Each instance re-reads them at most once a second and
 * drops its copy when one moved. A row is also a lock its writers take first: `games_config` runs configuration
 * writes one at a time, `daily_players` the stats folds, `manual_grants` the operators' grants.
 */
export const messengerVersions = sqliteTable("messenger_versions", {
  name: text("name").primaryKey(),
  version: integer("version").notNull().default(0),
  updatedAt: text("updated_at").notNull(),
});
