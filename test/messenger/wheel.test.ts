// Spin wheel, catalog and item purchases (issue 18, Economy and games): the game ledger (idempotent by request
// id, never negative, concurrent plays), the weighted draw over 10,000 seeded spins, and provable fairness
// recomputed from revealed seeds by an independent implementation (WebCrypto, plain Number arithmetic) — with the
// server seed committed (its hash published) before the player's client seed exists (issue 30, item 2).
import { afterEach, describe, expect, test } from "bun:test";
import { applyAction } from "../../src/messenger/ledger";
import { WHEEL_CAMPAIGN } from "../../src/messenger/catalog";
import { pickWeighted } from "../../src/messenger/games/fair";
import type { TestApp } from "../support/app";
import { seededRng } from "../support/clock";
import { openMessengerApp, initDataFor, tmaPost } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const PLAYER = 4242;
const post = (path: string, body: Record<string, unknown> = {}) => h.json(path, tmaPost(initDataFor(h, { id: PLAYER, username: "ada" }), body));
let seq = 0;
const rid = () => `req-${++seq}-${Date.now()}`;

/** Credits the player through the real ledger verb (what a promo or mission reward does). */
async function credit(deltas: { freeSpins?: number; missiles?: number; points?: number }) {
  await applyAction(h.ctx, { telegramUserId: PLAYER, requestId: rid(), action: "test.credit", inputs: deltas, gameKey: null }, async () => ({
    deltas: { freeSpins: deltas.freeSpins ?? 0, missiles: deltas.missiles ?? 0, points: deltas.points ?? 0 },
    result: {},
  }));
}

async function ledgerMatchesBalances() {
  const db = h.ctx.store;
  const sum = (await db.get(
    "SELECT SUM(free_spin_delta) AS s, SUM(missile_delta) AS m, SUM(points_delta) AS p FROM messenger_ledger WHERE telegram_user_id = ?",
    [PLAYER],
  )) as any;
  const p = (await db.get("SELECT free_spin_balance AS s, missile_balance AS m, points_balance AS p FROM messenger_players WHERE telegram_user_id = ?", [
    PLAYER,
  ])) as any;
  expect(p).toEqual({ s: sum.s ?? 0, m: sum.m ?? 0, p: sum.p ?? 0 });
  expect(p.s >= 0 && p.m >= 0 && p.p >= 0).toBe(true);
}

/** Independent recomputation (docs/messenger.md): WebCrypto HMAC, the first 13 hex digits, floor(x · total / 2^52). */
async function recompute(
  serverSeed: string,
  clientSeed: string,
  nonce: number,
  weights: number[] = WHEEL_CAMPAIGN.segments.map((s) => s.weight),
): Promise<number> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(serverSeed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(`${clientSeed}:${nonce}:0`)));
  const hex = [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
  const x = parseInt(hex.slice(0, 13), 16); // < 2^52: exact in a double
  const total = weights.reduce((a, b) => a + b, 0);
  const r = Math.floor((x / 2 ** 52) * total);
  let acc = 0;
  return weights.findIndex((w) => r < (acc += w));
}

async function sha256Hex(text: string) {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("spin wheel", () => {
  test("status, the daily free spin, the cooldown, then spins in hand", async () => {
    h = await openMessengerApp();
    const status = await post("/api/messenger/games/spin-wheel/status");
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ available: true, free_spin_available: true, free_spin_balance: 0, campaign: { campaign_key: "wheel-default" } });
    expect(status.body.fairness.server_seed_hash).toMatch(/^[0-9a-f]{64}$/);
    const first = await post("/api/messenger/games/spin-wheel/play", { request_id: rid() });
    expect(first.status).toBe(200);
    expect(first.body.spin.paid_with).toBe("daily_free_spin");
    expect(first.body.spin.fairness).toEqual({
      server_seed_hash: status.body.fairness.server_seed_hash,
      client_seed: status.body.fairness.client_seed,
      nonce: 0,
      committed_at: status.body.fairness.committed_at,
    });
    const reward = WHEEL_CAMPAIGN.segments[first.body.spin.segment_index]!.reward;
    expect(first.body.balances).toEqual({ free_spin_balance: reward.free_spins, missile_balance: reward.missiles, points_balance: reward.points });
    if (reward.free_spins === 0) {
      const second = await post("/api/messenger/games/spin-wheel/play", { request_id: rid() });
      expect(second.status).toBe(409);
      expect(second.body.error).toBe("game_cooldown");
      expect(second.headers.get("retry-after")).toBe("86400");
    }
    h.clock.advanceSeconds(86_400);
    expect((await post("/api/messenger/games/spin-wheel/play", { request_id: rid() })).body.spin.paid_with).toBe("daily_free_spin");
    await ledgerMatchesBalances();
  });

  test("a repeated request_id replays the stored answer; another action with it is request_id_reused", async () => {
    h = await openMessengerApp();
    const id = rid();
    const a = await post("/api/messenger/games/spin-wheel/play", { request_id: id });
    const b = await post("/api/messenger/games/spin-wheel/play", { request_id: id });
    expect(b.status).toBe(200);
    expect(b.body.replayed).toBe(true);
    expect(b.body.spin).toEqual(a.body.spin);
    expect(b.body.balances).toEqual(a.body.balances);
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_spins")).toEqual({ n: 1 });
    const other = await post("/api/messenger/games/items/purchase", { request_id: id, item_key: "missile" });
    expect(other.status).toBe(422);
    expect(other.body.error).toBe("request_id_reused");
  });

  test("provably fair: the seed is committed before the client seed, and every spin recomputes from the published answers only", async () => {
    h = await openMessengerApp();
    await credit({ freeSpins: 40 });
    // Everything the player was shown, in the order it was shown: the verification below reads nothing else.
    const published: any[] = [];
    const show = async (path: string, body: Record<string, unknown> = {}) => {
      const r = await post(path, body);
      expect([path, r.status]).toEqual([path, 200]);
      published.push(r.body);
      return r.body;
    };
    const first = await show("/api/messenger/games/spin-wheel/status");
    expect(first.fairness.next_server_seed_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(first.fairness.next_server_seed_hash).not.toBe(first.fairness.server_seed_hash);
    h.clock.advanceSeconds(30);
    await show("/api/messenger/games/spin-wheel/status", { client_seed: "my-lucky-seed", next_server_seed_hash: first.fairness.next_server_seed_hash });
    for (let i = 0; i < 30; i++) await show("/api/messenger/games/spin-wheel/play", { request_id: rid() });
    h.clock.advanceSeconds(30);
    const rotated = await show("/api/messenger/games/spin-wheel/status", { client_seed: "next-seed" });

    // The verifier of docs/messenger.md, over the published answers only.
    const revealed = rotated.revealed_seed;
    expect(revealed).toMatchObject({ client_seed: "my-lucky-seed", nonces_used: 30 });
    expect(await sha256Hex(revealed.server_seed)).toBe(revealed.server_seed_hash);
    // The hash was published as the NEXT seed in an answer before the one that took the client seed …
    const committedIn = published.findIndex((a) => a.fairness?.next_server_seed_hash === revealed.server_seed_hash);
    const clientSeedIn = published.findIndex((a) => a.fairness?.server_seed_hash === revealed.server_seed_hash && a.fairness.client_seed === "my-lucky-seed");
    expect([committedIn, clientSeedIn]).toEqual([0, 1]);
    // … and the timestamps say the same.
    expect(revealed.committed_at).toBe(published[committedIn].fairness.next_committed_at);
    expect(revealed.client_seed_set_at).toBe(published[clientSeedIn].fairness.client_seed_set_at);
    expect(Date.parse(revealed.committed_at)).toBeLessThan(Date.parse(revealed.client_seed_set_at));
    // Every spin on that pair recomputes, with the weights the status published.
    const weights = published[0].campaign.segments.map((s: { weight: number }) => s.weight);
    const spins = published.filter((a) => a.spin?.fairness.server_seed_hash === revealed.server_seed_hash).map((a) => a.spin);
    expect(spins.map((s) => s.fairness.nonce)).toEqual([...Array(30).keys()]);
    for (const s of spins) {
      expect(s.fairness).toMatchObject({ client_seed: "my-lucky-seed", committed_at: revealed.committed_at });
      expect(await recompute(revealed.server_seed, s.fairness.client_seed, s.fairness.nonce, weights)).toBe(s.segment_index);
    }
    // The rotation itself used the seed committed in the answer before it, and committed a new one.
    expect(rotated.fairness.server_seed_hash).toBe(published[1].fairness.next_server_seed_hash);
    expect(rotated.fairness.next_server_seed_hash).not.toBe(rotated.fairness.server_seed_hash);
    expect(rotated.revealed_seeds[0].server_seed).toBe(revealed.server_seed);
    await ledgerMatchesBalances();
  });

  test("a client seed is refused until a next seed was committed in an earlier answer, and against another commitment", async () => {
    h = await openMessengerApp();
    const early = await post("/api/messenger/games/spin-wheel/status", { client_seed: "chosen-first" });
    expect([early.status, early.body.error, early.body.details]).toEqual([409, "game_state_conflict", { next_server_seed_hash: null }]);
    expect(early.body.message).toContain("next_server_seed_hash");
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_seeds")).toEqual({ n: 0 });
    const status = await post("/api/messenger/games/spin-wheel/status");
    const next = status.body.fairness.next_server_seed_hash;
    const stale = await post("/api/messenger/games/spin-wheel/status", { client_seed: "chosen", next_server_seed_hash: "0".repeat(64) });
    expect([stale.status, stale.body.error, stale.body.details]).toEqual([409, "game_state_conflict", { next_server_seed_hash: next }]);
    const bad = await post("/api/messenger/games/spin-wheel/status", { client_seed: "chosen", next_server_seed_hash: "XYZ" });
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_payload"]);
    // Reading the status again publishes the same commitment; nothing rotates until the client seed is sent.
    expect((await post("/api/messenger/games/spin-wheel/status")).body.fairness.next_server_seed_hash).toBe(next);
    const ok = await post("/api/messenger/games/spin-wheel/status", { client_seed: "chosen" });
    expect(ok.body.fairness).toMatchObject({ server_seed_hash: next, client_seed: "chosen", next_nonce: 0 });
    expect(ok.body.revealed_seed.server_seed_hash).toBe(status.body.fairness.server_seed_hash);
  });

  test("10,000 seeded draws land within tolerance of the weights", () => {
    const rng = seededRng("wheel-maths");
    const weights = WHEEL_CAMPAIGN.segments.map((s) => s.weight);
    const total = weights.reduce((a, b) => a + b, 0);
    const counts = weights.map(() => 0);
    const N = 10_000;
    const serverSeed = Buffer.from(rng.bytes(32)).toString("hex");
    for (let nonce = 0; nonce < N; nonce++) counts[pickWeighted(weights, serverSeed, "client", nonce)]!++;
    weights.forEach((w, i) => {
      const p = w / total;
      const sigma = Math.sqrt(N * p * (1 - p));
      expect(Math.abs(counts[i]! - N * p)).toBeLessThan(4 * sigma);
    });
  });

  test("concurrent plays never drive a balance negative or pay twice", async () => {
    h = await openMessengerApp();
    await credit({ freeSpins: 5 });
    const sameId = rid();
    const answers = await Promise.all([
      ...Array.from({ length: 30 }, () => post("/api/messenger/games/spin-wheel/play", { request_id: rid() })),
      ...Array.from({ length: 10 }, () => post("/api/messenger/games/spin-wheel/play", { request_id: sameId })),
    ]);
    const ok = answers.filter((a) => a.status === 200 && !a.body.replayed);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.every((a) => a.status === 409 && a.body.error === "game_cooldown")).toBe(true);
    const spinsWon = ok.reduce((n, a) => n + a.body.spin.reward.free_spins, 0);
    expect(ok.length).toBe(Math.min(1 + 5 + spinsWon, 31));
    const spins = (await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_spins")) as { n: number };
    expect(spins.n).toBe(ok.length);
    await ledgerMatchesBalances();
  });
});

describe("catalog and items", () => {
  test("GET and POST catalog list the games with availability and the items", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: PLAYER });
    const viaGet = await h.json(`/api/messenger/games/catalog?init_data=${encodeURIComponent(init)}`);
    expect(viaGet.status).toBe(200);
    expect(viaGet.body.games.map((g: any) => [g.game_key, g.available])).toEqual([
      ["spin_wheel", true],
      ["recon_grid", true],
    ]);
    expect(viaGet.body.items.map((i: any) => i.item_key)).toEqual(["spin_play", "missile"]);
    const viaPost = await post("/api/messenger/games/catalog");
    expect(viaPost.body.games).toEqual(viaGet.body.games);
  });

  test("a purchase is paid in points, refused without enough, and idempotent", async () => {
    h = await openMessengerApp();
    const poor = await post("/api/messenger/games/items/purchase", { request_id: rid(), item_key: "spin_play", quantity: 2 });
    expect(poor.status).toBe(409);
    expect(poor.body).toMatchObject({ error: "game_balance_insufficient", details: { balance: "points_balance", has: 0, required: 100 } });
    await credit({ points: 130 });
    const id = rid();
    const bought = await post("/api/messenger/games/items/purchase", { request_id: id, item_key: "spin_play", quantity: 2 });
    expect(bought.status).toBe(200);
    expect(bought.body.balances).toEqual({ free_spin_balance: 2, missile_balance: 0, points_balance: 30 });
    const again = await post("/api/messenger/games/items/purchase", { request_id: id, item_key: "spin_play", quantity: 2 });
    expect(again.body).toMatchObject({ replayed: true, balances: { points_balance: 30 } });
    const bad = await post("/api/messenger/games/items/purchase", { request_id: rid(), item_key: "spin_play", quantity: 0 });
    expect(bad.status).toBe(400);
    await ledgerMatchesBalances();
  });
});
