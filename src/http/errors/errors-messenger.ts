import { type CatalogEntry, entriesOf, entry } from "./error-entry";

const messenger = entriesOf(["messenger"]);

/**
 * The messenger mini-app's error codes (src/messenger; docs/messenger.md): init-data identity, bot webhook, games,
 * promos, missions, wallet proof. Part of the one catalog: src/http/errors/errors.ts spreads them into ERROR_CATALOG.
 */
export const MESSENGER_ERRORS = {
  messenger_not_configured: messenger(
    503,
    "Messenger not configured",
    "fail_fast",
    "MESSENGER_BOT_TOKEN is not set on this service, so no init data can be checked; the operator sets it (README configuration table).",
  ),
  init_data_missing: messenger(
    401,
    "Init data missing",
    "fix_and_retry",
    "Send Telegram's raw init data (window.Telegram.WebApp.initData) as `Authorization: tma <init data>`, the init_data query parameter or the init_data body field.",
  ),
  init_data_malformed: messenger(
    401,
    "Init data malformed",
    "fix_and_retry",
    "Send initData exactly as Telegram gave it (a URL-encoded query string with auth_date, user and hash, no key twice); do not decode or re-serialise it.",
  ),
  init_data_signature_invalid: messenger(
    401,
    "Init data signature invalid",
    "fail_fast",
    "The hash (or Ed25519 signature) does not match: the data was changed, or it was signed for another bot; reopen the mini-app from this bot.",
  ),
  init_data_expired: messenger(
    401,
    "Init data expired",
    "fix_and_retry",
    "auth_date is older than MESSENGER_INIT_DATA_MAX_AGE_SECONDS (details.max_age_seconds); reopen the mini-app to get fresh init data.",
  ),
  init_data_future_dated: messenger(
    401,
    "Init data dated in the future",
    "fail_fast",
    "auth_date is later than the server's clock by more than MESSENGER_INIT_DATA_MAX_FUTURE_SKEW_SECONDS (details.max_future_skew_seconds): Telegram never signs such data, so it was forged with a leaked bot token or the server clock is behind; operators check the clock (NTP), players reopen the mini-app.",
  ),
  webhook_secret_invalid: messenger(
    401,
    "Webhook secret token invalid",
    "fail_fast",
    "X-Telegram-Bot-Api-Secret-Token (the header Telegram sends; X-Messenger-Bot-Api-Secret-Token is also read) must equal MESSENGER_WEBHOOK_SECRET (set it with setWebhook's secret_token).",
  ),
  game_not_found: messenger(404, "Game or item not found", "fail_fast", "The game_key or item_key is not in GET /api/messenger/games/catalog for this player."),
  game_balance_insufficient: messenger(
    409,
    "Game balance insufficient",
    "fail_fast",
    "The play or purchase needs more free spins, missiles or points than the player has (details.balance, details.required); buy or earn more first.",
  ),
  game_cooldown: messenger(
    409,
    "Game on cooldown",
    "retry_after",
    "The free play is on cooldown; retry after details.available_at (Retry-After), or use a bought play.",
  ),
  game_state_conflict: messenger(
    409,
    "Game state conflict",
    "fix_and_retry",
    "The game is not in a state that allows this (no active grid, cell already revealed, no next server seed committed yet or another one than details.next_server_seed_hash); read the status route and act on it.",
  ),
  promo_not_found: messenger(404, "Promo code not found", "fail_fast", "No enabled promo has this code; check its spelling (codes are case-sensitive)."),
  promo_expired: messenger(410, "Promo code expired", "fail_fast", "The promo's expires_at has passed; it cannot be claimed any more."),
  promo_exhausted: messenger(409, "Promo code used up", "fail_fast", "Every claim the promo allows (max_claims) has been made."),
  promo_already_claimed: messenger(409, "Promo already claimed", "safe_noop", "This player claimed this promo before; each player may claim a code once."),
  promo_not_eligible: messenger(
    403,
    "Not eligible for this promo",
    "fail_fast",
    "The promo is limited to an audience group (details.audience_group) this player is not in.",
  ),
  mission_not_found: messenger(
    404,
    "Mission not found",
    "fail_fast",
    "No active mission has this mission_key; list them with POST /api/messenger/missions/catalog.",
  ),
  mission_not_enrolled: messenger(
    409,
    "Not enrolled in the mission",
    "fix_and_retry",
    "Enroll first with POST /api/messenger/missions/enroll, then report progress.",
  ),
  wallet_nonce_unknown: messenger(
    404,
    "Wallet challenge not found",
    "fix_and_retry",
    "The nonce was not issued to this player; request a new challenge with POST /api/messenger/wallet-proof/challenge.",
  ),
  wallet_nonce_used: messenger(
    409,
    "Wallet challenge already used",
    "fix_and_retry",
    "Each challenge proves one wallet once; request a new challenge and sign its message.",
  ),
  wallet_nonce_expired: messenger(
    410,
    "Wallet challenge expired",
    "fix_and_retry",
    "The challenge's expiration time has passed; request a new one and sign it promptly.",
  ),
  wallet_message_mismatch: messenger(
    400,
    "Signed message does not match the challenge",
    "fix_and_retry",
    "Sign exactly the message the challenge returned (byte for byte, including line breaks), and send it back unchanged.",
  ),
  wallet_signature_invalid: messenger(
    401,
    "Wallet signature invalid",
    "fix_and_retry",
    "The Ed25519 signature does not verify for this message and the claimed address: sign with the wallet whose address you claim.",
  ),
  request_id_reused: messenger(
    422,
    "Client request id reused",
    "fail_fast",
    "This request_id was used for a different action or payload; use a new request_id for a new action.",
    {
      status_rationale:
        "The partner routes' rule for a reused Idempotency-Key (idempotency_key_reused), kept for the messenger's request_id as in the IETF Idempotency-Key draft: 422 when the id comes back with another action or payload. The same id with the same payload answers the stored result with replayed: true. There is no in-flight answer (the partner routes' 409 idempotency_in_progress): the id is claimed and the action applied in one transaction, so a concurrent duplicate waits for it and then replays.",
    },
  ),
  promotion_not_ready: entry(
    409,
    "Promotion not ready",
    "fix_and_retry",
    "The partner's sandbox promotion report does not pass (details carries the report and its checklist); finish the failing items, or an operator promotes with force=true and a reason.",
    { endpoint_groups: ["admin", "sandbox"] },
  ),
} as const satisfies Record<string, CatalogEntry>;
