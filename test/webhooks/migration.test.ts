// Migrations of the webhook tables on a SQLite file written by the rules before them (the embedded migrations'
// own path, as `herald serve` applies them). 0010 (an attempt used to be counted only when its outcome was
// recorded): a delivery leased when the old process stopped gets its in-flight attempt counted, and a replay's tag
// still on a delivery becomes its first replay-history row. 0025 (a replay used to number its attempts from 1
// again): attempt numbers become unique per delivery, earlier rows renumbered in the order they were made. Then
// the new dispatcher takes over the file.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/client";
import { UniqueViolation } from "../../src/db/port";
import { WebhookSecrets } from "../../src/webhooks/secrets";
import { createTestApp, type TestApp, sqliteOf } from "../support/app";
import { FakeClock } from "../support/clock";
import { migrateFirst } from "../support/migrations";

const dirs: string[] = [];
let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh file migrated with the first `count` embedded migrations, as an older Herald left it. */
function olderDatabase(count: number) {
  const dir = mkdtempSync(join(tmpdir(), "herald-migration-"));
  dirs.push(dir);
  const dbPath = join(dir, "herald.db");
  const old = openDatabase(dbPath);
  migrateFirst(old, count);
  return { dbPath, old };
}

test("migration 0010 counts the attempt in flight of deliveries leased before it and keeps a pending replay's tag as history", async () => {
  const { dbPath, old } = olderDatabase(10); // 0000 … 0009

  const t0 = "2026-01-01T00:00:00.000Z";
  const s = old.sqlite;
  s.query(
    "INSERT INTO webhooks (id, partner, mode, event_type, target_url, secret_ciphertext, created_at, updated_at) VALUES (1, 'Acme', 'live', 'webhook.test', 'http://127.0.0.1:9/hook', 'x', ?, ?)",
  ).run(t0, t0);
  s.query("INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at) VALUES (1, 'evt_1', 'Acme', 'live', 'webhook.test', '{}', ?)").run(
    t0,
  );
  const delivery = s.query(
    `INSERT INTO webhook_deliveries (id, event_id, webhook_id, partner, mode, status, attempts, next_attempt_at, lease_until, lease_token, reason_tag, created_at, updated_at)
     VALUES (?, 1, 1, 'Acme', 'live', ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // 1: leased for its second attempt (one failure recorded before) when the old process was killed.
  delivery.run(1, "processing", 1, t0, "2026-01-01T00:10:40.000Z", "old", "http_error", t0, "2026-01-01T00:10:00.000Z");
  // 2: replayed for receiver_fix, not yet sent again (due far in the future, so this test's dispatcher leaves it).
  delivery.run(2, "queued", 0, "2027-01-01T00:00:00.000Z", null, null, "receiver_fix", t0, "2026-01-01T00:05:00.000Z");
  // 3 and 4: a failure reason and a plain success are not replays.
  delivery.run(3, "failed", 1, "2027-01-01T00:00:00.000Z", null, null, "http_error", t0, t0);
  delivery.run(4, "succeeded", 1, null, null, null, null, t0, t0);
  s.query(
    "INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms, status_code, reason_tag) VALUES (1, 1, ?, 5, 500, 'http_error')",
  ).run(t0);
  old.close();

  // The new version opens the file (and migrates it), with max_attempts 2, after the old lease has run out.
  h = createTestApp({
    env: { HERALD_DB_PATH: dbPath, WEBHOOK_MAX_ATTEMPTS: "2", WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" },
    clock: new FakeClock("2026-01-01T00:11:00.000Z"),
  });
  const sqlite = sqliteOf(h);
  expect(sqlite.query("SELECT id, status, attempts, last_attempt_at FROM webhook_deliveries ORDER BY id").all()).toEqual([
    { id: 1, status: "processing", attempts: 2, last_attempt_at: "2026-01-01T00:10:00.000Z" },
    { id: 2, status: "queued", attempts: 0, last_attempt_at: null },
    { id: 3, status: "failed", attempts: 1, last_attempt_at: null },
    { id: 4, status: "succeeded", attempts: 1, last_attempt_at: null },
  ]);
  expect(sqlite.query("SELECT delivery_id, attempt_no, status_code FROM webhook_attempts ORDER BY id").all()).toEqual([
    { delivery_id: 1, attempt_no: 1, status_code: 500 },
    { delivery_id: 1, attempt_no: 2, status_code: null },
  ]);
  expect(sqlite.query("SELECT delivery_id, partner, mode, reason_tag, note, replayed_at FROM webhook_replays").all()).toEqual([
    { delivery_id: 2, partner: "Acme", mode: "live", reason_tag: "receiver_fix", note: null, replayed_at: "2026-01-01T00:05:00.000Z" },
  ]);

  // The attempt cut off by the old process has no recorded outcome: it is marked interrupted and does not use up
  // the budget, so the delivery is sent again (port 9 refuses it) and that second outcome dead-letters it. (The old
  // rows' placeholder secret is sealed properly first, so that the request is signed and sent.)
  sqlite.query("UPDATE webhooks SET secret_ciphertext = ? WHERE id = 1").run(new WebhookSecrets(h.ctx).seal("whsec_migrated", 1));
  await h.ctx.dispatcher.runOnce();
  expect(sqlite.query("SELECT status, attempts, reason_tag FROM webhook_deliveries WHERE id = 1").get()).toEqual({
    status: "dead_letter",
    attempts: 3,
    reason_tag: "connection_error",
  });
  expect(sqlite.query("SELECT attempt_no, reason_tag FROM webhook_attempts WHERE delivery_id = 1 ORDER BY id").all()).toEqual([
    { attempt_no: 1, reason_tag: "http_error" },
    { attempt_no: 2, reason_tag: "interrupted" },
    { attempt_no: 3, reason_tag: "connection_error" },
  ]);
});

test("migration 0025 renumbers attempts a replay numbered from 1 again, so attempt_no is unique per delivery; the next attempt follows them", async () => {
  const { dbPath, old } = olderDatabase(25); // 0000 … 0024
  const t0 = "2026-01-01T00:00:00.000Z";
  const s = old.sqlite;
  s.query(
    "INSERT INTO webhooks (id, partner, mode, event_type, target_url, secret_ciphertext, created_at, updated_at) VALUES (1, 'Acme', 'live', 'webhook.test', 'http://127.0.0.1:9/hook', 'x', ?, ?)",
  ).run(t0, t0);
  s.query("INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at) VALUES (1, 'evt_1', 'Acme', 'live', 'webhook.test', '{}', ?)").run(
    t0,
  );
  const delivery = s.query(
    `INSERT INTO webhook_deliveries (id, event_id, webhook_id, partner, mode, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, 1, 1, 'Acme', 'live', ?, 1, ?, ?, ?)`,
  );
  // 1: failed once, replayed, failed once more — both attempts were numbered 1 — and due again now.
  delivery.run(1, "failed", t0, t0, t0);
  // 2: never replayed; its one attempt keeps its number.
  delivery.run(2, "succeeded", null, t0, t0);
  const attempt = s.query("INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms, status_code, reason_tag) VALUES (?, ?, ?, 5, ?, ?)");
  attempt.run(1, 1, t0, 500, "http_error");
  attempt.run(2, 1, t0, 204, null);
  attempt.run(1, 1, "2026-01-01T00:05:00.000Z", 503, "http_error");
  old.close();

  h = createTestApp({ env: { HERALD_DB_PATH: dbPath, WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" }, clock: new FakeClock("2026-01-01T00:10:00.000Z") });
  const store = h.ctx.store;
  expect(await store.all("SELECT id, delivery_id, attempt_no, status_code FROM webhook_attempts ORDER BY id")).toEqual([
    { id: 1, delivery_id: 1, attempt_no: 1, status_code: 500 },
    { id: 2, delivery_id: 2, attempt_no: 1, status_code: 204 },
    { id: 3, delivery_id: 1, attempt_no: 2, status_code: 503 },
  ]);
  // A doubled number is refused now.
  await expect(store.run("INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms) VALUES (1, 2, ?, 0)", [t0])).rejects.toBeInstanceOf(
    UniqueViolation,
  );

  // The dispatcher's next attempt of delivery 1 (port 9 refuses it) is its third request: numbered 3. (The old
  // rows' placeholder secret is sealed properly first, so that the request is signed and sent.)
  await store.run("UPDATE webhooks SET secret_ciphertext = ? WHERE id = 1", [new WebhookSecrets(h.ctx).seal("whsec_migrated", 1)]);
  await h.ctx.dispatcher.runOnce();
  expect(await store.all("SELECT attempt_no, reason_tag FROM webhook_attempts WHERE delivery_id = 1 ORDER BY attempt_no")).toEqual([
    { attempt_no: 1, reason_tag: "http_error" },
    { attempt_no: 2, reason_tag: "http_error" },
    { attempt_no: 3, reason_tag: "connection_error" },
  ]);
});
