import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { startFakeBotApi } from "../messenger/support";
import { TARGET } from "../support/target";
import { eventually, expectRefusal, row, rows, signInitData, startE2E, type E2E } from "./support";

// The Telegram mini-app and its bot, end to end (docs/messenger.md): a player's init data signed with the bot token
// as Telegram signs it, the catalog, the wheel until the daily spin is used up — every spin recomputed from the
// revealed seed — the game ledger against the balances, and the bot webhook with the spec's secret header, whose
// reply leaves through the outbox to a fake Bot API on 127.0.0.1 (the outbox job runs in this process, as the
// served target has its jobs off).

const BOT_TOKEN = "7000000042:AAE_e2e-token_0123456789abcdefghijk";
const WEBHOOK_SECRET = "e2e_webhook_secret-0123456789";
const PLAYER = { id: 77001, first_name: "Ada", username: "ada_e2e", language_code: "en" };

let e: E2E;
/** Spins played (one game-ledger row each). */
let spinsPlayed = 0;
let bot: ReturnType<typeof startFakeBotApi>;
beforeAll(async () => {
  bot = startFakeBotApi();
  e = await startE2E({
    MESSENGER_BOT_TOKEN: BOT_TOKEN,
    MESSENGER_WEBHOOK_SECRET: WEBHOOK_SECRET,
    MESSENGER_BOT_USERNAME: "HeraldE2EBot",
    MESSENGER_BOT_API_BASE: bot.url,
  });
});
afterAll(async () => {
  await e?.stop();
  bot?.stop();
});

const initData = (user: Record<string, unknown> = PLAYER) => signInitData(BOT_TOKEN, user, Math.floor(e.h.clock.now().getTime() / 1000));
const tma = (body: unknown = {}, data = initData()): RequestInit => ({
  method: "POST",
  headers: { authorization: `tma ${data}`, "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** The documented fairness function: floor(first 52 bits of HMAC(server_seed, "client:nonce:cursor") · n / 2^52). */
function fairInt(serverSeed: string, clientSeed: string, nonce: number, cursor: number, n: number): number {
  const d = createHmac("sha256", serverSeed).update(`${clientSeed}:${nonce}:${cursor}`).digest("hex");
  return Number((BigInt(`0x${d.slice(0, 13)}`) * BigInt(n)) >> 52n);
}

describe(`messenger over HTTP (${TARGET.label})`, () => {
  test("init data: verified and the player created; a tampered or missing one is refused", async () => {
    const ok = await e.h.json("/api/messenger/init/verify", tma());
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      success: true,
      identity: { telegram_user_id: PLAYER.id, username: PLAYER.username, scheme: "hmac" },
      player: { telegram_user_id: PLAYER.id, first_name: "Ada", linked_user_id: null },
      balances: { free_spin_balance: 0, missile_balance: 0, points_balance: 0 },
    });
    expect(await row(e.h, "SELECT count(*) AS n FROM messenger_players WHERE telegram_user_id = ?", PLAYER.id)).toEqual({ n: 1 });

    const tampered = initData().replace("ada_e2e", "eve_e2e");
    expectRefusal(await e.h.json("/api/messenger/init/verify", tma({}, tampered)), 401, "init_data_signature_invalid");
    const otherBot = signInitData("7000000043:AAE_other-token_0123456789abcdefghij", PLAYER, Math.floor(e.h.clock.now().getTime() / 1000));
    expectRefusal(await e.h.json("/api/messenger/init/verify", tma({}, otherBot)), 401, "init_data_signature_invalid");
    const missing = await e.h.json("/api/messenger/init/verify", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expectRefusal(missing, 401, "init_data_missing");
  });

  test("the catalog, with init data in the query", async () => {
    const cat = await e.h.json(`/api/messenger/games/catalog?init_data=${encodeURIComponent(initData())}`);
    expect(cat.status).toBe(200);
    expect(cat.body.games.map((g: { game_key: string }) => g.game_key)).toEqual(expect.arrayContaining(["spin_wheel", "recon_grid"]));
    expect(cat.body.games.find((g: { game_key: string }) => g.game_key === "spin_wheel")).toMatchObject({ available: true });
    expect(cat.body.items.map((i: { item_key: string; price_points: number }) => [i.item_key, i.price_points])).toEqual(
      expect.arrayContaining([
        ["spin_play", 50],
        ["missile", 20],
      ]),
    );
  });

  test("the wheel: spins until the cooldown, a replayed request id changes nothing, every spin recomputes from the revealed seed", async () => {
    const status = await e.h.json("/api/messenger/games/spin-wheel/status", tma());
    expect(status.body).toMatchObject({ available: true, free_spin_available: true, campaign: { campaign_key: expect.any(String) } });
    const weights = (status.body.campaign.segments as Array<{ weight: number }>).map((s) => s.weight);
    const hash = status.body.fairness.server_seed_hash as string;

    const first = await e.h.json("/api/messenger/games/spin-wheel/play", tma({ request_id: "e2e-spin-0000" }));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ replayed: false, spin: { paid_with: "daily_free_spin", fairness: { server_seed_hash: hash, nonce: 0 } } });
    const replay = await e.h.json("/api/messenger/games/spin-wheel/play", tma({ request_id: "e2e-spin-0000" }));
    expect(replay.body).toMatchObject({ replayed: true, spin: { id: first.body.spin.id }, ledger_entry_id: first.body.ledger_entry_id });

    // Spins in hand won by a spin are played too; the daily spin is not due again: bounded, and it must end in 409.
    const spins = [first.body.spin];
    let refused: { status: number; body: any; headers: Headers } | null = null;
    for (let i = 1; i <= 30 && !refused; i++) {
      const r = await e.h.json("/api/messenger/games/spin-wheel/play", tma({ request_id: `e2e-spin-${String(i).padStart(4, "0")}` }));
      if (r.status === 200) spins.push(r.body.spin);
      else refused = r;
    }
    spinsPlayed = spins.length;
    expect(refused).not.toBeNull();
    expectRefusal(refused!, 409, "game_cooldown");
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0);

    // Rotating with a client seed reveals the server seed the spins used.
    const rotated = await e.h.json(
      "/api/messenger/games/spin-wheel/status",
      tma({ client_seed: "e2e-client-seed", next_server_seed_hash: status.body.fairness.next_server_seed_hash }),
    );
    expect(rotated.status).toBe(200);
    const revealed = rotated.body.revealed_seed as { server_seed: string; server_seed_hash: string; client_seed: string; nonces_used: number };
    expect(revealed.server_seed_hash).toBe(hash);
    expect(createHash("sha256").update(revealed.server_seed).digest("hex")).toBe(hash);
    expect(revealed.nonces_used).toBe(spins.length);
    const total = weights.reduce((s, w) => s + w, 0);
    for (const spin of spins) {
      const r = fairInt(revealed.server_seed, revealed.client_seed, spin.fairness.nonce, 0, total);
      let acc = 0;
      const segment = weights.findIndex((w) => (acc += w) > r);
      expect({ nonce: spin.fairness.nonce, segment: spin.segment_index }).toEqual({ nonce: spin.fairness.nonce, segment });
    }
  });

  test("the game ledger: balances are the sum of the player's ledger rows; a purchase past the points is refused", async () => {
    // 100 × 50 points: more than 31 spins of at most 100 points can have won.
    const too = await e.h.json("/api/messenger/games/items/purchase", tma({ request_id: "e2e-buy-0001", item_key: "spin_play", quantity: 100 }));
    expectRefusal(too, 409, "game_balance_insufficient");
    const player = await row<{ free_spin_balance: number; missile_balance: number; points_balance: number }>(
      e.h,
      "SELECT free_spin_balance, missile_balance, points_balance FROM messenger_players WHERE telegram_user_id = ?",
      PLAYER.id,
    );
    const sums = await row(
      e.h,
      "SELECT count(*) AS n, coalesce(sum(free_spin_delta), 0) AS free_spin_balance, coalesce(sum(missile_delta), 0) AS missile_balance, coalesce(sum(points_delta), 0) AS points_balance FROM messenger_ledger WHERE telegram_user_id = ?",
      PLAYER.id,
    );
    // One row per action that changed something: the spins; the replay and the refused purchase wrote nothing.
    expect(sums).toEqual({ n: spinsPlayed, ...player });
    const verify = await e.h.json("/api/messenger/init/verify", tma());
    expect(verify.body.balances).toEqual(player);
  });

  test("the bot webhook with X-Messenger-Bot-Api-Secret-Token: a command queues a reply the outbox sends; a redelivery is a duplicate", async () => {
    const update = {
      update_id: 990001,
      message: {
        message_id: 1,
        date: Math.floor(e.h.clock.now().getTime() / 1000),
        chat: { id: PLAYER.id, type: "private" },
        from: { ...PLAYER, is_bot: false },
        text: "/balance",
      },
    };
    const post = (body: unknown, secret: string | null) =>
      e.h.json("/api/messenger/webhook", {
        method: "POST",
        headers: { "content-type": "application/json", ...(secret === null ? {} : { "x-messenger-bot-api-secret-token": secret }) },
        body: JSON.stringify(body),
      });
    expectRefusal(await post(update, null), 401, "webhook_secret_invalid");
    expectRefusal(await post(update, "wrong-secret"), 401, "webhook_secret_invalid");

    const handled = await post(update, WEBHOOK_SECRET);
    expect(handled.status).toBe(200);
    expect(handled.body).toEqual({ success: true, update_id: 990001, duplicate: false, handled: true, ignored_reason: null, replies_queued: 1 });
    expect((await post(update, WEBHOOK_SECRET)).body).toMatchObject({ duplicate: true, replies_queued: 0 });
    const group = { update_id: 990002, message: { ...update.message, chat: { id: -100123, title: "fans", type: "supergroup" } } };
    expect((await post(group, WEBHOOK_SECRET)).body).toMatchObject({ handled: false, ignored_reason: "not_private_chat", replies_queued: 0 });

    expect(await rows(e.h, "SELECT chat_id, method, status FROM messenger_bot_outbox WHERE update_id = 990001")).toEqual([
      { chat_id: PLAYER.id, method: "sendMessage", status: "pending" },
    ]);
    const run = await e.h.ctx.jobs.runNow("messenger-bot-outbox");
    expect(run.ok).toBe(true);
    const call = await eventually("the reply at the Bot API", () => bot.calls.find((c) => c.body.chat_id === PLAYER.id));
    expect(call).toMatchObject({ token: BOT_TOKEN, method: "sendMessage" });
    expect(String(call.body.text)).toMatch(/spin|missile|point/i);
    expect(await row(e.h, "SELECT status FROM messenger_bot_outbox WHERE update_id = 990001")).toEqual({ status: "sent" });
  });
});
