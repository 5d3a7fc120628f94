import type { ConfirmedSignatureInfo, ParsedTransactionWithMeta, TokenBalance } from "@solana/web3.js";
import type { AppContext } from "../context";
import { parseRaw } from "./amounts";
import { insertSnapshot, snapshotHead } from "./store/snapshots";
import { cursorOf, insertTransaction, isStored, moveCursor } from "./store/transactions";

// transaction-sync: for each tracked address (treasury, reserve and LP wallets, and the mint), the signatures newer
// than the last one stored, oldest first, each stored once (the signature is the primary key). The cursor moves with
// every stored signature, in the same transaction, so a run that dies half way resumes where it stopped; overlapping
// runs store each signature once and never move a cursor back (moveCursor). RPC calls happen between transactions.

export const TX_SYNC_METHOD = "getSignaturesForAddress(until = last stored) + getTransaction(jsonParsed) per new signature";
const PAGE = 1000;

interface Counts {
  found: number;
  stored: number;
  already: number;
  gap: boolean;
  newest: { signature: string; slot: number } | null;
}

/**
 * Net change of the tracked (treasury + reserve) owners' balances of the mint, the same for the LP owners (kept
 * apart: pool moves are trades, audited by other rules), and the amount moved (sum of the increases).
 */
export function tokenDeltas(tx: ParsedTransactionWithMeta, mint: string, tracked: ReadonlySet<string>, lp: ReadonlySet<string> = new Set()) {
  const meta = tx.meta;
  if (!meta) throw new Error("transaction without meta: cannot tell what it moved");
  const byAccount = new Map<number, { owner: string | null; pre: bigint; post: bigint }>();
  const add = (list: TokenBalance[] | null | undefined, side: "pre" | "post") => {
    for (const b of list ?? []) {
      if (b.mint !== mint) continue; // other mints in the same transaction (LP tokens, fees) are not ours
      const entry = byAccount.get(b.accountIndex) ?? { owner: b.owner ?? null, pre: 0n, post: 0n };
      entry[side] = parseRaw(b.uiTokenAmount.amount, "token balance");
      entry.owner ??= b.owner ?? null;
      byAccount.set(b.accountIndex, entry);
    }
  };
  add(meta.preTokenBalances, "pre");
  add(meta.postTokenBalances, "post");
  let delta = 0n;
  let lpDelta = 0n;
  let moved = 0n;
  for (const e of byAccount.values()) {
    const d = e.post - e.pre;
    if (e.owner !== null && tracked.has(e.owner)) delta += d;
    else if (e.owner !== null && lp.has(e.owner)) lpDelta += d;
    if (d > 0n) moved += d;
  }
  return { status: meta.err ? ("failed" as const) : ("ok" as const), delta, lpDelta, moved };
}

async function newSignatures(ctx: AppContext, address: string, until: string | undefined, hosts: Set<string>) {
  const cap = until ? ctx.config.chain.tx.maxPerRun : ctx.config.chain.tx.backfillLimit;
  const found: ConfirmedSignatureInfo[] = [];
  let before: string | undefined;
  let complete = false;
  while (found.length < cap) {
    const limit = Math.min(PAGE, cap - found.length);
    const { value: page, host } = await ctx.chain.signatures(address, { until, before, limit });
    hosts.add(host);
    found.push(...page);
    if (page.length < limit) {
      complete = true;
      break;
    }
    before = page[page.length - 1]!.signature;
  }
  // With a cursor, stopping before `until` was reached leaves signatures unseen between the two: a gap.
  return { found, gap: Boolean(until) && !complete };
}

async function syncAddress(
  ctx: AppContext,
  address: string,
  tracked: ReadonlySet<string>,
  lp: ReadonlySet<string>,
  runId: number | null,
  hosts: Set<string>,
): Promise<Counts> {
  const mint = ctx.config.chain.tokenMint!;
  const cursor = await cursorOf(ctx.store, mint, address);
  const { found, gap } = await newSignatures(ctx, address, cursor ?? undefined, hosts);
  const counts: Counts = { found: found.length, stored: 0, already: 0, gap, newest: null };
  for (const info of [...found].reverse()) {
    const now = ctx.clock.now().toISOString();
    const at = { mint, address, last_signature: info.signature, last_slot: info.slot, updated_at: now };
    if (await isStored(ctx.store, info.signature)) {
      counts.already++;
      await moveCursor(ctx.store, at);
    } else {
      const { value: tx, host } = await ctx.chain.parsedTransaction(info.signature);
      hosts.add(host);
      // Not yet served at this commitment: stop here, the next run resumes from the cursor.
      if (!tx) throw new Error(`transaction ${info.signature} is not available from the RPC node yet`);
      const d = tokenDeltas(tx, mint, tracked, lp);
      const blockTime = tx.blockTime ?? info.blockTime ?? null;
      const stored = await ctx.store.tx(async (t) => {
        const inserted = await insertTransaction(t, {
          signature: info.signature,
          mint,
          slot: tx.slot,
          block_time: blockTime === null ? null : new Date(blockTime * 1000).toISOString(),
          status: d.status,
          token_delta_raw: d.delta.toString(),
          lp_delta_raw: d.lpDelta.toString(),
          amount_moved_raw: d.moved.toString(),
          found_via: address,
          sync_run_id: runId,
          synced_at: now,
        });
        await moveCursor(t, at);
        return inserted;
      });
      // Stored meanwhile by a run that overlaps this one: counted once, by whichever inserted it.
      if (stored) counts.stored++;
      else counts.already++;
    }
    counts.newest = { signature: info.signature, slot: info.slot };
  }
  return counts;
}

export async function syncTransactions(ctx: AppContext, runId: number | null) {
  const chain = ctx.config.chain;
  const mint = chain.tokenMint!;
  const tracked = new Set([...chain.treasuryWallets, ...chain.reserveWallets]);
  const lp = new Set(chain.lpWallets);
  const addresses = [...new Set([...chain.treasuryWallets, ...chain.reserveWallets, ...chain.lpWallets, mint])];
  const hosts = new Set<string>();
  const t0 = performance.now();
  const total: Counts = { found: 0, stored: 0, already: 0, gap: false, newest: null };
  for (const address of addresses) {
    const c = await syncAddress(ctx, address, tracked, lp, runId, hosts);
    total.found += c.found;
    total.stored += c.stored;
    total.already += c.already;
    total.gap ||= c.gap;
    if (c.newest && (!total.newest || c.newest.slot > total.newest.slot)) total.newest = c.newest;
  }
  return insertSnapshot(ctx.store, "chain_sync_runs", {
    ...snapshotHead(ctx.clock.now(), runId, mint),
    addresses: addresses.length,
    new_signatures: total.found,
    stored: total.stored,
    already_stored: total.already,
    gap_detected: total.gap,
    newest_signature: total.newest?.signature ?? null,
    newest_slot: total.newest?.slot ?? null,
    duration_ms: Math.round(performance.now() - t0),
    rpc_host: [...hosts].join(",") || (ctx.chain.endpoints[0]?.host ?? ""),
    method: TX_SYNC_METHOD,
  });
}
