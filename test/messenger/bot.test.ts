// The bot webhook and its outbox (issue 18, Bot webhook): the secret header, durable update_id replay
// suppression, the four commands, and the outbox job sending to a fake Bot API on 127.0.0.1 with retries,
// 429 retry_after and dead letters.
import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { BOT_TOKEN, openMessengerApp, startFakeBotApi, textUpdate, webhookPost } from "./support";

let h: TestApp;
let api: ReturnType<typeof startFakeBotApi>;
afterEach(async () => {
  await h?.close();
  api?.stop();
});

const start = async (env: Record<string, string> = {}) => {
  api = startFakeBotApi();
  h = await openMessengerApp({ env: { MESSENGER_BOT_API_BASE: api.url, ...env } });
};
const hook = (update: unknown, secret?: string | null) => h.json("/api/messenger/webhook", webhookPost(update, secret));
const runOutbox = () => h.ctx.jobs.runNow("messenger-bot-outbox");
const outbox = () => h.ctx.store.all<Record<string, any>>("SELECT id, status, attempts, next_attempt_at, last_error FROM messenger_bot_outbox ORDER BY id");

describe("POST /api/messenger/webhook", () => {
  test("the secret header is required and compared exactly", async () => {
    await start();
    for (const secret of [null, "wrong", "hook_secret-012345678", "hook_secret-01234567890"]) {
      const res = await hook(textUpdate("/help"), secret);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("webhook_secret_invalid");
    }
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_updates")).toEqual({ n: 0 });
  });

  test("a repeated update_id is acknowledged and not processed twice, also after a restart of the app", async () => {
    await start();
    const update = textUpdate("/help");
    const first = await hook(update);
    expect(first.body).toMatchObject({ success: true, update_id: update.update_id, duplicate: false, replies_queued: 1 });
    const again = await hook(update);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true, replies_queued: 0 });
    expect(await outbox()).toHaveLength(1);
    // Durable: a new app over the same database file still knows the update.
    const { buildApp } = await import("../../src/app");
    const second = buildApp(h.ctx);
    const res = await second.handle(new Request("http://localhost/api/messenger/webhook", webhookPost(update)));
    expect(((await res.json()) as any).duplicate).toBe(true);
    const counters = await h.ctx.store.all(
      "SELECT metric, SUM(count) AS n FROM messenger_counters WHERE metric LIKE 'updates_%' GROUP BY metric ORDER BY metric",
    );
    expect(counters).toEqual([
      { metric: "updates_received", n: 1 },
      { metric: "updates_replayed", n: 2 },
    ]);
  });

  test("/start, /help, /balance and /play reply through the outbox to the Bot API", async () => {
    await start();
    for (const text of ["/start", "/help", "/balance", "/play@HeraldBot", "/nope"]) expect((await hook(textUpdate(text))).status).toBe(200);
    // Plain text and non-message updates are recorded and acknowledged without a reply.
    expect((await hook(textUpdate("hello"))).body.replies_queued).toBe(0);
    expect((await hook({ update_id: 99, callback_query: { id: "1" } })).body.replies_queued).toBe(0);
    expect(api.calls).toHaveLength(0); // nothing was sent while answering the webhook
    const run = await runOutbox();
    expect(run.ok).toBe(true);
    expect(api.calls.map((c) => c.method)).toEqual(["sendMessage", "sendMessage", "sendMessage", "sendMessage", "sendMessage"]);
    expect(api.calls.every((c) => c.token === BOT_TOKEN && c.body.chat_id === 4242)).toBe(true);
    const texts = api.calls.map((c) => c.body.text as string);
    expect(texts[0]).toContain("Welcome, Ada!");
    expect(texts[1]).toContain("/balance");
    expect(texts[2]).toBe("Free spins: 0\nMissiles: 0\nPoints: 0");
    expect(texts[3]).toContain("Spin wheel: free spin available now");
    expect(texts[4]).toContain("Unknown command /nope");
    expect((await outbox()).every((r) => r.status === "sent")).toBe(true);
    // /start created the player.
    expect(await h.ctx.store.get("SELECT username FROM messenger_players WHERE telegram_user_id = 4242")).toEqual({ username: "ada" });
    // No MESSENGER_MINI_APP_URL: no button on any reply.
    expect(api.calls.filter((c) => "reply_markup" in c.body)).toEqual([]);
  });

  test("with MESSENGER_MINI_APP_URL, /start and /play carry a web_app button to the page; the other replies none", async () => {
    const page = "https://play.example.com/app";
    await start({ MESSENGER_MINI_APP_URL: page });
    for (const text of ["/start promo_NOPE", "/play", "/help", "/balance"]) expect((await hook(textUpdate(text))).status).toBe(200);
    expect((await runOutbox()).ok).toBe(true);
    const sent = api.calls.map((c) => ({ text: (c.body.text as string).split("\n")[0], markup: c.body.reply_markup ?? null }));
    const button = { inline_keyboard: [[{ text: "Open the mini-app", web_app: { url: page } }]] };
    expect(sent).toEqual([
      { text: "Welcome, Ada!", markup: button },
      { text: `Promo NOPE could not be applied: No promo "NOPE".`, markup: null },
      { text: "Open the mini-app to play:", markup: button },
      { text: "Commands:", markup: null },
      { text: "Free spins: 0", markup: null },
    ]);
    expect((await outbox()).every((r) => r.status === "sent")).toBe(true);
  });

  test("429 retry_after is honoured, 5xx backs off, a 403 (bot blocked) is dead at once", async () => {
    await start();
    await hook(textUpdate("/help"));
    api.answer({ status: 429, body: { ok: false, error_code: 429, description: "Too Many Requests: retry after 7", parameters: { retry_after: 7 } } });
    await runOutbox();
    let row = (await outbox())[0]!;
    expect(row).toMatchObject({ status: "pending", attempts: 1 });
    expect(Date.parse(row.next_attempt_at) - h.clock.now().getTime()).toBe(7000);
    await runOutbox(); // not due yet: nothing sent
    expect(api.calls).toHaveLength(1);
    h.clock.advanceSeconds(7);
    api.answer({ status: 502, body: { ok: false, description: "Bad Gateway" } });
    await runOutbox();
    row = (await outbox())[0]!;
    expect(row).toMatchObject({ status: "pending", attempts: 2 });
    expect(Date.parse(row.next_attempt_at) - h.clock.now().getTime()).toBe(10_000);
    h.clock.advanceSeconds(10);
    await runOutbox();
    expect((await outbox())[0]).toMatchObject({ status: "sent", attempts: 3 });
    await hook(textUpdate("/help"));
    api.answer({ status: 403, body: { ok: false, error_code: 403, description: "Forbidden: bot was blocked by the user" } });
    await runOutbox();
    expect((await outbox())[1]).toMatchObject({ status: "dead", attempts: 1, last_error: "403 Forbidden: bot was blocked by the user" });
    const errors = await h.ctx.store.all("SELECT label, SUM(count) AS n FROM messenger_counters WHERE metric = 'bot_api_errors' GROUP BY label ORDER BY label");
    expect(errors).toEqual([
      { label: "403", n: 1 },
      { label: "429", n: 1 },
      { label: "502", n: 1 },
    ]);
  });

  test("an unreachable Bot API keeps the reply pending with backoff", async () => {
    api = startFakeBotApi();
    const closed = api.url;
    api.stop();
    h = await openMessengerApp({ env: { MESSENGER_BOT_API_BASE: closed } });
    await hook(textUpdate("/balance"));
    await runOutbox();
    expect((await outbox())[0]).toMatchObject({ status: "pending", attempts: 1, last_error: expect.stringContaining("network") });
  });
});
