// The delivery records' filters are windowed (scanWindow, src/db/port.ts): no index holds them together, so with a
// filter a page looks through at most SCAN_WINDOW of the owner's deliveries. A value few deliveries match answers
// short (even empty) pages with has_more and a next_cursor below the window; following the cursors finds exactly
// the matches, in order, and ends. Live (GET /api/partner/webhook-events) and sandbox (its user_id and event_type,
// both orders). The times before and after are in bench/README.md ("Filtered walks"), not asserted here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SCAN_WINDOW } from "../../src/db/port";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";

const AT = "2026-01-01T00:00:00.000Z";
/** Two and a half windows of deliveries of each owner (live and sandbox). */
const BULK = SCAN_WINDOW * 2 + SCAN_WINDOW / 2;
/** The rare deliveries, older than the bulk: one live, one sandbox (a users.deleted event naming user 7). */
const RARE_LIVE = 1;
const RARE_SANDBOX = 2;

let h = undefined as unknown as TestApp;
let live = undefined as unknown as TestKey;
let sandbox = undefined as unknown as TestKey;

beforeAll(async () => {
  h = await openTestApp();
  live = await createKey(h);
  sandbox = await createKey(h, { mode: "sandbox" });
  await h.ctx.store.tx(async (t) => {
    for (const [id, mode] of [
      [9001, "live"],
      [9002, "sandbox"],
    ] as const) {
      await t.run(
        "INSERT INTO webhooks (id, partner, mode, event_type, target_url, secret_ciphertext, created_at, updated_at) VALUES (?, 'Acme', ?, '*', 'https://hooks.example.com/h', 'c', ?, ?)",
        [id, mode, AT, AT],
      );
    }
    for (const [id, mode, webhook] of [
      [RARE_LIVE, "live", 9001],
      [RARE_SANDBOX, "sandbox", 9002],
    ] as const) {
      await t.run("INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at) VALUES (?, ?, 'Acme', ?, 'users.deleted', ?, ?)", [
        id,
        `evt_rare${id}`,
        mode,
        '{"user_id":"7"}',
        AT,
      ]);
      await t.run(
        "INSERT INTO webhook_deliveries (id, event_id, webhook_id, partner, mode, status, created_at, updated_at) VALUES (?, ?, ?, 'Acme', ?, 'cancelled', ?, ?)",
        [id, id, webhook, mode, AT, AT],
      );
    }
  });
  if (h.ctx.store.dialect === "postgres") {
    for (const table of ["webhooks", "events", "webhook_deliveries"])
      await h.ctx.store.get(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT max(id) FROM ${table}))`);
  }
  // The sandbox's fixture is made at its first request: before the bulk, so the rare deliveries stay the oldest.
  expect((await signedJson(h, sandbox, "GET", "/api/partner/sandbox/webhook-events?limit=1")).status).toBe(200);
  const first = ((await h.ctx.store.get<{ n: number }>("SELECT max(id) AS n FROM events"))?.n ?? 0) + 1;
  // The bulk in steps (each statement well inside PostgreSQL's test deadline): live and sandbox alternate.
  for (let from = 0; from < 2 * BULK; from += 10_000) {
    const to = Math.min(2 * BULK, from + 10_000) - 1;
    const series = `WITH RECURSIVE n(i) AS (SELECT ${first + from} UNION ALL SELECT i + 1 FROM n WHERE i < ${first + to})`;
    const mode = "CASE WHEN i % 2 = 0 THEN 'sandbox' ELSE 'live' END";
    await h.ctx.store.tx(async (t) => {
      await t.run(
        `${series} INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at)
         SELECT i, 'evt_b' || i, 'Acme', ${mode}, 'salutes.credit', '{"user_id":"1000"}', '${AT}' FROM n ORDER BY i`,
      );
      await t.run(
        `${series} INSERT INTO webhook_deliveries (id, event_id, webhook_id, partner, mode, status, created_at, updated_at)
         SELECT i, i, CASE WHEN i % 2 = 0 THEN 9002 ELSE 9001 END, 'Acme', ${mode}, 'succeeded', '${AT}', '${AT}' FROM n ORDER BY i`,
      );
    });
  }
}, 120_000);
afterAll(() => h?.close());

interface Page {
  events: Array<{ id: number }>;
  pagination: { has_more: boolean; next_offset: number | null; next_cursor: string | null };
}

/** Follows next_cursor from the first page (bounded): each page's count and the ids found, in order. */
async function follow(key: TestKey, path: string): Promise<{ counts: number[]; ids: number[]; shortWithMore: Page["pagination"][] }> {
  const counts: number[] = [];
  const ids: number[] = [];
  const shortWithMore: Page["pagination"][] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 20; i++) {
    const r = await signedJson(h, key, "GET", `${path}${cursor === null ? "" : `&cursor=${cursor}`}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const page = r.body as Page;
    counts.push(page.events.length);
    ids.push(...page.events.map((e) => e.id));
    if (page.pagination.has_more && page.events.length < 50) shortWithMore.push(page.pagination);
    if (!page.pagination.has_more) break;
    cursor = page.pagination.next_cursor;
  }
  return { counts, ids, shortWithMore };
}

/** The owner's deliveries a filter matches, straight from the table, in the list's order. */
async function matching(mode: string, where: string, order: "ASC" | "DESC" = "DESC"): Promise<number[]> {
  const rows = await h.ctx.store.all<{ id: number }>(
    `SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.partner = 'Acme' AND d.mode = ? AND ${where} ORDER BY d.id ${order}`,
    [mode],
  );
  return rows.map((r) => r.id);
}

describe("GET /api/partner/webhook-events with a filter: a window of deliveries a page", () => {
  test("a rare event_type: empty pages with has_more down to the window that holds it, then the end", async () => {
    const found = await follow(live, "/api/partner/webhook-events?event_type=users.deleted&limit=50");
    expect(found.ids).toEqual(await matching("live", "e.event_type = 'users.deleted'"));
    expect(found.ids).toEqual([RARE_LIVE]);
    expect(found.counts).toEqual([0, 0, 1]);
    for (const p of found.shortWithMore) expect(p).toMatchObject({ has_more: true, next_offset: null, next_cursor: expect.any(String) });
  });

  test("each filter alone ends after as many pages as windows: status, reason_tag, webhook_id, from, to", async () => {
    for (const [query, where] of [
      ["status=cancelled", "d.status = 'cancelled'"],
      ["webhook_id=9002", "d.webhook_id = 9002"],
      ["reason_tag=receiver_fix", "d.reason_tag = 'receiver_fix'"],
      ["from=2026-06-01T00:00:00Z", "d.created_at >= '2026-06-01'"],
      ["to=2025-12-31T00:00:00Z", "d.created_at < '2025-12-31'"],
    ] as const) {
      const found = await follow(live, `/api/partner/webhook-events?${query}&limit=50`);
      expect({ query, ids: found.ids, pages: found.counts.length }).toEqual({ query, ids: await matching("live", where), pages: 3 });
    }
  });

  test("a common filter fills its page at once and pages on as any list (the last row's cursor, the next offset)", async () => {
    const r = await signedJson(h, live, "GET", "/api/partner/webhook-events?status=succeeded&limit=3");
    const page = r.body as Page;
    expect(page.events).toHaveLength(3);
    expect(page.pagination).toMatchObject({ has_more: true, next_offset: 3 });
  });
});

describe("GET /api/partner/sandbox/webhook-events with user_id or event_type: windowed in either order", () => {
  test("oldest first: the rare delivery on the first page, then empty pages until the deliveries end", async () => {
    const found = await follow(sandbox, "/api/partner/sandbox/webhook-events?user_id=7&order=asc&limit=50");
    expect(found.ids).toEqual(await matching("sandbox", 'e.data LIKE \'%"user_id":"7"%\'', "ASC"));
    expect(found.ids[0]).toBe(RARE_SANDBOX);
    expect(found.counts.length).toBeLessThanOrEqual(4);
  });

  test("newest first: the same matches, reversed", async () => {
    const found = await follow(sandbox, "/api/partner/sandbox/webhook-events?event_type=users.deleted&limit=50");
    expect(found.ids).toEqual(await matching("sandbox", "e.event_type = 'users.deleted'"));
    expect(found.ids.at(-1)).toBe(RARE_SANDBOX);
    expect(found.counts.length).toBeLessThanOrEqual(4);
  });
});
