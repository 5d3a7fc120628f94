import { countOf, type Queryable, type Statement } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerSeedCommitments, messengerSeeds, messengerSpins } from "../tables";

// The spin wheel's provably-fair records (messenger_seeds, messenger_seed_commitments, messenger_spins): the only
// SQL that touches them but the window search's probes (id-search.ts). Written inside a game action's transaction,
// after the player's row lock.

export type SeedRow = Omit<RowOf<typeof messengerSeeds>, "status"> & { status: "active" | "revealed" };
export type CommitmentRow = Pick<RowOf<typeof messengerSeedCommitments>, "server_seed" | "server_seed_hash" | "committed_at">;
export type FairGame = RowOf<typeof messengerSeedCommitments>["game_key"];
type SpinRow = RowOf<typeof messengerSpins>;

export const activeSeed = (q: Queryable, telegramUserId: number) =>
  q.get<SeedRow>("SELECT * FROM messenger_seeds WHERE telegram_user_id = ? AND status = 'active' ORDER BY id DESC LIMIT 1", [telegramUserId]);

export async function insertSeed(
  t: Queryable,
  s: { telegramUserId: number; serverSeed: string; serverSeedHash: string; clientSeed: string; committedAt: string; at: string },
): Promise<SeedRow> {
  return (await t.get<SeedRow>(
    `INSERT INTO messenger_seeds (telegram_user_id, server_seed, server_seed_hash, client_seed, next_nonce, status, created_at, committed_at)
     VALUES (?, ?, ?, ?, 0, 'active', ?, ?) RETURNING *`,
    [s.telegramUserId, s.serverSeed, s.serverSeedHash, s.clientSeed, s.at, s.committedAt],
  ))!;
}

export async function revealSeed(t: Queryable, id: number, at: string): Promise<void> {
  await t.run("UPDATE messenger_seeds SET status = 'revealed', revealed_at = ? WHERE id = ?", [at, id]);
}

/**
 * The id the play's spin will be recorded under, taken with its nonce so that the play's answer is known before its
 * statements are sent (the ledger then writes the spin with the balances' move: src/messenger/store/ledger.ts). Each
 * engine's own way: PostgreSQL's sequence (an id taken by a play that is then refused or replayed is never used: a
 * sequence is not rolled back), SQLite's AUTOINCREMENT counter + 1 — read under the transaction's write lock, which
 * no other writer passes until it commits, and rolled back with it.
 */
const NEXT_SPIN_ID = {
  postgres: "nextval(pg_get_serial_sequence('messenger_spins', 'id'))",
  sqlite: "(SELECT COALESCE(MAX(seq), 0) + 1 FROM sqlite_sequence WHERE name = 'messenger_spins')",
} as const;

export interface TakenNonce {
  seed: SeedRow;
  /** The nonce taken: the value before the increment. */
  nonce: number;
  /** The id to record the spin under (insertSpinStatement). */
  spinId: number;
}

type TakenRow = SeedRow & { spin_id: number | string };

const taken = (row: TakenRow | null): TakenNonce | null => {
  if (!row) return null;
  const { spin_id, ...seed } = row;
  return { seed, nonce: seed.next_nonce - 1, spinId: Number(spin_id) };
};

/** Takes the pair's next nonce, and the id of the spin that uses it (NEXT_SPIN_ID). */
export async function takeNonce(t: Queryable, seedId: number): Promise<TakenNonce> {
  return taken(
    await t.get<TakenRow>(`UPDATE messenger_seeds SET next_nonce = next_nonce + 1 WHERE id = ? RETURNING *, ${NEXT_SPIN_ID[t.dialect]} AS spin_id`, [seedId]),
  )!;
}

/**
 * Takes the next nonce of the player's active pair: activeSeed and takeNonce in ONE statement, on both engines
 * (on PostgreSQL each statement is a round trip, and every spin takes a nonce). The pair comes back as it
 * is after the increment, with the nonce taken (the value before it) and the id of the spin to record; null, and
 * nothing written, when the player has no active pair. Under the player's row lock, as every spin and rotation of
 * the pair.
 */
export async function takeActiveNonce(t: Queryable, telegramUserId: number): Promise<TakenNonce | null> {
  return taken(
    await t.get<TakenRow>(
      `UPDATE messenger_seeds SET next_nonce = next_nonce + 1
       WHERE id = (SELECT id FROM messenger_seeds WHERE telegram_user_id = ? AND status = 'active' ORDER BY id DESC LIMIT 1)
       RETURNING *, ${NEXT_SPIN_ID[t.dialect]} AS spin_id`,
      [telegramUserId],
    ),
  );
}

export const revealedSeedRows = (q: Queryable, telegramUserId: number, limit: number) =>
  q.all<SeedRow>("SELECT * FROM messenger_seeds WHERE telegram_user_id = ? AND status = 'revealed' ORDER BY id DESC LIMIT ?", [telegramUserId, limit]);

export const pendingCommitment = (q: Queryable, telegramUserId: number, game: FairGame) =>
  q.get<CommitmentRow>("SELECT server_seed, server_seed_hash, committed_at FROM messenger_seed_commitments WHERE telegram_user_id = ? AND game_key = ?", [
    telegramUserId,
    game,
  ]);

export async function insertCommitment(t: Queryable, telegramUserId: number, game: FairGame, c: CommitmentRow): Promise<void> {
  await t.run("INSERT INTO messenger_seed_commitments (telegram_user_id, game_key, server_seed, server_seed_hash, committed_at) VALUES (?, ?, ?, ?, ?)", [
    telegramUserId,
    game,
    c.server_seed,
    c.server_seed_hash,
    c.committed_at,
  ]);
}

export async function deleteCommitment(t: Queryable, telegramUserId: number, game: FairGame): Promise<void> {
  await t.run("DELETE FROM messenger_seed_commitments WHERE telegram_user_id = ? AND game_key = ?", [telegramUserId, game]);
}

/** Records a spin under the id taken with its nonce (takeActiveNonce, takeNonce), as a statement the ledger sends. */
export const insertSpinStatement = (s: Omit<SpinRow, "id">, id: number): Statement => ({
  sql: "INSERT INTO messenger_spins (id, telegram_user_id, seed_id, nonce, campaign_key, segment_index, paid_with, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  params: [id, s.telegram_user_id, s.seed_id, s.nonce, s.campaign_key, s.segment_index, s.paid_with, s.created_at],
});

/** Whether any spin used the campaign (its segments are then fixed). */
export async function campaignHasSpins(q: Queryable, campaignKey: string): Promise<boolean> {
  return (await q.get("SELECT id FROM messenger_spins WHERE campaign_key = ? LIMIT 1", [campaignKey])) !== null;
}

export const countSpinsOf = (q: Queryable, telegramUserId: number) =>
  countOf(q, "SELECT COUNT(*) AS n FROM messenger_spins WHERE telegram_user_id = ?", [telegramUserId]);

export const spinCounts = (q: Queryable, fromId: number, toId: number) =>
  q.all<Pick<SpinRow, "campaign_key" | "segment_index" | "paid_with"> & { n: number }>(
    `SELECT campaign_key, segment_index, paid_with, COUNT(*) AS n FROM messenger_spins WHERE id >= ? AND id < ?
     GROUP BY campaign_key, segment_index, paid_with`,
    [fromId, toId],
  );
