import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { recordAlertRun } from "../../src/ops/alerts/service";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";
import { AUDIO_ENV } from "../audio-share/support";

// The operators' lists that answered a bare array (issue 53, item 2) in the list shape of docs/http-conventions.md
// "Lists": `count` (items in this answer), the `query` echo (limit, offset, cursor and the list's filters) and
// `pagination {has_more, next_offset, next_cursor}`, each keeping the fields it had. The lists read from a table
// with a unique sort key page by cursor too (the last row's key: a row added ahead of it shifts no page); the short
// in-memory views (jobs, what fires now, the link targets) page by offset and say how many there are in all.
// limit 1–200, offset ≥ 0 and a cursor of at most 512 characters are bounded in the schemas (400 invalid_query
// naming the parameter); a cursor the list did not issue is 400 too.

const T0 = "2026-04-01T10:00:00.000Z";
let h: TestApp;
let auth: Record<string, string>;

interface ListCase {
  path: string;
  /** The array field and a row's identity in it. */
  items: string;
  idOf: (row: any) => string;
  /** The query echo beyond limit, offset and cursor. */
  filters?: Record<string, unknown>;
  /** Fields the answer had before it was a list, still there. */
  kept: string[];
  /** Pages by cursor as well as by offset. */
  cursor: boolean;
}

const CASES: ListCase[] = [
  { path: "/admin/sessions", items: "sessions", idOf: (s) => s.id, kept: ["count", "sessions"], cursor: true },
  {
    path: "/admin/partners/keys?mode=live",
    items: "keys",
    idOf: (k) => k.key_id,
    filters: { partner: null, mode: "live", status: null },
    kept: ["count", "keys"],
    cursor: true,
  },
  { path: "/admin/audio-share/track-tokens", items: "track_tokens", idOf: (x) => String(x.id), kept: ["count", "track_tokens"], cursor: true },
  { path: "/admin/transparency/declared-movements", items: "movements", idOf: (m) => String(m.id), kept: ["count", "movements"], cursor: true },
  { path: "/admin/jobs", items: "jobs", idOf: (j) => j.name, kept: ["jobs"], cursor: false },
  {
    path: "/admin/ops/alerts-monitor/firing.json?source=preflight",
    items: "alerts",
    idOf: (a) => a.key,
    filters: { source: "preflight", level: null },
    kept: ["generated_at", "count", "silenced", "alerts"],
    cursor: false,
  },
  {
    path: "/admin/ops/link-inbox/targets.json",
    items: "targets",
    idOf: (x) => x.target,
    kept: ["generated_at", "count", "down", "dead", "targets"],
    cursor: false,
  },
];

const join = (path: string, extra: string) => `${path}${path.includes("?") ? "&" : "?"}${extra}`;
const get = (path: string) => h.json(path, { headers: auth });

beforeAll(async () => {
  h = await openTestApp({
    clock: new FakeClock(T0),
    env: {
      ...AUDIO_ENV,
      // Five link targets the private-address policy refuses: configured (and listed) without anything sent.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "0",
      LINK_INBOX_WEBHOOK_URLS: ["a", "b", "c", "d", "e"].map((p) => `http://127.0.0.1:9/${p}`).join(","),
    },
  });
  const token = await createAdminToken(h, "ops");
  auth = { authorization: `Bearer ${token}` };
  // Sessions, keys and tokens made in the same millisecond: their lists break the tie by hash or id.
  for (let i = 0; i < 5; i++) await signedInCookie(h, token);
  for (let i = 0; i < 5; i++) {
    expect((await h.json("/admin/partners/keys", jsonInit("POST", { partner: `P${i}`, mode: "live", scopes: ["read"] }, auth))).status).toBe(201);
    expect((await h.json("/admin/audio-share/track-tokens", jsonInit("POST", { name: `player ${i}` }, auth))).status).toBe(201);
  }
  // A sandbox key the mode filter leaves out.
  expect((await h.json("/admin/partners/keys", jsonInit("POST", { partner: "Sandy", mode: "sandbox", scopes: ["read"] }, auth))).status).toBe(201);
  for (let i = 0; i < 5; i++) {
    await h.ctx.store.run(
      `INSERT INTO declared_movements (direction, amount_raw, decimals, window_start, window_end, max_transactions, reason, created_at, created_by)
       VALUES ('outflow', ?, 6, '2026-04-01T00:00:00.000Z', '2026-04-02T00:00:00.000Z', 1, 'payroll', ?, 'admin:ops#1')`,
      [String(1_000_000 * (i + 1)), T0],
    );
  }
  await recordAlertRun(h.ctx, {
    source: "preflight",
    alerts: ["a", "b", "c", "d", "e"].map((n, i) => ({ name: `guard.${n}`, status: i % 2 ? "warn" : "fail", value: String(i) })),
  });
});
afterAll(() => h.close());

describe.each(CASES)("GET $path", (c) => {
  test("the list shape, the fields it had, and every row once walking by offset", async () => {
    const all = await get(join(c.path, "limit=200"));
    expect(all.status).toBe(200);
    for (const f of c.kept) expect(all.body).toHaveProperty(f);
    const ids: string[] = all.body[c.items].map(c.idOf);
    expect(ids.length).toBeGreaterThanOrEqual(5);
    expect(all.body.count).toBe(ids.length);
    expect(all.body.query).toEqual({ limit: 200, offset: 0, cursor: null, ...c.filters });
    expect(all.body.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });

    const first = await get(join(c.path, "limit=2"));
    expect(first.body.count).toBe(2);
    expect(first.body.pagination).toMatchObject({ has_more: true, next_offset: 2 });
    expect(first.body.pagination.next_cursor === null).toBe(!c.cursor);
    const walked: string[] = [];
    for (let offset = 0; offset < ids.length + 2; offset += 2) {
      const page = await get(join(c.path, `limit=2&offset=${offset}`));
      expect(page.status).toBe(200);
      expect(page.body.query).toMatchObject({ limit: 2, offset });
      walked.push(...page.body[c.items].map(c.idOf));
      if (!page.body.pagination.has_more) break;
      expect(page.body.pagination.next_offset).toBe(offset + 2);
    }
    expect(walked).toEqual(ids);
  });

  test("limit, offset and cursor are bounded; a cursor the list did not issue is refused", async () => {
    const refusals: Array<[string, string]> = [
      ["limit=0", "query.limit"],
      ["limit=201", "query.limit"],
      ["offset=-1", "query.offset"],
    ];
    if (c.cursor) {
      refusals.push([`cursor=${"a".repeat(513)}`, "query.cursor"], ["cursor=not-ours", "query.cursor"]);
      const next = (await get(join(c.path, "limit=1"))).body.pagination.next_cursor;
      refusals.push([`cursor=${next}&offset=1`, "query.offset"]);
    }
    for (const [query, field] of refusals) {
      const r = await get(join(c.path, query));
      expect({ query, status: r.status, error: r.body.error, field: r.body.details?.[0]?.field }).toEqual({
        query,
        status: 400,
        error: "invalid_query",
        field,
      });
    }
  });
});

describe.each(CASES.filter((c) => c.cursor))("GET $path by cursor", (c) => {
  test("walking by cursor gives every row once, in the list's order", async () => {
    const ids: string[] = (await get(join(c.path, "limit=200"))).body[c.items].map(c.idOf);
    const walked: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < ids.length; i++) {
      const page: { status: number; body: any } = await get(join(c.path, `limit=2${cursor ? `&cursor=${cursor}` : ""}`));
      expect(page.status).toBe(200);
      expect(page.body.query).toMatchObject({ limit: 2, offset: 0, cursor });
      walked.push(...page.body[c.items].map(c.idOf));
      cursor = page.body.pagination.next_cursor;
      if (!page.body.pagination.has_more) break;
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      // Past the first page a cursor marks the position: there is no offset to give.
      if (i > 0) expect(page.body.pagination.next_offset).toBeNull();
    }
    expect(walked).toEqual(ids);
  });
});

test("a session signed in after a cursor was taken shifts no page of /admin/sessions (newest first)", async () => {
  const ids: string[] = (await get("/admin/sessions?limit=200")).body.sessions.map((s: any) => s.id);
  const first = await get("/admin/sessions?limit=2");
  h.clock.advanceSeconds(1);
  await signedInCookie(h, auth.authorization!.slice("Bearer ".length));
  const rest: string[] = [];
  let cursor: string | null = first.body.pagination.next_cursor;
  while (cursor) {
    const page: { body: any } = await get(`/admin/sessions?limit=2&cursor=${cursor}`);
    rest.push(...page.body.sessions.map((s: any) => s.id));
    cursor = page.body.pagination.next_cursor;
  }
  expect([...first.body.sessions.map((s: any) => s.id), ...rest]).toEqual(ids);
  expect((await get("/admin/sessions?limit=200")).body.count).toBe(ids.length + 1);
});

test("firing.json and targets.json still count what is firing or down in all, and say how many there are", async () => {
  const firing = await get("/admin/ops/alerts-monitor/firing.json?source=preflight&limit=2");
  expect(firing.body).toMatchObject({ count: 2, total: 5, silenced: 0 });
  const targets = await get("/admin/ops/link-inbox/targets.json?limit=2");
  expect(targets.body).toMatchObject({ count: 2, total: 5, down: 5, dead: 5 });
  const jobs = await get("/admin/jobs?limit=2");
  expect(jobs.body.total).toBe((await get("/admin/jobs?limit=200")).body.jobs.length);
});
