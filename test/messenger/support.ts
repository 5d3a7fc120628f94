// Shared helpers of the messenger tests: init data signed by an independent implementation of Telegram's
// documented scheme (node:crypto directly, not the library the app uses), the app's env, and a second instance
// over the same database.
import { createHmac } from "node:crypto";
import { jsonInit, openTestApp, type TestApp, type TestAppOptions } from "../support/app";
import { seededRng } from "../support/clock";

export const BOT_TOKEN = "7000000001:AAE_test-token_0123456789abcdefghijk";
export const WEBHOOK_SECRET = "hook_secret-0123456789";

export const messengerEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  MESSENGER_BOT_TOKEN: BOT_TOKEN,
  MESSENGER_WEBHOOK_SECRET: WEBHOOK_SECRET,
  ...extra,
});

/** A messenger app on the engine HERALD_TEST_ENGINE names (SQLite by default, else a fresh PostgreSQL database). */
export function openMessengerApp(opts: TestAppOptions = {}): Promise<TestApp> {
  return openTestApp({ ...opts, env: messengerEnv(opts.env) });
}

let siblings = 0;

/**
 * A second instance on the database of `h` — its own context, store (connections or pool), caches and jobs, as
 * another process would have — on the same clock unless given one. Close it before `h` (on SQLite `h` owns the
 * file and its folder).
 */
export function siblingOf(h: TestApp, opts: TestAppOptions = {}): Promise<TestApp> {
  const env: Record<string, string> = { ...opts.env };
  if (h.ctx.store.dialect === "postgres") env.DATABASE_URL = h.ctx.config.database.url!;
  else env.HERALD_DB_PATH = h.ctx.config.dbPath;
  // Its own randomness: two instances drawing the same seeds and nonces would be one instance twice.
  return openTestApp({ clock: h.clock, rng: seededRng(`sibling-${++siblings}`), ...opts, env: messengerEnv(env) });
}

export interface InitUser {
  id: number;
  first_name?: string;
  username?: string;
  is_premium?: boolean;
  language_code?: string;
}

/**
 * Init data as Telegram builds it (core.telegram.org/bots/webapps#validating-data-received-via-the-mini-app):
 * secret = HMAC_SHA256(key "WebAppData", bot token); hash = hex(HMAC_SHA256(secret, data-check-string)), where
 * the data-check-string is every field but hash as key=value, sorted, joined by "\n".
 */
export function signInitData(fields: Record<string, string>, token = BOT_TOKEN): string {
  const dcs = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join("\n");
  const secret = createHmac("sha256", "WebAppData").update(token).digest();
  const hash = createHmac("sha256", secret).update(dcs).digest("hex");
  const params = new URLSearchParams(fields);
  params.set("hash", hash);
  return params.toString();
}

/** Init data for `user`, signed at `authDateSeconds` (default: the test clock's now). */
export function initDataFor(h: TestApp, user: InitUser, extra: Record<string, string> = {}, authDateSeconds?: number): string {
  const authDate = authDateSeconds ?? Math.floor(h.clock.now().getTime() / 1000);
  return signInitData({ auth_date: String(authDate), query_id: "AAHdF6IQAAAAAN0XohDhrOrc", user: JSON.stringify({ first_name: "Ada", ...user }), ...extra });
}

/** POST a JSON body with init data in the Authorization header. */
export const tmaPost = (initData: string, body: unknown = {}) => jsonInit("POST", body, { authorization: `tma ${initData}` });

export interface BotApiCall {
  token: string;
  method: string;
  body: Record<string, any>;
}

/** The bot the fake Bot API says it is (getMe). */
export const BOT_USERNAME = "HeraldBot";

/**
 * A fake Bot API on 127.0.0.1: records each call (token, method, JSON body) and answers from a script
 * (then `{ ok: true }`), as api.telegram.org does — including 429 with parameters.retry_after. getMe, the one
 * read the webhook may make (to learn the bot's username), is answered from `me` and counted in `getMeCalls`,
 * apart from the script and `calls`.
 */
export function startFakeBotApi() {
  const calls: BotApiCall[] = [];
  const script: Array<{ status: number; body: Record<string, unknown> }> = [];
  const me = {
    status: 200,
    body: { ok: true, result: { id: Number(BOT_TOKEN.split(":")[0]), is_bot: true, first_name: "Herald", username: BOT_USERNAME } } as Record<string, unknown>,
    calls: 0,
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(new URL(req.url).pathname);
      if (!m) return Response.json({ ok: false, error_code: 404, description: "Not Found" }, { status: 404 });
      if (m[2] === "getMe") {
        me.calls++;
        await req.text();
        return Response.json(me.body, { status: me.status });
      }
      calls.push({ token: m[1]!, method: m[2]!, body: (await req.json()) as Record<string, any> });
      const next = script.shift() ?? { status: 200, body: { ok: true, result: { message_id: calls.length } } };
      return Response.json(next.body, { status: next.status });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    calls,
    /** What getMe answers (change it to make getMe fail) and how often it was asked. */
    me,
    /** The next answers, in order. */
    answer(...answers: Array<{ status: number; body: Record<string, unknown> }>) {
      script.push(...answers);
    },
    stop: () => server.stop(true),
  };
}

let updateSeq = 1000;
/** A private-chat text message update from `from`. */
export function textUpdate(text: string, from: InitUser = { id: 4242, first_name: "Ada", username: "ada" }, updateId = ++updateSeq) {
  return {
    update_id: updateId,
    message: { message_id: updateId, date: 1767225600, chat: { id: from.id, type: "private" }, from: { is_bot: false, ...from }, text },
  };
}

/** A webhook POST with the secret in the header Telegram sends (X-Telegram-Bot-Api-Secret-Token). */
export const webhookPost = (update: unknown, secret: string | null = WEBHOOK_SECRET, headers: Record<string, string> = {}) =>
  jsonInit("POST", update, { ...(secret === null ? {} : { "x-telegram-bot-api-secret-token": secret }), ...headers });

/** A self-reported mission an operator creates (POST /api/messenger/admin/missions): three quiz answers. */
export const QUIZ3_MISSION = {
  mission_key: "quiz-3",
  title: "Answer three quizzes",
  event_type: "quiz.answer",
  progress_source: "self_reported",
  target: 3,
  reward: { points: 10, missiles: 1 },
  daily_cap: 10,
  per_minute_cap: 5,
};
