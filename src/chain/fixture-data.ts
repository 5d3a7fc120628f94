import { FixtureKeys, KeyDomain, mix32, seedHash, signatureOf } from "./fixture-keys";
import { TOKEN_PROGRAM_ID } from "../solana/constants";

export { TOKEN_PROGRAM_ID };

// The deterministic chain behind `herald dev-rpc` and the tests: one mint, treasury and reserve wallets, N
// holders with a power-law distribution, and a transaction history. Same seed and options, same chain. Holder
// data is computed from the index on demand, so a million holders cost no memory.

export interface FixtureOptions {
  seed?: string;
  holders?: number;
  /** Transactions in the initial history (one an hour, the newest 5 minutes before `now`). */
  transactions?: number;
  decimals?: number;
  treasuryWallets?: number;
  reserveWallets?: number;
  /** Liquidity-pool owner wallets (LP_WALLETS); default 0, so older seeds give the same chain. */
  lpWallets?: number;
  /** The history ends here; default 2026-01-01T00:00:00Z (the tests' FakeClock start). */
  now?: Date;
}

export interface FixtureTokenAccount {
  address: string;
  owner: string;
  mint: string;
  amount: bigint;
}

export interface FixtureWallet {
  role: "treasury" | "reserve" | "lp";
  owner: string;
  lamports: bigint;
  accounts: FixtureTokenAccount[];
}

export interface FixtureParty {
  owner: string;
  account: string;
}

/** One transfer of the mint between two owners (failed ones move nothing but are still signatures). */
export interface FixtureTx {
  index: number;
  signature: string;
  slot: number;
  blockTime: number;
  from: FixtureParty & { pre: bigint };
  to: FixtureParty & { pre: bigint };
  amount: bigint;
  failed: boolean;
  /** Every address whose getSignaturesForAddress lists this transaction. */
  addresses: string[];
  /** A second, unrelated mint's balance change in the same transaction (its delta must be ignored). */
  lpChange: { owner: string; account: string; pre: bigint; post: bigint } | null;
}

const PERMUTATION_STEP = 1_000_003; // prime: i → (i·P) mod N is a permutation whenever N is not a multiple of P
const TOP_AMOUNT = 40_000_000_000_000; // 40,000,000 tokens at 6 decimals; rank r holds TOP/(r+1)^1.1

export class ChainFixture {
  readonly seed: string;
  readonly decimals: number;
  readonly holderCount: number;
  readonly keys: FixtureKeys;
  readonly mint: string;
  readonly lpMint: string;
  readonly lpDecimals = 9;
  readonly treasury: FixtureWallet[];
  readonly reserve: FixtureWallet[];
  /** Pool wallets: tracked by the sync and the audit, not excluded from supply. */
  readonly lp: FixtureWallet[];
  /** Mutable on purpose: tests change the authorities to see the review flip to mismatch. */
  mintAuthority: string | null = null;
  freezeAuthority: string | null = null;
  readonly transactions: FixtureTx[] = [];
  readonly startSlot = 300_000_000;
  private readonly seedNum: number;
  private readonly step: number;
  private readonly endTime: number;
  private supplyCache: bigint | null = null;

  constructor(opts: FixtureOptions = {}) {
    this.seed = opts.seed ?? "herald";
    this.seedNum = seedHash(this.seed);
    this.decimals = opts.decimals ?? 6;
    this.holderCount = opts.holders ?? 1000;
    this.keys = new FixtureKeys(this.seedNum);
    this.mint = this.keys.address(KeyDomain.mint, 0);
    this.lpMint = this.keys.address(KeyDomain.lpMint, 0);
    this.step = this.holderCount % PERMUTATION_STEP === 0 ? 1 : PERMUTATION_STEP;
    this.endTime = Math.floor((opts.now ?? new Date("2026-01-01T00:00:00Z")).getTime() / 1000) - 300;
    const wallet = (role: "treasury" | "reserve", j: number): FixtureWallet => {
      const owner = this.keys.address(role === "treasury" ? KeyDomain.treasuryOwner : KeyDomain.reserveOwner, j);
      const base = role === "treasury" ? 150_000_000_000_000n : 90_000_000_000_000n;
      // The first treasury wallet holds two token accounts of the mint: balances are summed per owner.
      const count = role === "treasury" && j === 0 ? 2 : 1;
      const accounts = Array.from({ length: count }, (_, k) => ({
        address: this.keys.address(KeyDomain.walletAccount, (role === "treasury" ? 0 : 1000) + j * 10 + k),
        owner,
        mint: this.mint,
        amount: base / BigInt(j + 1) / BigInt(k * 50 + 1) + BigInt(mix32(this.seedNum + j * 31 + k) % 1_000_000),
      }));
      return { role, owner, lamports: 5_000_000_000n + BigInt(j) * 1_234_567n, accounts };
    };
    this.treasury = Array.from({ length: opts.treasuryWallets ?? 2 }, (_, j) => wallet("treasury", j));
    this.reserve = Array.from({ length: opts.reserveWallets ?? 1 }, (_, j) => wallet("reserve", j));
    // Own key domain and account indexes (3000+): adding pools changes no treasury/reserve/holder address.
    this.lp = Array.from({ length: opts.lpWallets ?? 0 }, (_, j) => {
      const owner = this.keys.address(KeyDomain.lpOwner, j);
      const account = {
        address: this.keys.address(KeyDomain.walletAccount, 3000 + j),
        owner,
        mint: this.mint,
        amount: 20_000_000_000_000n + BigInt(mix32(this.seedNum + 7919 * (j + 1)) % 1_000_000),
      };
      return { role: "lp" as const, owner, lamports: 2_000_000_000n, accounts: [account] };
    });
    this.addTransactions(opts.transactions ?? 40, this.endTime);
  }

  /** An authority address the tests can set (the fixture's "someone kept the key" case). */
  authority(index = 0): string {
    return this.keys.address(KeyDomain.authority, index);
  }

  /** Holder i's raw balance as a double (always below 2^53): power law over a permutation, some empty. */
  holderAmount(i: number): number {
    const h = mix32(this.seedNum ^ Math.imul(i + 1, 0x9e3779b1));
    if (h % 20 === 0) return 0; // emptied accounts that were never closed: scanned, not holders
    const rank = (i * this.step) % this.holderCount;
    return Math.floor(TOP_AMOUNT / (rank + 1) ** 1.1) + (h % 1000);
  }

  holderAccount(i: number): string {
    return this.keys.address(KeyDomain.holderAccount, i);
  }

  holderOwner(i: number): string {
    return this.keys.address(KeyDomain.holderOwner, i);
  }

  holderLamports(i: number): bigint {
    return BigInt(mix32(this.seedNum + i) % 50_000_000_000);
  }

  /** Every seventh holder also holds LP tokens (wallet-info's lp_amount). */
  holderLpAmount(i: number): bigint {
    return i % 7 === 0 ? BigInt(mix32(this.seedNum ^ (i * 13)) % 9_000_000_000) + 1n : 0n;
  }

  wallets(): FixtureWallet[] {
    return [...this.treasury, ...this.reserve, ...this.lp];
  }

  /** Supply = every token account of the mint: the wallets' and all holders'. */
  supply(): bigint {
    if (this.supplyCache === null) {
      let sum = 0n;
      for (const w of this.wallets()) for (const a of w.accounts) sum += a.amount;
      let chunk = 0;
      for (let i = 0; i < this.holderCount; i++) {
        chunk += this.holderAmount(i);
        if (chunk > 2 ** 52) {
          sum += BigInt(chunk);
          chunk = 0;
        }
      }
      this.supplyCache = sum + BigInt(chunk);
    }
    return this.supplyCache;
  }

  /** Token accounts of an owner for a mint (the mint or the LP mint); [] for strangers. */
  tokenAccountsOf(owner: string, mint: string): FixtureTokenAccount[] {
    const wallet = this.walletOf(owner);
    if (wallet) return mint === this.mint ? wallet.accounts : [];
    const i = this.keys.indexOf(KeyDomain.holderOwner, owner);
    if (i === null || i >= this.holderCount) return [];
    if (mint === this.mint) return [{ address: this.holderAccount(i), owner, mint, amount: BigInt(this.holderAmount(i)) }];
    const lp = this.holderLpAmount(i);
    if (mint === this.lpMint && lp > 0n) return [{ address: this.keys.address(KeyDomain.lpAccount, i), owner, mint, amount: lp }];
    return [];
  }

  lamportsOf(address: string): bigint {
    const wallet = this.walletOf(address);
    if (wallet) return wallet.lamports;
    const i = this.keys.indexOf(KeyDomain.holderOwner, address);
    return i === null || i >= this.holderCount ? 0n : this.holderLamports(i);
  }

  /**
   * Appends `count` transactions after the newest (one an hour by default). Kinds cycle: treasury → holder,
   * holder → holder, reserve → treasury, holder → treasury; every ninth one failed.
   */
  addTransactions(count: number, endTime?: number, spacingSeconds = 3600): FixtureTx[] {
    const added: FixtureTx[] = [];
    const last = this.transactions[this.transactions.length - 1];
    const firstTime = last ? last.blockTime + spacingSeconds : (endTime ?? this.endTime) - (count - 1) * spacingSeconds;
    for (let k = 0; k < count; k++) {
      const index = this.transactions.length;
      const tx = this.makeTx(index, firstTime + k * spacingSeconds);
      this.transactions.push(tx);
      added.push(tx);
    }
    return added;
  }

  private makeTx(index: number, blockTime: number): FixtureTx {
    const h = mix32(this.seedNum ^ Math.imul(index + 101, 0x85ebca6b));
    const holder = (salt: number) => this.holderParty((h + salt) % Math.max(1, this.holderCount));
    const t0 = this.treasury[0]!;
    const t1 = this.treasury[1] ?? t0;
    const r0 = this.reserve[0] ?? t0;
    const side = (w: FixtureWallet) => this.walletParty(w);
    const kind = index % 4;
    const [from, to] = kind === 0 ? [side(t0), holder(1)] : kind === 1 ? [holder(2), holder(3)] : kind === 2 ? [side(r0), side(t1)] : [holder(4), side(t0)];
    const amount = BigInt((h % 5_000_000) + 1) * 1000n;
    return {
      index,
      signature: signatureOf(this.seedNum, index),
      slot: this.startSlot + index * 9000 + (h % 500),
      blockTime,
      from: { ...from, pre: amount * 3n + BigInt(h % 777) },
      to: { ...to, pre: BigInt(h % 100_000) },
      amount,
      failed: index % 9 === 8,
      addresses: this.addressesOf(from, to),
      lpChange: index % 5 === 0 ? { owner: t0.owner, account: this.keys.address(KeyDomain.lpAccount, 9_000_000 + index), pre: 5000n, post: 9000n } : null,
    };
  }

  /**
   * Appends one transfer of the mint with the given parties and amount (src/chain/fixture-anomalies.ts plants
   * audit anomalies with it). `twinOf`: the same slot and block time as that transaction (a duplicate).
   * `applyToBalances`: the tracked wallets' token accounts move by the amount, so token snapshots agree with the
   * synced transactions (the generated history leaves balances as they are).
   */
  appendTransfer(t: {
    from: FixtureParty;
    to: FixtureParty;
    amount: bigint;
    twinOf?: FixtureTx;
    applyToBalances?: boolean;
    spacingSeconds?: number;
  }): FixtureTx {
    const index = this.transactions.length;
    const last = this.transactions[this.transactions.length - 1];
    const slot = t.twinOf?.slot ?? (last ? last.slot + 9000 : this.startSlot);
    const blockTime = t.twinOf?.blockTime ?? (last ? last.blockTime + (t.spacingSeconds ?? 3600) : this.endTime);
    const accountOf = (p: FixtureParty) => this.walletOf(p.owner)?.accounts.find((a) => a.address === p.account);
    const fromAccount = accountOf(t.from);
    const toAccount = accountOf(t.to);
    const tx: FixtureTx = {
      index,
      signature: signatureOf(this.seedNum, index),
      slot,
      blockTime,
      from: { ...t.from, pre: fromAccount?.amount ?? t.amount * 3n },
      to: { ...t.to, pre: toAccount?.amount ?? 0n },
      amount: t.amount,
      failed: false,
      addresses: this.addressesOf(t.from, t.to),
      lpChange: null,
    };
    if (t.applyToBalances) {
      if (fromAccount) fromAccount.amount -= t.amount;
      if (toAccount) toAccount.amount += t.amount;
    }
    this.transactions.push(tx);
    return tx;
  }

  /** A tracked wallet's first token account as a transfer party. */
  walletParty(w: FixtureWallet): FixtureParty {
    return { owner: w.owner, account: w.accounts[0]!.address };
  }

  /** Holder i as a transfer party. */
  holderParty(i: number): FixtureParty {
    return { owner: this.holderOwner(i), account: this.holderAccount(i) };
  }

  private walletOf(owner: string): FixtureWallet | undefined {
    return this.wallets().find((w) => w.owner === owner);
  }

  /** The mint and the tracked parties: the addresses whose getSignaturesForAddress lists the transfer. */
  private addressesOf(from: FixtureParty, to: FixtureParty): string[] {
    return [this.mint, ...new Set([from.owner, to.owner])].filter((a) => a === this.mint || this.walletOf(a) !== undefined);
  }

  /** Signatures listing an address, newest first (what getSignaturesForAddress pages through). */
  signaturesFor(address: string): FixtureTx[] {
    return this.transactions.filter((t) => t.addresses.includes(address)).sort((a, b) => b.slot - a.slot);
  }

  transaction(signature: string): FixtureTx | undefined {
    return this.transactions.find((t) => t.signature === signature);
  }

  currentSlot(): number {
    const last = this.transactions[this.transactions.length - 1];
    return (last?.slot ?? this.startSlot) + 1000;
  }

  /** What `herald dev-rpc --json` prints so a script can configure herald from it. */
  describe(url: string) {
    return {
      url,
      mint: this.mint,
      treasury_wallets: this.treasury.map((w) => w.owner),
      reserve_wallets: this.reserve.map((w) => w.owner),
      lp_wallets: this.lp.map((w) => w.owner),
      lp_mint: this.lpMint,
      holders: this.holderCount,
      seed: this.seed,
    };
  }
}
