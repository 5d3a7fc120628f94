// GET /api/messenger/admin/bot/bootstrap-readiness: what an operator checks before pointing players at the bot.
// Offline checks read config and the database; live=1 adds Telegram's own view (getMe, getWebhookInfo,
// getChatMenuButton). Each check names what it saw, what it wanted and the exact fix; a Bot API that cannot be reached fails its checks
// but never the route, since "Telegram is unreachable from here" is itself the answer the operator needs.
import { createHash } from "node:crypto";
import type { Static } from "elysia";
import type { AppContext } from "../../context";
import { HANDLED_UPDATE_KINDS, OPEN_MINI_APP } from "../bot/commands";
import { deadSince, lastUpdateAt, outboxBacklog } from "../store/bot";
import { WEBHOOK_SECRET_HEADER } from "../bot/webhook";
import { type BotApiResult, type BotUser, callBotApiRead, type MenuButton, type WebhookInfo } from "../bot/api";
import type { ReadinessCheck as ReadinessCheckSchema } from "./bot-model";

export type ReadinessCheck = Static<typeof ReadinessCheckSchema>;
export type CheckStatus = ReadinessCheck["status"];

/** Thresholds of the checks, in one place so the docs (docs/messenger-admin-bot.md) can quote them. */
export const READINESS = {
  webhookSecretMinLength: 16,
  initDataMaxAgeWarnSeconds: 86_400,
  initDataMinAgeWarnSeconds: 300,
  outboxPendingWarn: 100,
  outboxOldestPendingWarnSeconds: 300,
  outboxOldestPendingFailSeconds: 3_600,
  deadWindowHours: 24,
  updatesQuietHours: 24,
  pendingUpdatesWarn: 100,
  pendingUpdatesFail: 1_000,
  lastErrorFailSeconds: 3_600,
  lastErrorWarnSeconds: 86_400,
} as const;

/** Ports Telegram delivers webhooks to (core.telegram.org/bots/api#setwebhook). */
const WEBHOOK_PORTS = new Set(["443", "80", "88", "8443"]);
const SECRET_PLACEHOLDER = "<MESSENGER_WEBHOOK_SECRET>";

const check = (name: string, status: CheckStatus, observed: string, expected: string, fix: string | null = null): ReadinessCheck => ({
  name,
  status,
  observed,
  expected,
  fix: status === "pass" ? null : fix,
});

export const expectedWebhookUrl = (ctx: AppContext) => `${ctx.config.publicBaseUrl.replace(/\/+$/, "")}/api/messenger/webhook`;

/** A Bot API call as an operator can replay it: the endpoint with a token placeholder, the payload, and the curl line. */
export function botApiCall<M extends string, P>(ctx: AppContext, method: M, payload: P) {
  const endpoint = `${ctx.config.messenger.botApiBase.replace(/\/+$/, "")}/bot<BOT_TOKEN>/${method}`;
  const body = JSON.stringify(payload).replaceAll("'", "'\\''");
  return { method, endpoint, payload, curl: `curl -sS -X POST '${endpoint}' -H 'content-type: application/json' -d '${body}'` };
}

/** The setWebhook call that makes Telegram's side right: what every webhook fix points to. */
export const setWebhookCall = (ctx: AppContext) =>
  botApiCall(ctx, "setWebhook", { url: expectedWebhookUrl(ctx), secret_token: SECRET_PLACEHOLDER, allowed_updates: [...HANDLED_UPDATE_KINDS] });

/** The setChatMenuButton call that makes the bot's menu button open the mini-app (MESSENGER_MINI_APP_URL). */
export const setMenuButtonCall = (ctx: AppContext, url: string) =>
  botApiCall(ctx, "setChatMenuButton", { menu_button: { type: "web_app", text: OPEN_MINI_APP, web_app: { url } } });

const setWebhookFix = (ctx: AppContext, why: string) =>
  `${why}: call setWebhook with ${JSON.stringify(setWebhookCall(ctx).payload)} (the curl line is in set_webhook.curl)`;

/** A short, non-reversible name for the configured token: enough to tell two tokens apart, useless to a thief. */
export const tokenFingerprint = (token: string) => `sha256:${createHash("sha256").update(token).digest("hex").slice(0, 12)}`;

async function offlineChecks(ctx: AppContext, nowMs: number): Promise<ReadinessCheck[]> {
  const m = ctx.config.messenger;
  const token = m.botToken;
  const tokenOk = token !== undefined && /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/.test(token);
  const tokenObserved = tokenOk
    ? `set, bot id ${token.split(":")[0]}, fingerprint ${tokenFingerprint(token)}`
    : token
      ? "set but not of the form <bot id>:<secret>"
      : "unset";

  const secret = m.webhookSecret;
  const secretExpected = `1–256 characters of A-Z a-z 0-9 _ -, at least ${READINESS.webhookSecretMinLength} random ones`;
  const secretFix = `Set MESSENGER_WEBHOOK_SECRET to ${READINESS.webhookSecretMinLength}+ random characters of A-Z a-z 0-9 _ -, restart, then ${setWebhookFix(ctx, "give Telegram the same value")}`;
  const [secretStatus, secretObserved]: [CheckStatus, string] =
    secret === undefined
      ? ["fail", "unset: the webhook refuses every update"]
      : !/^[A-Za-z0-9_-]{1,256}$/.test(secret)
        ? ["fail", `set, ${secret.length} characters, with characters Telegram refuses`]
        : [secret.length < READINESS.webhookSecretMinLength ? "warn" : "pass", `set, ${secret.length} characters`];

  const base = new URL(ctx.config.publicBaseUrl);
  const port = base.port || (base.protocol === "https:" ? "443" : "80");
  const urlExpected = "an https:// URL on port 443, 80, 88 or 8443 (Telegram delivers webhooks only there)";
  const urlFix =
    "Set PUBLIC_BASE_URL to the public https:// address in front of Herald (TLS terminated by a proxy is fine), restart, then call setWebhook again.";
  const badPort = base.protocol === "https:" && !WEBHOOK_PORTS.has(port);

  const age = m.initDataMaxAgeSeconds;
  const initObserved = `mode ${m.initDataMode}${m.initDataMode === "hmac" ? "" : ` (${m.ed25519Keys} keys)`}, max age ${age} s`;
  const initExpected = `max age ${READINESS.initDataMinAgeWarnSeconds}–${READINESS.initDataMaxAgeWarnSeconds} s; production Ed25519 keys`;
  const initFix =
    m.initDataMode !== "hmac" && m.ed25519Keys === "test"
      ? "MESSENGER_INIT_DATA_ED25519_KEYS=test accepts Telegram's test environment: set it to production."
      : age > READINESS.initDataMaxAgeWarnSeconds
        ? `Lower MESSENGER_INIT_DATA_MAX_AGE_SECONDS to ${READINESS.initDataMaxAgeWarnSeconds} or less: a leaked init-data string stays usable that long.`
        : age < READINESS.initDataMinAgeWarnSeconds
          ? `Raise MESSENGER_INIT_DATA_MAX_AGE_SECONDS to at least ${READINESS.initDataMinAgeWarnSeconds}: a mini-app left open longer gets init_data_expired.`
          : null;

  const backlog = await outboxBacklog(ctx.store);
  const oldestS = backlog.oldest_pending_at ? Math.max(0, Math.floor((nowMs - Date.parse(backlog.oldest_pending_at)) / 1000)) : 0;
  const backlogObserved = `${backlog.pending} pending${backlog.oldest_pending_at ? `, oldest queued ${oldestS} s ago (${backlog.oldest_pending_at})` : ""}`;
  const backlogExpected = `fewer than ${READINESS.outboxPendingWarn} pending, none older than ${READINESS.outboxOldestPendingWarnSeconds} s (fail at ${READINESS.outboxOldestPendingFailSeconds} s)`;
  const backlogFix =
    "Replies are not leaving: check that jobs run (JOBS_ENABLED), that MESSENGER_BOT_API_BASE is reachable and the token accepted (live=1), and the recent errors in GET /api/messenger/admin/bot/preview.";
  const backlogStatus =
    oldestS >= READINESS.outboxOldestPendingFailSeconds
      ? "fail"
      : backlog.pending >= READINESS.outboxPendingWarn || oldestS >= READINESS.outboxOldestPendingWarnSeconds
        ? "warn"
        : "pass";

  // Dead rows are few by design (a reply dies after 8 attempts or at a 4xx), so the status index bounds this.
  const since = new Date(nowMs - READINESS.deadWindowHours * 3_600_000).toISOString();
  const deadRecent = await deadSince(ctx.store, since);
  const deadObserved = `${deadRecent} dead in the last ${READINESS.deadWindowHours} h, ${backlog.dead} in all`;
  const deadFix =
    "Read last_errors in GET /api/messenger/admin/bot/preview: 403 means players blocked the bot (expected now and then); 400/401/404 mean a bad token or payload.";
  // `check` drops the fix of a pass, so each check names its fix whatever its status.
  return [
    check(
      "bot_token",
      tokenOk ? "pass" : "fail",
      tokenObserved,
      "<bot id>:<secret> from @BotFather",
      "Set MESSENGER_BOT_TOKEN to the token @BotFather gave and restart.",
    ),
    check("webhook_secret", secretStatus, secretObserved, secretExpected, secretFix),
    check(
      "public_base_url",
      base.protocol !== "https:" || badPort ? "fail" : "pass",
      badPort ? `${base.origin} (port ${port})` : base.origin,
      urlExpected,
      urlFix,
    ),
    check("init_data", initFix === null ? "pass" : "warn", initObserved, initExpected, initFix),
    check("outbox_backlog", backlogStatus, backlogObserved, backlogExpected, backlogFix),
    check("outbox_dead", deadRecent === 0 ? "pass" : "warn", deadObserved, `no dead replies in the last ${READINESS.deadWindowHours} h`, deadFix),
    check(
      "mini_app_url",
      m.miniAppUrl ? "pass" : "warn",
      m.miniAppUrl ?? "unset: /start and /play carry no button to the mini-app",
      "MESSENGER_MINI_APP_URL names the players' page (https)",
      'Set MESSENGER_MINI_APP_URL to the https address of the players\' mini-app page and restart: /start and /play then carry a button that opens it in Telegram (docs/messenger.md, "Pointing the bot at the mini-app").',
    ),
  ];
}

/**
 * The bot's default menu button (getChatMenuButton without a chat): with MESSENGER_MINI_APP_URL set, it should open
 * that page, so players reach the mini-app from any chat with the bot, not only from /start's button.
 */
function menuButtonCheck(ctx: AppContext, menu: BotApiResult<MenuButton>): ReadinessCheck {
  const url = ctx.config.messenger.miniAppUrl;
  if (!menu.ok)
    return check("menu_button", "fail", menu.error, "getChatMenuButton answers ok", "getChatMenuButton failed: fix bot_api_get_me first, then run again.");
  const b = menu.result;
  const opens = b.type === "web_app" ? (b.web_app?.url ?? "") : null;
  const observed = opens === null ? `${b.type}: the button lists the bot's commands` : `web_app "${b.text ?? ""}" opening ${opens}`;
  if (!url) {
    const expected = "no mini-app configured (MESSENGER_MINI_APP_URL unset)";
    return opens === null
      ? check("menu_button", "pass", observed, expected)
      : check(
          "menu_button",
          "warn",
          observed,
          expected,
          `The menu button opens a page Herald does not know: set MESSENGER_MINI_APP_URL=${opens} (if that is the mini-app) and restart, so /start's button opens the same page.`,
        );
  }
  const call = setMenuButtonCall(ctx, url);
  return check(
    "menu_button",
    opens === url ? "pass" : "warn",
    observed,
    `web_app opening ${url} (MESSENGER_MINI_APP_URL)`,
    `Point the menu button at the mini-app: call setChatMenuButton with ${JSON.stringify(call.payload)} (${call.curl}), or in @BotFather: /mybots → the bot → Bot Settings → Menu Button.`,
  );
}

function updatesCheck(lastAt: string | null, nowMs: number): ReadinessCheck {
  const expected = `an update within the last ${READINESS.updatesQuietHours} h`;
  const fix = "Send /start to the bot from Telegram; if nothing arrives, run this with live=1 to see Telegram's webhook URL and last error.";
  if (!lastAt) return check("updates_recent", "warn", "no update received yet", expected, fix);
  const ageH = (nowMs - Date.parse(lastAt)) / 3_600_000;
  return ageH <= READINESS.updatesQuietHours
    ? check("updates_recent", "pass", `last update at ${lastAt}`, expected)
    : check("updates_recent", "warn", `last update at ${lastAt} (${Math.floor(ageH)} h ago)`, expected, fix);
}

const LIVE_CHECKS = [
  "bot_api_get_me",
  "webhook_url",
  "webhook_pending_updates",
  "webhook_last_error",
  "webhook_allowed_updates",
  "webhook_secret_token",
  "menu_button",
] as const;

function getMeCheck(ctx: AppContext, me: BotApiResult<BotUser>): ReadinessCheck {
  const tokenBotId = ctx.config.messenger.botToken?.split(":")[0];
  const configuredName = ctx.config.messenger.botUsername;
  const expected = "getMe answers ok: Telegram accepts the token";
  if (!me.ok) {
    const fix =
      me.status === 401 || me.status === 404
        ? "Telegram refuses the token (revoked or mistyped): take the current token from @BotFather, set MESSENGER_BOT_TOKEN and restart."
        : "Make MESSENGER_BOT_API_BASE reachable from this host (firewall, proxy, DNS), then run again.";
    return check("bot_api_get_me", "fail", me.error, expected, fix);
  }
  const bot = `@${me.result.username ?? "?"} (id ${me.result.id})`;
  if (tokenBotId !== undefined && String(me.result.id) !== tokenBotId) {
    const fix = "MESSENGER_BOT_API_BASE answers for another bot: point it at https://api.telegram.org.";
    return check("bot_api_get_me", "fail", `getMe answered bot id ${me.result.id}`, `bot id ${tokenBotId}`, fix);
  }
  if (configuredName !== undefined && (me.result.username ?? "").toLowerCase() !== configuredName.toLowerCase()) {
    const fix = `Commands addressed /cmd@${me.result.username ?? "?"} are ignored as meant for another bot: set MESSENGER_BOT_USERNAME=${me.result.username ?? ""} (or unset it to learn it from getMe) and restart.`;
    return check("bot_api_get_me", "fail", `getMe answered ${bot}`, `@${configuredName} (MESSENGER_BOT_USERNAME)`, fix);
  }
  return check("bot_api_get_me", "pass", bot, expected);
}

function liveChecks(
  ctx: AppContext,
  nowMs: number,
  me: BotApiResult<BotUser>,
  info: BotApiResult<WebhookInfo>,
  menu: BotApiResult<MenuButton>,
  lastAt: string | null,
): ReadinessCheck[] {
  const getMe = getMeCheck(ctx, me);
  if (!info.ok) {
    const fix = "getWebhookInfo failed: fix bot_api_get_me first, then run again.";
    const webhookChecks = LIVE_CHECKS.filter((name) => name.startsWith("webhook_"));
    return [getMe, ...webhookChecks.map((name) => check(name, "fail", info.error, "getWebhookInfo answers ok", fix)), menuButtonCheck(ctx, menu)];
  }
  const expectedUrl = expectedWebhookUrl(ctx);
  const w = info.result;
  const urlObserved = w.url === "" ? "no webhook set (the bot is in getUpdates mode)" : w.url;

  const pending = w.pending_update_count ?? 0;
  const pendingExpected = `fewer than ${READINESS.pendingUpdatesWarn} (fail at ${READINESS.pendingUpdatesFail})`;
  const pendingFix =
    "Telegram is holding updates it could not deliver: fix webhook_url and webhook_last_error first; pass drop_pending_updates: true to setWebhook to discard a stale backlog.";
  const pendingStatus = pending >= READINESS.pendingUpdatesFail ? "fail" : pending >= READINESS.pendingUpdatesWarn ? "warn" : "pass";

  const errAgeS = w.last_error_date ? Math.max(0, Math.floor(nowMs / 1000 - w.last_error_date)) : null;
  const errObserved =
    errAgeS === null
      ? "no delivery error reported"
      : `${new Date(w.last_error_date! * 1000).toISOString()} (${errAgeS} s ago): ${String(w.last_error_message ?? "").slice(0, 200)}`;
  const errExpected = `no delivery error in the last ${READINESS.lastErrorWarnSeconds} s`;
  const errFix = `Telegram could not deliver to ${w.url || expectedUrl}: check that the URL answers from the internet with a valid certificate; a 401 (or a 429, which Herald answers only to posts without the secret) means the secret_token Telegram sends in ${WEBHOOK_SECRET_HEADER} differs from MESSENGER_WEBHOOK_SECRET; ${setWebhookFix(ctx, "either way, once it answers")}.`;
  const errStatus = errAgeS === null || errAgeS >= READINESS.lastErrorWarnSeconds ? "pass" : errAgeS < READINESS.lastErrorFailSeconds ? "fail" : "warn";

  const handled = [...HANDLED_UPDATE_KINDS];
  const allowed = w.allowed_updates ?? [];
  const missing = handled.filter((k) => allowed.length > 0 && !allowed.includes(k));
  const allowedObserved = allowed.length === 0 ? "not set: Telegram's default (every kind but chat_member and reactions)" : allowed.join(", ");
  const allowedExpected = `includes ${handled.join(", ")} (the kinds Herald answers; others are recorded and ignored)`;

  // Telegram never reveals the secret_token it was given; the only evidence is updates passing the header check.
  // Herald answers Telegram 401 only for a wrong secret, and 429 only to posts without the right secret.
  const refusedStatus = /\b(401|429)\b/.exec(w.last_error_message ?? "")?.[1];
  const unauthorized = refusedStatus !== undefined && errAgeS !== null && errAgeS < READINESS.lastErrorWarnSeconds;
  const [secretStatus, secretObserved]: [CheckStatus, string] = unauthorized
    ? ["fail", `Telegram's last delivery got ${refusedStatus} from Herald (${errAgeS} s ago): the secret_token Telegram sends does not match`]
    : lastAt
      ? ["pass", `cannot be read back from Telegram; verified by updates arriving with a valid header: last valid update at ${lastAt}`]
      : ["warn", "cannot be read back from Telegram, and no update has arrived with a valid header yet"];
  const secretFix = unauthorized
    ? setWebhookFix(ctx, "Give Telegram the current secret")
    : "Send /start to the bot and run this again; if webhook_last_error then shows a 401, call setWebhook with the current secret_token.";
  return [
    getMe,
    check("webhook_url", w.url === expectedUrl ? "pass" : "fail", urlObserved, expectedUrl, setWebhookFix(ctx, "Point Telegram at Herald")),
    check("webhook_pending_updates", pendingStatus, `${pending} pending`, pendingExpected, pendingFix),
    check("webhook_last_error", errStatus, errObserved, errExpected, errFix),
    check(
      "webhook_allowed_updates",
      missing.length === 0 ? "pass" : "fail",
      missing.length === 0 ? allowedObserved : `${allowedObserved} (missing ${missing.join(", ")})`,
      allowedExpected,
      setWebhookFix(ctx, "Subscribe to what Herald handles"),
    ),
    check("webhook_secret_token", secretStatus, secretObserved, `Telegram sends MESSENGER_WEBHOOK_SECRET in ${WEBHOOK_SECRET_HEADER}`, secretFix),
    menuButtonCheck(ctx, menu),
  ];
}

export async function botReadiness(ctx: AppContext, live: boolean) {
  const nowMs = ctx.clock.now().getTime();
  // The newest stored update: every stored update passed the secret-token check, so it also dates the secret.
  const lastAt = await lastUpdateAt(ctx.store);
  const checks = [...(await offlineChecks(ctx, nowMs)), updatesCheck(lastAt, nowMs)];
  if (live) {
    // Network I/O outside any transaction; the calls together, each with its own timeout.
    const [me, info, menu] = await Promise.all([
      callBotApiRead<BotUser>(ctx, "getMe"),
      callBotApiRead<WebhookInfo>(ctx, "getWebhookInfo"),
      callBotApiRead<MenuButton>(ctx, "getChatMenuButton"),
    ]);
    checks.push(...liveChecks(ctx, nowMs, me, info, menu, lastAt));
  } else {
    const fix = "Run with live=1 to ask Telegram (getMe, getWebhookInfo, getChatMenuButton).";
    for (const name of LIVE_CHECKS) checks.push(check(name, "skipped", "not checked (live=0)", "asks Telegram with live=1", fix));
  }
  const count = (s: CheckStatus) => checks.filter((c) => c.status === s).length;
  return {
    live,
    checked_at: new Date(nowMs).toISOString(),
    ready: count("fail") === 0,
    summary: { pass: count("pass"), warn: count("warn"), fail: count("fail"), skipped: count("skipped") },
    expected_webhook_url: expectedWebhookUrl(ctx),
    set_webhook: setWebhookCall(ctx),
    checks,
  };
}
