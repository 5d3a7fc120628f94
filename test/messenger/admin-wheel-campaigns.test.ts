// Wheel campaigns (issue 19): validated segment tables with their expected value, audience and window, the
// player's wheel (status, play, cooldown, the recorded campaign_key) following the campaign, provable fairness
// over the campaign's weights, and 10,000 real plays on a custom campaign landing within tolerance of its weights.
import { afterEach, describe, expect, test } from "bun:test";
import { pickWeighted } from "../../src/messenger/games/fair";
import { applyAction } from "../../src/messenger/ledger";
import { playWheel } from "../../src/messenger/games/wheel";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { openMessengerApp, initDataFor, tmaPost } from "./support";

let h: TestApp;
let admin: string;
afterEach(async () => {
  await h?.close();
});

const setup = async () => {
  h = await openMessengerApp();
  admin = await createAdminToken(h);
};
const BASE = "/api/messenger/admin/games/wheel-campaigns";
const adminPost = (body: unknown) => h.json(BASE, jsonInit("POST", body, { authorization: `Bearer ${admin}` }));
const adminGet = (query = "") => h.json(`${BASE}${query}`, { headers: { authorization: `Bearer ${admin}` } });
const as = (id: number, path: string, body: Record<string, unknown> = {}, user: Record<string, unknown> = {}) =>
  h.json(path, tmaPost(initDataFor(h, { id, ...user }), body));
const at = (seconds: number) => new Date(h.clock.now().getTime() + seconds * 1000).toISOString();
let seq = 0;
const rid = () => `wheel-cfg-${++seq}`;

async function credit(telegramUserId: number, freeSpins: number) {
  await applyAction(h.ctx, { telegramUserId, requestId: rid(), action: "test.credit", inputs: { freeSpins }, gameKey: null }, async () => ({
    deltas: { freeSpins, missiles: 0, points: 0 },
    result: {},
  }));
}

const SEGMENTS = [
  { label: "Jackpot", weight: 1, reward: { points: 1000 } },
  { label: "Missiles", weight: 3, reward: { missiles: 2 } },
  { label: "Spin", weight: 6, reward: { free_spins: 1, points: 5 } },
];
const premiumWheel = (extra: Record<string, unknown> = {}) => ({
  campaign_key: "vip-wheel",
  title: "VIP wheel",
  audience_group: "premium",
  cooldown_seconds: 3600,
  segments: SEGMENTS,
  ...extra,
});

describe("wheel campaigns", () => {
  test("created with its expected value per spin, listed beside the default, audited", async () => {
    await setup();
    const made = await adminPost(premiumWheel({ ends_at: at(7 * 86_400) }));
    expect(made.status).toBe(200);
    expect(made.body.created).toBe(true);
    expect(made.body.campaign).toMatchObject({ campaign_key: "vip-wheel", audience_group: "premium", enabled: true, active_now: true, cooldown_seconds: 3600 });
    // points (1·1000 + 6·5)/10 = 103; missiles 3·2/10 = 3/5; free spins 6/10 = 3/5.
    expect(made.body.campaign.expected_value).toEqual({
      total_weight: 10,
      free_spins: { numerator: 3, denominator: 5, decimal: "0.600000" },
      missiles: { numerator: 3, denominator: 5, decimal: "0.600000" },
      points: { numerator: 103, denominator: 1, decimal: "103.000000" },
    });
    expect(made.body.campaign.segments[0]).toEqual({ label: "Jackpot", weight: 1, reward: { free_spins: 0, missiles: 0, points: 1000 } });
    const rows = await h.ctx.store.all("SELECT target FROM admin_audit WHERE action = 'messenger.wheel_campaign.create'");
    expect(rows).toEqual([{ target: "vip-wheel" }]);

    const list = await adminGet();
    expect(list.status).toBe(200);
    expect(list.body.campaigns.map((c: any) => c.campaign_key)).toEqual(["vip-wheel"]);
    // The built-in wheel: 10·40 + 25·25 + 100·5 = 1525 points over a total weight of 100.
    expect(list.body.default_campaign).toMatchObject({
      campaign_key: "wheel-default",
      expected_value: { points: { numerator: 61, denominator: 4, decimal: "15.250000" } },
    });
    await adminPost(premiumWheel({ campaign_key: "linked-wheel", audience_group: "linked" }));
    const page = await adminGet("?limit=1");
    expect([page.body.count, page.body.pagination.has_more, page.body.pagination.next_offset]).toEqual([1, true, 1]);
  });

  test("weights, segment count, cooldown, keys, audience and overlapping windows are refused with their codes", async () => {
    await setup();
    const zero = await adminPost(premiumWheel({ segments: [{ label: "x", weight: 0, reward: {} }] }));
    expect([zero.status, zero.body.error]).toEqual([400, "invalid_payload"]);
    expect(JSON.stringify(zero.body.details)).toContain("segments");
    const fraction = await adminPost(premiumWheel({ segments: [{ label: "x", weight: 1.5, reward: {} }] }));
    expect(fraction.status).toBe(400);
    const heavy = await adminPost(
      premiumWheel({
        segments: [
          { label: "a", weight: 2 ** 20, reward: {} },
          { label: "b", weight: 1, reward: {} },
        ],
      }),
    );
    expect([heavy.status, heavy.body.details[0].field]).toEqual([400, "body.segments"]);
    expect(heavy.body.message).toContain("1048577");
    const many = await adminPost(premiumWheel({ segments: Array.from({ length: 25 }, (_, i) => ({ label: `s${i}`, weight: 1, reward: {} })) }));
    expect(many.status).toBe(400);
    const none = await adminPost(premiumWheel({ segments: [] }));
    expect(none.status).toBe(400);
    const cool = await adminPost(premiumWheel({ cooldown_seconds: 10 }));
    expect(cool.status).toBe(400);
    const missing = await adminPost({ campaign_key: "bare", title: "x", audience_group: "all", cooldown_seconds: 3600 });
    expect([missing.status, missing.body.details[0].field]).toEqual([400, "body.segments"]);
    const builtin = await adminPost(premiumWheel({ campaign_key: "wheel-default" }));
    expect([builtin.status, builtin.body.details[0].field]).toEqual([400, "body.campaign_key"]);
    const ghost = await adminPost(premiumWheel({ audience_group: "ghosts" }));
    expect([ghost.status, ghost.body.error]).toEqual([404, "audience_group_not_found"]);
    const unknown = await adminPost({ campaign_key: "nope-wheel", update: true, enabled: false });
    expect([unknown.status, unknown.body.error]).toEqual([404, "campaign_not_found"]);

    expect((await adminPost(premiumWheel({ ends_at: at(86_400) }))).status).toBe(200);
    const dup = await adminPost(premiumWheel());
    expect([dup.status, dup.body.error]).toEqual([409, "conflict"]);
    const overlap = await adminPost(premiumWheel({ campaign_key: "vip-2", starts_at: at(3600) }));
    expect([overlap.status, overlap.body.error]).toEqual([409, "campaign_overlap"]);
    expect(overlap.body.details.conflicting.map((c: any) => c.campaign_key)).toEqual(["vip-wheel"]);
    expect((await adminPost(premiumWheel({ campaign_key: "vip-2", starts_at: at(86_400) }))).status).toBe(200);
    // Disabled campaigns never conflict.
    expect((await adminPost(premiumWheel({ campaign_key: "vip-3", enabled: false }))).status).toBe(200);
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM admin_audit WHERE action LIKE 'messenger.wheel_campaign.%'")).toEqual({ n: 3 });
  });

  test("the player's wheel follows the campaign: status, cooldown, play, recorded campaign_key, then the default again", async () => {
    await setup();
    await adminPost(premiumWheel());
    const vip = { is_premium: true };
    const status = await as(61, "/api/messenger/games/spin-wheel/status", {}, vip);
    expect(status.body.campaign).toMatchObject({ campaign_key: "vip-wheel", cooldown_seconds: 3600 });
    expect(status.body.campaign.segments.map((s: any) => s.weight)).toEqual([1, 3, 6]);
    expect((await as(62, "/api/messenger/games/spin-wheel/status")).body.campaign.campaign_key).toBe("wheel-default");

    const spin = await as(61, "/api/messenger/games/spin-wheel/play", { request_id: rid() }, vip);
    expect(spin.status).toBe(200);
    expect(spin.body.spin.campaign_key).toBe("vip-wheel");
    expect(SEGMENTS.map((s) => s.label)).toContain(spin.body.spin.segment_label);
    expect(await h.ctx.store.all("SELECT campaign_key FROM messenger_spins")).toEqual([{ campaign_key: "vip-wheel" }]);
    if (spin.body.spin.reward.free_spins === 0) {
      const again = await as(61, "/api/messenger/games/spin-wheel/play", { request_id: rid() }, vip);
      expect([again.status, again.headers.get("retry-after")]).toEqual([409, "3600"]);
    }

    const frozen = await adminPost({ campaign_key: "vip-wheel", update: true, segments: [{ label: "Only", weight: 1, reward: { points: 1 } }] });
    expect([frozen.status, frozen.body.error, frozen.body.details[0].field]).toEqual([409, "conflict", "body.segments"]);
    const renamed = await adminPost({ campaign_key: "vip-wheel", update: true, title: "VIP wheel (renamed)" });
    expect(renamed.body).toMatchObject({ created: false, campaign: { title: "VIP wheel (renamed)", cooldown_seconds: 3600 } });
    const off = await adminPost({ campaign_key: "vip-wheel", update: true, enabled: false });
    expect(off.body.campaign.enabled).toBe(false);
    const audit = (await h.ctx.store.all("SELECT details FROM admin_audit WHERE action = 'messenger.wheel_campaign.update' ORDER BY id")) as Array<{
      details: string;
    }>;
    expect(audit.map((a) => JSON.parse(a.details).after.enabled)).toEqual([true, false]);
    expect((await as(61, "/api/messenger/games/spin-wheel/status", {}, vip)).body.campaign.campaign_key).toBe("wheel-default");
  });

  test("provably fair: spins on a campaign recompute from the revealed seed over the campaign's weights", async () => {
    await setup();
    await adminPost(premiumWheel());
    const vip = { is_premium: true };
    await credit(71, 20);
    await as(71, "/api/messenger/games/spin-wheel/status", {}, vip); // publishes the next seed's hash first
    await as(71, "/api/messenger/games/spin-wheel/status", { client_seed: "vip-seed" }, vip);
    const spins: Array<{ nonce: number; index: number }> = [];
    for (let i = 0; i < 20; i++) {
      const r = await as(71, "/api/messenger/games/spin-wheel/play", { request_id: rid() }, vip);
      expect(r.body.spin.campaign_key).toBe("vip-wheel");
      spins.push({ nonce: r.body.spin.fairness.nonce, index: r.body.spin.segment_index });
    }
    const revealed = (await as(71, "/api/messenger/games/spin-wheel/status", { client_seed: "next" }, vip)).body.revealed_seed;
    const weights = SEGMENTS.map((s) => s.weight);
    for (const s of spins) expect(pickWeighted(weights, revealed.server_seed, "vip-seed", s.nonce)).toBe(s.index);
  });

  test("10,000 seeded plays on a custom campaign land within tolerance of its weights", async () => {
    await setup();
    const segments = [
      { label: "a", weight: 50, reward: { points: 1 } },
      { label: "b", weight: 30, reward: { points: 2 } },
      { label: "c", weight: 15, reward: { missiles: 1 } },
      { label: "d", weight: 5, reward: {} },
    ];
    await adminPost({ campaign_key: "tuned", title: "Tuned", audience_group: "all", cooldown_seconds: 60, segments });
    const N = 10_000;
    await credit(81, N);
    await as(81, "/api/messenger/games/spin-wheel/status");
    for (let i = 0; i < N; i++) await playWheel(h.ctx, 81, `tuned-play-${i}`);
    const counts = await h.ctx.store.all<{ i: number; n: number }>(
      "SELECT segment_index AS i, COUNT(*) AS n FROM messenger_spins WHERE campaign_key = 'tuned' GROUP BY segment_index ORDER BY segment_index",
    );
    expect(counts.reduce((a, c) => a + c.n, 0)).toBe(N);
    const total = segments.reduce((a, s) => a + s.weight, 0);
    segments.forEach((s, i) => {
      const p = s.weight / total;
      const sigma = Math.sqrt(N * p * (1 - p));
      expect(Math.abs((counts.find((c) => c.i === i)?.n ?? 0) - N * p)).toBeLessThan(4 * sigma);
    });
  }, 60_000);
});
