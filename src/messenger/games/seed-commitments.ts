// The next server seed, committed before the client seed is known (docs/messenger.md, "Provably fair"). A seed
// the server creates in the same call that takes the player's client seed could be picked to suit that client
// seed; so, as provably-fair casinos do, every answer that shows a game's fairness also publishes the hash of the
// NEXT server seed, and setting a wheel client seed or starting a grid uses that pre-committed seed — never one
// made in the same request — and commits a new one. The player who saw `next_server_seed_hash` in an earlier
// answer knows the seed was fixed before its client seed existed.
import type { Database } from "bun:sqlite";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { newServerSeed, seedHash } from "./fair";

export type FairGame = "spin_wheel" | "recon_grid";

export interface Commitment {
  server_seed: string;
  server_seed_hash: string;
  committed_at: string;
}

const pending = (db: Database, telegramUserId: number, game: FairGame) =>
  db
    .query<Commitment, [number, string]>(
      "SELECT server_seed, server_seed_hash, committed_at FROM messenger_seed_commitments WHERE telegram_user_id = ? AND game_key = ?",
    )
    .get(telegramUserId, game);

/** The pending commitment, made now if there is none. The caller publishes its hash in its answer. */
export function ensureCommitment(ctx: AppContext, db: Database, telegramUserId: number, game: FairGame, now: string): Commitment {
  const found = pending(db, telegramUserId, game);
  if (found) return found;
  const serverSeed = newServerSeed(ctx.rng);
  const row: Commitment = { server_seed: serverSeed, server_seed_hash: seedHash(serverSeed), committed_at: now };
  db.query("INSERT INTO messenger_seed_commitments (telegram_user_id, game_key, server_seed, server_seed_hash, committed_at) VALUES (?, ?, ?, ?, ?)").run(
    telegramUserId,
    game,
    row.server_seed,
    row.server_seed_hash,
    row.committed_at,
  );
  return row;
}

/**
 * Consumes the commitment published by an EARLIER answer (call before ensureCommitment in the same transaction).
 * None yet: 409 game_state_conflict — the status route publishes one. `expectedHash`, when the client sends the
 * hash it was shown, must be that commitment's: another may have replaced it meanwhile (a concurrent rotation).
 */
export function takeCommitmentOrThrow(db: Database, telegramUserId: number, game: FairGame, statusRoute: string, expectedHash?: string): Commitment {
  const found = pending(db, telegramUserId, game);
  if (!found) {
    throw new AppError(
      "game_state_conflict",
      `No server seed is committed for you yet: call ${statusRoute} first (it publishes next_server_seed_hash), then send your client seed`,
      { details: { next_server_seed_hash: null } },
    );
  }
  if (expectedHash !== undefined && expectedHash !== found.server_seed_hash) {
    throw new AppError(
      "game_state_conflict",
      `next_server_seed_hash ${expectedHash} is not the pending commitment (${found.server_seed_hash}); read ${statusRoute} again`,
      { details: { next_server_seed_hash: found.server_seed_hash } },
    );
  }
  db.query("DELETE FROM messenger_seed_commitments WHERE telegram_user_id = ? AND game_key = ?").run(telegramUserId, game);
  return found;
}

/** What every fairness answer adds about the next seed. */
export const nextView = (c: Commitment) => ({ next_server_seed_hash: c.server_seed_hash, next_committed_at: c.committed_at });
