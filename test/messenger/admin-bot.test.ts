// Operator bot administration (issue 19, Bot): bootstrap readiness against a fake Bot API on 127.0.0.1 that reports
// a wrong webhook URL and then the right one, an unreachable Bot API, the command helper checked against what the
// webhook really answers, and the received/sent preview.
import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { BOT_TOKEN, openMessengerApp, textUpdate, WEBHOOK_SECRET, webhookPost } from "./support";

const BASE = "https://herald.example.com";
const HOOK_URL = `${BASE}/api/messenger/webhook`;

/**
 * A fake Bot API for the read calls (getMe, getWebhookInfo, getChatMenuButton) and sendMessage, on 127.0.0.1. Local to this file:
 * support.ts's fake answers every method alike. The webhook info it reports is mutable.
 */
function startFakeTelegram() {
  const calls: Array<{ token: string; method: string }> = [];
  const state = {
    webhook: { url: "", pending_update_count: 0, has_custom_certificate: false } as Record<string, unknown>,
    /** The bot's default menu button, as getChatMenuButton answers it (Telegram's default lists the commands). */
    menu: { type: "commands" } as Record<string, unknown>,
    getMeStatus: 200,
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(new URL(req.url).pathname);
      if (!m) return Response.json({ ok: false, error_code: 404, description: "Not Found" }, { status: 404 });
      await req.text();
      calls.push({ token: m[1]!, method: m[2]! });
      if (m[1] !== BOT_TOKEN) return Response.json({ ok: false, error_code: 401, description: "Unauthorized" }, { status: 401 });
      switch (m[2]) {
        case "getMe":
          return state.getMeStatus === 200
            ? Response.json({ ok: true, result: { id: Number(BOT_TOKEN.split(":")[0]), is_bot: true, first_name: "Herald", username: "HeraldTestBot" } })
            : Response.json({ ok: false, error_code: state.getMeStatus, description: "Unauthorized" }, { status: state.getMeStatus });
        case "getWebhookInfo":
          return Response.json({ ok: true, result: state.webhook });
        case "getChatMenuButton":
          return Response.json({ ok: true, result: state.menu });
        case "sendMessage":
          return Response.json({ ok: true, result: { message_id: calls.length } });
        default:
          return Response.json({ ok: false, error_code: 404, description: "Not Found: method not found" }, { status: 404 });
      }
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, calls, state, stop: () => server.stop(true) };
}

let h: TestApp | undefined;
let tg: ReturnType<typeof startFakeTelegram> | undefined;
afterEach(async () => {
  await h?.close();
  tg?.stop();
  h = undefined;
  tg = undefined;
});

async function start(env: Record<string, string> = {}) {
  tg = startFakeTelegram();
  h = await openMessengerApp({ env: { MESSENGER_BOT_API_BASE: tg.url, PUBLIC_BASE_URL: BASE, ...env } });
  const token = await createAdminToken(h);
  const get = (path: string, auth = true) => h!.json(path, auth ? { headers: { authorization: `Bearer ${token}` } } : {});
  return { h, tg, get };
}

const byName = (checks: Array<Record<string, any>>) => Object.fromEntries(checks.map((c) => [c.name, c]));

describe("GET /api/messenger/admin/bot/bootstrap-readiness", () => {
  test("offline: named checks, live ones skipped, no Bot API call, the token never echoed", async () => {
    const { get, tg } = await start();
    const res = await get("/api/messenger/admin/bot/bootstrap-readiness");
    expect(res.status).toBe(200);
    expect(res.body.live).toBe(false);
    const c = byName(res.body.checks);
    expect(Object.keys(c)).toEqual([
      "bot_token",
      "webhook_secret",
      "public_base_url",
      "init_data",
      "outbox_backlog",
      "outbox_dead",
      "mini_app_url",
      "updates_recent",
      "bot_api_get_me",
      "webhook_url",
      "webhook_pending_updates",
      "webhook_last_error",
      "webhook_allowed_updates",
      "webhook_secret_token",
      "menu_button",
    ]);
    for (const name of ["bot_token", "webhook_secret", "public_base_url", "init_data", "outbox_backlog", "outbox_dead"]) expect(c[name].status).toBe("pass");
    // No mini-app configured: a warning that /start carries no button, with the variable to set.
    expect(c.mini_app_url).toMatchObject({ status: "warn", observed: "unset: /start and /play carry no button to the mini-app" });
    expect(c.mini_app_url.fix).toContain("MESSENGER_MINI_APP_URL");
    expect(c.bot_token.observed).toMatch(/fingerprint sha256:[0-9a-f]{12}/);
    expect(c.updates_recent.status).toBe("warn");
    expect(c.webhook_url.status).toBe("skipped");
    expect(res.body.summary).toEqual({ pass: 6, warn: 2, fail: 0, skipped: 7 });
    expect(res.body.ready).toBe(true);
    expect(res.body.set_webhook.payload).toEqual({ url: HOOK_URL, secret_token: "<MESSENGER_WEBHOOK_SECRET>", allowed_updates: ["message"] });
    expect(tg.calls).toHaveLength(0);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(BOT_TOKEN.split(":")[1]!);
    expect(text).not.toContain(WEBHOOK_SECRET);
  });

  test("offline: an http base URL fails with the fix", async () => {
    const { get } = await start({ PUBLIC_BASE_URL: "http://localhost:3000" });
    const c = byName((await get("/api/messenger/admin/bot/bootstrap-readiness?live=0")).body.checks);
    expect(c.public_base_url.status).toBe("fail");
    expect(c.public_base_url.fix).toContain("PUBLIC_BASE_URL");
  });

  test("offline: a stuck outbox warns then fails, dead replies warn, a quiet bot warns", async () => {
    const { h, get } = await start({ JOBS_ENABLED: "0" });
    await h.json("/api/messenger/webhook", webhookPost(textUpdate("/help")));
    await h.json("/api/messenger/webhook", webhookPost(textUpdate("/balance")));
    await h.ctx.store.run("UPDATE messenger_bot_outbox SET status = 'dead', last_error = '403 Forbidden: bot was blocked by the user' WHERE id = 2");
    h.clock.advanceSeconds(600); // the /help reply has waited 10 minutes: warn
    let c = byName((await get("/api/messenger/admin/bot/bootstrap-readiness")).body.checks);
    expect(c.outbox_backlog).toMatchObject({ status: "warn" });
    expect(c.outbox_backlog.observed).toContain("1 pending, oldest queued 600 s ago");
    expect(c.outbox_dead.status).toBe("warn");
    expect(c.outbox_dead.observed).toBe("1 dead in the last 24 h, 1 in all");
    expect(c.updates_recent.status).toBe("pass");
    h.clock.advanceSeconds(25 * 3600); // over an hour stuck: fail; the dead reply and the last update are old now
    c = byName((await get("/api/messenger/admin/bot/bootstrap-readiness")).body.checks);
    expect(c.outbox_backlog.status).toBe("fail");
    expect(c.outbox_backlog.fix).toContain("JOBS_ENABLED");
    expect(c.outbox_dead.status).toBe("pass");
    expect(c.updates_recent.status).toBe("warn");
  });

  test("live is a boolean flag: 1, true and the bare flag ask the Bot API; 0 and false do not; other values are 400", async () => {
    const { get, tg } = await start();
    for (const [flag, asks] of [
      ["live=1", true],
      ["live=true", true],
      ["live", true],
      ["live=0", false],
      ["live=false", false],
    ] as const) {
      const before = tg.calls.length;
      const res = await get(`/api/messenger/admin/bot/bootstrap-readiness?${flag}`);
      expect([flag, res.status, tg.calls.length > before]).toEqual([flag, 200, asks]);
    }
    expect((await get("/api/messenger/admin/bot/bootstrap-readiness?live=yes")).status).toBe(400);
  });

  test("live: a wrong webhook URL fails with the setWebhook fix, then the right one passes", async () => {
    const { h, get, tg } = await start();
    tg.state.webhook = {
      url: "https://old.example.com/telegram",
      pending_update_count: 3,
      has_custom_certificate: false,
      allowed_updates: ["callback_query"],
    };
    let res = await get("/api/messenger/admin/bot/bootstrap-readiness?live=1");
    expect(res.status).toBe(200);
    let c = byName(res.body.checks);
    expect(c.bot_api_get_me).toMatchObject({ status: "pass", observed: `@HeraldTestBot (id ${BOT_TOKEN.split(":")[0]})`, fix: null });
    expect(c.webhook_url).toMatchObject({ status: "fail", observed: "https://old.example.com/telegram", expected: HOOK_URL });
    expect(c.webhook_url.fix).toContain(`"url":"${HOOK_URL}"`);
    expect(c.webhook_url.fix).toContain('"secret_token":"<MESSENGER_WEBHOOK_SECRET>"');
    expect(c.webhook_allowed_updates.status).toBe("fail");
    expect(c.webhook_allowed_updates.fix).toContain('"allowed_updates":["message"]');
    expect(c.webhook_pending_updates.status).toBe("pass");
    expect(c.webhook_secret_token.status).toBe("warn");
    expect(c.webhook_secret_token.observed).toContain("cannot be read back");
    expect(res.body.ready).toBe(false);
    expect(tg.calls.map((x) => x.method).sort()).toEqual(["getChatMenuButton", "getMe", "getWebhookInfo"]);

    // The operator runs the fix; an update then arrives with the valid secret header.
    tg.state.webhook = { url: HOOK_URL, pending_update_count: 0, has_custom_certificate: false, allowed_updates: ["message"] };
    expect((await h.json("/api/messenger/webhook", webhookPost(textUpdate("/help")))).status).toBe(200);
    res = await get("/api/messenger/admin/bot/bootstrap-readiness?live=1");
    c = byName(res.body.checks);
    for (const name of ["webhook_url", "webhook_allowed_updates", "webhook_pending_updates", "webhook_last_error", "webhook_secret_token", "updates_recent"])
      expect(c[name]).toMatchObject({ status: "pass", fix: null });
    expect(c.webhook_secret_token.observed).toContain(`last valid update at ${h.clock.now().toISOString()}`);
    expect(res.body.summary.fail).toBe(0);
    expect(res.body.ready).toBe(true);
  });

  test("live: a recent 401 delivery error and a big backlog fail; Telegram's default allowed_updates pass", async () => {
    const { h, get, tg } = await start();
    const nowS = Math.floor(h.clock.now().getTime() / 1000);
    tg.state.webhook = {
      url: HOOK_URL,
      pending_update_count: 1500,
      last_error_date: nowS - 60,
      last_error_message: "Wrong response from the webhook: 401 Unauthorized",
    };
    const c = byName((await get("/api/messenger/admin/bot/bootstrap-readiness?live=1")).body.checks);
    expect(c.webhook_pending_updates.status).toBe("fail");
    expect(c.webhook_last_error.status).toBe("fail");
    expect(c.webhook_secret_token.status).toBe("fail");
    expect(c.webhook_secret_token.fix).toContain("setWebhook");
    expect(c.webhook_allowed_updates.status).toBe("pass");
  });

  test("live: the secret check names Telegram's header, and a recent 429 (Herald's answer to posts without the secret) fails it too", async () => {
    const { h, get, tg } = await start();
    const nowS = Math.floor(h.clock.now().getTime() / 1000);
    tg.state.webhook = {
      url: HOOK_URL,
      pending_update_count: 0,
      last_error_date: nowS - 60,
      last_error_message: "Wrong response from the webhook: 429 Too Many Requests",
    };
    const c = byName((await get("/api/messenger/admin/bot/bootstrap-readiness?live=1")).body.checks);
    expect(c.webhook_secret_token).toMatchObject({ status: "fail", expected: "Telegram sends MESSENGER_WEBHOOK_SECRET in X-Telegram-Bot-Api-Secret-Token" });
    expect(c.webhook_secret_token.observed).toContain("got 429 from Herald");
    expect(c.webhook_last_error.fix).toContain("X-Telegram-Bot-Api-Secret-Token differs from MESSENGER_WEBHOOK_SECRET");
  });

  test("live: MESSENGER_BOT_USERNAME other than getMe's username fails with the fix; the same name in another case passes", async () => {
    let { get } = await start({ MESSENGER_BOT_USERNAME: "SomeOtherBot" });
    let c = byName((await get("/api/messenger/admin/bot/bootstrap-readiness?live=1")).body.checks);
    expect(c.bot_api_get_me).toMatchObject({ status: "fail", expected: "@SomeOtherBot (MESSENGER_BOT_USERNAME)" });
    expect(c.bot_api_get_me.fix).toContain("MESSENGER_BOT_USERNAME=HeraldTestBot");
    await h?.close();
    tg?.stop();
    ({ get } = await start({ MESSENGER_BOT_USERNAME: "heraldtestbot" }));
    c = byName((await get("/api/messenger/admin/bot/bootstrap-readiness?live=1")).body.checks);
    expect(c.bot_api_get_me.status).toBe("pass");
  });

  test("live: the menu button is checked against MESSENGER_MINI_APP_URL, with the setChatMenuButton fix", async () => {
    const page = "https://play.example.com/app";
    let { get, tg } = await start({ MESSENGER_MINI_APP_URL: page });
    const menuCheck = async () => byName((await get("/api/messenger/admin/bot/bootstrap-readiness?live=1")).body.checks);
    let c = await menuCheck();
    expect(c.mini_app_url).toMatchObject({ status: "pass", observed: page, fix: null });
    // Telegram's default: the button lists the commands. Players still get /start's button: a warning, not a failure.
    expect(c.menu_button).toMatchObject({
      status: "warn",
      observed: "commands: the button lists the bot's commands",
      expected: `web_app opening ${page} (MESSENGER_MINI_APP_URL)`,
    });
    const payload = { menu_button: { type: "web_app", text: "Open the mini-app", web_app: { url: page } } };
    expect(c.menu_button.fix).toContain(`setChatMenuButton with ${JSON.stringify(payload)}`);
    expect(c.menu_button.fix).toContain(`${tg.url}/bot<BOT_TOKEN>/setChatMenuButton`);
    expect(c.menu_button.fix).toContain("@BotFather");
    // The operator runs the fix: the button opens the page.
    tg.state.menu = { type: "web_app", text: "Play", web_app: { url: page } };
    c = await menuCheck();
    expect(c.menu_button).toMatchObject({ status: "pass", observed: `web_app "Play" opening ${page}`, fix: null });
    // Another page than the configured one.
    tg.state.menu = { type: "web_app", text: "Play", web_app: { url: "https://old.example.com/game" } };
    expect((await menuCheck()).menu_button.status).toBe("warn");
    await h?.close();
    tg?.stop();
    // No MESSENGER_MINI_APP_URL: a menu button that opens a page names the variable to set; the commands list passes.
    ({ get, tg } = await start());
    tg.state.menu = { type: "web_app", text: "Play", web_app: { url: "https://old.example.com/game" } };
    c = await menuCheck();
    expect(c.menu_button.status).toBe("warn");
    expect(c.menu_button.fix).toContain("MESSENGER_MINI_APP_URL=https://old.example.com/game");
    tg.state.menu = { type: "commands" };
    expect((await menuCheck()).menu_button).toMatchObject({ status: "pass", fix: null });
  });

  test("live: a rejected token fails getMe with the BotFather fix", async () => {
    const { get, tg } = await start();
    tg.state.getMeStatus = 401;
    const c = byName((await get("/api/messenger/admin/bot/bootstrap-readiness?live=1")).body.checks);
    expect(c.bot_api_get_me.status).toBe("fail");
    expect(c.bot_api_get_me.observed).toBe("getMe: HTTP 401 Unauthorized");
    expect(c.bot_api_get_me.fix).toContain("@BotFather");
  });

  test("live: Bot API down → those checks fail with the error, the route still answers 200", async () => {
    const { get, tg } = await start();
    tg.stop(); // nothing listens on that port any more
    const res = await get("/api/messenger/admin/bot/bootstrap-readiness?live=1");
    expect(res.status).toBe(200);
    const c = byName(res.body.checks);
    for (const name of [
      "bot_api_get_me",
      "webhook_url",
      "webhook_pending_updates",
      "webhook_last_error",
      "webhook_allowed_updates",
      "webhook_secret_token",
      "menu_button",
    ]) {
      expect(c[name].status).toBe("fail");
      expect(c[name].observed).toContain("network");
    }
    expect(c.bot_token.status).toBe("pass");
    expect(JSON.stringify(res.body)).not.toContain(BOT_TOKEN.split(":")[1]!);
  });
});

describe("GET /api/messenger/admin/bot/command-helper", () => {
  test("lists the handled commands, the setMyCommands payload and curl; each command gets a real reply from the webhook", async () => {
    const { h, get, tg } = await start();
    const res = await get("/api/messenger/admin/bot/command-helper");
    expect(res.status).toBe(200);
    const names = res.body.commands.map((c: { command: string }) => c.command);
    expect(names).toEqual(["start", "help", "balance", "play"]);
    expect(res.body.commands.every((c: { valid_for_telegram: boolean }) => c.valid_for_telegram)).toBe(true);
    const call = res.body.set_my_commands;
    expect(call.method).toBe("setMyCommands");
    expect(call.payload.commands.map((c: { command: string }) => c.command)).toEqual(names);
    expect(call.payload.commands[0]).toEqual({ command: "start", description: res.body.commands[0].description });
    expect(call.curl).toContain(`${tg.url}/bot<BOT_TOKEN>/setMyCommands`);
    expect(JSON.parse(/-d '(.*)'$/.exec(call.curl)![1]!)).toEqual(call.payload);

    // Every listed command is answered by the webhook with a reply in the outbox (not the unknown-command text).
    for (const [i, command] of names.entries()) {
      const ack = await h.json("/api/messenger/webhook", webhookPost(textUpdate(`/${command}`, { id: 5000 + i, first_name: "Op" })));
      expect(ack.body.replies_queued).toBeGreaterThanOrEqual(1);
    }
    const rows = (await h.ctx.store.all("SELECT chat_id, method, payload FROM messenger_bot_outbox ORDER BY id")) as Array<{
      chat_id: number;
      method: string;
      payload: string;
    }>;
    for (const [i] of names.entries()) {
      const replies = rows.filter((r) => r.chat_id === 5000 + i);
      expect(replies.length).toBeGreaterThanOrEqual(1);
      expect(replies.every((r) => r.method === "sendMessage" && !(JSON.parse(r.payload).text as string).startsWith("Unknown command"))).toBe(true);
    }
  });
});

describe("GET /api/messenger/admin/bot/preview", () => {
  test("received by kind and command per hour, sent by status, recent rows without message text; live adds pending", async () => {
    const { h, get, tg } = await start();
    tg.state.webhook = { url: HOOK_URL, pending_update_count: 7 };
    for (const text of ["/start", "/help", "hello there"]) await h.json("/api/messenger/webhook", webhookPost(textUpdate(text)));
    await h.json("/api/messenger/webhook", webhookPost({ update_id: 77, callback_query: { id: "1" } }));
    const run = await h.ctx.jobs.runNow("messenger-bot-outbox");
    expect(run.ok).toBe(true);
    const res = await get("/api/messenger/admin/bot/preview?hours=2&live=1&limit=5");
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b.window.hours).toBe(2);
    expect(b.hourly).toHaveLength(2);
    expect(b.received.total).toBe(4);
    expect(b.received.by_kind).toEqual({ message: 3, callback_query: 1 });
    expect(b.received.by_command).toEqual({ start: 1, help: 1, "(no command)": 2 });
    expect(b.received.recent).toHaveLength(4);
    expect(Object.keys(b.received.recent[0]).sort()).toEqual(["chat_id", "command", "kind", "received_at", "update_id"]);
    expect(b.sent.total_sent).toBe(2);
    expect(b.sent.queued_by_status).toEqual({ pending: 0, sent: 2, dead: 0 });
    expect(b.sent.recent.every((r: Record<string, unknown>) => r.method === "sendMessage" && r.status === "sent" && !("payload" in r))).toBe(true);
    expect(b.hourly.at(-1).updates_by_command).toEqual({ start: 1, help: 1, "(no command)": 2 });
    expect(b.live).toMatchObject({ ok: true, pending_update_count: 7, url_matches: true });
    expect(JSON.stringify(b)).not.toContain("hello there");
    expect(JSON.stringify(b)).not.toContain("Welcome");
  });

  test("live=0 makes no Bot API call; a Bot API that is down is reported, still 200", async () => {
    const { get, tg } = await start();
    expect((await get("/api/messenger/admin/bot/preview")).body.live).toBeNull();
    expect(tg.calls).toHaveLength(0);
    tg.stop();
    const res = await get("/api/messenger/admin/bot/preview?live=1");
    expect(res.status).toBe(200);
    expect(res.body.live.ok).toBe(false);
    expect(res.body.live.error).toContain("network");
  });
});

describe("admin bot routes: authentication and bad input", () => {
  test("403 without the admin token; 400 with a catalog code for bad query values", async () => {
    const { get } = await start();
    for (const path of ["bootstrap-readiness", "command-helper", "preview"]) {
      const res = await get(`/api/messenger/admin/bot/${path}`, false);
      expect(res.status).toBe(403);
      expect(res.body.success).toBe(false);
    }
    for (const [path, field] of [
      ["bootstrap-readiness?live=2", "query.live"],
      ["preview?live=yes", "query.live"],
      ["preview?hours=0", "query.hours"],
      ["preview?hours=169", "query.hours"],
      ["preview?hours=1.5", "query.hours"],
      ["preview?limit=101", "query.limit"],
    ] as const) {
      const res = await get(`/api/messenger/admin/bot/${path}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_query");
      expect(res.body.details[0].field).toBe(field);
    }
  });

  test("503 for an operator when the bot token is unset", async () => {
    const { get } = await start({ MESSENGER_BOT_TOKEN: "" });
    const res = await get("/api/messenger/admin/bot/command-helper");
    expect(res.status).toBe(503);
    expect(res.body.error).toBe("messenger_not_configured");
  });
});
