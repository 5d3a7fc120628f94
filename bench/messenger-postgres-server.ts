// The `messenger` benchmark's naive bare server on PostgreSQL: Bun.serve + Bun's SQL client, nothing else (no
// Elysia, no herald app). POST /api/messenger/games/spin-wheel/play takes the player id from the `user` field of
// the `Authorization: tma <init data>` header WITHOUT checking its signature (no HMAC, no auth_date: what
// bench/credit-postgres-server.ts skips too) and the body's request_id, then runs ONE transaction with the writes
// herald's play makes (src/messenger/ledger.ts applyActionIn around src/messenger/games/wheel.ts playWheel), the
// same SQL text, each statement awaited before the next is sent (naive: no pipelining, no group commit), one
// commit per play:
//   BEGIN
//   1. lock (or make) the player's row            src/messenger/store/players.ts lockOrCreatePlayer (via lockedPlayer)
//   2. claim the request id: the ledger row       src/messenger/store/ledger.ts claimRequest
//      (a repeated request_id: 2'. priorAction, and the stored answer is replayed, as herald does)
//   3. the daily free spin's time, when it is due  (herald writes it with 7, moveBalances; not in steady state)
//   4. the active pair's next nonce               src/messenger/store/fair.ts takeActiveNonce
//      (no active pair: insertSeed with a fresh server seed, its sha256 and a fresh client seed, then takeNonce,
//      as herald's createSeed; the benchmark's players already have their pair from herald's own plays)
//   5. the spin's row                             src/messenger/store/fair.ts insertSpinStatement
//   6. mission progress                           src/messenger/store/missions.ts addObserved (via observeEvent)
//   7. the balances                               src/messenger/store/players.ts moveBalances
//   8. the ledger row's outcome and answer        src/messenger/store/ledger.ts completeClaim
//   COMMIT
// The segment is drawn by herald's own pure pickWeighted over the built-in wheel (WHEEL_CAMPAIGN: what activeWheel
// answers for a player outside every wheel campaign; the benchmark makes none), so the balances move as herald's.
// Left out: herald's hourly play counter (written after the commit, one upsert for many plays: counters.ts), its
// games-configuration read (cached, outside the transaction), catalog campaigns (none in the benchmark), rate
// limits, the request log and the response schema.
//
//   bun bench/messenger-postgres-server.ts --url postgres://… --port N --pool N
import { createHash, randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { SQL } from "bun";
import { WHEEL_CAMPAIGN } from "../src/messenger/catalog";
import { pickWeighted, seedHash } from "../src/messenger/games/fair";

const LOCK_PLAYER = `INSERT INTO messenger_players (telegram_user_id, created_at, last_seen_at) VALUES ($1, $2, $3)
     ON CONFLICT (telegram_user_id) DO UPDATE SET last_seen_at = messenger_players.last_seen_at RETURNING *`;
const CLAIM = `INSERT INTO messenger_ledger (telegram_user_id, request_id, action, fingerprint, free_spin_delta, missile_delta, points_delta,
       free_spin_after, missile_after, points_after, game_key, result, created_at)
     VALUES ($1, $2, $3, $4, 0, 0, 0, 0, 0, 0, $5, '{}', $6)
     ON CONFLICT (telegram_user_id, request_id) DO NOTHING RETURNING id`;
const PRIOR = "SELECT id, fingerprint, result FROM messenger_ledger WHERE telegram_user_id = $1 AND request_id = $2";
const SET_LAST_FREE_SPIN = "UPDATE messenger_players SET last_free_spin_at = $1 WHERE telegram_user_id = $2";
const TAKE_ACTIVE_NONCE = `UPDATE messenger_seeds SET next_nonce = next_nonce + 1
     WHERE id = (SELECT id FROM messenger_seeds WHERE telegram_user_id = $1 AND status = 'active' ORDER BY id DESC LIMIT 1) RETURNING *`;
const INSERT_SEED = `INSERT INTO messenger_seeds (telegram_user_id, server_seed, server_seed_hash, client_seed, next_nonce, status, created_at, committed_at)
     VALUES ($1, $2, $3, $4, 0, 'active', $5, $6) RETURNING *`;
const TAKE_NONCE = "UPDATE messenger_seeds SET next_nonce = next_nonce + 1 WHERE id = $1 RETURNING next_nonce";
const INSERT_SPIN =
  "INSERT INTO messenger_spins (telegram_user_id, seed_id, nonce, campaign_key, segment_index, paid_with, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id";
const ADD_OBSERVED = `UPDATE messenger_mission_enrollments SET observed = observed + $1
     WHERE telegram_user_id = $2 AND completed_at IS NULL AND EXISTS (
       SELECT 1 FROM messenger_missions m WHERE m.mission_key = messenger_mission_enrollments.mission_key
         AND m.event_type = $3 AND m.progress_source = 'server' AND m.active = 1)`;
const MOVE_BALANCES = `UPDATE messenger_players SET free_spin_balance = free_spin_balance + $1, missile_balance = missile_balance + $2, points_balance = points_balance + $3,
       points_earned = points_earned + $4
     WHERE telegram_user_id = $5 AND free_spin_balance + $6 >= 0 AND missile_balance + $7 >= 0 AND points_balance + $8 >= 0
     RETURNING free_spin_balance, missile_balance, points_balance`;
const COMPLETE_CLAIM = `UPDATE messenger_ledger SET free_spin_delta = $1, missile_delta = $2, points_delta = $3, free_spin_after = $4, missile_after = $5, points_after = $6, result = $7
     WHERE id = $8`;

/**
 * The statements of a steady-state play (a player with an active pair and the daily free spin already taken),
 * each its own round trip: BEGIN, these, COMMIT. A due daily free spin adds SET_LAST_FREE_SPIN; a missing pair
 * adds INSERT_SEED and TAKE_NONCE.
 */
export const PLAY_STATEMENTS = [LOCK_PLAYER, CLAIM, TAKE_ACTIVE_NONCE, INSERT_SPIN, ADD_OBSERVED, MOVE_BALANCES, COMPLETE_CLAIM] as const;
/** PostgreSQL round trips per steady-state play: BEGIN, each statement in turn, COMMIT. */
export const ROUND_TRIPS_PER_PLAY = 1 + PLAY_STATEMENTS.length + 1;

const ACTION = "spin_wheel.play";
const GAME = "spin_wheel";
/** As herald's fingerprintOf(action, inputs) for a play (its inputs are {}). */
const FINGERPRINT = createHash("sha256")
  .update(JSON.stringify([ACTION, {}]))
  .digest("hex");
const WHEEL = WHEEL_CAMPAIGN;
const WEIGHTS = WHEEL.segments.map((s) => s.weight);

type Row = Record<string, unknown>;
/** int8 comes back as text from Bun's client (no `bigint` option here). */
const num = (v: unknown): number => Number(v);

class PlayError extends Error {}

/** The player id of `tma <init data>`: its `user` field's id, unverified. */
function playerOf(authorization: string | null): number {
  if (!authorization?.startsWith("tma ")) throw new PlayError("no `Authorization: tma <init data>` header");
  const user = new URLSearchParams(authorization.slice(4)).get("user");
  if (!user) throw new PlayError("the init data has no user");
  const id = Number((JSON.parse(user) as { id?: unknown }).id);
  if (!Number.isSafeInteger(id) || id <= 0) throw new PlayError("the init data's user has no id");
  return id;
}

async function play(sql: SQL, uid: number, requestId: string): Promise<Row> {
  const now = new Date();
  const at = now.toISOString();
  return sql.begin(async (tx) => {
    const [player] = (await tx.unsafe(LOCK_PLAYER, [uid, at, at])) as Row[];
    const [claimed] = (await tx.unsafe(CLAIM, [uid, requestId, ACTION, FINGERPRINT, GAME, at])) as Row[];
    if (!claimed) {
      const [prior] = (await tx.unsafe(PRIOR, [uid, requestId])) as Row[];
      if (!prior) throw new PlayError(`request_id ${JSON.stringify(requestId)} is being applied by another request; retry`);
      if (prior.fingerprint !== FINGERPRINT) throw new PlayError(`request_id ${JSON.stringify(requestId)} was already used for another action or payload`);
      return { ...(JSON.parse(String(prior.result)) as Row), replayed: true, ledger_entry_id: num(prior.id) };
    }
    const ledgerId = num(claimed.id);
    const last = player!.last_free_spin_at as string | null;
    const freeDue = !last || Date.parse(last) + WHEEL.cooldown_seconds * 1000 <= now.getTime();
    const spinsInHand = num(player!.free_spin_balance);
    if (!freeDue && spinsInHand <= 0) throw new PlayError("no spin available: the daily free spin is not due and the player holds no spins");
    const paidWith = freeDue ? "daily_free_spin" : "free_spin_balance";
    if (freeDue) await tx.unsafe(SET_LAST_FREE_SPIN, [at, uid]);
    let [seed] = (await tx.unsafe(TAKE_ACTIVE_NONCE, [uid])) as Row[];
    let nonce: number;
    if (seed) nonce = num(seed.next_nonce) - 1;
    else {
      const serverSeed = randomBytes(32).toString("hex");
      [seed] = (await tx.unsafe(INSERT_SEED, [uid, serverSeed, seedHash(serverSeed), randomBytes(8).toString("hex"), at, at])) as Row[];
      const [taken] = (await tx.unsafe(TAKE_NONCE, [seed!.id])) as Row[];
      nonce = num(taken!.next_nonce) - 1;
    }
    const s = seed!;
    const index = pickWeighted(WEIGHTS, String(s.server_seed), String(s.client_seed), nonce);
    const segment = WHEEL.segments[index]!;
    const [spin] = (await tx.unsafe(INSERT_SPIN, [uid, s.id, nonce, WHEEL.campaign_key, index, paidWith, at])) as Row[];
    await tx.unsafe(ADD_OBSERVED, [1, uid, ACTION]);
    const d = {
      freeSpins: segment.reward.free_spins - (paidWith === "free_spin_balance" ? 1 : 0),
      missiles: segment.reward.missiles,
      points: segment.reward.points,
    };
    const [moved] = (await tx.unsafe(MOVE_BALANCES, [
      d.freeSpins,
      d.missiles,
      d.points,
      Math.max(0, d.points),
      uid,
      d.freeSpins,
      d.missiles,
      d.points,
    ])) as Row[];
    if (!moved) throw new PlayError("the balances changed while this action ran; retry it");
    const balances = {
      free_spin_balance: num(moved.free_spin_balance),
      missile_balance: num(moved.missile_balance),
      points_balance: num(moved.points_balance),
    };
    const stored = {
      spin: {
        id: num(spin!.id),
        campaign_key: WHEEL.campaign_key,
        segment_index: index,
        segment_label: segment.label,
        reward: segment.reward,
        paid_with: paidWith,
        fairness: { server_seed_hash: s.server_seed_hash, client_seed: s.client_seed, nonce, committed_at: s.committed_at ?? s.created_at },
        created_at: at,
      },
      balances,
    };
    await tx.unsafe(COMPLETE_CLAIM, [
      d.freeSpins,
      d.missiles,
      d.points,
      balances.free_spin_balance,
      balances.missile_balance,
      balances.points_balance,
      JSON.stringify(stored),
      ledgerId,
    ]);
    return { ...stored, replayed: false, ledger_entry_id: ledgerId };
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: { url: { type: "string" }, port: { type: "string" }, pool: { type: "string" } },
  });
  if (!values.url || !values.port) throw new Error("usage: bun bench/messenger-postgres-server.ts --url URL --port N [--pool N]");
  const sql = new SQL({ url: values.url, max: Number(values.pool ?? 10) });

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: Number(values.port),
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method === "GET" && url.pathname === "/") return new Response("ok");
      if (req.method !== "POST" || url.pathname !== "/api/messenger/games/spin-wheel/play") return new Response("not found", { status: 404 });
      try {
        const uid = playerOf(req.headers.get("authorization"));
        const body = (await req.json()) as { request_id?: unknown };
        if (typeof body.request_id !== "string" || body.request_id === "") throw new PlayError("the body has no request_id");
        return Response.json({ success: true, ...(await play(sql, uid, body.request_id)) });
      } catch (err) {
        return Response.json({ success: false, error: (err as Error).message }, { status: 500 });
      }
    },
  });
  // SIGTERM: stop listening, let the plays in flight finish (1 s at most), exit 0 (a signal death reads as no exit code).
  process.on("SIGTERM", () => {
    void server.stop();
    void sql.close({ timeout: 1 }).finally(() => process.exit(0));
  });
}

if (import.meta.main) await main();
