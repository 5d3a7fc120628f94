// A `q` search of the users list is bounded: a page looks through at most SCAN_WINDOW of the owner's users, so a
// q that matches few of many users answers short (even empty) pages with has_more and a next_cursor that goes on
// below the window; following the cursors finds every match, newest first, and ends. The exact filters (and status,
// down its own index) are not windowed: their pages are whole.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeCursor } from "../../src/http/pagination";
import { SCAN_WINDOW } from "../../src/db/port";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";

/** Two and a half windows of the owner's users: ids 1..USERS in insertion order (the seed names no id). */
const USERS = SCAN_WINDOW * 2 + SCAN_WINDOW / 2;
/** The users whose display name holds "Needle": one in each window, counted from the newest. */
const NEEDLES = [USERS - 1_000, USERS - SCAN_WINDOW - 500, 3];
const SUSPENDED = [USERS - 1, 2];

let h = undefined as unknown as TestApp;
let key = undefined as unknown as TestKey;

beforeAll(async () => {
  h = await openTestApp();
  key = await createKey(h);
  const needles = NEEDLES.join(", ");
  await h.ctx.store.run(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${USERS})
     INSERT INTO partner_users (partner, mode, external_id, username, display_name, email, status, is_verified, created_at, updated_at)
     SELECT 'Acme', 'live', 'ext-' || i, 'user_' || i, CASE WHEN i IN (${needles}) THEN 'The Needle ' || i ELSE 'Player ' || i END,
       'user' || i || '@example.com', CASE WHEN i IN (${SUSPENDED.join(", ")}) THEN 'suspended' ELSE 'active' END, 0,
       '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
     FROM n ORDER BY i`,
  );
  const ids = await h.ctx.store.get<{ lo: number; hi: number }>("SELECT min(id) AS lo, max(id) AS hi FROM partner_users");
  expect(ids).toEqual({ lo: 1, hi: USERS });
  const needle = await h.ctx.store.get<{ id: number }>("SELECT id FROM partner_users WHERE external_id = ?", [`ext-${NEEDLES[1]}`]);
  expect(needle?.id).toBe(NEEDLES[1]!);
}, 120_000);
afterAll(() => h?.close());

interface UsersPage {
  count: number;
  users: Array<{ id: number }>;
  pagination: { has_more: boolean; next_offset: number | null; next_cursor: string | null };
}

async function usersPage(query: string): Promise<UsersPage> {
  const r = await signedJson(h, key, "GET", `/api/partner/users?${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as UsersPage;
}

describe("GET /api/partner/users?q=: a window of users a page", () => {
  test("each page looks through one window; the cursors go on below it and find every match, newest first", async () => {
    const first = await usersPage("q=needle&limit=50");
    expect(first.users.map((u) => u.id)).toEqual([NEEDLES[0]!]);
    expect(first.pagination).toEqual({ has_more: true, next_offset: null, next_cursor: encodeCursor(USERS - SCAN_WINDOW + 1) });

    const second = await usersPage(`q=needle&limit=50&cursor=${first.pagination.next_cursor}`);
    expect(second.users.map((u) => u.id)).toEqual([NEEDLES[1]!]);
    expect(second.pagination).toEqual({ has_more: true, next_offset: null, next_cursor: encodeCursor(USERS - 2 * SCAN_WINDOW + 1) });

    // The last window holds fewer users than a window: it ends the search.
    const third = await usersPage(`q=needle&limit=50&cursor=${second.pagination.next_cursor}`);
    expect(third.users.map((u) => u.id)).toEqual([NEEDLES[2]!]);
    expect(third.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
  });

  test("a q matching none: empty pages with has_more until the owner's users end, never more pages than windows", async () => {
    let cursor: string | null = null;
    const pages: number[] = [];
    for (let i = 0; i < 10; i++) {
      const page: UsersPage = await usersPage(`q=zzz-none${cursor === null ? "" : `&cursor=${cursor}`}`);
      pages.push(page.count);
      cursor = page.pagination.next_cursor;
      if (!page.pagination.has_more) break;
    }
    expect(pages).toEqual([0, 0, 0]);
    expect(cursor).toBeNull();
  });

  test("a full page pages on as any list does (its last user's cursor, the next offset)", async () => {
    const page = await usersPage("q=player&limit=3");
    expect(page.users.map((u) => u.id)).toEqual([USERS, USERS - 1, USERS - 2]);
    expect(page.pagination).toEqual({ has_more: true, next_offset: 3, next_cursor: encodeCursor(USERS - 2) });
  });

  test("an offset counts matches within the first window; past them, the cursor goes on below it", async () => {
    const page = await usersPage("q=needle&offset=1");
    expect(page.count).toBe(0);
    expect(page.pagination).toEqual({ has_more: true, next_offset: null, next_cursor: encodeCursor(USERS - SCAN_WINDOW + 1) });
  });

  test("with an exact filter the search is not windowed: the lookup by email finds a user of the oldest window at once", async () => {
    const r = await signedJson(h, key, "GET", "/api/partner/user-lookup?q=needle&email=user3@example.com");
    expect(r.status).toBe(200);
    expect(r.body.users.map((u: { id: number }) => u.id)).toEqual([3]);
    expect(r.body.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
  });

  test("status is found down its own index: both suspended users, newest and oldest, on one whole page", async () => {
    const page = await usersPage("status=suspended");
    expect(page.users.map((u) => u.id)).toEqual(SUSPENDED);
    expect(page.pagination.has_more).toBe(false);
  });
});
