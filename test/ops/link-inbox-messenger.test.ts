// The link inbox's messenger bot target (LINK_INBOX_MESSENGER_CHAT_ID): the same messages, cooldown, retries and
// events as the chat webhooks, sent as the Bot API's sendMessage to a fake Bot API on 127.0.0.1.
import { afterEach, expect, test } from "bun:test";
import { enqueueLinkMessage, linkTargets, messengerTargetLabel } from "../../src/ops/link-inbox/notify";
import { linkInboxSender } from "../../src/ops/link-inbox/outbox";
import { openTestApp, type TestApp } from "../support/app";
import { BOT_TOKEN, startFakeBotApi } from "../messenger/support";

let h: TestApp | undefined;
let bot: ReturnType<typeof startFakeBotApi> | undefined;
afterEach(async () => {
  await h?.close();
  bot?.stop();
  h = undefined;
  bot = undefined;
});

const events = () =>
  h!.ctx.store.all<Record<string, unknown>>(
    "SELECT event, issue_id, target, url, attempt, status_code, status_code_family, skip_reason, error FROM ops_link_events ORDER BY id",
  );

test("a message reaches the configured chat through sendMessage; a failure is retried; the token never shows", async () => {
  bot = startFakeBotApi();
  h = await openTestApp({
    env: {
      MESSENGER_BOT_TOKEN: BOT_TOKEN,
      MESSENGER_BOT_API_BASE: bot.url,
      LINK_INBOX_MESSENGER_CHAT_ID: "-1001234567890",
      LINK_INBOX_RETRY_BASE_SECONDS: "10",
      PUBLIC_BASE_URL: "https://herald.example.com",
    },
  });
  const label = messengerTargetLabel("-1001234567890");
  expect(linkTargets(h.ctx)).toEqual([{ label, url: "", messengerChatId: "-1001234567890" }]);
  bot.answer({ status: 502, body: { ok: false, error_code: 502, description: `Bad Gateway for bot${BOT_TOKEN}` } });
  const link = "https://herald.example.com/admin/status/incidents/7";
  expect(
    await enqueueLinkMessage(h.ctx.store, h.ctx, {
      event: "incident.opened",
      issueId: "incident:7",
      text: `[Herald] Incident opened: Deliveries delayed ${link}`,
      link,
    }),
  ).toEqual({
    queued: 1,
    skipped: 0,
  });
  await linkInboxSender(h.ctx).runOnce();
  h.clock.advance(10_000);
  await linkInboxSender(h.ctx).runOnce();
  expect(bot.calls.map((c) => [c.token, c.method, c.body.chat_id])).toEqual([
    [BOT_TOKEN, "sendMessage", -1001234567890],
    [BOT_TOKEN, "sendMessage", -1001234567890],
  ]);
  expect(bot.calls[1]!.body.text).toContain(link);
  const rows = await events();
  expect(rows.map((r) => [r.target, r.attempt, r.status_code, r.status_code_family])).toEqual([
    [label, 1, 502, "5xx"],
    [label, 2, 200, "2xx"],
  ]);
  const everything = JSON.stringify([rows, await h.ctx.store.all("SELECT * FROM ops_link_outbox")]);
  expect(everything).not.toContain(BOT_TOKEN);
  expect(everything).toContain("<BOT_TOKEN>"); // the Bot API's error text, with the token replaced
  // The cooldown applies to this target like any other.
  expect(
    await enqueueLinkMessage(h.ctx.store, h.ctx, { event: "incident.updated", issueId: "incident:7", text: `[Herald] Incident updated ${link}`, link }),
  ).toEqual({
    queued: 0,
    skipped: 1,
  });
  expect((await events()).at(-1)).toMatchObject({ target: label, skip_reason: "cooldown" });
});

test("without a bot token the chat id adds no target", async () => {
  h = await openTestApp({ env: { LINK_INBOX_MESSENGER_CHAT_ID: "@herald_ops" } });
  expect(linkTargets(h.ctx)).toEqual([]);
});
