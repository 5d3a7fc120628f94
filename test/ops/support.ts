// What the ops suites plant through the storage port, on the engine HERALD_TEST_ENGINE names (test/support/app.ts):
// rows of other domains' tables that an operator view reads (dead letters, audit runs), written with the foreign
// keys PostgreSQL enforces — no PRAGMA foreign_keys, no explicit ids that would leave a sequence behind.
import type { Queryable } from "../../src/db/port";

/** `n` dead-lettered webhook deliveries of one planted event and webhook (partner p1, live). */
export async function plantDeadLetters(q: Queryable, n: number, at: string): Promise<void> {
  const event = await q.get<{ id: number }>(
    "INSERT INTO events (public_id, partner, mode, event_type, data, created_at) VALUES (?, 'p1', 'live', 'test.event', '{}', ?) RETURNING id",
    [`evt_planted_${at}_${n}`, at],
  );
  const hook = await q.get<{ id: number }>(
    `INSERT INTO webhooks (partner, mode, event_type, target_url, secret_ciphertext, is_active, created_at, updated_at)
     VALUES ('p1', 'live', 'test.event', 'https://example.test/hook', 'x', 1, ?, ?) RETURNING id`,
    [at, at],
  );
  for (let i = 0; i < n; i++) {
    await q.run(
      "INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, attempts, created_at, updated_at) VALUES (?, ?, 'p1', 'live', 'dead_letter', 8, ?, ?)",
      [event!.id, hook!.id, at, at],
    );
  }
}

/** One alert-run row written by hand (not through recordAlertRun): the link-inbox job's sweep applies it. */
export async function plantAlertRun(
  q: Queryable,
  r: { runId?: string; at: string; source: string; name: string; status: string; value?: string | null; details?: string | null },
): Promise<number> {
  const row = await q.get<{ id: number }>(
    "INSERT INTO ops_alert_runs (run_id, at, source, name, status, value, details) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    [r.runId ?? "r", r.at, r.source, r.name, r.status, r.value ?? null, r.details ?? null],
  );
  return row!.id;
}

/** One hour of the request log's rollup, as the flush would have written it. */
export async function plantHour(q: Queryable, hour: string, requests: number, forbidden: number): Promise<void> {
  await q.run("INSERT INTO request_log_hourly (hour, requests, forbidden) VALUES (?, ?, ?)", [hour, requests, forbidden]);
}
