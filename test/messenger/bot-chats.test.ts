// The bot webhook against real Telegram (issue 30, items 1 and 4): updates exactly as Telegram delivers them
// (a JSON POST with X-Telegram-Bot-Api-Secret-Token, core.telegram.org/bots/api#setwebhook) are accepted; the
// spec's literal X-Messenger-Bot-Api-Secret-Token still works; only private chats are answered, and commands
// addressed to another bot (`/help@SomeOtherBot`) are ignored, with the bot's username configured or learnt
// from getMe on the fake Bot API.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestApp } from "../support/app";
import { exitWithin, freePort, spawnHerald, waitForHttp } from "../support/process";
import { createAdminToken } from "../support/partner";
import { BOT_TOKEN, BOT_USERNAME, openMessengerApp, startFakeBotApi, textUpdate, WEBHOOK_SECRET, webhookPost } from "./support";

let h: TestApp | undefined;
let api: ReturnType<typeof startFakeBotApi> | undefined;
afterEach(async () => {
  await h?.close();
  api?.stop();
  h = undefined;
  api = undefined;
});

async function start(env: Record<string, string> = {}) {
  api = startFakeBotApi();
  h = await openMessengerApp({ env: { MESSENGER_BOT_API_BASE: api.url, ...env } });
  return { h, api };
}

const runOutbox = () => h!.ctx.jobs.runNow("messenger-bot-outbox");
const ignoredCounts = () =>
  h!.ctx.store.all("SELECT label, SUM(count) AS n FROM messenger_counters WHERE metric = 'updates_ignored' GROUP BY label ORDER BY label");

/** A private-chat /start as Telegram sends it: every field of the Message, entities included. */
const telegramStart = (updateId: number) => ({
  update_id: updateId,
  message: {
    message_id: 1365,
    from: { id: 1111111, is_bot: false, first_name: "Ada", last_name: "Lovelace", username: "ada", language_code: "en" },
    chat: { id: 1111111, first_name: "Ada", last_name: "Lovelace", username: "ada", type: "private" },
    date: 1767225600,
    text: "/start",
    entities: [{ offset: 0, length: 6, type: "bot_command" }],
  },
});

/** A message in a supergroup (chat ids of supergroups start with -100). */
const groupUpdate = (updateId: number, text: string, type = "supergroup") => ({
  update_id: updateId,
  message: {
    message_id: 17,
    from: { id: 4242, is_bot: false, first_name: "Ada", username: "ada", language_code: "en" },
    chat: { id: -100123, title: "Herald fans", type },
    date: 1767225600,
    text,
    entities: [{ offset: 0, length: text.split(" ")[0]!.length, type: "bot_command" }],
  },
});

describe("POST /api/messenger/webhook as Telegram calls it", () => {
  test("Telegram's delivery (JSON, X-Telegram-Bot-Api-Secret-Token) is accepted and answered", async () => {
    const { h, api } = await start();
    const body = JSON.stringify(telegramStart(880001));
    // The request Telegram's servers make: POST, a JSON body, its Content-Type and Content-Length, the secret.
    const res = await h.json("/api/messenger/webhook", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Content-Length": String(Buffer.byteLength(body)),
        "X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET,
        "Accept-Encoding": "gzip, deflate",
        Connection: "keep-alive",
      },
      body,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, update_id: 880001, duplicate: false, handled: true, ignored_reason: null, replies_queued: 1 });
    await runOutbox();
    expect(api.calls.map((c) => [c.method, c.body.chat_id])).toEqual([["sendMessage", 1111111]]);
    expect(api.calls[0]!.body.text).toContain("Welcome, Ada!");
  });

  test("the spec's literal X-Messenger-Bot-Api-Secret-Token works too; a wrong secret in either is 401", async () => {
    const { h } = await start();
    const spec = await h.json("/api/messenger/webhook", webhookPost(textUpdate("/help"), null, { "x-messenger-bot-api-secret-token": WEBHOOK_SECRET }));
    expect(spec.status).toBe(200);
    for (const header of ["x-telegram-bot-api-secret-token", "x-messenger-bot-api-secret-token"]) {
      const res = await h.json("/api/messenger/webhook", webhookPost(textUpdate("/help"), null, { [header]: `${WEBHOOK_SECRET}x` }));
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("webhook_secret_invalid");
      expect(res.body.message).toContain("X-Telegram-Bot-Api-Secret-Token");
    }
  });

  test("the OpenAPI document declares Telegram's header on the route", async () => {
    const { h } = await start();
    const doc = (await h.json("/api/openapi.json")).body;
    const op = doc.paths["/api/messenger/webhook"].post;
    const names = (op.parameters ?? []).filter((p: any) => p.in === "header").map((p: any) => p.name.toLowerCase());
    expect(names).toContain("x-telegram-bot-api-secret-token");
    expect(op.description).toContain("X-Telegram-Bot-Api-Secret-Token");
  });
});

describe("chat policy: private chats only, commands for this bot only", () => {
  test("group, supergroup and channel updates are acknowledged and recorded, never answered", async () => {
    const { h, api } = await start({ MESSENGER_BOT_USERNAME: BOT_USERNAME });
    const cases = [
      groupUpdate(880101, "/help@SomeOtherBot"),
      groupUpdate(880102, "/help"),
      groupUpdate(880103, `/help@${BOT_USERNAME}`),
      groupUpdate(880104, "/balance", "group"),
      {
        update_id: 880105,
        channel_post: {
          message_id: 3,
          sender_chat: { id: -100777, title: "News", type: "channel" },
          chat: { id: -100777, title: "News", type: "channel" },
          date: 1767225600,
          text: "/help",
        },
      },
    ];
    for (const update of cases) {
      const res = await h.json("/api/messenger/webhook", webhookPost(update));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ duplicate: false, handled: false, replies_queued: 0 });
    }
    await runOutbox();
    expect(api.calls).toEqual([]);
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_bot_outbox")).toEqual({ n: 0 });
    // Recorded: every update is stored (replay suppression), and counted as ignored with its reason.
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_updates WHERE update_id BETWEEN 880101 AND 880105")).toEqual({ n: 5 });
    expect(await ignoredCounts()).toEqual([
      { label: "not_private_chat", n: 4 },
      { label: "unhandled_kind", n: 1 },
    ]);
    // A group /start creates no player either.
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_players")).toEqual({ n: 0 });
  });

  test("in a private chat, /cmd@ThisBot is answered and /cmd@OtherBot is ignored (configured username, any case)", async () => {
    const { h, api } = await start({ MESSENGER_BOT_USERNAME: BOT_USERNAME });
    const hook = async (text: string) => (await h.json("/api/messenger/webhook", webhookPost(textUpdate(text)))).body;
    expect(await hook(`/help@${BOT_USERNAME}`)).toMatchObject({ handled: true, replies_queued: 1 });
    expect(await hook(`/help@${BOT_USERNAME.toLowerCase()}`)).toMatchObject({ handled: true, replies_queued: 1 });
    expect(await hook("/help@SomeOtherBot")).toMatchObject({ handled: false, ignored_reason: "for_another_bot", replies_queued: 0 });
    expect(await hook("/help")).toMatchObject({ handled: true });
    expect(await hook("hello")).toMatchObject({ handled: false, ignored_reason: "not_a_command" });
    expect(api.me.calls).toBe(0); // configured: Telegram is never asked
    await runOutbox();
    expect(api.calls).toHaveLength(3);
    expect(await ignoredCounts()).toEqual([
      { label: "for_another_bot", n: 1 },
      { label: "not_a_command", n: 1 },
    ]);
  });

  test("without MESSENGER_BOT_USERNAME the username is learnt once from getMe, when an addressed command first needs it", async () => {
    const { h, api } = await start();
    const hook = async (text: string) => (await h.json("/api/messenger/webhook", webhookPost(textUpdate(text)))).body;
    expect(await hook("/help")).toMatchObject({ handled: true });
    expect(api.me.calls).toBe(0); // no addressee, no need to ask
    expect(await hook("/help@SomeOtherBot")).toMatchObject({ handled: false, ignored_reason: "for_another_bot" });
    expect(await hook(`/balance@${BOT_USERNAME}`)).toMatchObject({ handled: true, replies_queued: 1 });
    expect(api.me.calls).toBe(1);
  });

  test("herald serve asks getMe once it listens, so the first addressed command finds the username known", async () => {
    api = startFakeBotApi();
    const dir = mkdtempSync(join(tmpdir(), "herald-botname-"));
    const port = freePort();
    const proc = spawnHerald(["serve"], {
      NODE_ENV: "test",
      HOST: "127.0.0.1",
      PORT: String(port),
      HERALD_DB_PATH: join(dir, "herald.db"),
      LOG_LEVEL: "warn",
      JOBS_ENABLED: "0",
      BOOTSTRAP_CREDENTIALS: "0",
      MESSENGER_BOT_TOKEN: BOT_TOKEN,
      MESSENGER_WEBHOOK_SECRET: WEBHOOK_SECRET,
      MESSENGER_BOT_API_BASE: api.url,
    });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`);
      // Asked in the background at start, before any update arrives (bounded wait).
      for (let i = 0; i < 100 && api.me.calls === 0; i++) await Bun.sleep(20);
      expect(api.me.calls).toBe(1);
      const res = await fetch(`http://127.0.0.1:${port}/api/messenger/webhook`, webhookPost(textUpdate(`/help@${BOT_USERNAME}`)));
      expect(((await res.json()) as { handled: boolean }).handled).toBe(true);
      expect(api.me.calls).toBe(1);
    } finally {
      proc.kill("SIGTERM");
      await exitWithin(proc, 10_000);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a getMe that fails leaves addressed commands unanswered, and is asked again only after a minute", async () => {
    const { h, api } = await start();
    api.me.status = 401;
    api.me.body = { ok: false, error_code: 401, description: "Unauthorized" };
    const hook = async (text: string) => (await h.json("/api/messenger/webhook", webhookPost(textUpdate(text)))).body;
    expect(await hook(`/help@${BOT_USERNAME}`)).toMatchObject({ handled: false, ignored_reason: "bot_username_unknown" });
    expect(await hook(`/help@${BOT_USERNAME}`)).toMatchObject({ ignored_reason: "bot_username_unknown" });
    expect(api.me.calls).toBe(1);
    expect(await hook("/help")).toMatchObject({ handled: true }); // unaddressed commands are unaffected
    api.me.status = 200;
    api.me.body = { ok: true, result: { id: 7000000001, is_bot: true, first_name: "Herald", username: BOT_USERNAME } };
    h.clock.advanceSeconds(60);
    expect(await hook(`/help@${BOT_USERNAME}`)).toMatchObject({ handled: true });
    expect(api.me.calls).toBe(2);
  });

  test("ops health reports the ignored updates by reason", async () => {
    const { h } = await start({ MESSENGER_BOT_USERNAME: BOT_USERNAME });
    await h.json("/api/messenger/webhook", webhookPost(groupUpdate(880201, "/help@SomeOtherBot")));
    await h.json("/api/messenger/webhook", webhookPost(textUpdate("/help@SomeOtherBot")));
    const token = await createAdminToken(h);
    const res = await h.json("/api/messenger/ops/health", { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(res.body.updates).toMatchObject({ received: 2, ignored: 2, ignored_by_reason: { not_private_chat: 1, for_another_bot: 1 } });
  });
});
