// The one place that says which of Herald's tables grow with the data, for the query-plan guard (.ci/query-plans.ts,
// test/support/plan-guard.ts): a statement the suite sent that reads the whole of one of these tables fails CI
// unless ALLOWED below lists it with the reason it is bounded. Every table of the schema is named here, growing or
// small, with why: test/db/query-plan-guard.test.ts fails on a table in neither list, so a new table is decided on.

/** Tables whose rows grow with traffic, users, players, chain activity or time: a full read of one grows too. */
export const GROWING: Readonly<Record<string, string>> = {
  request_log: "a row per request",
  request_summary_hourly: "a row per key, route and hour",
  request_summary_daily: "a row per key, route and day",
  request_log_403_hourly: "a row per refused route, key and client prefix each hour: grows with probing",
  request_log_hourly: "a row per hour, every hour (retention-bound)",
  idempotency_records: "a row per Idempotency-Key, kept until it expires",
  partner_nonces: "a row per signed request, kept for twice the skew window",
  admin_audit: "a row per admin mutation, never pruned",
  partner_users: "a row per partner user",
  wallet_links: "rows per partner user",
  salutes_balances: "a row per partner user",
  salutes_ledger: "a row per credit and debit",
  salutes_conversions: "a row per conversion",
  donation_claims: "a row per donation claim",
  events: "a row per webhook event",
  webhook_deliveries: "a row per event and subscribed webhook",
  webhook_attempts: "a row per delivery attempt",
  webhook_replays: "a row per replayed delivery",
  email_outbox: "a row per email sent",
  job_runs: "a row per job run: every job, every tick",
  status_snapshots: "a row per status evaluation, every minute",
  status_subscriber_deliveries: "a row per incident event and subscriber",
  chain_transactions: "a row per token transaction synced",
  chain_rpc_calls: "a row per Solana RPC call",
  chain_holder_snapshots: "a row per holder snapshot run",
  chain_holder_growth: "a row per holder snapshot run",
  chain_token_snapshots: "a row per token snapshot run",
  chain_mint_authority_snapshots: "a row per authority snapshot run",
  chain_sync_runs: "a row per chain sync run",
  audit_runs: "a row per audit run",
  audit_rows: "a row per examined signature of each run",
  audit_examined: "a row per signature examined",
  audio_share_links: "a row per short link",
  audio_share_link_hits: "a row per link and hour with clicks",
  audio_share_click_seen: "a row per link, hour and client",
  audio_share_track_events: "a row per client share event",
  messenger_players: "a row per Telegram player",
  messenger_ledger: "a row per game action",
  messenger_spins: "a row per wheel spin",
  messenger_grids: "a row per grid game",
  messenger_seeds: "rows per player (provably fair seeds)",
  messenger_seed_commitments: "a row per player and game",
  messenger_updates: "a row per Telegram update",
  messenger_bot_outbox: "a row per bot message",
  messenger_counters: "a row per metric, label and hour",
  messenger_daily_players: "a row per player, game and day",
  messenger_daily_stats: "a row per action, game and day",
  messenger_mission_events: "a row per mission event posted",
  messenger_mission_enrollments: "a row per player and mission",
  messenger_promo_claims: "a row per player and promo code",
  messenger_salutes_rewards: "a row per paid reward",
  messenger_wallet_challenges: "a row per wallet-link challenge",
  messenger_wallets: "a row per linked player wallet",
  ops_probe_runs: "a row per probe per run, every minute",
  ops_alert_runs: "a row per alert per evaluation",
  ops_preflight_snapshots: "a row per guard field per day",
};

/** Tables that stay small whatever the traffic: a full read of one costs what a lookup does. */
export const SMALL: Readonly<Record<string, string>> = {
  __drizzle_migrations: "a row per migration",
  sqlite_sequence: "SQLite's own: a row per AUTOINCREMENT table",
  partner_keys: "a row per partner API key (operator-issued)",
  partner_keys_version: "one row",
  admin_tokens: "a row per operator token",
  master_key_check: "one row",
  salutes_settings: "a row per SALUTES_DECIMALS change",
  request_log_keys: "a row per partner key seen",
  webhooks: "a row per partner webhook (configuration)",
  job_leases: "a row per job",
  sandbox_fixtures: "a row per partner's sandbox",
  status_subscribers: "admin-registered receivers",
  status_maintenance_windows: "admin-defined windows",
  chain_sync_cursors: "a row per mint and watched address",
  declared_movements: "operator-declared treasury movements",
  audit_thresholds: "a row per threshold parameter",
  audit_threshold_history: "a row per threshold change by an operator",
  audit_state: "one row",
  audio_share_track_tokens: "operator-issued tokens",
  messenger_versions: "a row per cached configuration",
  messenger_missions: "operator-defined missions",
  messenger_promos: "operator-defined promo codes",
  messenger_audience_groups: "operator-defined groups",
  messenger_wheel_campaigns: "operator-defined campaigns",
  messenger_catalog_campaigns: "operator-defined campaigns",
  ops_403_suppressions: "operator rules",
  ops_alert_silences: "operator silences",
  ops_alert_state: "a row per alert key",
  ops_download_tokens: "operator export tokens, expiring",
  ops_export_usage: "a row per console export an operator downloads",
  webhook_dead_letter_counts: "a row per partner and mode, kept by triggers",
  ops_link_events: "an attempt or skip per link-inbox message: tens a day",
  ops_link_outbox: "a message per incident or alert change and chat target (a handful): tens a day",
  audit_triage: "operators' triage of anomalous signatures",
  status_incident_updates: "an operator incident's few updates",
  status_incidents: "one per outage (the status engine) or operator notice: thousands over years",
  admin_sessions: "operators' sign-ins, pruned a day after they end",
};

export interface Allowed {
  /** The statement: its exact text (whitespace runs count as one space) or a pattern. */
  statement: string | RegExp;
  /** Why its full read is bounded: a batch with a LIMIT, a migration, a small window read apart… */
  reason: string;
  /** Only on this engine's plans (the other engine serves it from an index). */
  engine?: "sqlite" | "postgres";
}

/**
 * Statements that read a whole growing table on purpose. Each must match a statement the full suite sent, or the
 * guard fails (a stale entry hides the next statement that matches it).
 */
export const ALLOWED: readonly Allowed[] = [
  // The newest rows by id, no filter: SQLite walks the rowid backward and stops at the LIMIT (its plan says SCAN).
  {
    statement: "SELECT id FROM status_snapshots ORDER BY id DESC LIMIT 1",
    reason: "the newest snapshot: a backward walk of the rowid that stops at its first row",
  },
  {
    statement: "SELECT id, update_id, chat_id, method, status, attempts, created_at, sent_at, last_error FROM messenger_bot_outbox ORDER BY id DESC LIMIT ?",
    reason: "the bot preview's newest messages: a backward walk of the rowid that stops at the page's LIMIT",
  },
  {
    statement: /FROM \(SELECT status, method, created_at FROM messenger_bot_outbox ORDER BY id DESC LIMIT \?\) recent GROUP BY status, method$/,
    reason:
      "the bot preview counts the newest PREVIEW_SCAN_CAP messages only (src/messenger/admin/bot-preview.ts): a backward walk that stops at the inner LIMIT",
  },
  {
    statement: "SELECT * FROM messenger_players ORDER BY telegram_user_id ASC LIMIT ? OFFSET ?",
    reason: "the operators' player list in id order: a walk of the rowid that reads offset + limit rows",
  },
  // The newest row that matches, where the one wanted is the newest.
  {
    statement: "SELECT id, overall, signatures_with_anomalies AS anomalous, error FROM audit_runs WHERE job_run_id = ? ORDER BY id DESC LIMIT 1",
    reason: "the run the audit-runs page's form has just started is the newest row: the backward walk stops at once",
  },
];
