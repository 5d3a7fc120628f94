import { Database, type SQLQueryBindings } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { prune as pruneAudioShare } from "../../src/audio-share/store/links";
import { pruneIdempotency } from "../../src/auth/store/idempotency";
import { pruneNonces } from "../../src/auth/store/nonces";
import { pruneSessions } from "../../src/auth/store/sessions";
import { pruneCalls } from "../../src/chain/store/rpc-calls";
import type { BatchBound } from "../../src/db/batched-delete";
import type { Param, Queryable, Store } from "../../src/db/port";
import { RequestLog } from "../../src/http/request-log/log";
import { pruneRuns } from "../../src/jobs/store";
import { pruneBotRows } from "../../src/messenger/store/bot";
import { pruneCounters } from "../../src/messenger/store/counters";
import { pruneChallenges } from "../../src/messenger/store/wallets";
import { deleteProbeRunsBefore } from "../../src/ops/readiness/store";
import { pruneIncidents } from "../../src/status/store/incidents";
import { pruneSnapshots } from "../../src/status/store/snapshots";
import { pruneDeliveries as pruneNotifications } from "../../src/status/store/subscribers";
import { pruneDeliveries } from "../../src/webhooks/deliveries-store";
import { openTestApp, type TestApp } from "../support/app";
import { CountingStore, type SentStatement } from "../support/counting-store";
import { testEngine } from "../support/engine";

// Every prune of issue 71, through its domain's store function, on both engines (HERALD_TEST_ENGINE=postgres): a
// prune over more rows than a batch deletes them all over several statements and keeps the rows it should; a time
// bound leaves rows for the next call, which finishes; and no statement a prune sends reads a whole table — each
// finds its rows down an index (EXPLAIN QUERY PLAN on SQLite; EXPLAIN with seq scans priced out on PostgreSQL).

const OLD = "2025-01-01T00:00:00.000Z";
const NEW = "2025-06-01T00:00:00.000Z";
const CUTOFF = "2025-03-01T00:00:00.000Z";
const DOOMED = 25;
const BATCH = 10;

let h: TestApp;
let store: CountingStore;
beforeEach(async () => {
  h = await openTestApp();
  store = new CountingStore(h.ctx.store);
});
afterEach(async () => {
  await h?.close();
});

const count = async (sql: string, params: Param[] = []) => (await h.ctx.store.get<{ n: number }>(`SELECT count(*) AS n FROM ${sql}`, params))!.n;

/** Inserts `n` rows of `sql`, the i-th with `params(i)`, in one transaction. */
async function seed(sql: string, n: number, params: (i: number) => Param[]): Promise<void> {
  await h.ctx.store.tx(async (t) => {
    for (let i = 0; i < n; i++) await t.run(sql, params(i));
  });
}

interface Outcome {
  deleted: number;
  done: boolean;
}

interface PruneCase {
  name: string;
  /** Seeds DOOMED rows to go, and some to stay. */
  seed(): Promise<void>;
  prune(store: Store, bound: BatchBound): Promise<Outcome>;
  /** Rows the prune should delete that are left, and rows it must keep that are left. */
  left(): Promise<{ doomed: number; kept: number }>;
  kept: number;
}

const sum = (...rs: Outcome[]): Outcome => ({ deleted: rs.reduce((n, r) => n + r.deleted, 0), done: rs.every((r) => r.done) });

const CASES: PruneCase[] = [
  {
    name: "request_log (request-log-prune)",
    seed: () =>
      seed("INSERT INTO request_log (at, method, route, status, latency_us, request_id) VALUES (?, 'GET', '/x', 200, 1, 'r')", DOOMED + 3, (i) => [
        i < DOOMED ? OLD : NEW,
      ]),
    prune: (s, bound) => new RequestLog(s, h.ctx.log).prune(CUTOFF, bound),
    left: async () => ({ doomed: await count("request_log WHERE at < ?", [CUTOFF]), kept: await count("request_log WHERE at >= ?", [CUTOFF]) }),
    kept: 3,
  },
  {
    name: "job_runs (job-runs-prune)",
    seed: () => seed("INSERT INTO job_runs (name, started_at, trigger) VALUES ('j', ?, 'schedule')", DOOMED + 3, (i) => [i < DOOMED ? OLD : NEW]),
    prune: (s, bound) => pruneRuns(s, CUTOFF, bound),
    left: async () => ({ doomed: await count("job_runs WHERE started_at < ?", [CUTOFF]), kept: await count("job_runs WHERE started_at >= ?", [CUTOFF]) }),
    kept: 3,
  },
  {
    name: "ops_probe_runs (synthetic-probes)",
    seed: () =>
      seed("INSERT INTO ops_probe_runs (run_id, at, probe, url, had_data, ok) VALUES ('r', ?, 'p', 'u', 1, 1)", DOOMED + 3, (i) => [i < DOOMED ? OLD : NEW]),
    prune: (s, bound) => deleteProbeRunsBefore(s, CUTOFF, bound),
    left: async () => ({ doomed: await count("ops_probe_runs WHERE at < ?", [CUTOFF]), kept: await count("ops_probe_runs WHERE at >= ?", [CUTOFF]) }),
    kept: 3,
  },
  {
    name: "admin_sessions (auth-prune): expired, or revoked long enough ago",
    seed: () =>
      seed(
        "INSERT INTO admin_sessions (session_hash, csrf_hash, admin_token_id, created_at, expires_at, revoked_at) VALUES (?, 'c', 1, ?, ?, ?)",
        DOOMED + 4,
        // Doomed: odd ones expired, even ones revoked before the cutoff. Kept: live, and revoked after the cutoff.
        (i) => [`s${i}`, OLD, i < DOOMED && i % 2 ? OLD : NEW, i < DOOMED ? (i % 2 ? null : OLD) : i % 2 ? NEW : null],
      ),
    prune: (s, bound) => pruneSessions(s, CUTOFF, CUTOFF, bound),
    left: async () => ({
      doomed: await count("admin_sessions WHERE expires_at <= ? OR revoked_at <= ?", [CUTOFF, CUTOFF]),
      kept: await count("admin_sessions WHERE expires_at > ? AND (revoked_at IS NULL OR revoked_at > ?)", [CUTOFF, CUTOFF]),
    }),
    kept: 4,
  },
  {
    name: "partner_nonces (auth-prune)",
    seed: () => seed("INSERT INTO partner_nonces (key_id, nonce, expires_at) VALUES ('k', ?, ?)", DOOMED + 3, (i) => [`n${i}`, i < DOOMED ? OLD : NEW]),
    prune: (s, bound) => pruneNonces(s, CUTOFF, bound),
    left: async () => ({
      doomed: await count("partner_nonces WHERE expires_at <= ?", [CUTOFF]),
      kept: await count("partner_nonces WHERE expires_at > ?", [CUTOFF]),
    }),
    kept: 3,
  },
  {
    name: "idempotency_records (auth-prune): an expired claim still locked stays",
    seed: () =>
      seed(
        "INSERT INTO idempotency_records (key_id, idempotency_key, fingerprint, state, created_at, expires_at, locked_until) VALUES ('k', ?, 'f', ?, ?, ?, ?)",
        DOOMED + 3,
        (i) =>
          i < DOOMED ? [`i${i}`, "completed", OLD, OLD, null] : i === DOOMED ? [`i${i}`, "in_progress", OLD, OLD, NEW] : [`i${i}`, "completed", OLD, NEW, null],
      ),
    prune: (s, bound) => pruneIdempotency(s, CUTOFF, bound),
    left: async () => ({
      doomed: await count("idempotency_records WHERE expires_at <= ? AND state = 'completed'", [CUTOFF]),
      kept: await count("idempotency_records WHERE expires_at > ? OR state = 'in_progress'", [CUTOFF]),
    }),
    kept: 3,
  },
  {
    name: "chain_rpc_calls (chain-rpc-prune)",
    seed: () =>
      seed("INSERT INTO chain_rpc_calls (at, host, method, outcome, latency_ms) VALUES (?, 'h', 'm', 'ok', 1)", DOOMED + 3, (i) => [i < DOOMED ? OLD : NEW]),
    prune: (s, bound) => pruneCalls(s, CUTOFF, bound),
    left: async () => ({ doomed: await count("chain_rpc_calls WHERE at < ?", [CUTOFF]), kept: await count("chain_rpc_calls WHERE at >= ?", [CUTOFF]) }),
    kept: 3,
  },
  {
    name: "status_subscriber_deliveries (status-prune): delivered and dead letters, each after its retention",
    seed: async () => {
      await h.ctx.store.run(
        "INSERT INTO status_subscribers (id, url, event_types, secret_ciphertext, created_by, created_at) VALUES (1, 'https://x', '*', 'c', 'op', ?)",
        [OLD],
      );
      // Doomed: succeeded and dead letters last changed before the cutoff. Kept: a newer one, and unsettled old ones.
      const statusOf = (i: number) => (i < DOOMED ? (i % 2 ? "succeeded" : "dead_letter") : ["succeeded", "queued", "failed"][i - DOOMED]!);
      await seed(
        "INSERT INTO status_subscriber_deliveries (subscriber_id, event_id, event_type, body, status, created_at, updated_at) VALUES (1, ?, 'e', '{}', ?, ?, ?)",
        DOOMED + 3,
        (i) => [`e${i}`, statusOf(i), OLD, i === DOOMED ? NEW : OLD],
      );
    },
    prune: (s, bound) => pruneNotifications(s, CUTOFF, CUTOFF, bound),
    left: async () => ({
      doomed: await count("status_subscriber_deliveries WHERE status IN ('succeeded', 'dead_letter') AND updated_at < ?", [CUTOFF]),
      kept: await count("status_subscriber_deliveries WHERE status NOT IN ('succeeded', 'dead_letter') OR updated_at >= ?", [CUTOFF]),
    }),
    kept: 3,
  },
  {
    name: "status_snapshots (status-prune): oldest first, the new oldest given the check set in force",
    seed: () =>
      seed("INSERT INTO status_snapshots (generated_at, overall, degraded, checks, policy_version) VALUES (?, 'ok', '{}', ?, 'v1')", DOOMED + 3, (i) => [
        i < DOOMED ? OLD : NEW,
        i === 0 ? "database" : "=",
      ]),
    prune: (s, bound) => pruneSnapshots(s, CUTOFF, bound),
    left: async () => ({
      doomed: await count("status_snapshots WHERE generated_at < ?", [CUTOFF]),
      kept: (await count("status_snapshots")) + (await count("status_snapshots WHERE checks = 'database'")),
    }),
    kept: 3 + 1,
  },
  {
    name: "status_incidents with their updates (status-prune): closed before the cutoff; open ones stay",
    seed: async () => {
      await seed(
        "INSERT INTO status_incidents (id, started_at, ended_at, severity, current_severity, checks, summary, updated_at) VALUES (?, ?, ?, 'bad', 'bad', '[]', 's', ?)",
        DOOMED + 3,
        (i) => [i + 1, OLD, i < DOOMED ? OLD : i === DOOMED ? null : NEW, OLD],
      );
      await seed(
        "INSERT INTO status_incident_updates (incident_id, state, message, created_at, created_by) VALUES (?, 'resolved', 'm', ?, 'op')",
        DOOMED + 3,
        (i) => [i + 1, OLD],
      );
    },
    prune: (s, bound) => pruneIncidents(s, CUTOFF, bound),
    left: async () => ({
      doomed: await count("status_incidents WHERE ended_at < ?", [CUTOFF]),
      kept: (await count("status_incidents")) + (await count("status_incident_updates")),
    }),
    kept: 6,
  },
  {
    name: "audio_share_* (audio-share-prune): click dedupe, track events, expired links with their hits",
    seed: async () => {
      await seed(
        "INSERT INTO audio_share_links (id, code, destination_url, source, signed, created_at, expires_at) VALUES (?, ?, 'https://d', 'track', 0, ?, ?)",
        DOOMED + 2,
        (i) => [i + 1, `c${i}`, OLD, i < DOOMED ? OLD : NEW],
      );
      await seed("INSERT INTO audio_share_link_hits (link_id, hour, clicks) VALUES (?, ?, 1)", DOOMED + 2, (i) => [i + 1, OLD]);
      await seed("INSERT INTO audio_share_click_seen (link_id, hour, client_hash) VALUES (?, ?, ?)", DOOMED + 2, (i) => [
        (i % 3) + 1,
        i < DOOMED ? OLD : NEW,
        `h${i}`,
      ]);
      // Track events: old ones go; new ones of doomed links stay, their link_id set to NULL.
      await seed(
        "INSERT INTO audio_share_track_events (client_event_id, event_type, destination_url, link_id, created_at) VALUES (?, 'copy', 'https://d', ?, ?)",
        DOOMED + 2,
        (i) => [`t${i}`, i + 1, i < DOOMED ? OLD : NEW],
      );
      await seed(
        "INSERT INTO audio_share_track_events (client_event_id, event_type, destination_url, link_id, created_at) VALUES (?, 'copy', 'https://d', 1, ?)",
        1,
        () => ["t-new-of-doomed", NEW],
      );
    },
    prune: async (s, bound) => {
      const r = await pruneAudioShare(s, CUTOFF, CUTOFF, CUTOFF, bound);
      return { deleted: r.seen + r.events + r.links, done: r.done !== false };
    },
    left: async () => ({
      doomed:
        (await count("audio_share_click_seen WHERE hour < ?", [CUTOFF])) +
        (await count("audio_share_track_events WHERE created_at < ?", [CUTOFF])) +
        (await count("audio_share_links WHERE expires_at < ?", [CUTOFF])) +
        (await count("audio_share_link_hits WHERE link_id <= ?", [DOOMED])) +
        (await count("audio_share_track_events WHERE link_id <= ?", [DOOMED])),
      kept:
        (await count("audio_share_click_seen")) +
        (await count("audio_share_track_events")) +
        (await count("audio_share_links")) +
        (await count("audio_share_link_hits")) +
        (await count("audio_share_track_events WHERE link_id IS NULL")),
    }),
    // 2 click rows, 3 track events (one detached), 2 links, 2 hits.
    kept: 2 + 3 + 2 + 2 + 1,
  },
  {
    name: "webhook_deliveries with their attempts and replays (webhook-prune)",
    seed: async () => {
      await h.ctx.store.run(
        "INSERT INTO webhooks (id, partner, mode, event_type, target_url, secret_ciphertext, created_at, updated_at) VALUES (1, 'p', 'live', '*', 'https://x', 'c', ?, ?)",
        [OLD, OLD],
      );
      await h.ctx.store.run("INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at) VALUES (1, 'evt_1', 'p', 'live', 'e', '{}', ?)", [
        OLD,
      ]);
      // Doomed: succeeded, cancelled and dead letters last changed before the cutoff. Kept: a newer one, a failed one.
      const statusOf = (i: number) => (i < DOOMED ? ["succeeded", "cancelled", "dead_letter"][i % 3]! : ["succeeded", "failed"][i - DOOMED]!);
      await seed(
        "INSERT INTO webhook_deliveries (id, event_id, webhook_id, partner, mode, status, created_at, updated_at) VALUES (?, 1, 1, 'p', 'live', ?, ?, ?)",
        DOOMED + 2,
        (i) => [i + 1, statusOf(i), OLD, i === DOOMED ? NEW : OLD],
      );
      await seed("INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms) VALUES (?, ?, ?, 1)", 2 * (DOOMED + 2), (i) => [
        (i >> 1) + 1,
        (i & 1) + 1,
        OLD,
      ]);
      await seed("INSERT INTO webhook_replays (delivery_id, partner, mode, reason_tag, replayed_at) VALUES (?, 'p', 'live', 'r', ?)", DOOMED + 2, (i) => [
        i + 1,
        OLD,
      ]);
    },
    prune: (s, bound) => pruneDeliveries(s, CUTOFF, CUTOFF, bound),
    left: async () => ({
      doomed:
        (await count("webhook_deliveries WHERE id <= ?", [DOOMED])) +
        (await count("webhook_attempts WHERE delivery_id <= ?", [DOOMED])) +
        (await count("webhook_replays WHERE delivery_id <= ?", [DOOMED])),
      kept: (await count("webhook_deliveries")) + (await count("webhook_attempts")) + (await count("webhook_replays")),
    }),
    kept: 2 + 4 + 2,
  },
  {
    name: "messenger_updates and messenger_bot_outbox (messenger-prune); pending replies stay",
    seed: async () => {
      await seed("INSERT INTO messenger_updates (update_id, kind, received_at) VALUES (?, 'message', ?)", DOOMED + 2, (i) => [i + 1, i < DOOMED ? OLD : NEW]);
      const statusOf = (i: number) => (i < DOOMED ? (i % 2 ? "sent" : "dead") : ["sent", "pending"][i - DOOMED]!);
      await seed(
        "INSERT INTO messenger_bot_outbox (chat_id, method, payload, status, next_attempt_at, created_at) VALUES (1, 'sendMessage', '{}', ?, ?, ?)",
        DOOMED + 2,
        (i) => [statusOf(i), OLD, i === DOOMED ? NEW : OLD],
      );
    },
    prune: async (s, bound) => {
      const r = await pruneBotRows(s, CUTOFF, CUTOFF, bound);
      return sum(r.updates, r.bot_replies);
    },
    left: async () => ({
      doomed:
        (await count("messenger_updates WHERE received_at < ?", [CUTOFF])) +
        (await count("messenger_bot_outbox WHERE status <> 'pending' AND created_at < ?", [CUTOFF])),
      kept: (await count("messenger_updates")) + (await count("messenger_bot_outbox")),
    }),
    kept: 2 + 2,
  },
  {
    name: "messenger_counters and messenger_wallet_challenges (messenger-prune)",
    seed: async () => {
      await seed("INSERT INTO messenger_counters (hour, metric, label, count) VALUES (?, 'm', ?, 1)", DOOMED + 2, (i) => [i < DOOMED ? OLD : NEW, `l${i}`]);
      await seed(
        "INSERT INTO messenger_wallet_challenges (nonce, telegram_user_id, address, message, issued_at, expires_at) VALUES (?, 1, 'a', 'm', ?, ?)",
        DOOMED + 2,
        (i) => [`n${i}`, OLD, i < DOOMED ? OLD : NEW],
      );
    },
    prune: async (s, bound) => sum(await pruneCounters(s, CUTOFF, bound), await pruneChallenges(s, CUTOFF, bound)),
    left: async () => ({
      doomed: (await count("messenger_counters WHERE hour < ?", [CUTOFF])) + (await count("messenger_wallet_challenges WHERE expires_at < ?", [CUTOFF])),
      kept: (await count("messenger_counters")) + (await count("messenger_wallet_challenges")),
    }),
    kept: 2 + 2,
  },
];

/**
 * What reads a whole table in a statement's plan: on SQLite a SCAN of a table (json_each, the batch's key list, is
 * no table) or a sort of every matching row; on PostgreSQL a Seq Scan once seq scans are priced out (a small test
 * table would otherwise be scanned whatever its indexes).
 */
async function tableReads(s: SentStatement): Promise<string[]> {
  if (testEngine() === "sqlite") {
    // On a connection of its own: bun:sqlite leaves an EXPLAIN of a DELETE in progress after reading its plan, which
    // would keep the app's connection from committing.
    const db = new Database(join(h.dir, "herald.db"), { readonly: true });
    try {
      const plan = db.prepare<{ detail: string }, SQLQueryBindings[]>(`EXPLAIN QUERY PLAN ${s.sql}`).all(...(s.params as SQLQueryBindings[]));
      return plan.map((p) => p.detail).filter((d) => (/^SCAN /.test(d) && !/^SCAN (json_each|CONSTANT)/.test(d)) || /TEMP B-TREE/.test(d));
    } finally {
      db.close();
    }
  }
  return h.ctx.store.tx(async (t: Queryable) => {
    await t.run("SET LOCAL enable_seqscan = off");
    const plan = await t.all<Record<string, string>>(`EXPLAIN ${s.sql}`, s.params);
    return plan.map((p) => Object.values(p)[0]!).filter((line) => line.includes("Seq Scan"));
  });
}

describe.each(CASES.map((c) => [c.name, c] as const))("%s", (_, c) => {
  test("more rows than a batch: all deleted over several statements; the rows to keep stay; every statement uses an index", async () => {
    await c.seed();
    const r = await c.prune(store, { batchRows: BATCH });
    expect(r.done).toBe(true);
    expect(r.deleted).toBeGreaterThanOrEqual(DOOMED);
    const writes = store.runs.length;
    expect(writes).toBeGreaterThan(1);
    // No statement deleted more than a batch of the table it names (children aside, a batch's own rows).
    expect(await c.left()).toEqual({ doomed: 0, kept: c.kept });
    const seen = new Set<string>();
    for (const s of store.sent) {
      if (seen.has(s.sql)) continue;
      seen.add(s.sql);
      expect({ sql: s.sql, reads: await tableReads(s) }).toEqual({ sql: s.sql, reads: [] });
    }
  });

  test("the time bound leaves rows for the next call, which finishes", async () => {
    await c.seed();
    const first = await c.prune(store, { batchRows: BATCH, maxMs: 0 });
    expect(first.done).toBe(false);
    expect((await c.left()).doomed).toBeGreaterThan(0);
    let next = await c.prune(store, { batchRows: BATCH });
    // A prune of several tables stops at the first table's bound each time: a few calls finish it.
    for (let i = 0; !next.done && i < 5; i++) next = await c.prune(store, { batchRows: BATCH });
    expect(next.done).toBe(true);
    expect(await c.left()).toEqual({ doomed: 0, kept: c.kept });
  });
});
