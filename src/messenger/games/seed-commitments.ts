// The next server seed, committed before the client seed is known (docs/messenger.md, "Provably fair"). A seed
// the server creates in the same call that takes the player's client seed could be picked to suit that client
// seed; so, as provably-fair casinos do, every answer that shows a game's fairness also publishes the hash of the
// NEXT server seed, and setting a wheel client seed or starting a grid uses that pre-committed seed — never one
// made in the same request — and commits a new one. The player who saw `next_server_seed_hash` in an earlier
// answer knows the seed was fixed before its client seed existed.
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { AppError } from "../../http/errors/errors";
import { type CommitmentRow, deleteCommitment, type FairGame, insertCommitment, pendingCommitment } from "../store/fair";
import { newServerSeed, seedHash } from "./fair";

type Commitment = CommitmentRow;

/** The pending commitment, made now if there is none, in the caller's transaction `t` (after the player's lock). */
export async function ensureCommitment(ctx: Pick<AppContext, "rng">, t: Queryable, telegramUserId: number, game: FairGame, now: string): Promise<Commitment> {
  const found = await pendingCommitment(t, telegramUserId, game);
  if (found) return found;
  const serverSeed = newServerSeed(ctx.rng);
  const row: Commitment = { server_seed: serverSeed, server_seed_hash: seedHash(serverSeed), committed_at: now };
  await insertCommitment(t, telegramUserId, game, row);
  return row;
}

/**
 * Consumes the commitment published by an EARLIER answer (call before ensureCommitment in the same transaction).
 * None yet: 409 game_state_conflict — the status route publishes one. `expectedHash`, when the client sends the
 * hash it was shown, must be that commitment's: another may have replaced it meanwhile (a concurrent rotation).
 */
export async function takeCommitmentOrThrow(
  t: Queryable,
  telegramUserId: number,
  game: FairGame,
  statusRoute: string,
  expectedHash?: string,
): Promise<Commitment> {
  const found = await pendingCommitment(t, telegramUserId, game);
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
  await deleteCommitment(t, telegramUserId, game);
  return found;
}

/** What every fairness answer adds about the next seed. */
export const nextView = (c: Commitment) => ({ next_server_seed_hash: c.server_seed_hash, next_committed_at: c.committed_at });
