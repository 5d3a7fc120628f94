// The game ledger: every change of free_spin_balance, missile_balance or points goes through applyAction, which
// in ONE transaction (1) claims the client's request id (a repeat answers the stored answer), (2) takes the
// player's row lock, (3) runs the action's game-state changes, (4) moves the balances by one conditional
// statement that refuses a balance below zero and (5) completes the ledger row. A thrown AppError rolls all of it
// back. Nothing in it awaits anything but the transaction's own statements (docs/design.md §8a). Independent
// statements are issued together (one round trip on PostgreSQL; in-order.ts): the lock with the claim, the
// balances with the effect's last statements (settleAction; ActionEffect.riders). A play's hourly counter is
// written just after the commit (counters.ts, CountsBehind), not in it.
import { createHash } from "node:crypto";
import type { Clock } from "../clock";
import type { AppContext } from "../context";
import type { RewardSpec } from "./catalog";
import type { Queryable, Statement, TxOptions } from "../db/port";
import { AppError } from "../http/errors/errors";
import { type CounterMetric, countAfterCommit } from "./counters";
import { inOrder } from "../db/in-order";
import { type balancesOf, lockedPlayer, type PlayerRow } from "./players";
import { claimRequest, priorAction, settleAction } from "./store/ledger";

export interface Deltas {
  freeSpins: number;
  missiles: number;
  points: number;
}

/** An effect's move for a reward credited (its points earned), less what the play cost in spins or missiles. */
export const creditOf = (reward: RewardSpec, cost: Partial<Deltas> = {}) => ({
  deltas: { freeSpins: reward.free_spins - (cost.freeSpins ?? 0), missiles: reward.missiles - (cost.missiles ?? 0), points: reward.points },
  earnedPoints: reward.points,
});

export interface ActionInput {
  telegramUserId: number;
  requestId: string;
  /** e.g. "spin_wheel.play", "items.purchase" — part of the fingerprint. */
  action: string;
  /** The inputs that define the action: the same request id with other inputs is request_id_reused. */
  inputs: unknown;
  gameKey: string | null;
  /**
   * How the action shares a commit on PostgreSQL (TxOptions); by default its player's batch, one body at a time.
   * `"player rows"`: the effect decides only on this player's own rows, so it may share a batch with other players'
   * actions without a SAVEPOINT each (not for an effect that catches a failure in a savepoint of its own).
   * `"alone"`: the effect locks a row other players' actions lock too (the manual grants' lock), so it never joins a
   * batch: one holding that lock while going on to other players' rows could deadlock with another instance's batch.
   */
  sharing?: "player rows" | "alone";
}

export interface ActionEffect<R> {
  deltas: Deltas;
  /** Points earned (counted on the leaderboard); spending never lowers it. */
  earnedPoints?: number;
  /** The daily free spin taken now: written with the balances' move (the player's row changes in one statement). */
  lastFreeSpinAt?: string;
  /**
   * The answer, stored with the ledger row and returned again for a replay; balances are added here. Known before the
   * move is sent: what the action writes besides goes in `riders`.
   */
  result: R;
  /**
   * Writes of the action that nothing waits for, handed to the ledger to send: on PostgreSQL inside the balances'
   * statement (one statement for all: moveAndCompletePostgres); on SQLite before the move, each on its own, in this
   * order. They must write other rows than the player's and not depend on each other.
   */
  riders?: readonly Statement[];
  /**
   * An hourly counter to add one to (a play), once the transaction has committed (AfterCommit.count): the counter's
   * row is every player's, and in the transaction its lock would be held to the commit (counters.ts, CountsBehind).
   */
  count?: { metric: CounterMetric; label: string };
}

/** What must happen once the transaction has committed (never inside it: the dispatcher is not the store). */
interface AfterCommit {
  /** A salutes payout queued webhook deliveries: the dispatcher is nudged. */
  nudge: boolean;
  /** The action's hourly counter (ActionEffect.count), counted once the transaction has committed. */
  count?: { metric: CounterMetric; label: string };
}

/** What an action's effect runs with: the transaction, its time (and clock), and what to do after the commit. */
export interface ActionScope {
  t: Queryable;
  now: string;
  clock: Clock;
  after: AfterCommit;
}

export type Balances = ReturnType<typeof balancesOf>;
export type Applied<R> = R & { balances: Balances; replayed: boolean; ledger_entry_id: number };
export type Effect<R, E = undefined> = (player: PlayerRow, s: ActionScope, early: E) => Promise<ActionEffect<R>>;

/**
 * Statements an action issues beside the player's lock and the request's claim, before its effect runs (one round
 * trip on PostgreSQL instead of one more), their answer handed to the effect: a wheel play takes its nonce so.
 * They may write: a replay rolls them back (ReplayOf), as does any error of the effect.
 */
export type Early<E> = (t: Queryable, telegramUserId: number, now: string) => Promise<E>;

/**
 * A replay found by an action with early statements: thrown so that the transaction (or the action's savepoint in
 * a shared commit) is rolled back with what those statements wrote, then answered by applyAction as the replay.
 */
class ReplayOf extends Error {
  constructor(readonly answer: unknown) {
    super("a replayed game action (answered from its ledger row)");
  }
}

const fingerprintOf = (action: string, inputs: unknown) =>
  createHash("sha256")
    .update(JSON.stringify([action, inputs]))
    .digest("hex");

/** Thrown inside the transaction when a balance would go below zero: names the balance, what it holds and needs. */
export function insufficient(balance: keyof Balances, has: number, required: number): AppError {
  return new AppError(
    "game_balance_insufficient",
    `Not enough ${balance.replace("_balance", "").replace("_", " ")}: the player has ${has}, this needs ${required}`,
    { details: { balance, has, required } },
  );
}

/** The group-commit key of a player's balances (TxOptions.group): one player's actions share a commit on PostgreSQL. */
export const playerGroup = (telegramUserId: number): string => `messenger:${telegramUserId}`;

/**
 * `body` in a transaction of its own, at `now` (by default the clock's when the body starts); what it leaves in its
 * scope's `after` is done once the transaction has committed: the dispatcher nudged, the counter counted.
 */
export async function inOwnTx<T>(ctx: AppContext, body: (s: ActionScope) => Promise<T>, options?: TxOptions, now?: string): Promise<T> {
  const after: AfterCommit = { nudge: false };
  const out = await ctx.store.tx((t) => body({ t, now: now ?? ctx.clock.now().toISOString(), clock: ctx.clock, after }), options);
  if (after.nudge) ctx.dispatcher.nudge();
  if (after.count) countAfterCommit(ctx, after.count.metric, after.count.label);
  return out;
}

/**
 * Runs the action in a transaction of its own (inOwnTx). On PostgreSQL it may share a commit with other players'
 * actions (group commit, keyed by the player's row).
 */
export async function applyAction<R extends object, E = undefined>(
  ctx: AppContext,
  input: ActionInput,
  effect: Effect<R, E>,
  early?: Early<E>,
): Promise<Applied<R>> {
  try {
    return await inOwnTx(ctx, (s) => applyActionIn(s, input, effect, early), {
      ...(input.sharing === "alone" ? {} : { group: playerGroup(input.telegramUserId) }),
      ...(input.sharing === "player rows" ? { together: "beside other keys" as const } : {}),
      lastAnsweredWithCommit: true,
    });
  } catch (err) {
    if (err instanceof ReplayOf) return err.answer as Applied<R>;
    throw err;
  }
}

/**
 * The action inside the caller's transaction (a mission's reward inside its progress event, a bot /start promo). What
 * it leaves in `s.after` (a nudge, a count) is the caller's to do once its transaction has committed.
 */
export async function applyActionIn<R extends object, E = undefined>(
  s: ActionScope,
  input: ActionInput,
  effect: Effect<R, E>,
  early?: Early<E>,
): Promise<Applied<R>> {
  const { t, now } = s;
  const uid = input.telegramUserId;
  const fingerprint = fingerprintOf(input.action, input.inputs);
  // The player's row first: every transaction that changes a player takes that lock before any other (one order).
  // The claim is issued right behind it (the server runs them in that order) and does not need its answer; so are
  // the action's early statements.
  const [player, ledgerId, earlyAnswer] = await inOrder(
    lockedPlayer(t, uid, now),
    claimRequest(t, { telegramUserId: uid, requestId: input.requestId, action: input.action, fingerprint, gameKey: input.gameKey, at: now }),
    early?.(t, uid, now),
  );
  if (ledgerId === null) {
    const prior = await priorAction(t, uid, input.requestId);
    if (!prior) throw new AppError("conflict", `request_id ${JSON.stringify(input.requestId)} is being applied by another request; retry`);
    if (prior.fingerprint !== fingerprint) {
      throw new AppError("request_id_reused", `request_id ${JSON.stringify(input.requestId)} was already used for another action or payload`);
    }
    const answer = { ...(JSON.parse(prior.result) as R & { balances: Balances }), replayed: true, ledger_entry_id: prior.id };
    if (early) throw new ReplayOf(answer);
    return answer;
  }
  const out = await effect(player, s, earlyAnswer as E);
  checkBalances(player, out.deltas);
  const earned = Math.max(0, out.earnedPoints ?? 0);
  const stored = await settleAction(t, {
    ledgerId,
    telegramUserId: uid,
    from: player,
    move: { ...out.deltas, earned, ...(out.lastFreeSpinAt === undefined ? {} : { lastFreeSpinAt: out.lastFreeSpinAt }) },
    result: out.result,
    riders: out.riders,
  });
  if (!stored) throw new AppError("conflict", "The balances changed while this action ran; retry it");
  if (out.count) s.after.count = out.count;
  return { ...stored, replayed: false, ledger_entry_id: ledgerId };
}

/** Refuses deltas that would take a balance below zero or out of the exact integer range (before anything is sent). */
function checkBalances(player: PlayerRow, deltas: Deltas): void {
  const expected: Balances = {
    free_spin_balance: player.free_spin_balance + deltas.freeSpins,
    missile_balance: player.missile_balance + deltas.missiles,
    points_balance: player.points_balance + deltas.points,
  };
  for (const [name, value] of Object.entries(expected) as Array<[keyof Balances, number]>) {
    if (!Number.isSafeInteger(value)) throw new AppError("invalid_payload", `the ${name} would leave the exact integer range`);
    if (value < 0) throw insufficient(name, player[name], player[name] - value);
  }
}
