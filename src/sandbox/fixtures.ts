import { createHash } from "node:crypto";
import bs58 from "bs58";
import type { Owner, PartnerActor } from "../auth/actors";
import type { AppContext } from "../context";
import { type Queryable, settlingBehind } from "../db/port";
import { createUser, updateUser } from "../partner/users-service";
import { linkWallet } from "../partner/wallets-service";
import { postEntry } from "../salutes/service";
import { schemaView } from "../http/schema-view";
import { FixtureSummary } from "./model";
import { FIXTURE_PROFILE, sandboxOwnerOf } from "./profile";
import {
  claimFixtureRow,
  type FixtureRecord,
  fixtureRecordOf,
  fixtureUserRows,
  holdFixtureRow,
  lockFixtureRowOrHeld,
  setFixtureUserIds,
  takeFixtureRowForReset,
} from "./store";

/**
 * Deterministic bytes: sha256(seed:counter) blocks. Fixtures deliberately do NOT use ctx.rng: the app's rng is
 * shared with every other request (key ids, event ids, claim codes), so fixture data drawn from it would depend
 * on whatever traffic came first. Seeded from the key id, the same key sees the same fixtures on every fresh start.
 */
class FixtureStream {
  private counter = 0;
  constructor(private readonly seed: string) {}

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let filled = 0; filled < n; ) {
      const block = createHash("sha256")
        .update(`${this.seed}:${this.counter++}`)
        .digest();
      const take = Math.min(block.length, n - filled);
      out.set(block.subarray(0, take), filled);
      filled += take;
    }
    return out;
  }

  /** An integer in [min, max]; the modulo bias over 2^32 is irrelevant for fixture amounts. */
  int(min: number, max: number): number {
    const b = this.bytes(4);
    const n = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
    return min + (n % (max - min + 1));
  }

  /** A Solana address (base58 of 32 bytes) that no one holds a private key for. */
  address(): string {
    return bs58.encode(this.bytes(32));
  }
}

type UserStatus = "active" | "suspended";

/**
 * The fixture data of one key: three users covering the cases an integration meets (a verified user with two
 * wallets and a mixed ledger, a plain active user, a suspended user whose credits are refused). Names are fixed
 * so docs can refer to them; wallets and amounts come from the key's stream. Amounts are whole salutes, so the plan
 * is valid under any SALUTES_DECIMALS.
 */
export function fixturePlan(seedKeyId: string) {
  const s = new FixtureStream(`${FIXTURE_PROFILE}:${seedKeyId}`);
  const person = (name: string, display: string) => ({
    external_id: `fx-${name}`,
    username: `fx_${name}`,
    display_name: display,
    email: `${name}@sandbox.example.com`,
  });
  const welcome = s.int(100, 500);
  const quest = s.int(10, 90);
  const alice = {
    ...person("alice", "Alice Fixture"),
    wallets: [
      { wallet_address: s.address(), label: "main", verified: true },
      { wallet_address: s.address(), label: "savings", verified: false },
    ],
    entries: [
      { kind: "credit" as const, amount: welcome, reason: "welcome_bonus", source: "sandbox-fixture" },
      { kind: "credit" as const, amount: quest, reason: "quest_reward", source: "sandbox-fixture" },
      { kind: "debit" as const, amount: s.int(1, welcome), reason: "shop_purchase", source: "sandbox-fixture" },
    ],
    is_verified: true,
    status: "active" as UserStatus,
  };
  // One unverified wallet and a welcome bonus; drawn from the stream in this order, after alice's.
  const plain = (name: string, display: string, status: UserStatus): typeof alice => ({
    ...person(name, display),
    wallets: [{ wallet_address: s.address(), label: "main", verified: false }],
    entries: [{ kind: "credit", amount: s.int(10, 200), reason: "welcome_bonus", source: "sandbox-fixture" }],
    is_verified: false,
    status,
  });
  const users = [alice, plain("bob", "Bob Fixture", "active"), plain("carol", "Carol Fixture", "suspended")];
  return { profile: FIXTURE_PROFILE, seed_key_id: seedKeyId, users };
}

export type FixturePlan = ReturnType<typeof fixturePlan>;

/**
 * Writes the plan through the LIVE partner and salutes services with a sandbox owner — the same validation,
 * ledger and outbox code a partner's own calls run — with the transaction handle `t`, and records its users on the
 * partner's row, which `t` already holds.
 */
async function writeRecordedPlan(t: Queryable, ctx: AppContext, owner: Owner, plan: FixturePlan, rec: FixtureRecord): Promise<FixtureRecord> {
  const author = { keyId: plan.seed_key_id, idempotencyKey: null };
  const ids: number[] = [];
  for (const u of plan.users) {
    const { user } = await createUser(t, ctx, owner, { external_id: u.external_id, username: u.username, display_name: u.display_name, email: u.email });
    const id = String(user.id);
    for (const w of u.wallets) await linkWallet(t, ctx, owner, id, w);
    for (const e of u.entries) {
      await settlingBehind(t, (scope) => postEntry(scope, ctx, owner, author, e.kind, { user_id: id, amount: e.amount, reason: e.reason, source: e.source }));
    }
    if (u.is_verified || u.status !== "active") await updateUser(t, ctx, owner, id, { is_verified: u.is_verified, status: u.status });
    ids.push(user.id);
  }
  const userIds = JSON.stringify(ids);
  await setFixtureUserIds(t, owner.partner, userIds);
  return { ...rec, user_ids: userIds };
}

/** The record of a plan about to be written; `user_ids` is filled in once the users exist. */
function recordOf(ctx: AppContext, owner: Owner, plan: FixturePlan, resetCount: number): FixtureRecord {
  return {
    partner: owner.partner,
    profile: plan.profile,
    seed_key_id: plan.seed_key_id,
    plan_digest: createHash("sha256").update(JSON.stringify(plan)).digest("hex"),
    user_ids: "[]",
    seeded_at: ctx.clock.now().toISOString(),
    reset_count: resetCount,
  };
}

/**
 * Seeds the owner's fixtures from `seedKeyId` on first use and records them, with the transaction handle `t`.
 * The record row is claimed FIRST (INSERT … ON CONFLICT DO NOTHING on its primary key, src/sandbox/store.ts) and
 * the plan written only by the transaction that inserted it: null means another transaction holds the row, and
 * the caller reads that one after this transaction ends.
 */
export async function seedFixtures(t: Queryable, ctx: AppContext, owner: Owner, seedKeyId: string): Promise<FixtureRecord | null> {
  const plan = fixturePlan(seedKeyId);
  const rec = recordOf(ctx, owner, plan, 0);
  if (!(await claimFixtureRow(t, rec))) return null;
  return await writeRecordedPlan(t, ctx, owner, plan, rec);
}

/**
 * The reset's reseed in `t`: takes the partner's fixture row (src/sandbox/store.ts), lets `clear` delete the practice
 * rows, then writes the plan of `seedKeyId` and records it on the same row, which is updated and never deleted, so
 * resets of a partner take turns on it. Unless `wait`, a row held elsewhere on PostgreSQL is RowHeldElsewhere
 * (lockFixtureRowOrHeld) and the caller runs `t` again after a pause outside it (src/db/row-held.ts).
 */
export async function reseedFixtures<D>(
  t: Queryable,
  ctx: AppContext,
  owner: Owner,
  seedKeyId: string,
  clear: () => Promise<D>,
  wait = true,
): Promise<{ deleted: D; rec: FixtureRecord }> {
  const plan = fixturePlan(seedKeyId);
  const rec = recordOf(ctx, owner, plan, 1);
  if (!wait && t.dialect === "postgres") await lockFixtureRowOrHeld(t, owner.partner, false);
  rec.reset_count = await takeFixtureRowForReset(t, rec);
  const deleted = await clear();
  return { deleted, rec: await writeRecordedPlan(t, ctx, owner, plan, rec) };
}

/** A summary of the recorded fixtures, for verify and reset answers; `q` the store, or the reset's transaction. */
export async function fixtureSummary(q: Queryable, rec: FixtureRecord) {
  const ids = JSON.parse(rec.user_ids) as number[];
  return schemaView(FixtureSummary, rec, { user_ids: ids, users: await fixtureUserRows(q, rec.partner, ids) });
}

/**
 * Every sandbox handler starts here: the sandbox owner of the calling key, with the fixtures seeded on first use
 * from that key's id, once per partner (every sandbox key of a partner shares one practice state). Reads may
 * therefore write once (the seed); the answer is the same as if the fixtures had always been there. Of two first
 * calls at once, seedFixtures' claim lets one seed; the other reads the winner's record once its own (empty)
 * transaction has ended.
 */
export async function openSandbox(ctx: AppContext, actor: PartnerActor): Promise<{ owner: Owner; fixtures: FixtureRecord }> {
  const owner = sandboxOwnerOf(actor);
  const fixtures = (await fixtureRecordOf(ctx.store, owner.partner)) ?? (await ctx.store.tx((t) => seedFixtures(t, ctx, owner, actor.keyId)));
  if (fixtures) return { owner, fixtures };
  // The claim found the row committed (on PostgreSQL it waited for the claiming transaction to end). No committed
  // state lacks it afterwards: nothing deletes it (a reset updates it in place).
  const winner = await fixtureRecordOf(ctx.store, owner.partner);
  if (!winner) throw new Error(`sandbox fixtures of ${owner.partner} were claimed by another transaction but are not recorded`);
  return { owner, fixtures: winner };
}

/**
 * Wraps a sandbox write's effect (any but the reset) so its transaction first holds the partner's fixture row,
 * shared, and hands the effect the record as of then: writes go on side by side, while a reset waits for them and
 * they for it. Without it, on PostgreSQL a credit could name a user a concurrent reset is deleting, or land after
 * the reset's deletes and survive it. The handler opened the sandbox first, so a missing row is its fault.
 */
export function holdingSandbox<T, Q extends Queryable = Queryable>(owner: Owner, effect: (t: Q, fixtures: FixtureRecord) => Promise<T>): (t: Q) => Promise<T> {
  return async (t) => {
    const fixtures = await holdFixtureRow(t, owner.partner);
    if (!fixtures) throw new Error(`sandbox of ${owner.partner}: a write ran before the sandbox was opened`);
    return await effect(t, fixtures);
  };
}
