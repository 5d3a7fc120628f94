// Growth audit (2026-11-30): request-path lists that walk an index newest first and test a predicate the index does
// not hold, so a filter value few rows match walks every row of the owner on each request. Each case seeds one old
// matching row under many that do not match, times the route over HTTP at two sizes (the rows grow 10×, the match
// stays the oldest) and asserts what a bounded read would give: the time at the larger size under three times the
// smaller's. These do NOT hold today (the walks are unbounded); this file is kept apart so the rest can merge green.
//
// GET /api/partner/webhook-events (src/webhooks/deliveries-store.ts listDeliveryRows): event_type (a JOIN condition
// on events), reason_tag (a column and an EXISTS), status and webhook_id are tested on the entries of
// deliveries_partner_idx (partner, mode, id), which holds none of them; so are from and to (created_at): a `to` before
// all but the oldest delivery, or a `from` after every one, walks them all too.
// GET /api/partner/sandbox/webhook-events (src/sandbox/store.ts sandboxDeliveryRows): user_id (a json field of the
// event's data) and event_type, the same walk.
// GET /api/messenger/admin/games/user-profiles?linked=true (src/messenger/store/players.ts playersPage, operators):
// linked_user_id IS NOT NULL tested on the entries of messenger_players_points_idx (points_earned, telegram_user_id).
// GET /admin/ops/link-inbox/events/export.json?window_preset=last_digest_warn (src/ops/alerts/store.ts warnStreakOf,
// operators): status = 'warn' tested on the entries of ops_alert_runs_source_idx (source, at); the table is never pruned.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openMessengerApp } from "../messenger/support";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";

const AT = "2026-01-01T00:00:00.000Z";
/** The cancelled delivery's created_at: the only one before the `to` case asks (2025-12-31). */
const OLD = "2025-06-01T00:00:00.000Z";
/** The rows of each owner (Acme live, Acme sandbox) at the two sizes. */
const SMALL = 10_000;
const LARGE = 100_000;
/** Ids of the rare rows, the oldest of all: an event of a rare type, a cancelled delivery with a rare tag on a second webhook. */
const RARE_LIVE = 1;
const RARE_SANDBOX = 2;
const CANCELLED = 3;

let h = undefined as unknown as TestApp;
let live = undefined as unknown as TestKey;
let sandbox = undefined as unknown as TestKey;
let admin: Record<string, string> = {};
/** The first bulk id: after the rare rows and the sandbox fixture's own (made at its first request). */
let firstBulk = 0;
/** Rows seeded so far of each owner's bulk (ids firstBulk … firstBulk + 2 * seeded - 1, alternating live and sandbox). */
let seeded = 0;

const overIntegers = (from: number, to: number, insert: string) =>
  `WITH RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to}) ${insert} FROM n ORDER BY i`;

/** The one linked player: the fewest points, so the last of the points order. */
const LINKED_PLAYER = 1;
/** The digest's one warning, older than every other digest alert run (all ok, one a second from 2026-02-01). */
const DIGEST_WARN_AT = "2026-01-15T00:00:00.000Z";
const FIRST_PLAYER = 10;

/** Rows of each owner a step of growTo adds: each statement stays well inside PostgreSQL's 5 s test deadline. */
const STEP = 10_000;

/** Bulk events, deliveries and players up to `perOwner` rows of each owner (and players), none matching the rare filters. */
async function growTo(perOwner: number): Promise<void> {
  while (seeded < perOwner) await growStep(Math.min(perOwner, seeded + STEP));
}

async function growStep(perOwner: number): Promise<void> {
  const from = firstBulk + 2 * seeded;
  const to = firstBulk + 2 * perOwner - 1;
  await h.ctx.store.tx(async (t) => {
    await t.run(
      overIntegers(
        from,
        to,
        `INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at)
         SELECT i, 'evt_w' || i, 'Acme', CASE WHEN i % 2 = 0 THEN 'sandbox' ELSE 'live' END, 'salutes.credit', '{"user_id":"1000"}', '${AT}'`,
      ),
    );
    await t.run(
      overIntegers(
        from,
        to,
        `INSERT INTO webhook_deliveries (id, event_id, webhook_id, partner, mode, status, reason_tag, created_at, updated_at)
         SELECT i, i, CASE WHEN i % 2 = 0 THEN 9003 ELSE 9001 END, 'Acme', CASE WHEN i % 2 = 0 THEN 'sandbox' ELSE 'live' END, 'succeeded', NULL, '${AT}', '${AT}'`,
      ),
    );
    await t.run(
      overIntegers(
        FIRST_PLAYER + seeded,
        FIRST_PLAYER + perOwner - 1,
        `INSERT INTO messenger_players (telegram_user_id, first_name, points_earned, created_at, last_seen_at) SELECT i, 'P' || i, 1 + i % 1000, '${AT}', '${AT}'`,
      ),
    );
    const at =
      t.dialect === "postgres"
        ? `to_char(timestamp '2026-02-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
        : "strftime('%Y-%m-%dT%H:%M:%fZ', '2026-02-01', '+' || i || ' seconds')";
    await t.run(
      overIntegers(
        seeded,
        perOwner - 1,
        `INSERT INTO ops_alert_runs (run_id, at, source, name, status) SELECT 'run-' || i, ${at}, 'digest', '403-digest', 'ok'`,
      ),
    );
  });
  seeded = perOwner;
}

beforeAll(async () => {
  h = await openMessengerApp();
  live = await createKey(h);
  admin = { authorization: `Bearer ${await createAdminToken(h)}` };
  sandbox = await createKey(h, { mode: "sandbox" });
  await h.ctx.store.tx(async (t) => {
    for (const [id, mode] of [
      [9001, "live"],
      [9002, "live"],
      [9003, "sandbox"],
    ] as const) {
      await t.run(
        "INSERT INTO webhooks (id, partner, mode, event_type, target_url, secret_ciphertext, created_at, updated_at) VALUES (?, 'Acme', ?, '*', 'https://hooks.example.com/h', 'c', ?, ?)",
        [id, mode, AT, AT],
      );
    }
    const rare: Array<[number, string, string, string, number, string, string | null]> = [
      [RARE_LIVE, "live", "users.deleted", '{"user_id":"7"}', 9001, "succeeded", null],
      [RARE_SANDBOX, "sandbox", "users.deleted", '{"user_id":"7"}', 9003, "succeeded", null],
      [CANCELLED, "live", "salutes.credit", '{"user_id":"1000"}', 9002, "cancelled", "receiver_fix"],
    ];
    await t.run(
      "INSERT INTO messenger_players (telegram_user_id, first_name, points_earned, linked_user_id, linked_by, created_at, last_seen_at) VALUES (?, 'Linked', 0, 1, 'test', ?, ?)",
      [LINKED_PLAYER, AT, AT],
    );
    await t.run("INSERT INTO ops_alert_runs (run_id, at, source, name, status) VALUES ('run-warn', ?, 'digest', '403-digest', 'warn')", [DIGEST_WARN_AT]);
    for (const [id, mode, type, data, webhook, status, tag] of rare) {
      await t.run("INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at) VALUES (?, ?, 'Acme', ?, ?, ?, ?)", [
        id,
        `evt_rare${id}`,
        mode,
        type,
        data,
        AT,
      ]);
      await t.run(
        "INSERT INTO webhook_deliveries (id, event_id, webhook_id, partner, mode, status, reason_tag, created_at, updated_at) VALUES (?, ?, ?, 'Acme', ?, ?, ?, ?, ?)",
        [id, id, webhook, mode, status, tag, id === CANCELLED ? OLD : AT, AT],
      );
    }
  });
  if (h.ctx.store.dialect === "postgres") {
    // The ids above were given: move each sequence past them, or the fixture's rows would draw them again.
    for (const table of ["webhooks", "events", "webhook_deliveries"])
      await h.ctx.store.get(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT max(id) FROM ${table}))`);
  }
  // The sandbox's fixture is made at its first request: before the bulk, so the rare rows stay the oldest that match.
  expect((await signedJson(h, sandbox, "GET", "/api/partner/sandbox/webhook-events?limit=1")).status).toBe(200);
  const top = await h.ctx.store.get<{ n: number }>(
    "SELECT max(n) AS n FROM (SELECT max(id) AS n FROM events UNION ALL SELECT max(id) FROM webhook_deliveries) m",
  );
  firstBulk = (top?.n ?? 0) + 1;
}, 120_000);
afterAll(() => h?.close());

type Body = Record<string, unknown>;
const eventIds = (b: Body) => (b.events as Array<{ id: number }>).map((e) => e.id);
const playerIds = (b: Body) => (b.players as Array<{ telegram_user_id: number }>).map((p) => p.telegram_user_id);

/** The median of five timed calls (after one untimed), in ms, and what `pick` read of the answer. */
async function timed(key: TestKey | "admin", target: string, pick: (b: Body) => unknown): Promise<{ ms: number; found: unknown }> {
  const call = async () => {
    const r = key === "admin" ? await h.json(target, { headers: admin }) : await signedJson(h, key, "GET", target);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return pick(r.body as Body);
  };
  const found = await call();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { ms: times[2]!, found };
}

const CASES: Array<{ name: string; key: () => TestKey | "admin"; target: string; pick?: (b: Body) => unknown; expected: unknown }> = [
  {
    name: "live event_type (a JOIN condition on events)",
    key: () => live,
    target: "/api/partner/webhook-events?event_type=users.deleted",
    expected: [RARE_LIVE],
  },
  { name: "live reason_tag", key: () => live, target: "/api/partner/webhook-events?reason_tag=receiver_fix", expected: [CANCELLED] },
  { name: "live status", key: () => live, target: "/api/partner/webhook-events?status=cancelled", expected: [CANCELLED] },
  { name: "live webhook_id", key: () => live, target: "/api/partner/webhook-events?webhook_id=9002", expected: [CANCELLED] },
  { name: "live to (created_at)", key: () => live, target: "/api/partner/webhook-events?to=2025-12-31T00:00:00Z", expected: [CANCELLED] },
  { name: "live from (created_at), none after it", key: () => live, target: "/api/partner/webhook-events?from=2026-06-01T00:00:00Z", expected: [] },
  { name: "sandbox user_id (a json field)", key: () => sandbox, target: "/api/partner/sandbox/webhook-events?user_id=7", expected: [RARE_SANDBOX] },
  { name: "sandbox event_type", key: () => sandbox, target: "/api/partner/sandbox/webhook-events?event_type=users.deleted", expected: [RARE_SANDBOX] },
  {
    name: "operators' players linked=true",
    key: () => "admin",
    target: "/api/messenger/admin/games/user-profiles?linked=true",
    pick: playerIds,
    expected: [LINKED_PLAYER],
  },
  {
    name: "operators' link-inbox export, window_preset=last_digest_warn",
    key: () => "admin",
    target: "/admin/ops/link-inbox/events/export.json?window_preset=last_digest_warn&count_only=1",
    pick: (b) => (b.window as { from: string }).from,
    expected: DIGEST_WARN_AT,
  },
];

describe("a rare filter value is found without walking all of the owner's deliveries (or all players)", () => {
  const small = new Map<string, number>();

  test(`at ${SMALL} deliveries of each owner`, async () => {
    await growTo(SMALL);
    for (const c of CASES) {
      const r = await timed(c.key(), c.target, c.pick ?? eventIds);
      expect({ name: c.name, found: r.found }).toEqual({ name: c.name, found: c.expected });
      small.set(c.name, r.ms);
    }
  }, 120_000);

  test(`at ${LARGE} deliveries of each owner the time stays under three times the smaller's`, async () => {
    await growTo(LARGE);
    const grew: Array<{ name: string; smallMs: number; largeMs: number; ratio: number }> = [];
    for (const c of CASES) {
      const r = await timed(c.key(), c.target, c.pick ?? eventIds);
      expect({ name: c.name, found: r.found }).toEqual({ name: c.name, found: c.expected });
      const smallMs = small.get(c.name)!;
      grew.push({ name: c.name, smallMs: Math.round(smallMs * 10) / 10, largeMs: Math.round(r.ms * 10) / 10, ratio: Math.round((r.ms / smallMs) * 10) / 10 });
    }
    console.log(JSON.stringify(grew, null, 1));
    expect(grew.filter((g) => g.largeMs > 3 * g.smallMs + 2)).toEqual([]);
  }, 120_000);
});

// GET /api/public/system-status (and /status.json): every check is evaluated on the request, the chain_rpc check
// with each host's latest success (src/chain/store/rpc-calls.ts hostLatest): outcome = 'ok' tested on the entries of
// chain_rpc_calls_host_idx (host, at), newest first. A host failing since its last success walks every call since,
// up to the 7 days the calls are kept (RPC_CALLS_RETENTION_DAYS), on each public request.
describe("the public system status finds a failing host's last success without walking its calls since", () => {
  const T0 = "2026-03-10T12:00:00.000Z";
  const LAST_OK = "2026-03-04T00:00:00.000Z";
  let s = undefined as unknown as TestApp;
  let host = "";
  let calls = 0;

  beforeAll(async () => {
    s = await openTestApp({
      clock: new FakeClock(T0),
      env: { TOKEN_MINT: "9EVthMCQwN6pWeBjaniiQwLNYAgApKUiyn63mWGVUUZm", SOLANA_RPC_URLS: "http://127.0.0.1:9/a" },
    });
    host = s.ctx.chain.endpoints[0]!.host;
    await s.ctx.store.run("INSERT INTO chain_rpc_calls (at, host, method, outcome, http_status, latency_ms) VALUES (?, ?, 'getTokenSupply', 'ok', 200, 5)", [
      LAST_OK,
      host,
    ]);
  });
  afterAll(() => s?.close());

  /** Failed calls up to `n`, one each 2 s from 2026-03-05: after the success, before the check's window. */
  async function failedCallsTo(n: number): Promise<void> {
    const at =
      s.ctx.store.dialect === "postgres"
        ? `to_char(timestamp '2026-03-05' + i * interval '2 seconds', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
        : "strftime('%Y-%m-%dT%H:%M:%fZ', '2026-03-05', '+' || (i * 2) || ' seconds')";
    await s.ctx.store.run(
      `${overIntegers(calls, n - 1, `INSERT INTO chain_rpc_calls (at, host, method, outcome, http_status, latency_ms, error) SELECT ${at}, ?, 'getTokenSupply', 'http_error', 500, 5, 'HTTP 500'`)}`,
      [host],
    );
    calls = n;
  }

  async function statusMs(): Promise<number> {
    const call = async () => {
      const r = await s.json("/api/public/system-status");
      expect(r.status).toBe(200);
      expect(r.body.checks.chain_rpc.hosts[0]).toMatchObject({ host, calls: 0, last_outcome: "http_error", last_success_at: LAST_OK });
    };
    await call();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await call();
      times.push(performance.now() - t0);
    }
    return times.sort((a, b) => a - b)[2]!;
  }

  test("from 20,000 to 200,000 failed calls since the last success the answer stays under twice as slow", async () => {
    await failedCallsTo(20_000);
    const smallMs = await statusMs();
    await failedCallsTo(200_000);
    const largeMs = await statusMs();
    console.log(JSON.stringify({ name: "public system-status, chain_rpc last success", smallMs, largeMs, ratio: largeMs / smallMs }));
    expect(largeMs).toBeLessThan(2 * smallMs + 2);
  }, 120_000);
});

// PUT /admin/transparency/triage/:signature (src/transparency/store/rows.ts flaggedByCompleteRun, operators): whether
// a complete run flagged the signature walks audit_rows_top_idx (run_id, severity_rank, abs_key) run after run and
// tests signature, which no index of audit_rows holds: a signature no complete run flagged (a 404) reads every
// anomalous row ever kept.
describe("the triage of a signature finds whether it was flagged without walking every anomalous row", () => {
  const ROWS_PER_RUN = 1_000;
  let t = undefined as unknown as TestApp;
  let auth: Record<string, string> = {};
  let runs = 0;

  beforeAll(async () => {
    t = await openTestApp();
    auth = { authorization: `Bearer ${await createAdminToken(t)}` };
  });
  afterAll(() => t?.close());

  /** Complete runs up to `n`, each with ROWS_PER_RUN anomalous rows. */
  async function runsTo(n: number): Promise<void> {
    await t.ctx.store.run(
      overIntegers(
        runs + 1,
        n,
        `INSERT INTO audit_runs (id, label, day, started_at, finished_at, mint, decimals, is_complete, rows_total, thresholds)
         SELECT i, 'run-' || i, '2026-04-01', '2026-04-01T00:00:00Z', '2026-04-01T00:00:01Z', 'M', 6, 1, ${ROWS_PER_RUN}, '{}'`,
      ),
    );
    await t.ctx.store.run(
      overIntegers(
        runs * ROWS_PER_RUN,
        n * ROWS_PER_RUN - 1,
        `INSERT INTO audit_rows (run_id, kind, signature, slot, block_time, delta_raw, abs_key, types, severity_rank)
         SELECT 1 + i / ${ROWS_PER_RUN}, 'transaction', 'sig-' || i, i, NULL, '-5', '0005', 'large_outflow', 2`,
      ),
    );
    runs = n;
  }

  async function triageMs(): Promise<number> {
    const call = async () => {
      const r = await t.json("/admin/transparency/triage/sigNeverFlagged", jsonInit("PUT", { status: "investigating", owner: "ops" }, auth));
      expect(r.status).toBe(404);
    };
    await call();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await call();
      times.push(performance.now() - t0);
    }
    return times.sort((a, b) => a - b)[2]!;
  }

  test("from 10 to 100 complete runs (10,000 to 100,000 anomalous rows) the answer stays under three times as slow", async () => {
    await runsTo(10);
    const smallMs = await triageMs();
    await runsTo(100);
    const largeMs = await triageMs();
    console.log(JSON.stringify({ name: "operators' triage PUT, signature never flagged", smallMs, largeMs, ratio: largeMs / smallMs }));
    expect(largeMs).toBeLessThan(3 * smallMs + 2);
  }, 120_000);
});
