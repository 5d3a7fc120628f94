// The messenger's variables (src/messenger; docs/messenger.md): Config's `messenger`, in src/config/vars.ts. No
// MESSENGER_BOT_TOKEN = every messenger route answers 503 messenger_not_configured.
import { int, oneOf, text, url, v } from "./var-spec";

export const MESSENGER_VARS = {
  botToken: v("MESSENGER_BOT_TOKEN", {
    kind: text(/^(\d{1,20}:[A-Za-z0-9_-]{20,100})?$/, "a bot token from @BotFather (<bot id>:<secret>)"),
    secret: true,
    doc: "The bot's token: keys the init-data HMAC and the Bot API calls. Unset: every /api/messenger route answers 503 messenger_not_configured (after its credential check: 403, or 401 without init data or the webhook secret).",
  }),
  webhookSecret: v("MESSENGER_WEBHOOK_SECRET", {
    kind: text(/^([A-Za-z0-9_-]{1,256})?$/, "1–256 characters A-Z, a-z, 0-9, _ and -"),
    secret: true,
    doc: "The secret_token given to setWebhook; POST /api/messenger/webhook refuses updates without it in X-Telegram-Bot-Api-Secret-Token (the header Telegram sends; X-Messenger-Bot-Api-Secret-Token is accepted too). Unset: the webhook refuses every update.",
  }),
  /** The bot's @username without the @; undefined: learnt from getMe (src/messenger/bot/username.ts). */
  botUsername: v("MESSENGER_BOT_USERNAME", {
    kind: text(/^([A-Za-z][A-Za-z0-9_]{3,31})?$/, "the bot's @username without the @ (4–32 of A-Z a-z 0-9 _)"),
    doc: "The bot's username, to tell /command@ThisBot from a command for another bot. Unset: learnt once per process from getMe, asked in the background when herald serve starts listening (and, if that failed, when an addressed command arrives).",
  }),
  botApiBase: v("MESSENGER_BOT_API_BASE", { kind: url, fallback: "https://api.telegram.org", doc: "Base URL of the Bot API the bot outbox sends to." }),
  miniAppPath: v("MESSENGER_MINI_APP_PATH", {
    kind: text(
      /^\/(?!(api|admin|s|status|claim|transparency|developers|healthz|readyz|metrics|trust\.json|status\.json)(\/|$))[a-z0-9][a-z0-9_-]{0,31}(\/[a-z0-9][a-z0-9_-]{0,31}){0,2}$/,
      "a path such as /app or /play/tg: 1–3 segments of a-z 0-9 _ -, none of Herald's own (/api, /admin, /s, /status, /claim, …)",
    ),
    fallback: "/app",
    doc: "Where Herald serves the players' mini-app page; its fairness check is <path>/fairness and their scripts <path>/assets/. Point MESSENGER_MINI_APP_URL at {PUBLIC_BASE_URL}<path>.",
  }),
  miniAppUrl: v("MESSENGER_MINI_APP_URL", {
    kind: text(/^(https:\/\/[^\s/?#]{1,253}[^\s]{0,1800})?$/, "an https:// URL (Telegram opens mini-apps over https only)"),
    doc: "The players' mini-app page. Set: the bot's /start and /play replies carry a button that opens it inside Telegram (a web_app button), and the bot readiness checks compare the bot's menu button with it (docs/messenger.md, \"Pointing the bot at the mini-app\"). Unset: the replies carry no button.",
  }),
  initDataMaxAgeSeconds: v("MESSENGER_INIT_DATA_MAX_AGE_SECONDS", {
    kind: int(60, 30 * 86_400),
    fallback: "86400",
    doc: "Init data whose auth_date is older than this is refused (init_data_expired).",
  }),
  initDataMaxFutureSkewSeconds: v("MESSENGER_INIT_DATA_MAX_FUTURE_SKEW_SECONDS", {
    kind: int(0, 3_600),
    fallback: "60",
    doc: "Init data whose auth_date is further than this ahead of the server clock is refused (init_data_future_dated); allows for clock skew.",
  }),
  initDataMode: v("MESSENGER_INIT_DATA_MODE", {
    kind: oneOf("hmac", "ed25519", "either"),
    fallback: "hmac",
    doc: "How init data is checked: hmac (the WebAppData hash, needs the bot token), ed25519 (Telegram's third-party signature) or either.",
  }),
  ed25519Keys: v("MESSENGER_INIT_DATA_ED25519_KEYS", {
    kind: text(/^(production|test|[0-9a-fA-F]{64})$/, "production, test, or an Ed25519 public key as 64 hex characters"),
    fallback: "production",
    doc: "Which Ed25519 public key checks the signature field: production or test (Telegram's published keys for its production and test environments), or a key given as 64 hex characters (should Telegram publish a new one).",
  }),
  salutesPartner: v("MESSENGER_SALUTES_PARTNER", {
    kind: text(/^.{0,200}$/, "a partner name"),
    doc: "The partner whose users messenger players are linked to (wallet proof, operator link) and whose salutes ledger pays salutes rewards of promos and missions. Unset: no linking, no salutes rewards.",
  }),
  /** Per minute; 0 = off (docs/messenger.md, Abuse limits). */
  rateLimits: {
    playerPerMin: v("MESSENGER_RATE_LIMIT_PLAYER_PER_MIN", {
      kind: int(0, 1_000_000),
      fallback: "120",
      doc: "Mini-app requests per player (Telegram user id, after its init data is verified) per minute (0 = off).",
    }),
    ipPerMin: v("MESSENGER_RATE_LIMIT_IP_PER_MIN", {
      kind: int(0, 1_000_000),
      fallback: "600",
      doc: "Mini-app requests per IP per minute, counted before init data is checked (0 = off); generous because players share mobile-carrier addresses.",
    }),
    initDataFailuresPerMin: v("MESSENGER_RATE_LIMIT_INIT_DATA_FAILURES_PER_MIN", {
      kind: int(0, 1_000_000),
      fallback: "30",
      doc: "Refused init-data checks per IP per minute; past it the refusals are 429 rate_limited (0 = off). Valid init data from the same IP still passes.",
    }),
    webhookUnauthorizedPerMin: v("MESSENGER_RATE_LIMIT_WEBHOOK_UNAUTHORIZED_PER_MIN", {
      kind: int(0, 1_000_000),
      fallback: "30",
      doc: "Bot-webhook posts without the right secret token per IP per minute; past it they are 429 rate_limited (0 = off). Posts with the right secret (Telegram) are never limited.",
    }),
  },
};
