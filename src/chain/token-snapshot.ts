import type { ParsedAccountData } from "@solana/web3.js";
import type { AppContext } from "../context";
import { parseRaw } from "./amounts";
import { insertSnapshot, snapshotHead } from "./store/snapshots";

// token-snapshot and mint-authority-snapshot: a handful of RPC calls each, one immutable row each. Two runs that
// overlap (a manual run beside the scheduled one) write two rows, each a true reading of the chain at its time.

export const TOKEN_SNAPSHOT_METHOD = "getTokenSupply + getTokenAccountsByOwner(mint, jsonParsed) per treasury/reserve/LP wallet";
export const MINT_AUTHORITY_METHOD = "getAccountInfo(mint, jsonParsed)";

interface WalletBalance {
  /** lp: LP_WALLETS, recorded for the audit's balance_mismatch only (their balance stays circulating). */
  role: "treasury" | "reserve" | "lp";
  wallet: string;
  amount_raw: string;
  token_accounts: number;
}

/** A wallet's balance of a mint: the sum over all its token accounts of that mint (an owner may hold several). */
export async function walletTokenBalance(ctx: AppContext, owner: string, mint: string) {
  const { value, host } = await ctx.chain.parsedTokenAccounts(owner, mint);
  let amount = 0n;
  let decimals: number | null = null;
  for (const a of value.value) {
    const info = (a.account.data as ParsedAccountData).parsed?.info as { mint?: string; tokenAmount?: { amount?: unknown; decimals?: unknown } } | undefined;
    if (info?.mint !== mint) throw new Error(`RPC returned a token account of another mint for ${owner}`);
    amount += parseRaw(info.tokenAmount?.amount, `token account ${a.pubkey.toBase58()} amount`);
    if (typeof info.tokenAmount?.decimals === "number") decimals = info.tokenAmount.decimals;
  }
  return { amount, decimals, accounts: value.value.length, host };
}

export async function takeTokenSnapshot(ctx: AppContext, runId: number | null) {
  const mint = ctx.config.chain.tokenMint!;
  const hosts = new Set<string>();
  const supply = await ctx.chain.tokenSupply(mint);
  hosts.add(supply.host);
  const total = parseRaw(supply.value.value.amount, "supply");
  const wallets: WalletBalance[] = [];
  const roles = [
    ...ctx.config.chain.treasuryWallets.map((w) => ["treasury", w] as const),
    ...ctx.config.chain.reserveWallets.map((w) => ["reserve", w] as const),
    ...ctx.config.chain.lpWallets.map((w) => ["lp", w] as const),
  ];
  for (const [role, wallet] of roles) {
    const b = await walletTokenBalance(ctx, wallet, mint);
    hosts.add(b.host);
    wallets.push({ role, wallet, amount_raw: b.amount.toString(), token_accounts: b.accounts });
  }
  const sum = (role: string) => wallets.filter((w) => w.role === role).reduce((s, w) => s + BigInt(w.amount_raw), 0n);
  const treasury = sum("treasury");
  const reserve = sum("reserve");
  const tracked = treasury + reserve;
  // The balances and the supply are read at slightly different slots; a tracked balance above the supply means
  // the configuration or the node is wrong, and publishing a negative circulating supply would be worse.
  if (tracked > total) throw new Error(`treasury + reserve (${tracked}) exceed the supply (${total}); check TREASURY_WALLETS and RESERVE_WALLETS`);
  return insertSnapshot(ctx.store, "chain_token_snapshots", {
    ...snapshotHead(ctx.clock.now(), runId, mint),
    decimals: supply.value.value.decimals,
    slot: supply.value.context.slot,
    supply_raw: total.toString(),
    treasury_raw: treasury.toString(),
    reserve_raw: reserve.toString(),
    tracked_treasury_raw: tracked.toString(),
    circulating_raw: (total - tracked).toString(),
    wallets_json: JSON.stringify(wallets),
    rpc_host: [...hosts].join(","),
    method: TOKEN_SNAPSHOT_METHOD,
  });
}

export type ReviewStatus = "renounced" | "mint_authority_retained" | "freeze_authority_retained" | "both_retained";

/** What the authorities say about who can still mint or freeze. */
export function reviewStatusOf(mintAuthority: string | null, freezeAuthority: string | null): ReviewStatus {
  if (mintAuthority === null && freezeAuthority === null) return "renounced";
  if (mintAuthority !== null && freezeAuthority !== null) return "both_retained";
  return mintAuthority !== null ? "mint_authority_retained" : "freeze_authority_retained";
}

/** Expected "none" means renounced (null on chain). */
const expectedValue = (configured: string | undefined) => (configured === undefined ? undefined : configured === "none" ? null : configured);

export function reviewAuthorities(
  actualMint: string | null,
  actualFreeze: string | null,
  expectedMint: string | undefined,
  expectedFreeze: string | undefined,
) {
  const em = expectedValue(expectedMint);
  const ef = expectedValue(expectedFreeze);
  const configured = em !== undefined || ef !== undefined;
  const mismatchFields: string[] = [];
  if (em !== undefined && em !== actualMint) mismatchFields.push("mint_authority");
  if (ef !== undefined && ef !== actualFreeze) mismatchFields.push("freeze_authority");
  return {
    expectation_configured: configured,
    review_status: reviewStatusOf(actualMint, actualFreeze),
    // An unconfigured side is taken as it is: the expectation speaks only about what was configured.
    expected_review_status: configured ? reviewStatusOf(em === undefined ? actualMint : em, ef === undefined ? actualFreeze : ef) : null,
    mismatch: mismatchFields.length > 0,
    mismatch_fields: mismatchFields,
  };
}

export async function takeMintAuthoritySnapshot(ctx: AppContext, runId: number | null) {
  const chain = ctx.config.chain;
  const mint = chain.tokenMint!;
  const { value, host } = await ctx.chain.parsedAccount(mint);
  if (!value.value) throw new Error(`TOKEN_MINT ${mint} has no account on chain (wrong address or wrong cluster?)`);
  const data = value.value.data as ParsedAccountData | Buffer;
  const parsed = "parsed" in data ? (data.parsed as { type?: string; info?: Record<string, unknown> }) : null;
  if (parsed?.type !== "mint" || !parsed.info) throw new Error(`TOKEN_MINT ${mint} is not a token mint account`);
  const info = parsed.info;
  const authority = (v: unknown, name: string) => {
    if (v === null || v === undefined) return null;
    if (typeof v !== "string") throw new Error(`mint ${name} is neither an address nor null`);
    return v;
  };
  const mintAuthority = authority(info.mintAuthority, "mintAuthority");
  const freezeAuthority = authority(info.freezeAuthority, "freezeAuthority");
  const review = reviewAuthorities(mintAuthority, freezeAuthority, chain.expectedMintAuthority, chain.expectedFreezeAuthority);
  return insertSnapshot(ctx.store, "chain_mint_authority_snapshots", {
    ...snapshotHead(ctx.clock.now(), runId, mint),
    decimals: Number(info.decimals),
    supply_raw: parseRaw(info.supply, "mint supply").toString(),
    slot: value.context.slot,
    mint_authority: mintAuthority,
    freeze_authority: freezeAuthority,
    expected_mint_authority: chain.expectedMintAuthority ?? null,
    expected_freeze_authority: chain.expectedFreezeAuthority ?? null,
    ...review,
    mismatch_fields: JSON.stringify(review.mismatch_fields),
    rpc_host: host,
    method: MINT_AUTHORITY_METHOD,
  });
}
