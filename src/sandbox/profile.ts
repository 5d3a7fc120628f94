import { createHash } from "node:crypto";
import bs58 from "bs58";
import type { Owner, PartnerActor } from "../auth/actors";
import { formatUnits } from "../chain/service";

/** The fixture profile every sandbox response names; a new profile version means new fixture data. */
export const FIXTURE_PROFILE = "herald-sandbox-v1";

/** "sandbox_fixture": fixed data of the profile; "sandbox_state": the partner's practice database rows. */
export type SandboxSource = "sandbox_fixture" | "sandbox_state";

export const sandboxRead = (source: SandboxSource) => ({ mode: "sandbox" as const, fixture_profile: FIXTURE_PROFILE, source });

/** Mutations also say, on every answer, that nothing outside the sandbox was touched. */
export const sandboxWrite = (source: SandboxSource = "sandbox_state") => ({ ...sandboxRead(source), live_side_effects_performed: false as const });

/**
 * The owner a sandbox route works on. The partner guard already refuses live keys on sandbox routes; this second
 * check makes it impossible for a sandbox code path to be handed a live owner by mistake (docs/design.md §7).
 */
export function sandboxOwnerOf(actor: PartnerActor): Owner {
  if (actor.mode !== "sandbox") throw new Error(`sandbox code path called with a ${actor.mode} key`);
  return { partner: actor.partner, mode: "sandbox" };
}

/** A valid Solana address (base58 of 32 bytes) derived from a label: stable, and nobody holds its private key. */
export const derivedAddress = (label: string): string => bs58.encode(createHash("sha256").update(`${FIXTURE_PROFILE}:${label}`).digest());

const DECIMALS = 6;
const RAW = {
  total_supply: 1_000_000_000_000_000n,
  treasury_balance: 150_000_000_000_000n,
  reserve_balance: 100_000_000_000_000n,
};
const TRACKED = RAW.treasury_balance + RAW.reserve_balance;
const AMOUNTS = { ...RAW, tracked_treasury_balance: TRACKED, circulating_supply: RAW.total_supply - TRACKED };
/** Every amount, written by `f`: the raw integers and the decimal view are one list. */
const amounts = (f: (raw: bigint) => string) => Object.fromEntries(Object.entries(AMOUNTS).map(([k, v]) => [k, f(v)])) as Record<keyof typeof AMOUNTS, string>;

/**
 * GET /api/partner/sandbox/token-status: the same fixed numbers for every key and every day, shaped like the
 * live token status, so a partner can write and test their parsing before they hold a live key. Amounts are
 * exact decimal strings (the live rule); the rpc_url is a placeholder, since the sandbox never calls a chain.
 */
export function tokenStatusFixture() {
  return {
    mint: derivedAddress("mint"),
    decimals: DECIMALS,
    rpc_url: "sandbox://fixture",
    chain: { ...amounts((v) => formatUnits(v, DECIMALS)), holders: 4_242, holders_source: "sandbox_fixture" as const },
    raw: amounts(String),
    snapshot: { taken_at_utc: "2026-01-01T00:00:00.000Z", freshness_status: "fixture" as const },
  };
}
