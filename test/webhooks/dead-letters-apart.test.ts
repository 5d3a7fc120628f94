import { afterEach, expect, test } from "bun:test";
import type { SqliteStore } from "../../src/db/sqlite-engine";
import { csvTable } from "../../src/http/formats/csv";
import { countOperatorDeadLetters, deadLetterNames, deadLetterRows, operatorDeadLetterRows } from "../../src/webhooks/deliveries-store";
import { openTestApp, type TestApp } from "../support/app";
import { testEngine } from "../support/engine";
import { createAdminToken, createKey, signedJson } from "../support/partner";

// The dead-letter reads that grow with the dead letters run apart from the event loop (issue 71; src/db/apart.ts):
// the partner's summary (GET /api/partner/webhooks/dlq) and the operator's console (its page, JSON and CSV exports).
// Each answers as the same reads run in place did, on both engines; on SQLite the read worker ran them.

let h: TestApp | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const DAY_MS = 86_400_000;
const TYPES = ["users.updated", "salutes.credit", "webhook.test"] as const;
const REASONS = ["http_error", "timeout", null] as const;
const OWNERS = [
  ["Acme", "live"],
  ["Acme", "sandbox"],
  ["Globex", "live"],
] as const;

/**
 * 180 deliveries over the last 60 days, by SQL: three owners, three event types, three reasons (one of them none), a
 * fifth of them not dead letters, and last errors a spreadsheet would run as a formula (the CSV neutralises them).
 */
async function seedDeadLetters(app: TestApp): Promise<void> {
  const s = app.ctx.store;
  const now = app.clock.now().getTime();
  const at = (ms: number) => new Date(ms).toISOString();
  const hooks = new Map<string, number>();
  for (const [partner, mode] of OWNERS) {
    const row = await s.get<{ id: number }>(
      `INSERT INTO webhooks (partner, mode, event_type, target_url, secret_ciphertext, created_at, updated_at)
       VALUES (?, ?, 'users.updated', ?, 'x', ?, ?) RETURNING id`,
      [partner, mode, `https://${partner.toLowerCase()}.example/${mode}`, at(now - 90 * DAY_MS), at(now - 90 * DAY_MS)],
    );
    hooks.set(`${partner}/${mode}`, row!.id);
  }
  for (let i = 0; i < 180; i++) {
    const [partner, mode] = OWNERS[i % 3]!;
    const type = TYPES[Math.floor(i / 3) % 3]!;
    const created = now - (i * 60 * DAY_MS) / 180 - 60_000;
    const ev = await s.get<{ id: number }>(
      "INSERT INTO events (public_id, partner, mode, event_type, data, created_at) VALUES (?, ?, ?, ?, '{}', ?) RETURNING id",
      [`evt_apart${i}`, partner, mode, type, at(created)],
    );
    const dead = i % 5 !== 0;
    await s.run(
      `INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, attempts, reason_tag, last_error, last_status_code, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        ev!.id,
        hooks.get(`${partner}/${mode}`)!,
        partner,
        mode,
        dead ? "dead_letter" : "succeeded",
        dead ? 8 : 1,
        dead ? REASONS[i % 3]! : null,
        dead ? (i % 7 === 0 ? '=HYPERLINK("https://evil.example")' : `receiver answered HTTP ${500 + (i % 4)}`) : null,
        dead ? 500 + (i % 4) : 200,
        at(created),
        at(created + 30_000),
      ],
    );
  }
}

const ran = (app: TestApp) => (testEngine() === "sqlite" ? ((app.ctx.store as SqliteStore).reader?.ran ?? 0) : 0);
const expectRanApart = (app: TestApp, before: number) => {
  if (testEngine() === "sqlite") expect(ran(app)).toBeGreaterThan(before);
};

test("GET /api/partner/webhooks/dlq answers as its four reads in place, read in the read worker", async () => {
  h = await openTestApp();
  await seedDeadLetters(h);
  const key = await createKey(h, { partner: "Acme", mode: "live" });
  for (const hours of [24 * 7, 720, 2160]) {
    const since = new Date(h.clock.now().getTime() - hours * 3_600_000).toISOString();
    const inPlace = await deadLetterRows(h.ctx.store, { partner: "Acme", mode: "live" }, since);
    const before = ran(h);
    const res = await signedJson(h, key, "GET", `/api/partner/webhooks/dlq?hours=${hours}`);
    expect(res.status).toBe(200);
    expectRanApart(h, before);
    const body = res.body.data ?? res.body;
    expect(body.dead_letter_count).toBe(inPlace.n);
    expect(body.by_event_type).toEqual(inPlace.byType);
    expect(body.by_reason_tag).toEqual(inPlace.byReason);
    expect(body.events.map((e: { event_id: number }) => e.event_id)).toEqual(inPlace.rows.map((r) => r.id));
    expect(
      body.events.map((e: { public_event_id: string; reason_tag: string | null; last_error: string | null }) => [
        e.public_event_id,
        e.reason_tag,
        e.last_error,
      ]),
    ).toEqual(inPlace.rows.map((r) => [r.event_public_id, r.reason_tag, r.last_error]));
  }
  // The window chose: a week holds fewer dead letters than 90 days, and another owner's never count.
  const week = await deadLetterRows(h.ctx.store, { partner: "Acme", mode: "live" }, new Date(h.clock.now().getTime() - 7 * DAY_MS).toISOString());
  const all = await deadLetterRows(h.ctx.store, { partner: "Acme", mode: "live" }, new Date(h.clock.now().getTime() - 90 * DAY_MS).toISOString());
  expect(week.n).toBeGreaterThan(0);
  expect(all.n).toBe(48); // 60 deliveries of Acme live, every fifth one delivered
  expect(week.n).toBeLessThan(all.n);
});

const COLUMNS = [
  "delivery_id",
  "partner",
  "mode",
  "event_id",
  "event_type",
  "webhook_id",
  "attempts",
  "last_status_code",
  "last_error",
  "reason_tag",
  "target_url",
  "created_at",
  "dead_since",
];

/** The CSV as the export wrote it before its reads and its text moved to the worker: the rows read in place. */
async function csvInPlace(app: TestApp, f: { partner?: string; event_type?: string }): Promise<string> {
  const rows = await operatorDeadLetterRows(app.ctx.store, f, { before: null, limit: 10_001, offset: 0 });
  const records = rows.slice(0, 10_000).map((r) => ({
    delivery_id: r.id,
    partner: r.partner,
    mode: r.mode,
    event_id: r.event_public_id,
    event_type: r.event_type,
    webhook_id: r.webhook_id,
    attempts: r.attempts,
    last_status_code: r.last_status_code,
    last_error: r.last_error,
    reason_tag: r.reason_tag,
    target_url: r.target_url,
    created_at: r.created_at,
    dead_since: r.updated_at,
  }));
  return csvTable(records, COLUMNS);
}

test("the dead-letters console's CSV, JSON and page answer as their reads in place, read (and the CSV written) in the read worker", async () => {
  h = await openTestApp();
  await seedDeadLetters(h);
  const bearer = { authorization: `Bearer ${await createAdminToken(h, "ops")}` };
  const filters: Array<{ partner?: string; event_type?: string }> = [
    {},
    { partner: "Acme" },
    { event_type: "webhook.test" },
    { partner: "Globex", event_type: "users.updated" },
    { partner: "Nobody" },
  ];
  for (const f of filters) {
    const q = new URLSearchParams(f as Record<string, string>).toString();
    let before = ran(h);
    const csv = await h.request(`/admin/console/dead-letters.csv${q ? `?${q}` : ""}`, { headers: bearer });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toStartWith("text/csv");
    expect(await csv.text()).toBe(await csvInPlace(h, f));
    expectRanApart(h, before);

    before = ran(h);
    const json = await h.json(`/admin/console/dead-letters.json?limit=7&offset=3${q ? `&${q}` : ""}`, { headers: bearer });
    expect(json.status).toBe(200);
    expectRanApart(h, before);
    const rows = await operatorDeadLetterRows(h.ctx.store, f, { before: null, limit: 8, offset: 3 });
    const body = json.body.data ?? json.body;
    expect(body.total).toBe(await countOperatorDeadLetters(h.ctx.store, f));
    expect(body.dead_letters.map((d: { delivery_id: number }) => d.delivery_id)).toEqual(rows.slice(0, 7).map((r) => r.id));
    expect(body.pagination.has_more).toBe(rows.length > 7);

    before = ran(h);
    const page = await h.request(`/admin/console/dead-letters${q ? `?${q}` : ""}`, { headers: bearer });
    expect(page.status).toBe(200);
    expectRanApart(h, before);
    const html = await page.text();
    const total = await countOperatorDeadLetters(h.ctx.store, f);
    expect(html).toContain(total === 0 ? "None" : `<strong>${total}</strong>`);
    // The filter suggestions: every partner with a dead letter is offered.
    for (const p of (await deadLetterNames(h.ctx.store)).partners) expect(html).toContain(`<option value="${p}">`);
  }
  // The formula-looking last error is neutralised in the CSV, as before.
  const all = await (await h.request("/admin/console/dead-letters.csv", { headers: bearer })).text();
  expect(all).toContain("'=HYPERLINK");
  expect(all.split("\r\n").filter(Boolean)).toHaveLength(1 + (await countOperatorDeadLetters(h.ctx.store, {})));
});
