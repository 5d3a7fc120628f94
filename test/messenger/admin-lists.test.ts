// The messenger admin lists in the spec's list shape (issue 30, item 7): every one answers `count`, the `query`
// echo (limit, offset, cursor and its own filters) and `pagination {has_more, next_offset, next_cursor}`, keeps
// the fields it had, and pages by cursor: the cursor holds the last row's sort key, so a row added before it
// does not repeat or skip a row on the next page (an offset page does shift). limit, offset and cursor are
// bounded in the routes' schemas; a cursor this list did not issue is 400 invalid_query.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { openMessengerApp } from "./support";

let h: TestApp;
let admin: string;
afterEach(async () => {
  await h?.close();
});

const setup = async () => {
  h = await openMessengerApp();
  admin = await createAdminToken(h);
};
const ADMIN = "/api/messenger/admin";
const get = (path: string) => h.json(`${ADMIN}${path}`, { headers: { authorization: `Bearer ${admin}` } });
const post = async (path: string, body: unknown) => {
  const r = await h.json(`${ADMIN}${path}`, jsonInit("POST", body, { authorization: `Bearer ${admin}` }));
  expect(r.status).toBe(200);
  return r.body;
};
const at = (seconds: number) => new Date(h.clock.now().getTime() + seconds * 1000).toISOString();
const join = (path: string, extra: string) => `${path}${path.includes("?") ? "&" : "?"}${extra}`;

interface ListCase {
  /** The route, with its own filters. */
  path: string;
  /** The array field and a row's identity in it. */
  items: string;
  idOf: (row: any) => string;
  /** The query echo beyond limit, offset and cursor. */
  filters: Record<string, unknown>;
  /** Fields the list answered before the spec's shape, still there. */
  kept: string[];
  /** Makes rows 1…n in the list (n ≥ 5). */
  seed: () => Promise<void>;
  /** Adds one row that sorts before the last row of the first page of `walkLimit` rows. */
  addBefore: () => Promise<void>;
  /** The page size of the walk (default 2). */
  walkLimit?: number;
}

const segments = [{ label: "Points", weight: 1, reward: { points: 1 } }];
const mission = (key: string) => ({
  mission_key: key,
  title: key,
  event_type: "spin_wheel.play",
  target: 3,
  reward: { points: 1 },
  daily_cap: 10,
  per_minute_cap: 5,
});

const CASES: ListCase[] = [
  {
    path: "/games/audience-groups",
    items: "audience_groups",
    idOf: (g) => g.group_key,
    filters: {},
    kept: ["total"],
    seed: async () => {
      for (const key of ["grp-b", "grp-c", "grp-d"]) await post("/games/audience-groups", { group_key: key, title: key, rule: { premium: true } });
    },
    // The four built-in groups come first: a first page of 5 ends with "grp-b", and "grp-a" sorts before it.
    addBefore: async () => {
      await post("/games/audience-groups", { group_key: "grp-a", title: "a", rule: { premium: true } });
    },
    walkLimit: 5,
  },
  {
    path: "/games/catalog-campaigns?game_key=recon_grid&include_disabled=1",
    items: "campaigns",
    idOf: (c) => String(c.id),
    filters: { game_key: "recon_grid", include_disabled: true },
    kept: [],
    seed: async () => {
      for (let i = 1; i <= 5; i++) {
        await post("/games/catalog-campaigns", {
          game_key: "recon_grid",
          audience_group: "all",
          title: `c${i}`,
          starts_at: at(i * 3600),
          ends_at: at(i * 3600 + 60),
        });
      }
    },
    // Latest start first: a campaign starting after all of them sorts first.
    addBefore: async () => {
      await post("/games/catalog-campaigns", {
        game_key: "recon_grid",
        audience_group: "all",
        title: "late",
        starts_at: at(99 * 3600),
        ends_at: at(99 * 3600 + 60),
      });
    },
  },
  {
    path: "/games/wheel-campaigns?include_disabled=1",
    items: "campaigns",
    idOf: (c) => c.campaign_key,
    filters: { include_disabled: true },
    kept: ["default_campaign"],
    seed: async () => {
      for (let i = 1; i <= 5; i++) {
        await post("/games/wheel-campaigns", {
          campaign_key: `wheel-${i}`,
          title: `w${i}`,
          audience_group: "premium",
          cooldown_seconds: 3600,
          segments,
          starts_at: at(i * 3600),
          ends_at: at(i * 3600 + 60),
        });
      }
    },
    addBefore: async () => {
      await post("/games/wheel-campaigns", {
        campaign_key: "wheel-late",
        title: "late",
        audience_group: "premium",
        cooldown_seconds: 3600,
        segments,
        starts_at: at(99 * 3600),
        ends_at: at(99 * 3600 + 60),
      });
    },
  },
  {
    path: "/games/promos",
    items: "promos",
    idOf: (p) => p.code,
    filters: { include_disabled: false },
    kept: [],
    seed: async () => {
      for (let i = 1; i <= 5; i++) {
        await post("/games/promos", { code: `CODE${i}`, reward: { points: 1 }, max_claims: 5 });
        h.clock.advanceSeconds(1);
      }
    },
    // Newest first: the next promo made sorts first.
    addBefore: async () => {
      h.clock.advanceSeconds(1);
      await post("/games/promos", { code: "NEWEST", reward: { points: 1 }, max_claims: 5 });
    },
  },
  {
    path: "/missions",
    items: "missions",
    idOf: (m) => m.mission_key,
    filters: {},
    kept: ["total"],
    seed: async () => {
      for (let i = 1; i <= 5; i++) {
        await post("/missions", mission(`mission-${i}`));
        h.clock.advanceSeconds(1);
      }
    },
    // Oldest first: a mission made (on a clock set back) before all of them sorts first.
    addBefore: async () => {
      const now = h.clock.now().toISOString();
      h.clock.set("2025-12-31T00:00:00.000Z");
      await post("/missions", mission("mission-0"));
      h.clock.set(now);
    },
  },
  {
    path: "/missions/comparison?days=7",
    items: "missions",
    idOf: (m) => m.mission_key,
    filters: { days: 7, preset: null },
    kept: ["has_more", "window"],
    seed: async () => {
      for (let i = 1; i <= 5; i++) {
        await post("/missions", mission(`mission-${i}`));
        h.clock.advanceSeconds(1);
      }
    },
    addBefore: async () => {
      const now = h.clock.now().toISOString();
      h.clock.set("2025-12-31T00:00:00.000Z");
      await post("/missions", mission("mission-0"));
      h.clock.set(now);
    },
  },
];

describe.each(CASES)("GET /api/messenger/admin$path", (c) => {
  test("count, the query echo and pagination {has_more, next_offset, next_cursor}; the old fields kept", async () => {
    await setup();
    await c.seed();
    const first = await get(join(c.path, "limit=2"));
    expect(first.status).toBe(200);
    expect(first.body.count).toBe(2);
    expect(first.body[c.items]).toHaveLength(2);
    expect(first.body.query).toEqual({ limit: 2, offset: 0, cursor: null, ...c.filters });
    const cursor = first.body.pagination.next_cursor;
    expect(typeof cursor).toBe("string");
    expect(first.body.pagination).toMatchObject({ has_more: true, next_offset: 2 });
    for (const field of c.kept) expect(first.body[field]).toBeDefined();

    const next = await get(join(c.path, `limit=2&cursor=${cursor}`));
    expect(next.status).toBe(200);
    expect(next.body.query).toEqual({ limit: 2, offset: 0, cursor, ...c.filters });
    // Paging by cursor gives no next_offset: the position is the cursor's.
    expect(next.body.pagination.next_offset).toBeNull();
  });

  test("walking by cursor gives the rows of walking by offset, and a row added before the cursor shifts nothing", async () => {
    await setup();
    await c.seed();
    const limit = c.walkLimit ?? 2;
    const byOffset: string[] = [];
    for (let offset = 0; ; offset += limit) {
      const page = await get(join(c.path, `limit=${limit}&offset=${offset}`));
      byOffset.push(...page.body[c.items].map(c.idOf));
      if (!page.body.pagination.has_more) break;
    }
    const first = await get(join(c.path, `limit=${limit}`));
    const seen: string[] = first.body[c.items].map(c.idOf);
    await c.addBefore();
    // The offset page now repeats the first page's last row; the cursor page continues where the first one ended.
    const shifted = await get(join(c.path, `limit=${limit}&offset=${limit}`));
    expect(shifted.body[c.items].map(c.idOf)).toContain(seen[seen.length - 1]);
    let cursor: string | null = first.body.pagination.next_cursor;
    while (cursor) {
      const page = await get(join(c.path, `limit=${limit}&cursor=${cursor}`));
      expect(page.status).toBe(200);
      seen.push(...page.body[c.items].map(c.idOf));
      cursor = page.body.pagination.next_cursor;
      expect(cursor === null).toBe(!page.body.pagination.has_more);
    }
    expect(seen).toEqual(byOffset);
  });

  test("bounded: limit 1–200, offset ≥ 0, cursor ≤ 512 characters; a cursor it did not issue, or one with an offset, is 400", async () => {
    await setup();
    await c.seed();
    for (const [query, field] of [
      ["limit=0", "query.limit"],
      ["limit=201", "query.limit"],
      ["limit=1.5", "query.limit"],
      ["offset=-1", "query.offset"],
      [`cursor=${"A".repeat(513)}`, "query.cursor"],
      ["cursor=not-a-cursor", "query.cursor"],
      [`cursor=${Buffer.from(JSON.stringify({ a: 5 })).toString("base64url")}`, "query.cursor"],
      [`cursor=${Buffer.from(JSON.stringify({ k: [1, 2, 3] })).toString("base64url")}`, "query.cursor"],
    ] as const) {
      const r = await get(join(c.path, query));
      expect([query, r.status, r.body.error]).toEqual([query, 400, "invalid_query"]);
      expect(r.body.details[0].field).toBe(field);
    }
    const first = await get(join(c.path, "limit=2"));
    const both = await get(join(c.path, `limit=2&offset=2&cursor=${first.body.pagination.next_cursor}`));
    expect([both.status, both.body.details[0].field]).toEqual([400, "query.offset"]);
  });
});

test("a cursor of one list is refused by a list with another sort key", async () => {
  await setup();
  for (let i = 1; i <= 3; i++) {
    await post("/games/catalog-campaigns", {
      game_key: "recon_grid",
      audience_group: "all",
      title: `c${i}`,
      starts_at: at(i * 3600),
      ends_at: at(i * 3600 + 60),
    });
  }
  const campaigns = await get("/games/catalog-campaigns?limit=1");
  const cursor = campaigns.body.pagination.next_cursor;
  for (const path of ["/games/promos", "/games/audience-groups", "/missions"]) {
    const r = await get(`${path}?cursor=${cursor}`);
    expect([path, r.status, r.body.details?.[0]?.field]).toEqual([path, 400, "query.cursor"]);
  }
});
