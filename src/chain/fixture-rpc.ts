import { formatUnits } from "./amounts";
import { TOKEN_PROGRAM_ID, type ChainFixture, type FixtureTokenAccount, type FixtureTx } from "./fixture-data";

// The fixture's JSON-RPC methods, shaped like a Solana node's replies (what @solana/web3.js 1.x validates).

export class FixtureRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

type Params = unknown[];
type Handler = (fixture: ChainFixture, params: Params) => unknown;

const invalid = (what: string) => new FixtureRpcError(-32602, `Invalid params: ${what}`);

function str(params: Params, i: number, name: string): string {
  const v = params[i];
  if (typeof v !== "string" || v.length === 0) throw invalid(`${name} must be a string`);
  return v;
}

function opts(params: Params, i: number): Record<string, unknown> {
  const v = params[i];
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

const ui = (amount: bigint, decimals: number) => {
  const text = formatUnits(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text };
};

const ctx = (f: ChainFixture) => ({ slot: f.currentSlot(), apiVersion: "2.0.15" });

/** An SPL Token program account (a token account or a mint), jsonParsed. */
const splAccount = (parsed: object, space: number, lamports: number) => ({
  data: { program: "spl-token", parsed, space },
  executable: false,
  lamports,
  owner: TOKEN_PROGRAM_ID,
  rentEpoch: 2 ** 64,
  space,
});

function parsedTokenAccount(f: ChainFixture, a: FixtureTokenAccount) {
  const decimals = a.mint === f.lpMint ? f.lpDecimals : f.decimals;
  const info = { isNative: false, mint: a.mint, owner: a.owner, state: "initialized", tokenAmount: ui(a.amount, decimals) };
  return { pubkey: a.address, account: splAccount({ type: "account", info }, 165, 2039280) };
}

function tokenBalance(f: ChainFixture, index: number, side: { owner: string; account: string }, amount: bigint, mint = f.mint) {
  return { accountIndex: index, mint, owner: side.owner, programId: TOKEN_PROGRAM_ID, uiTokenAmount: ui(amount, mint === f.mint ? f.decimals : f.lpDecimals) };
}

/** A jsonParsed getTransaction reply: a transferChecked whose pre/post token balances carry the movement. */
export function parsedTransaction(f: ChainFixture, tx: FixtureTx) {
  const moved = tx.failed ? 0n : tx.amount;
  const keys = [tx.from.owner, tx.from.account, tx.to.account, f.mint, TOKEN_PROGRAM_ID];
  const pre = [tokenBalance(f, 1, tx.from, tx.from.pre), tokenBalance(f, 2, tx.to, tx.to.pre)];
  const post = [tokenBalance(f, 1, tx.from, tx.from.pre - moved), tokenBalance(f, 2, tx.to, tx.to.pre + moved)];
  if (tx.lpChange) {
    keys.push(tx.lpChange.account);
    pre.push(tokenBalance(f, 5, tx.lpChange, tx.lpChange.pre, f.lpMint));
    post.push(tokenBalance(f, 5, tx.lpChange, tx.lpChange.post, f.lpMint));
  }
  return {
    slot: tx.slot,
    blockTime: tx.blockTime,
    version: 0,
    meta: {
      err: tx.failed ? { InstructionError: [0, { Custom: 1 }] } : null,
      fee: 5000,
      preBalances: keys.map(() => 2039280),
      postBalances: keys.map(() => 2039280),
      innerInstructions: [],
      logMessages: [],
      preTokenBalances: pre,
      postTokenBalances: post,
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: 6200,
    },
    transaction: {
      signatures: [tx.signature],
      message: {
        accountKeys: keys.map((pubkey, i) => ({ pubkey, signer: i === 0, writable: i > 0 && i < 3, source: "transaction" })),
        instructions: [
          {
            program: "spl-token",
            programId: TOKEN_PROGRAM_ID,
            parsed: {
              type: "transferChecked",
              info: { authority: tx.from.owner, source: tx.from.account, destination: tx.to.account, mint: f.mint, tokenAmount: ui(tx.amount, f.decimals) },
            },
          },
        ],
        recentBlockhash: "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N",
      },
    },
  };
}

function mintAccount(f: ChainFixture, params: Params) {
  const address = str(params, 0, "pubkey");
  if (address !== f.mint) return { context: ctx(f), value: null };
  const info = { decimals: f.decimals, freezeAuthority: f.freezeAuthority, isInitialized: true, mintAuthority: f.mintAuthority, supply: f.supply().toString() };
  return { context: ctx(f), value: splAccount({ type: "mint", info }, 82, 1461600) };
}

export const HANDLERS: Record<string, Handler> = {
  getHealth: () => "ok",
  getVersion: () => ({ "solana-core": "2.0.15-herald-fixture", "feature-set": 1 }),
  getSlot: (f) => f.currentSlot(),
  getTokenSupply(f, params) {
    const mint = str(params, 0, "mint");
    if (mint !== f.mint && mint !== f.lpMint) throw invalid("not a Token mint");
    return { context: ctx(f), value: ui(mint === f.mint ? f.supply() : 1_000_000_000_000n, mint === f.mint ? f.decimals : f.lpDecimals) };
  },
  getAccountInfo: mintAccount,
  getBalance: (f, params) => ({ context: ctx(f), value: Number(f.lamportsOf(str(params, 0, "pubkey"))) }),
  getTokenAccountsByOwner(f, params) {
    const owner = str(params, 0, "owner");
    const filter = opts(params, 1);
    if (typeof filter.mint !== "string") throw invalid("filter must name a mint");
    const encoding = opts(params, 2).encoding;
    if (encoding !== "jsonParsed") throw invalid("the fixture answers getTokenAccountsByOwner in jsonParsed only");
    return { context: ctx(f), value: f.tokenAccountsOf(owner, filter.mint).map((a) => parsedTokenAccount(f, a)) };
  },
  getSignaturesForAddress(f, params) {
    const address = str(params, 0, "address");
    const o = opts(params, 1);
    const limit = o.limit === undefined ? 1000 : Number(o.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalid("limit must be 1..1000");
    let list = f.signaturesFor(address);
    if (typeof o.before === "string") {
      const at = list.findIndex((t) => t.signature === o.before);
      list = at === -1 ? [] : list.slice(at + 1);
    }
    if (typeof o.until === "string") {
      const at = list.findIndex((t) => t.signature === o.until);
      if (at !== -1) list = list.slice(0, at);
    }
    return list.slice(0, limit).map((t) => ({
      signature: t.signature,
      slot: t.slot,
      blockTime: t.blockTime,
      err: t.failed ? { InstructionError: [0, { Custom: 1 }] } : null,
      memo: null,
      confirmationStatus: "finalized",
    }));
  },
  getTransaction(f, params) {
    const tx = f.transaction(str(params, 0, "signature"));
    const encoding = opts(params, 1).encoding;
    if (encoding !== "jsonParsed") throw invalid("the fixture answers getTransaction in jsonParsed only");
    return tx ? parsedTransaction(f, tx) : null;
  },
};
