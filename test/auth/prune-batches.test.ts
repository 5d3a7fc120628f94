import { afterEach, expect, test } from "bun:test";
import { pruneIdempotency } from "../../src/auth/store/idempotency";
import { pruneNonces } from "../../src/auth/store/nonces";
import { SCATTERED_BATCH_ROWS } from "../../src/db/batched-delete";
import type { Param } from "../../src/db/port";
import { openTestApp, type TestApp } from "../support/app";
import { CountingStore } from "../support/counting-store";

// auth-prune's nonces and idempotency records go 500 a batch (SCATTERED_BATCH_ROWS, issue 71): their primary keys
// are random, so a batch of 2,000 changed more pages of them than SQLite's page cache holds (~100 ms a batch). On
// both engines: 1,100 expired rows are three statements (500, 500, 100), and the live rows stay.

let h: TestApp | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const NOW = "2026-01-01T00:00:00.000Z";
const PAST = "2025-12-31T00:00:00.000Z";
const LATER = "2026-01-02T00:00:00.000Z";

/** `n` rows of `values(i)` into `table (columns)`, 100 a statement. */
async function seed(app: TestApp, table: string, columns: string, n: number, values: (i: number) => Param[]): Promise<void> {
  for (let from = 0; from < n; from += 100) {
    const rows = Array.from({ length: Math.min(100, n - from) }, (_, k) => values(from + k));
    const marks = rows.map((r) => `(${r.map(() => "?").join(", ")})`).join(", ");
    await app.ctx.store.run(`INSERT INTO ${table} (${columns}) VALUES ${marks}`, rows.flat());
  }
}

const count = async (app: TestApp, table: string) => (await app.ctx.store.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;

test("expired nonces are pruned 500 a batch; live ones stay", async () => {
  h = await openTestApp();
  await seed(h, "partner_nonces", "key_id, nonce, expires_at", 1_150, (i) => ["k", `${(i * 2654435761) % 4294967296}n${i}`, i < 1_100 ? PAST : LATER]);
  const store = new CountingStore(h.ctx.store);
  expect(SCATTERED_BATCH_ROWS).toBe(500);
  expect(await pruneNonces(store, NOW)).toMatchObject({ deleted: 1_100, statements: 3, done: true });
  expect(await count(h, "partner_nonces")).toBe(50);
});

test("expired idempotency records are pruned 500 a batch; live ones and a claim still locked stay", async () => {
  h = await openTestApp();
  await seed(
    h,
    "idempotency_records",
    "key_id, idempotency_key, fingerprint, state, response_status, response_body, created_at, expires_at, locked_until",
    1_150,
    (i) => [
      "k",
      `key-${(i * 2654435761) % 4294967296}-${i}`,
      "f",
      i === 1_100 ? "in_progress" : "completed",
      200,
      '{"data":{}}',
      PAST,
      i <= 1_100 ? PAST : LATER,
      i === 1_100 ? LATER : null,
    ],
  );
  const store = new CountingStore(h.ctx.store);
  expect(await pruneIdempotency(store, NOW)).toMatchObject({ deleted: 1_100, statements: 3, done: true });
  expect(await count(h, "idempotency_records")).toBe(50);
});
