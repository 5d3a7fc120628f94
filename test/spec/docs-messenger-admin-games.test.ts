// Docs audit: docs/messenger-admin-games.md (audience groups, catalog and wheel campaigns, promos, catalog preview)
// against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const G = "/api/messenger/admin/games";
async function admin() {
  h = await openMessengerApp();
  return { authorization: `Bearer ${await createAdminToken(h)}` };
}
const post = (auth: Record<string, string>, path: string, body: unknown) => h.json(`${G}${path}`, jsonInit("POST", body, auth));

describe("docs/messenger-admin-games.md", () => {
  // docs/messenger-admin-games.md:34-102
  test("audience groups", async () => {
    const auth = await admin();
    const l = await h.json(`${G}/audience-groups?limit=5`, { headers: auth });
    expect(l.body.audience_groups.map((g: any) => [g.group_key, g.builtin, g.rule])).toEqual([
      ["all", true, null],
      ["premium", true, null],
      ["linked", true, null],
      ["unlinked", true, null],
    ]);
    expect(l.body).toMatchObject({
      count: 4,
      total: 4,
      pagination: { limit: 5, offset: 0, has_more: false, next_offset: null, next_cursor: null },
      query: { limit: 5, offset: 0, cursor: null },
    });
    const body = { group_key: "en-regulars", title: "English-speaking regulars", rule: { language_codes: ["en", "en"], min_points_earned: 100 } };
    const c = await post(auth, "/audience-groups", body);
    expect(c.body).toMatchObject({
      created: true,
      audience_group: { group_key: "en-regulars", builtin: false, rule: { language_codes: ["en"], min_points_earned: 100 } },
    });
    const dup = await post(auth, "/audience-groups", body);
    expect([dup.status, dup.body.error]).toEqual([409, "conflict"]);
    const upd = await post(auth, "/audience-groups", {
      group_key: "en-regulars",
      update: true,
      rule: { language_codes: ["en", "de"], min_points_earned: 100 },
    });
    expect(upd.body.audience_group.rule.language_codes).toEqual(["en", "de"]);
    const unk = await post(auth, "/audience-groups", { group_key: "nobody", update: true, title: "x" });
    expect([unk.status, unk.body.error]).toEqual([404, "audience_group_not_found"]);
    for (const [name, b] of [
      ["builtin key", { group_key: "premium", title: "x", rule: { premium: true } }],
      ["empty rule", { group_key: "empty", title: "x", rule: {} }],
      ["created_before not after", { group_key: "dates", title: "x", rule: { created_after: "2026-01-02T00:00:00Z", created_before: "2026-01-01T00:00:00Z" } }],
      ["1001 ids", { group_key: "ids", title: "x", rule: { telegram_user_ids: Array.from({ length: 1001 }, (_, i) => i + 1) } }],
      ["short key", { group_key: "a", title: "x", rule: { premium: true } }],
      ["51 languages", { group_key: "langs", title: "x", rule: { language_codes: Array.from({ length: 51 }, (_, i) => `l${i}`) } }],
    ] as const) {
      const r = await post(auth, "/audience-groups", b);
      expect([name, r.status, r.body.error]).toEqual([name, 400, "invalid_payload"]);
    }
    expect((await h.json(`${G}/audience-groups?offset=10001`, { headers: auth })).body.error).toBe("offset_too_large");
  });

  // docs/messenger-admin-games.md:104-178 — catalog campaigns: gating, overlap (half-open), refusals
  test("catalog campaigns gate a game and refuse overlaps", async () => {
    const auth = await admin();
    const c = await post(auth, "/catalog-campaigns", {
      game_key: "recon_grid",
      audience_group: "premium",
      title: "Grid beta",
      starts_at: "2026-01-01T00:00:00Z",
      ends_at: "2026-02-01T00:00:00Z",
    });
    expect(c.status).toBeLessThan(300);
    expect(c.body.campaign).toMatchObject({ enabled: true, active_now: true, starts_at: "2026-01-01T00:00:00.000Z", ends_at: "2026-02-01T00:00:00.000Z" });
    const ov = await post(auth, "/catalog-campaigns", { game_key: "recon_grid", audience_group: "premium", title: "x", starts_at: "2026-01-15T00:00:00Z" });
    expect([ov.status, ov.body.error]).toEqual([409, "campaign_overlap"]);
    expect(ov.body.details.conflicting[0].id).toBe(c.body.campaign.id);
    const adj = await post(auth, "/catalog-campaigns", {
      game_key: "recon_grid",
      audience_group: "premium",
      title: "next",
      starts_at: "2026-02-01T00:00:00Z",
      ends_at: "2026-03-01T00:00:00Z",
    });
    expect(adj.status).toBeLessThan(300);
    const other = await post(auth, "/catalog-campaigns", { game_key: "recon_grid", audience_group: "linked", title: "x", starts_at: "2026-01-15T00:00:00Z" });
    expect(other.status).toBeLessThan(300);
    const bad = await post(auth, "/catalog-campaigns", {
      game_key: "recon_grid",
      audience_group: "premium",
      title: "x",
      starts_at: "2026-05-01T00:00:00Z",
      ends_at: "2026-05-01T00:00:00Z",
    });
    expect(bad.status).toBe(400);
    expect((await post(auth, "/catalog-campaigns", { game_key: "poker", audience_group: "all", title: "x" })).status).toBe(400);
    expect(
      (await post(auth, "/catalog-campaigns", { game_key: "recon_grid", audience_group: "nobody", title: "x", starts_at: "2027-01-01T00:00:00Z" })).body.error,
    ).toBe("audience_group_not_found");
    expect((await post(auth, "/catalog-campaigns", { id: 999, enabled: false })).body.error).toBe("campaign_not_found");
    const init = initDataFor(h, { id: 4242 });
    const cat = (await (await h.request("/api/messenger/games/catalog", tmaPost(init))).json()) as any;
    const grid = cat.games.find((g: any) => g.game_key === "recon_grid");
    expect(grid).toMatchObject({ available: false, open_to_you: false });
    const start = await h.request("/api/messenger/games/recon-grid/start", tmaPost(init, {}));
    const sb = (await start.json()) as any;
    expect([start.status, sb.error]).toEqual([403, "game_not_in_campaign"]);
    expect(sb.details.reason).toBeTruthy();
    const prem = initDataFor(h, { id: 5151, is_premium: true });
    const pc = (await (await h.request("/api/messenger/games/catalog", tmaPost(prem))).json()) as any;
    expect(pc.games.find((g: any) => g.game_key === "recon_grid")).toMatchObject({
      available: true,
      open_to_you: true,
      campaign_id: c.body.campaign.id,
      audience_group: "premium",
    });
    const l = await h.json(`${G}/catalog-campaigns?game_key=recon_grid&limit=20`, { headers: auth });
    expect(l.body.query).toEqual({ limit: 20, offset: 0, cursor: null, game_key: "recon_grid", include_disabled: false });
  });

  // docs/messenger-admin-games.md:180-268 — wheel campaigns: expected value, bounds, fixed segments once spun
  test("wheel campaigns", async () => {
    const auth = await admin();
    const l = await h.json(`${G}/wheel-campaigns?limit=10`, { headers: auth });
    expect(l.body.default_campaign).toMatchObject({ campaign_key: "wheel-default", title: "Daily wheel", cooldown_seconds: 86400, source: "default" });
    expect(l.body.default_campaign.segments.length).toBe(6);
    expect(l.body.default_campaign.expected_value).toEqual({
      total_weight: 100,
      free_spins: { numerator: 1, denominator: 10, decimal: "0.100000" },
      missiles: { numerator: 3, denominator: 10, decimal: "0.300000" },
      points: { numerator: 61, denominator: 4, decimal: "15.250000" },
    });
    const body = {
      campaign_key: "spring-wheel",
      title: "Spring wheel",
      audience_group: "premium",
      starts_at: "2026-01-01T00:00:00Z",
      ends_at: "2026-04-01T00:00:00Z",
      cooldown_seconds: 43200,
      segments: [
        { label: "50 points", weight: 6, reward: { points: 50 } },
        { label: "3 missiles", weight: 3, reward: { missiles: 3 } },
        { label: "Jackpot", weight: 1, reward: { points: 500, free_spins: 1 } },
      ],
    };
    const c = await post(auth, "/wheel-campaigns", body);
    expect(c.body).toMatchObject({ created: true, campaign: { active_now: true, enabled: true } });
    expect(c.body.campaign.expected_value).toEqual({
      total_weight: 10,
      free_spins: { numerator: 1, denominator: 10, decimal: "0.100000" },
      missiles: { numerator: 9, denominator: 10, decimal: "0.900000" },
      points: { numerator: 80, denominator: 1, decimal: "80.000000" },
    });
    const heavy = await post(auth, "/wheel-campaigns", {
      ...body,
      campaign_key: "heavy",
      audience_group: "linked",
      segments: [
        { label: "a", weight: 600000, reward: {} },
        { label: "b", weight: 448577, reward: {} },
      ],
    });
    expect(heavy.body).toMatchObject({
      error: "invalid_payload",
      details: [{ field: "body.segments", problem: "weights must sum to 1–1048576; they sum to 1048577" }],
    });
    const max = await post(auth, "/wheel-campaigns", {
      ...body,
      campaign_key: "maxw",
      audience_group: "linked",
      segments: [{ label: "a", weight: 1048576, reward: {} }],
    });
    expect(max.status).toBeLessThan(300);
    for (const [name, patch] of [
      ["25 segments", { segments: Array.from({ length: 25 }, () => ({ label: "a", weight: 1, reward: {} })) }],
      ["label 41", { segments: [{ label: "x".repeat(41), weight: 1, reward: {} }] }],
      ["cooldown 59", { cooldown_seconds: 59 }],
      ["cooldown 604801", { cooldown_seconds: 604801 }],
      ["missiles 1001", { segments: [{ label: "a", weight: 1, reward: { missiles: 1001 } }] }],
      ["free_spins 101", { segments: [{ label: "a", weight: 1, reward: { free_spins: 101 } }] }],
      ["weight 0", { segments: [{ label: "a", weight: 0, reward: {} }] }],
      ["reserved key", { campaign_key: "wheel-default" }],
    ] as const) {
      const r = await post(auth, "/wheel-campaigns", { ...body, campaign_key: "w2", audience_group: "unlinked", ...patch });
      expect([name, r.status]).toEqual([name, 400]);
    }
    const prem = initDataFor(h, { id: 5151, is_premium: true });
    const st = (await (await h.request("/api/messenger/games/spin-wheel/status", tmaPost(prem))).json()) as any;
    expect(st.campaign.campaign_key).toBe("spring-wheel");
    const play = (await (await h.request("/api/messenger/games/spin-wheel/play", tmaPost(prem, { request_id: "s-1" }))).json()) as any;
    expect(play.spin.campaign_key).toBe("spring-wheel");
    const change = await post(auth, "/wheel-campaigns", { campaign_key: "spring-wheel", update: true, segments: [{ label: "x", weight: 1, reward: {} }] });
    expect([change.status, change.body.error]).toEqual([409, "conflict"]);
    expect(JSON.stringify(change.body)).toContain("body.segments");
    const title = await post(auth, "/wheel-campaigns", { campaign_key: "spring-wheel", update: true, title: "Spring wheel 2" });
    expect(title.status).toBe(200);
  });

  // docs/messenger-admin-games.md:282-335 — promo updates: reward fixed, cap below claims
  test("promo updates", async () => {
    const auth = await admin();
    await post(auth, "/promos", { code: "SPRING", reward: { points: 40 }, max_claims: 5, audience_group: "all" });
    for (const id of [1, 2, 3])
      await h.request("/api/messenger/games/promos/claim", tmaPost(initDataFor(h, { id }), { request_id: `c-${id}`, code: "SPRING" }));
    const u = await post(auth, "/promos", { code: "SPRING", update: true, max_claims: 500, expires_at: "2026-04-01T00:00:00Z" });
    expect(u.body).toMatchObject({ created: false, promo: { max_claims: 500, claims: 3, expires_at: "2026-04-01T00:00:00.000Z" } });
    const cap = await post(auth, "/promos", { code: "SPRING", update: true, max_claims: 2 });
    expect([cap.status, cap.body.error]).toEqual([409, "promo_cap_below_claims"]);
    expect(cap.body.details).toEqual({ field: "body.max_claims", claims: 3, max_claims: 2 });
    const rw = await post(auth, "/promos", { code: "SPRING", update: true, reward: { points: 41 } });
    expect([rw.status, rw.body.error]).toEqual([409, "conflict"]);
    const clear = await post(auth, "/promos", { code: "SPRING", update: true, expires_at: null });
    expect(clear.body.promo.expires_at).toBeNull();
    const dupe = await post(auth, "/promos", { code: "SPRING", reward: { points: 1 }, max_claims: 5 });
    expect([dupe.status, dupe.body.error]).toEqual([409, "conflict"]);
    const nf = await post(auth, "/promos", { code: "NOPE", update: true, max_claims: 5 });
    expect([nf.status, nf.body.error]).toEqual([404, "promo_not_found"]);
    const dis = await post(auth, "/promos", { code: "HIDDEN", reward: { points: 1 }, max_claims: 5, enabled: false });
    expect(dis.body.promo.enabled).toBe(false);
    const l = await h.json(`${G}/promos?include_disabled=1&limit=2`, { headers: auth });
    expect(l.body.query).toEqual({ limit: 2, offset: 0, cursor: null, include_disabled: true });
    expect(l.body.count).toBe(2);
  });

  // docs/messenger-admin-games.md:338-360 — catalog preview is read-only and says exists / hypothetical
  test("catalog preview", async () => {
    const auth = await admin();
    const p = await h.json(`${G}/catalog-preview?telegram_user_id=4242`, { headers: auth });
    expect(p.status).toBe(200);
    expect(p.body.player).toMatchObject({
      telegram_user_id: 4242,
      exists: false,
      is_premium: false,
      linked_user_id: null,
      language_code: null,
      points_earned: 0,
    });
    const hyp = await h.json(`${G}/catalog-preview?telegram_user_id=4242&linked_user_id=17`, { headers: auth });
    expect(hyp.body.player).toMatchObject({ hypothetical: true, linked_user_id: "17" });
    const prof = await h.json("/api/messenger/admin/games/user-profiles", { headers: auth });
    expect(prof.body.total).toBe(0);
    await h.request("/api/messenger/init/verify", tmaPost(initDataFor(h, { id: 4242, language_code: "en" })));
    const real = await h.json(`${G}/catalog-preview?telegram_user_id=4242`, { headers: auth });
    expect(real.body.player).toMatchObject({ telegram_user_id: 4242, exists: true, hypothetical: false, language_code: "en" });
    expect(p.body.wheel.source).toBe("default");
  });
});
