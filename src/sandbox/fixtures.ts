import { createHash } from "node:crypto";
import bs58 from "bs58";
import type { Owner, PartnerActor } from "../auth/actors";
import type { AppContext } from "../context";
import { createUser, updateUser } from "../partner/users-service";
import { linkWallet } from "../partner/wallets-service";
import { postEntry } from "../salutes/service";
import { FIXTURE_PROFILE, sandboxOwnerOf } from "./profile";

/**
 * Deterministic bytes: sha256(seed:counter) blocks. Fixtures deliberately do NOT use ctx.rng: the app's rng is
 * shared with every other request (key ids, event ids, claim codes), so fixture data drawn from it would depend
 * on whatever traffic came first. Seeded from the key id, the same key sees the same fixtures on every fresh start.
 */
export class FixtureStream {
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

export interface FixtureWallet {
  wallet_address: string;
  label: string;
  verified: boolean;
}

export interface FixtureEntry {
  kind: "credit" | "debit";
  /** Whole salutes, so the plan is valid under any SALUTES_DECIMALS. */
  amount: number;
  reason: string;
  source: string;
}

export interface FixtureUser {
  external_id: string;
  username: string;
  display_name: string;
  email: string;
  wallets: FixtureWallet[];
  entries: FixtureEntry[];
  is_verified: boolean;
  status: "active" | "suspended";
}

export interface FixturePlan {
  profile: string;
  seed_key_id: string;
  users: FixtureUser[];
}

/**
 * The fixture data of one key: three users covering the cases an integration meets (a verified user with two
 * wallets and a mixed ledger, a plain active user, a suspended user whose credits are refused). Names are fixed
 * so docs can refer to them; wallets and amounts come from the key's stream.
 */
export function fixturePlan(seedKeyId: string): FixturePlan {
  const s = new FixtureStream(`${FIXTURE_PROFILE}:${seedKeyId}`);
  const person = (name: string, display: string) => ({
    external_id: `fx-${name}`,
    username: `fx_${name}`,
    display_name: display,
    email: `${name}@sandbox.example.com`,
  });
  const welcome = s.int(100, 500);
  const quest = s.int(10, 90);
  const alice: FixtureUser = {
    ...person("alice", "Alice Fixture"),
    wallets: [
      { wallet_address: s.address(), label: "main", verified: true },
      { wallet_address: s.address(), label: "savings", verified: false },
    ],
    entries: [
      { kind: "credit", amount: welcome, reason: "welcome_bonus", source: "sandbox-fixture" },
      { kind: "credit", amount: quest, reason: "quest_reward", source: "sandbox-fixture" },
      { kind: "debit", amount: s.int(1, welcome), reason: "shop_purchase", source: "sandbox-fixture" },
    ],
    is_verified: true,
    status: "active",
  };
  const bob: FixtureUser = {
    ...person("bob", "Bob Fixture"),
    wallets: [{ wallet_address: s.address(), label: "main", verified: false }],
    entries: [{ kind: "credit", amount: s.int(10, 200), reason: "welcome_bonus", source: "sandbox-fixture" }],
    is_verified: false,
    status: "active",
  };
  const carol: FixtureUser = {
    ...person("carol", "Carol Fixture"),
    wallets: [{ wallet_address: s.address(), label: "main", verified: false }],
    entries: [{ kind: "credit", amount: s.int(10, 200), reason: "welcome_bonus", source: "sandbox-fixture" }],
    is_verified: false,
    status: "suspended",
  };
  return { profile: FIXTURE_PROFILE, seed_key_id: seedKeyId, users: [alice, bob, carol] };
}

export const planDigest = (plan: FixturePlan): string => createHash("sha256").update(JSON.stringify(plan)).digest("hex");

/**
 * Writes the plan through the LIVE partner and salutes services with a sandbox owner — the same validation,
 * ledger and outbox code a partner's own calls run. Call inside a transaction. Returns the fixture user ids.
 */
function writePlan(ctx: AppContext, owner: Owner, plan: FixturePlan): number[] {
  const author = { keyId: plan.seed_key_id, idempotencyKey: null };
  return plan.users.map((u) => {
    const { user } = createUser(ctx, owner, { external_id: u.external_id, username: u.username, display_name: u.display_name, email: u.email });
    const id = String(user.id);
    for (const w of u.wallets) linkWallet(ctx, owner, id, w);
    for (const e of u.entries) postEntry(ctx, owner, author, e.kind, { user_id: id, amount: e.amount, reason: e.reason, source: e.source });
    if (u.is_verified || u.status !== "active") updateUser(ctx, owner, id, { is_verified: u.is_verified, status: u.status });
    return user.id;
  });
}

export interface FixtureRecord {
  partner: string;
  profile: string;
  seed_key_id: string;
  plan_digest: string;
  user_ids: string;
  seeded_at: string;
  reset_count: number;
}

export function fixtureRecord(ctx: AppContext, owner: Owner): FixtureRecord | null {
  return (ctx.db.sqlite.query("SELECT * FROM sandbox_fixtures WHERE partner = ?").get(owner.partner) as FixtureRecord | null) ?? null;
}

/** Seeds the owner's fixtures and records them. Call inside a transaction; `resetCount` carries over a reset. */
export function seedFixtures(ctx: AppContext, owner: Owner, seedKeyId: string, resetCount = 0): FixtureRecord {
  const plan = fixturePlan(seedKeyId);
  const ids = writePlan(ctx, owner, plan);
  ctx.db.sqlite
    .query("INSERT INTO sandbox_fixtures (partner, profile, seed_key_id, plan_digest, user_ids, seeded_at, reset_count) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .run(owner.partner, plan.profile, seedKeyId, planDigest(plan), JSON.stringify(ids), ctx.clock.now().toISOString(), resetCount);
  return fixtureRecord(ctx, owner)!;
}

/**
 * On the first call of any sandbox route, seeds the fixtures from that key's id — once per partner: every sandbox
 * key of a partner shares one practice state (owner = partner + sandbox). The check is repeated inside an
 * IMMEDIATE transaction so two first calls at once seed once.
 */
export function ensureFixtures(ctx: AppContext, owner: Owner, keyId: string): FixtureRecord {
  const existing = fixtureRecord(ctx, owner);
  if (existing) return existing;
  return ctx.db.sqlite.transaction(() => fixtureRecord(ctx, owner) ?? seedFixtures(ctx, owner, keyId)).immediate();
}

/** A summary of the recorded fixtures, for verify and reset answers. */
export function fixtureSummary(ctx: AppContext, rec: FixtureRecord) {
  const ids = JSON.parse(rec.user_ids) as number[];
  const users = ctx.db.sqlite
    .query("SELECT id, external_id FROM partner_users WHERE id IN (SELECT value FROM json_each(?)) AND partner = ? AND mode = 'sandbox' ORDER BY id")
    .all(rec.user_ids, rec.partner) as Array<{ id: number; external_id: string }>;
  return {
    profile: rec.profile,
    seed_key_id: rec.seed_key_id,
    plan_digest: rec.plan_digest,
    seeded_at: rec.seeded_at,
    reset_count: rec.reset_count,
    user_ids: ids,
    users,
  };
}

/**
 * Every sandbox handler starts here: the sandbox owner of the calling key, with the fixtures seeded on first
 * use. Reads may therefore write once (the seed); the answer is the same as if the fixtures had always been there.
 */
export function openSandbox(ctx: AppContext, actor: PartnerActor): { owner: Owner; fixtures: FixtureRecord } {
  const owner = sandboxOwnerOf(actor);
  return { owner, fixtures: ensureFixtures(ctx, owner, actor.keyId) };
}
