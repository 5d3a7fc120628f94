import type { Static } from "@sinclair/typebox";
import type { Owner } from "../auth/actors";
import type { KeyRow } from "../auth/keys";
import { apartTask } from "../db/apart";
import { changed, countOf, type Dialect, placeholders, type Queryable, scanWindow, Where } from "../db/port";
import { RowHeldElsewhere } from "../db/row-held";
import type { PageRequest } from "../http/pagination";
import type { RowOf } from "../db/rows";
import type { UserRow } from "../partner/service";
import type { DeliveryRow, WebhookRow } from "../webhooks/service";
import type { Metrics, RecentError } from "./model";
import type { SandboxWebhooksModel } from "./webhooks-model";
import type { sandboxFixtures } from "./tables";

// The sandbox's own SQL for both engines (docs/design.md §8a): its fixture record, and the reads of other domains'
// sandbox rows no domain verb answers (a read model test/conventions/layering.test.ts lists), typed by the columns
// selected from the owner's row type. Every read of practice rows names mode = 'sandbox' as a LITERAL, never a
// parameter: whatever partner it is handed, it cannot read a live row.

// ---- sandbox_fixtures

export type FixtureRecord = RowOf<typeof sandboxFixtures>;

const FIXTURE_COLUMNS = "partner, profile, seed_key_id, plan_digest, user_ids, seeded_at, reset_count";
const INSERT_FIXTURE = `INSERT INTO sandbox_fixtures (${FIXTURE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`;
const fixtureParams = (rec: FixtureRecord) => [rec.partner, rec.profile, rec.seed_key_id, rec.plan_digest, rec.user_ids, rec.seeded_at, rec.reset_count];

/** The partner's fixture row, read with `lock` (a FOR … clause, or none). */
const fixtureRow = (q: Queryable, partner: string, lock = "") =>
  q.get<FixtureRecord>(`SELECT ${FIXTURE_COLUMNS} FROM sandbox_fixtures WHERE partner = ?${lock}`, [partner]);

export const fixtureRecordOf = (q: Queryable, partner: string) => fixtureRow(q, partner);

/**
 * Claims the partner's fixture row before anything is seeded: true when this transaction inserted it and so is
 * the one that seeds. The primary key on `partner` is the guard — of two first calls at once, on one instance or
 * several over one PostgreSQL, one inserts and the other's DO NOTHING waits for it and changes no row.
 */
export async function claimFixtureRow(t: Queryable, rec: FixtureRecord): Promise<boolean> {
  return changed(t, `${INSERT_FIXTURE} ON CONFLICT (partner) DO NOTHING`, fixtureParams(rec));
}

/** Records the fixture users' ids once the claiming transaction has written them. */
export const setFixtureUserIds = (t: Queryable, partner: string, userIdsJson: string) =>
  t.run("UPDATE sandbox_fixtures SET user_ids = ? WHERE partner = ?", [userIdsJson, partner]);

/**
 * Takes the partner's fixture row for a reset and records the reset on it, in one upsert that always ends holding
 * the row for the rest of `t`. The row is never deleted, so the lock is on a row that stays: on PostgreSQL a second
 * reset (or a sandbox write holding the row) makes this wait, then updates the row the holder left. `user_ids` is
 * emptied here and set again in the same transaction. Returns the reset count now recorded.
 */
export async function takeFixtureRowForReset(t: Queryable, rec: FixtureRecord): Promise<number> {
  const row = await t.get<Pick<FixtureRecord, "reset_count">>(
    `${INSERT_FIXTURE}
     ON CONFLICT (partner) DO UPDATE SET profile = excluded.profile, seed_key_id = excluded.seed_key_id, plan_digest = excluded.plan_digest,
       user_ids = excluded.user_ids, seeded_at = excluded.seeded_at, reset_count = sandbox_fixtures.reset_count + 1
     RETURNING reset_count`,
    fixtureParams(rec),
  );
  if (!row) throw new Error(`sandbox fixtures of ${rec.partner}: the reset's upsert returned no row`);
  return row.reset_count;
}

/**
 * The fixture row's shared lock: on PostgreSQL any number of sandbox writes hold it at once and a reset's upsert
 * waits for them (they for it). SQLite needs none: a transaction holds the one writer.
 */
const SHARED_ROW_LOCK: Record<Dialect, string> = { postgres: " FOR SHARE", sqlite: "" };

/**
 * Holds the partner's fixture row, shared, for the rest of `t`, and reads it (null: sandbox never opened). A sandbox
 * write takes this first, so a reset never deletes rows a concurrent write is adding to, nor does the write land
 * between the reset's deletes and its new fixtures.
 */
export const holdFixtureRow = (t: Queryable, partner: string) => fixtureRow(t, partner, SHARED_ROW_LOCK[t.dialect]);

/** The exclusive lock, of the strength the reset's own upsert takes (FOR NO KEY UPDATE: no key changes); SQLite: none. */
const EXCLUSIVE_ROW_LOCK: Record<Dialect, string> = { postgres: " FOR NO KEY UPDATE", sqlite: "" };

/**
 * Holds the partner's fixture row exclusively for the rest of `t`, and reads it. A reset batch that deletes users
 * (src/sandbox/reset-batches.ts) takes it first: no sandbox write is between finding a user and naming it in a row,
 * and the fixture users the batch must keep are the ones recorded now.
 */
export const lockFixtureRow = (t: Queryable, partner: string) => fixtureRow(t, partner, EXCLUSIVE_ROW_LOCK[t.dialect]);

/**
 * lockFixtureRow without waiting (src/db/row-held.ts): on PostgreSQL a row held elsewhere throws RowHeldElsewhere
 * rather than spend `t`'s deadline waiting; the reset waits outside any transaction and runs `t` again
 * (src/db/row-held.ts). With `wait` (the last run), and on SQLite, it is lockFixtureRow.
 */
export async function lockFixtureRowOrHeld(t: Queryable, partner: string, wait: boolean): Promise<FixtureRecord | null> {
  if (wait || t.dialect === "sqlite") return lockFixtureRow(t, partner);
  const row = await fixtureRow(t, partner, " FOR NO KEY UPDATE SKIP LOCKED");
  if (row) return row;
  // SKIP LOCKED answers no row for a held row and for a missing one alike; a plain read tells them apart.
  if (await fixtureRecordOf(t, partner)) throw new RowHeldElsewhere(`the sandbox fixture row of ${partner}`);
  return null;
}

/** The fixture users that still exist, by id (a fixture user is never deleted except by the reset, but be exact). */
export function fixtureUserRows(q: Queryable, partner: string, ids: number[]): Promise<Array<{ id: number; external_id: string }>> {
  if (ids.length === 0) return Promise.resolve([]);
  return q.all(`SELECT id, external_id FROM partner_users WHERE id IN (${placeholders(ids.length)}) AND partner = ? AND mode = 'sandbox' ORDER BY id`, [
    ...ids,
    partner,
  ]);
}

// ---- sandbox delivery records (src/sandbox/webhook-events.ts)

/**
 * `data.user_id` of an event, as text: event data is JSON text (docs/design.md §8a) and the engines share no JSON
 * accessor. Both give "42" for the "42" every event writes (test/sandbox/webhooks.test.ts, the user_id filter).
 */
export const eventUserIdSql = (dialect: Dialect, column: string): string =>
  dialect === "postgres" ? `(${column}::json ->> 'user_id')` : `json_extract(${column}, '$.user_id')`;

/** The query's filters (user_id: deliveries whose event data names this user, as the salutes and users events do), its order settled. */
export type SandboxEventFilter = Pick<Static<typeof SandboxWebhooksModel.eventsQuery>, "user_id" | "event_type"> & { order: "asc" | "desc" };

/**
 * The owner's sandbox delivery records, in id order, after `page.after` (keyset) or from its offset; filters join
 * the WHERE only when given. No index holds them (event_type is the event's, user_id inside its JSON): with either, a
 * page looks through at most SCAN_WINDOW of the owner's sandbox deliveries (`scanWindow`; `resumeAt` as the live list's).
 */
export async function sandboxDeliveryRows(
  q: Queryable,
  owner: Owner,
  f: SandboxEventFilter,
  page: Omit<PageRequest, "cursor">,
): Promise<{ rows: DeliveryRow[]; resumeAt: number | null }> {
  const desc = f.order === "desc";
  const w = new Where()
    .add("d.partner = ? AND d.mode = 'sandbox'", owner.partner)
    .when(f.event_type, "e.event_type = ?")
    .when(f.user_id, `${eventUserIdSql(q.dialect, "e.data")} = ?`)
    .when(page.after, desc ? "d.id < ?" : "d.id > ?");
  const scope = new Where().add("partner = ? AND mode = 'sandbox'", owner.partner).when(page.after, desc ? "id < ?" : "id > ?");
  const win = f.event_type || f.user_id ? await scanWindow(q, "webhook_deliveries", scope, f.order) : null;
  if (win && win.edge !== null) w.add(`d.id ${win.bound}`, win.edge);
  const rows = await q.all<DeliveryRow>(
    `SELECT d.id, d.webhook_id, e.public_id AS event_public_id, e.event_type, d.status, d.attempts, d.reason_tag, d.last_error,
            d.last_status_code, w.target_url, d.created_at, d.updated_at, d.last_attempt_at, d.next_attempt_at, d.delivered_at
     FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
     ${w.sql}
     ORDER BY d.id ${desc ? "DESC" : "ASC"} LIMIT ? OFFSET ?`,
    [...w.params, page.limit, page.offset],
  );
  return { rows, resumeAt: (await win?.resumeAt(rows.length < page.limit)) ?? null };
}

export type DeliverySource = Pick<DeliveryRow, "id" | "webhook_id" | "event_public_id" | "event_type"> &
  Pick<WebhookRow, "target_url" | "secret_ciphertext" | "previous_secret_ciphertext" | "previous_secret_valid_until"> & { event_data: string };

/** What the simulator signs for one of the owner's sandbox deliveries: its event and its webhook's secrets. */
export const deliverySourceOf = (q: Queryable, owner: Owner, deliveryId: number) =>
  q.get<DeliverySource>(
    `SELECT d.id, d.webhook_id, e.public_id AS event_public_id, e.event_type, e.data AS event_data, w.target_url, w.secret_ciphertext,
            w.previous_secret_ciphertext, w.previous_secret_valid_until
     FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.id = ? AND d.partner = ? AND d.mode = 'sandbox'`,
    [deliveryId, owner.partner],
  );

// ---- the promotion report (src/sandbox/promotion.ts)

export const sandboxKeysOf = (q: Queryable, partner: string) =>
  q.all<Pick<KeyRow, "key_id" | "status" | "scopes" | "last_used_at">>(
    "SELECT key_id, status, scopes, last_used_at FROM partner_keys WHERE partner = ? AND mode = 'sandbox' ORDER BY created_at, key_id",
    [partner],
  );

export const activeLiveKeyCount = (q: Queryable, partner: string) =>
  countOf(q, "SELECT count(*) AS n FROM partner_keys WHERE partner = ? AND mode = 'live' AND status = 'active'", [partner]);

export type Traffic = Static<typeof Metrics> & { simulator_runs: number };

/** The request_log refs of these keys: `key_ref IN (…)` with the key ids bound. */
const keyRefsIn = (keyIds: readonly string[]) => `SELECT ref FROM request_log_keys WHERE key_id IN (${placeholders(keyIds.length)})`;

/** The keys' signed calls since `sinceIso`, counted by outcome (429s are neither successes nor errors). */
export async function trafficOf(q: Queryable, keyIds: readonly string[], sinceIso: string): Promise<Traffic> {
  return (await q.get<Traffic>(
    `SELECT count(*) AS total_requests,
            count(*) FILTER (WHERE status < 400) AS successful_requests,
            count(*) FILTER (WHERE status >= 400 AND status <> 429) AS error_requests,
            count(*) FILTER (WHERE status = 429) AS rate_limited_requests,
            count(*) FILTER (WHERE error_code = 'idempotency_replay') AS idempotent_replays,
            count(*) FILTER (WHERE route = '/api/partner/sandbox/webhook-simulator/run' AND method = 'POST' AND status < 400) AS simulator_runs
     FROM request_log WHERE key_ref IN (${keyRefsIn(keyIds)}) AND at > ?`,
    [...keyIds, sinceIso],
  ))!;
}

export const recentErrorsOf = (q: Queryable, keyIds: readonly string[], sinceIso: string, limit: number) =>
  q.all<Static<typeof RecentError>>(
    `SELECT r.at, r.method, r.route, r.status, r.error_code, k.key_id FROM request_log r JOIN request_log_keys k ON k.ref = r.key_ref
     WHERE k.key_id IN (${placeholders(keyIds.length)}) AND r.at > ? AND r.status >= 400 ORDER BY r.id DESC LIMIT ?`,
    [...keyIds, sinceIso, limit],
  );

/** Durable evidence that mutations carried Idempotency-Key: stored records (24 h) and the ledger's own column. */
export async function idempotentMutationCount(q: Queryable, partner: string, keyIds: readonly string[]): Promise<number> {
  const records = await countOf(
    q,
    `SELECT count(*) AS n FROM idempotency_records WHERE key_id IN (${placeholders(keyIds.length)}) AND state = 'completed'`,
    keyIds,
  );
  // Through the partner's sandbox users (partner_users_owner_idx), then each user's entries (salutes_ledger_user_idx):
  // the ledger has no index by owner, and a user id names one owner.
  const ledger = await countOf(
    q,
    `SELECT count(*) AS n FROM partner_users u JOIN salutes_ledger l ON l.user_id = u.id
     WHERE u.partner = ? AND u.mode = 'sandbox' AND l.idempotency_key IS NOT NULL`,
    [partner],
  );
  return records + ledger;
}

export const acknowledgedCount = (q: Queryable, partner: string) =>
  countOf(q, "SELECT count(*) AS n FROM webhook_deliveries WHERE partner = ? AND mode = 'sandbox' AND status = 'succeeded'", [partner]);

export const sandboxUserOf = (q: Queryable, partner: string, id: number) =>
  q.get<Pick<UserRow, "id" | "external_id" | "status">>("SELECT id, external_id, status FROM partner_users WHERE id = ? AND partner = ? AND mode = 'sandbox'", [
    id,
    partner,
  ]);

/** What the report says of one sandbox user: wallets, ledger entries, and entries written under an Idempotency-Key. */
export async function userCounts(q: Queryable, userId: number) {
  const n = (sql: string) => countOf(q, sql, [userId]);
  return {
    wallets: await n("SELECT count(*) AS n FROM wallet_links WHERE user_id = ?"),
    ledger_entries: await n("SELECT count(*) AS n FROM salutes_ledger WHERE user_id = ?"),
    idempotent_ledger_entries: await n("SELECT count(*) AS n FROM salutes_ledger WHERE user_id = ? AND idempotency_key IS NOT NULL"),
  };
}

/**
 * The promotion report's evidence, apart from the event loop (src/db/apart.ts): 30 days of the sandbox keys'
 * request_log rows counted by outcome, the idempotent mutations, the acknowledged deliveries and the recent errors
 * grow with the partner's sandbox traffic (1.1–1.4 s of /healthz stall at 2,000,000 rows on SQLite before).
 */
export const promotionEvidenceTask = apartTask(
  "sandbox-promotion-evidence",
  async (q, a: { partner: string; keyIds: string[]; sinceIso: string; limit: number }) => ({
    traffic: await trafficOf(q, a.keyIds, a.sinceIso),
    idempotent: await idempotentMutationCount(q, a.partner, a.keyIds),
    acknowledged: await acknowledgedCount(q, a.partner),
    recent: await recentErrorsOf(q, a.keyIds, a.sinceIso, a.limit),
  }),
);
