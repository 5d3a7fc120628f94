// Operator games configuration (issue 19): audience groups, catalog campaigns, wheel campaigns, promo updates and
// the catalog preview — every route's happy path, 403 without the admin token, bad input with its catalog code,
// the audit row; the rules reflected in what the mini-app routes answer players, and the wheel's draw over a
// custom campaign's weights.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
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
const BASE = "/api/messenger/admin/games";
const adminGet = (path: string) => h.json(`${BASE}${path}`, { headers: { authorization: `Bearer ${admin}` } });
const adminPost = (path: string, body: unknown) => h.json(`${BASE}${path}`, jsonInit("POST", body, { authorization: `Bearer ${admin}` }));
const as = (id: number, path: string, body: Record<string, unknown> = {}, user: Record<string, unknown> = {}) =>
  h.json(path, tmaPost(initDataFor(h, { id, ...user }), body));
const catalogOf = async (id: number, user: Record<string, unknown> = {}) => {
  const r = await h.json(`/api/messenger/games/catalog?init_data=${encodeURIComponent(initDataFor(h, { id, ...user }))}`);
  expect(r.status).toBe(200);
  return Object.fromEntries(r.body.games.map((g: any) => [g.game_key, g])) as Record<string, any>;
};
const at = (seconds: number) => new Date(h.clock.now().getTime() + seconds * 1000).toISOString();
const audit = (action: string) =>
  h.ctx.store.all<{ target: string; details: string; actor: string }>("SELECT target, details, actor FROM admin_audit WHERE action = ? ORDER BY id", [action]);
let seq = 0;
const rid = () => `cfg-req-${++seq}`;

const ROUTES: Array<["GET" | "POST", string]> = [
  ["GET", "/audience-groups"],
  ["POST", "/audience-groups"],
  ["GET", "/catalog-campaigns"],
  ["POST", "/catalog-campaigns"],
  ["GET", "/wheel-campaigns"],
  ["POST", "/wheel-campaigns"],
  ["GET", "/promos"],
  ["POST", "/promos"],
  ["GET", "/catalog-preview"],
];

describe("access", () => {
  test("every route is 403 without the admin token (or with a wrong one), and 503 without a bot token", async () => {
    await setup();
    for (const [method, path] of ROUTES) {
      const init = method === "GET" ? {} : jsonInit("POST", {});
      const none = await h.json(`${BASE}${path}`, init);
      expect([method, path, none.status, none.body.error]).toEqual([method, path, 403, "forbidden"]);
      const wrong = await h.json(`${BASE}${path}`, { ...init, headers: { ...(init.headers ?? {}), authorization: "Bearer not-a-real-token-000000" } });
      expect(wrong.status).toBe(403);
    }
    await h.close();
    h = await openTestApp();
    admin = await createAdminToken(h);
    for (const [method, path] of ROUTES.filter(([m]) => m === "GET")) {
      const r = await adminGet(path);
      expect([method, path, r.status, r.body.error]).toEqual([method, path, 503, "messenger_not_configured"]);
    }
  });
});

describe("audience groups", () => {
  test("built-ins listed first, a custom group created, updated, audited and paginated; bad input refused by field", async () => {
    await setup();
    const empty = await adminGet("/audience-groups");
    expect(empty.status).toBe(200);
    expect(empty.body.audience_groups.map((g: any) => [g.group_key, g.builtin])).toEqual([
      ["all", true],
      ["premium", true],
      ["linked", true],
      ["unlinked", true],
    ]);
    const made = await adminPost("/audience-groups", { group_key: "testers", title: "Testers", rule: { telegram_user_ids: [11, 11, 21] } });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ created: true, audience_group: { group_key: "testers", builtin: false, rule: { telegram_user_ids: [11, 21] } } });
    expect(await audit("messenger.audience_group.create")).toHaveLength(1);
    expect(JSON.parse((await audit("messenger.audience_group.create"))[0]!.details).after.group_key).toBe("testers");

    const dup = await adminPost("/audience-groups", { group_key: "testers", title: "Again", rule: { premium: true } });
    expect([dup.status, dup.body.error]).toEqual([409, "conflict"]);
    expect(dup.body.message).toContain("body.group_key");
    const upd = await adminPost("/audience-groups", { group_key: "testers", update: true, rule: { telegram_user_ids: [11, 21, 31] } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ created: false, audience_group: { title: "Testers", rule: { telegram_user_ids: [11, 21, 31] } } });
    const updAudit = JSON.parse((await audit("messenger.audience_group.update"))[0]!.details);
    expect([updAudit.before.rule.telegram_user_ids, updAudit.after.rule.telegram_user_ids]).toEqual([
      [11, 21],
      [11, 21, 31],
    ]);
    const ghost = await adminPost("/audience-groups", { group_key: "ghost", update: true, title: "x" });
    expect([ghost.status, ghost.body.error]).toEqual([404, "audience_group_not_found"]);
    const builtin = await adminPost("/audience-groups", { group_key: "premium", title: "x", rule: { premium: true } });
    expect([builtin.status, builtin.body.error, builtin.body.details[0].field]).toEqual([400, "invalid_payload", "body.group_key"]);
    const emptyRule = await adminPost("/audience-groups", { group_key: "nobody", title: "x", rule: {} });
    expect([emptyRule.status, emptyRule.body.details[0].field]).toEqual([400, "body.rule"]);
    const noTitle = await adminPost("/audience-groups", { group_key: "nobody", rule: { premium: true } });
    expect([noTitle.status, noTitle.body.details[0].field]).toEqual([400, "body.title"]);
    const badWindow = await adminPost("/audience-groups", {
      group_key: "nobody",
      title: "x",
      rule: { created_after: "2026-02-01T00:00:00Z", created_before: "2026-01-01T00:00:00Z" },
    });
    expect([badWindow.status, badWindow.body.details[0].field]).toEqual([400, "body.rule.created_before"]);
    const tooMany = await adminPost("/audience-groups", {
      group_key: "many",
      title: "x",
      rule: { telegram_user_ids: Array.from({ length: 1001 }, (_, i) => i + 1) },
    });
    expect([tooMany.status, tooMany.body.error]).toEqual([400, "invalid_payload"]);
    const unknownField = await adminPost("/audience-groups", { group_key: "odd", title: "x", rule: { whales: true } });
    expect(unknownField.status).toBe(400);

    await adminPost("/audience-groups", { group_key: "en-speakers", title: "English", rule: { language_codes: ["en"] } });
    const page1 = await adminGet("/audience-groups?limit=3");
    expect([page1.body.count, page1.body.total, page1.body.pagination]).toEqual([
      3,
      6,
      { limit: 3, offset: 0, has_more: true, next_offset: 3, next_cursor: expect.any(String) },
    ]);
    const page2 = await adminGet("/audience-groups?limit=3&offset=3");
    expect(page2.body.audience_groups.map((g: any) => g.group_key)).toEqual(["unlinked", "en-speakers", "testers"]);
    expect(page2.body.pagination.has_more).toBe(false);
    const badLimit = await adminGet("/audience-groups?limit=0");
    expect([badLimit.status, badLimit.body.error]).toEqual([400, "invalid_query"]);
  });

  test("a custom group limits a promo; its rule change is seen at once; an unknown group is 404 naming the field", async () => {
    await setup();
    const ghost = await adminPost("/promos", { code: "GHOST", reward: { points: 1 }, max_claims: 5, audience_group: "ghosts" });
    expect([ghost.status, ghost.body.error, ghost.body.details[0].field]).toEqual([404, "audience_group_not_found", "body.audience_group"]);
    await adminPost("/audience-groups", { group_key: "en-vets", title: "English veterans", rule: { language_codes: ["en"], min_points_earned: 0 } });
    expect((await adminPost("/promos", { code: "HELLO", reward: { points: 5 }, max_claims: 5, audience_group: "en-vets" })).status).toBe(200);
    expect((await as(1, "/api/messenger/games/promos/claim", { request_id: rid(), code: "HELLO" }, { language_code: "en-GB" })).status).toBe(200);
    const de = await as(2, "/api/messenger/games/promos/claim", { request_id: rid(), code: "HELLO" }, { language_code: "de" });
    expect([de.status, de.body.error]).toEqual([403, "promo_not_eligible"]);
    await adminPost("/audience-groups", { group_key: "en-vets", update: true, rule: { language_codes: ["en", "de"] } });
    expect((await as(2, "/api/messenger/games/promos/claim", { request_id: rid(), code: "HELLO" }, { language_code: "de" })).status).toBe(200);
  });
});

describe("catalog campaigns", () => {
  test("a gated game opens only inside an active campaign of the player's audience; the mini-app sees each change", async () => {
    await setup();
    await adminPost("/audience-groups", { group_key: "testers", title: "Testers", rule: { telegram_user_ids: [21] } });
    const before = await catalogOf(22);
    expect([before.recon_grid.available, before.recon_grid.open_to_you, before.recon_grid.campaign_id]).toEqual([true, true, null]);

    const made = await adminPost("/catalog-campaigns", { game_key: "recon_grid", audience_group: "testers", title: "Grid beta", ends_at: at(3600) });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ created: true, campaign: { game_key: "recon_grid", audience_group: "testers", enabled: true, active_now: true } });
    const id = made.body.campaign.id;
    expect((await audit("messenger.catalog_campaign.create")).map((a) => a.target)).toEqual([String(id)]);

    const inside = await catalogOf(21);
    expect([inside.recon_grid.available, inside.recon_grid.campaign_id, inside.recon_grid.audience_group]).toEqual([true, id, "testers"]);
    const outside = await catalogOf(22);
    expect([outside.recon_grid.available, outside.recon_grid.open_to_you]).toEqual([false, false]);
    expect(outside.recon_grid.reason).toContain("testers");
    expect([outside.spin_wheel.available, outside.spin_wheel.open_to_you]).toEqual([true, true]);
    const refused = await as(22, "/api/messenger/games/recon-grid/start", {});
    expect([refused.status, refused.body.error]).toEqual([403, "game_not_in_campaign"]);
    await as(21, "/api/messenger/games/recon-grid/status", {}); // publishes the seed the grid will use
    expect((await as(21, "/api/messenger/games/recon-grid/start", {})).status).toBe(200);

    const overlap = await adminPost("/catalog-campaigns", { game_key: "recon_grid", audience_group: "testers", title: "Grid again", starts_at: at(1800) });
    expect([overlap.status, overlap.body.error]).toEqual([409, "campaign_overlap"]);
    expect(overlap.body.details.conflicting.map((c: any) => c.id)).toEqual([id]);
    expect(overlap.body.message).toContain("body.starts_at");
    // Windows are half-open: one that starts when the first ends does not overlap; another audience never does.
    const next = await adminPost("/catalog-campaigns", { game_key: "recon_grid", audience_group: "testers", title: "Grid later", starts_at: at(3600) });
    expect(next.status).toBe(200);
    expect(
      (await adminPost("/catalog-campaigns", { game_key: "recon_grid", audience_group: "premium", title: "Premium grid", starts_at: at(1800) })).status,
    ).toBe(200);

    const disabled = await adminPost("/catalog-campaigns", { id, enabled: false });
    expect(disabled.body).toMatchObject({ created: false, campaign: { id, enabled: false, active_now: false, title: "Grid beta" } });
    const upd = JSON.parse((await audit("messenger.catalog_campaign.update"))[0]!.details);
    expect([upd.before.enabled, upd.after.enabled]).toEqual([true, false]);
    const waiting = await catalogOf(21);
    expect([waiting.recon_grid.available, waiting.recon_grid.open_to_you]).toEqual([false, false]);
    expect(waiting.recon_grid.reason).toContain(`opens for you at ${at(3600)}`);
    h.clock.advanceSeconds(3600);
    expect((await catalogOf(21)).recon_grid).toMatchObject({ available: true, campaign_id: next.body.campaign.id });
    expect((await catalogOf(33, { is_premium: true })).recon_grid.available).toBe(true);

    const listed = await adminGet("/catalog-campaigns?limit=1");
    expect([listed.status, listed.body.count, listed.body.pagination.has_more]).toEqual([200, 1, true]);
    expect((await adminGet("/catalog-campaigns?limit=50")).body.campaigns.map((c: any) => c.id)).not.toContain(id);
    expect((await adminGet("/catalog-campaigns?include_disabled=1&game_key=recon_grid")).body.campaigns.map((c: any) => c.id)).toContain(id);
  });

  test("bad input: unknown id, unknown audience group, end before start, missing fields, unknown game", async () => {
    await setup();
    const unknown = await adminPost("/catalog-campaigns", { id: 999, enabled: false });
    expect([unknown.status, unknown.body.error]).toEqual([404, "campaign_not_found"]);
    const ghost = await adminPost("/catalog-campaigns", { game_key: "spin_wheel", audience_group: "ghosts", title: "x" });
    expect([ghost.status, ghost.body.error, ghost.body.details[0].field]).toEqual([404, "audience_group_not_found", "body.audience_group"]);
    const backwards = await adminPost("/catalog-campaigns", { game_key: "spin_wheel", audience_group: "all", title: "x", starts_at: at(60), ends_at: at(0) });
    expect([backwards.status, backwards.body.details[0].field]).toEqual([400, "body.ends_at"]);
    const missing = await adminPost("/catalog-campaigns", { game_key: "spin_wheel", title: "x" });
    expect([missing.status, missing.body.details[0].field]).toEqual([400, "body.audience_group"]);
    const game = await adminPost("/catalog-campaigns", { game_key: "poker", audience_group: "all", title: "x" });
    expect([game.status, game.body.error]).toEqual([400, "invalid_payload"]);
    const date = await adminPost("/catalog-campaigns", { game_key: "spin_wheel", audience_group: "all", title: "x", starts_at: "yesterday" });
    expect(date.status).toBe(400);
    expect(await audit("messenger.catalog_campaign.create")).toEqual([]);
  });

  test("a wheel campaign gate: outside the audience the wheel is unavailable and a spin is refused", async () => {
    await setup();
    await adminPost("/catalog-campaigns", { game_key: "spin_wheel", audience_group: "premium", title: "Premium wheel" });
    expect((await catalogOf(41)).spin_wheel).toMatchObject({ available: false, campaign_id: null });
    expect((await as(41, "/api/messenger/games/spin-wheel/status")).body.available).toBe(false);
    const spin = await as(41, "/api/messenger/games/spin-wheel/play", { request_id: rid() });
    expect([spin.status, spin.body.error]).toEqual([403, "game_not_in_campaign"]);
    expect((await as(42, "/api/messenger/games/spin-wheel/play", { request_id: rid() }, { is_premium: true })).status).toBe(200);
  });
});

describe("promos", () => {
  test("an existing code is updated with update: true; a cap below the claims is 409 naming the field; audited", async () => {
    await setup();
    expect((await adminPost("/promos", { code: "SPRING", reward: { points: 40 }, max_claims: 3 })).status).toBe(200);
    for (const id of [1, 2]) expect((await as(id, "/api/messenger/games/promos/claim", { request_id: rid(), code: "SPRING" })).status).toBe(200);
    const below = await adminPost("/promos", { code: "SPRING", update: true, max_claims: 1 });
    expect([below.status, below.body.error, below.body.details]).toEqual([
      409,
      "promo_cap_below_claims",
      { field: "body.max_claims", claims: 2, max_claims: 1 },
    ]);
    expect(below.body.message).toContain("body.max_claims");
    const raised = await adminPost("/promos", { code: "SPRING", update: true, max_claims: 10, expires_at: at(3600) });
    expect(raised.status).toBe(200);
    expect(raised.body).toMatchObject({ created: false, promo: { code: "SPRING", max_claims: 10, claims: 2, expires_at: at(3600), enabled: true } });
    const cleared = await adminPost("/promos", { code: "SPRING", update: true, expires_at: null, max_claims: 2 });
    expect(cleared.body.promo).toMatchObject({ expires_at: null, max_claims: 2 });
    const upd = (await audit("messenger.promo.update")).map((a) => JSON.parse(a.details));
    expect(upd.map((d) => [d.before.max_claims, d.after.max_claims])).toEqual([
      [3, 10],
      [10, 2],
    ]);

    const off = await adminPost("/promos", { code: "SPRING", update: true, enabled: false });
    expect(off.body.promo.enabled).toBe(false);
    const claim = await as(3, "/api/messenger/games/promos/claim", { request_id: rid(), code: "SPRING" });
    expect([claim.status, claim.body.error]).toEqual([404, "promo_not_found"]);
    expect((await adminGet("/promos")).body.promos.map((p: any) => p.code)).not.toContain("SPRING");
    expect((await adminGet("/promos?include_disabled=1")).body.promos.map((p: any) => p.code)).toContain("SPRING");

    const reward = await adminPost("/promos", { code: "SPRING", update: true, reward: { points: 99 } });
    expect([reward.status, reward.body.error, reward.body.details[0].field]).toEqual([409, "conflict", "body.reward"]);
    const unknown = await adminPost("/promos", { code: "NOPE1", update: true, enabled: true });
    expect([unknown.status, unknown.body.error]).toEqual([404, "promo_not_found"]);
    const noReward = await adminPost("/promos", { code: "EMPTY", max_claims: 3 });
    expect([noReward.status, noReward.body.details[0].field]).toEqual([400, "body.reward"]);
    const noCap = await adminPost("/promos", { code: "EMPTY", reward: { points: 1 } });
    expect([noCap.status, noCap.body.details[0].field]).toEqual([400, "body.max_claims"]);
    const ghost = await adminPost("/promos", { code: "SPRING", update: true, audience_group: "ghosts" });
    expect([ghost.status, ghost.body.error]).toEqual([404, "audience_group_not_found"]);
  });

  test("the list paginates", async () => {
    await setup();
    for (const code of ["AAA1", "BBB2", "CCC3"]) await adminPost("/promos", { code, reward: { points: 1 }, max_claims: 1 });
    const p1 = await adminGet("/promos?limit=2");
    expect([p1.body.count, p1.body.pagination]).toEqual([2, { limit: 2, offset: 0, has_more: true, next_offset: 2, next_cursor: expect.any(String) }]);
    const p2 = await adminGet("/promos?limit=2&offset=2");
    expect([p2.body.count, p2.body.pagination.has_more]).toEqual([1, false]);
    expect((await adminGet("/promos?offset=-1")).status).toBe(400);
  });
});

describe("catalog preview", () => {
  test("what a real or hypothetical player sees, and which campaign and rule matched", async () => {
    await setup();
    await adminPost("/audience-groups", { group_key: "testers", title: "Testers", rule: { telegram_user_ids: [51], linked: true } });
    const grid = await adminPost("/catalog-campaigns", { game_key: "recon_grid", audience_group: "testers", title: "Grid beta" });
    const old = await adminPost("/catalog-campaigns", { game_key: "recon_grid", audience_group: "linked", title: "Old", enabled: false });
    await adminPost("/wheel-campaigns", {
      campaign_key: "linked-wheel",
      title: "Linked wheel",
      audience_group: "linked",
      cooldown_seconds: 3600,
      segments: [{ label: "Big", weight: 1, reward: { points: 100 } }],
    });
    await as(51, "/api/messenger/init/verify");

    const real = await adminGet("/catalog-preview?telegram_user_id=51");
    expect(real.status).toBe(200);
    expect(real.body.player).toMatchObject({ telegram_user_id: 51, exists: true, hypothetical: false, linked_user_id: null });
    const realGrid = real.body.explain.find((e: any) => e.game_key === "recon_grid");
    expect(realGrid).toMatchObject({ gated: true, allowed: false, matched_campaign_id: null });
    expect(realGrid.campaigns.map((c: any) => c.id)).toEqual([grid.body.campaign.id]);
    expect(real.body.games.find((g: any) => g.game_key === "recon_grid").available).toBe(false);
    expect(real.body.audience_groups.find((g: any) => g.group_key === "testers")).toEqual({
      group_key: "testers",
      builtin: false,
      member: false,
      failed_conditions: ["linked"],
    });
    expect(real.body.wheel).toMatchObject({ campaign_key: "wheel-default", source: "default" });

    const linked = await adminGet("/catalog-preview?telegram_user_id=51&linked_user_id=7");
    expect(linked.body.player).toMatchObject({ hypothetical: true, linked_user_id: "7" });
    expect(linked.body.explain.find((e: any) => e.game_key === "recon_grid")).toMatchObject({ allowed: true, matched_campaign_id: grid.body.campaign.id });
    expect(linked.body.wheel).toMatchObject({ campaign_key: "linked-wheel", source: "campaign", cooldown_seconds: 3600 });
    expect(linked.body.wheel.expected_value.points).toEqual({ numerator: 100, denominator: 1, decimal: "100.000000" });
    expect(linked.body.wheel.candidates.find((c: any) => c.campaign_key === "linked-wheel")).toMatchObject({
      in_audience: true,
      in_window: true,
      applies: true,
    });

    const nobody = await adminGet("/catalog-preview");
    expect(nobody.body.player).toMatchObject({ telegram_user_id: null, exists: false, hypothetical: true });
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_players")).toEqual({ n: 1 });

    const adminView = await adminGet("/catalog-preview?telegram_user_id=51&admin_view=1");
    const ids = adminView.body.explain.find((e: any) => e.game_key === "recon_grid").campaigns.map((c: any) => c.id);
    expect(ids).toContain(old.body.campaign.id);
    expect(adminView.body.audience_groups.map((g: any) => g.group_key)).toEqual(["all", "premium", "linked", "unlinked", "testers"]);

    expect((await adminGet("/catalog-preview?telegram_user_id=abc")).body.error).toBe("invalid_query");
    expect((await adminGet("/catalog-preview?linked_user_id=-1")).status).toBe(400);
    expect((await adminGet("/catalog-preview?admin_view=maybe")).status).toBe(400);
  });
});
