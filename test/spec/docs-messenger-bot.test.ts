// Docs audit: docs/messenger.md's bot webhook answers and ignored reasons, and docs/messenger-admin-bot.md's
// command helper, against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { openMessengerApp, textUpdate, webhookPost } from "../messenger/support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const hook = (u: unknown, secret?: string | null, headers: Record<string, string> = {}) => h.json("/api/messenger/webhook", webhookPost(u, secret, headers));

describe("docs/messenger.md (bot webhook)", () => {
  // docs/messenger.md:100-172
  test("the documented example, duplicates and every ignored reason", async () => {
    h = await openMessengerApp({ env: { MESSENGER_BOT_USERNAME: "HeraldBot" } });
    const ex = {
      update_id: 1001,
      message: {
        message_id: 7,
        from: { id: 4242, is_bot: false, first_name: "Ada", username: "ada", language_code: "en" },
        chat: { id: 4242, first_name: "Ada", username: "ada", type: "private" },
        date: 1767225600,
        text: "/balance",
        entities: [{ offset: 0, length: 8, type: "bot_command" }],
      },
    };
    const a = await hook(ex);
    expect(a.body).toEqual({ success: true, update_id: 1001, duplicate: false, handled: true, ignored_reason: null, replies_queued: 1 });
    const dup = await hook(ex);
    expect(dup.body).toMatchObject({ duplicate: true, replies_queued: 0 });
    const grp = await hook({ ...ex, update_id: 1002, message: { ...ex.message, chat: { id: -100123, title: "Herald fans", type: "supergroup" } } });
    expect(grp.body).toEqual({ success: true, update_id: 1002, duplicate: false, handled: false, ignored_reason: "not_private_chat", replies_queued: 0 });
    const cases: [string, unknown][] = [
      ["unhandled_kind", { update_id: 2001, edited_message: ex.message }],
      ["from_a_bot", { update_id: 2002, message: { ...ex.message, from: { ...ex.message.from, is_bot: true } } }],
      ["not_a_command", textUpdate("hello", undefined, 2003)],
      ["for_another_bot", textUpdate("/help@SomeOtherBot", undefined, 2004)],
    ];
    for (const [reason, u] of cases) {
      const r = await hook(u);
      expect([reason, r.status, r.body.handled, r.body.ignored_reason]).toEqual([reason, 200, false, reason]);
    }
    const mine = await hook(textUpdate("/help@heraldbot", undefined, 2005));
    expect(mine.body).toMatchObject({ handled: true, replies_queued: 1 });
    const unknown = await hook(textUpdate("/dance", undefined, 2006));
    expect(unknown.body).toMatchObject({ handled: true, replies_queued: 1 });
    const spec = await hook(textUpdate("/help", undefined, 2007), null, { "x-messenger-bot-api-secret-token": "hook_secret-0123456789" });
    expect(spec.status).toBe(200);
    const wrong = await hook(textUpdate("/help", undefined, 2008), "nope");
    expect([wrong.status, wrong.body.error]).toEqual([401, "webhook_secret_invalid"]);
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    const health = (await h.json("/api/messenger/ops/health", { headers: admin })).body;
    expect(health.updates.ignored_by_reason).toMatchObject({ not_private_chat: 1, unhandled_kind: 1, from_a_bot: 1, not_a_command: 1, for_another_bot: 1 });
    expect(health.updates.replays_suppressed).toBe(1);
  });

  // docs/messenger.md:144-146 — without a known username an addressed command is ignored as bot_username_unknown
  test("bot_username_unknown", async () => {
    h = await openMessengerApp({ env: { MESSENGER_BOT_API_BASE: "http://127.0.0.1:9" } });
    const r = await hook(textUpdate("/help@HeraldBot", undefined, 3001));
    expect([r.status, r.body.ignored_reason]).toEqual([200, "bot_username_unknown"]);
    const plain = await hook(textUpdate("/help", undefined, 3002));
    expect(plain.body.handled).toBe(true);
  });

  // docs/messenger-admin-bot.md:113-150 — the command helper
  test("command helper", async () => {
    h = await openMessengerApp();
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    const r = (await h.json("/api/messenger/admin/bot/command-helper", { headers: admin })).body;
    expect(r.commands.map((c: any) => [c.command, c.valid_for_telegram])).toEqual([
      ["start", true],
      ["help", true],
      ["balance", true],
      ["play", true],
    ]);
    expect(r.set_my_commands).toMatchObject({ method: "setMyCommands", endpoint: "https://api.telegram.org/bot<BOT_TOKEN>/setMyCommands" });
    expect(r.set_my_commands.payload.commands.map((c: any) => c.command)).toEqual(["start", "help", "balance", "play"]);
    expect(r.set_my_commands.curl).toContain("'https://api.telegram.org/bot<BOT_TOKEN>/setMyCommands'");
  });
});
