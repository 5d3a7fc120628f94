import bs58 from "bs58";
import { base58Into, KeyDomain } from "./fixture-keys";
import { TOKEN_PROGRAM_ID, type ChainFixture, type FixtureTokenAccount } from "./fixture-data";

// The fixture's getProgramAccounts reply, written as bytes straight into chunks and streamed: a million
// accounts are ~230 MB of JSON, which a real RPC node streams too, and which the fixture must not hold.

export interface ScanRequest {
  id: unknown;
  dataSlice: { offset: number; length: number } | null;
  withContext: boolean;
  /** Stop after this many accounts without closing the JSON (the "malformed" switch). */
  truncateAfter: number | null;
  /** The memcmp filter named another mint: an empty result. */
  empty: boolean;
}

const enc = new TextEncoder();
const B64 = enc.encode("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
const PRE_DATA = enc.encode('{"account":{"data":["');
const POST_DATA = enc.encode(
  `","base64"],"executable":false,"lamports":2039280,"owner":"${TOKEN_PROGRAM_ID}","rentEpoch":18446744073709551615,"space":165},"pubkey":"`,
);
const END = enc.encode('"}');
const CHUNK_BYTES = 256 * 1024;

export function base64Into(src: Uint8Array, out: Uint8Array, at: number): number {
  let o = at;
  let i = 0;
  for (; i + 2 < src.length; i += 3) {
    const n = (src[i]! << 16) | (src[i + 1]! << 8) | src[i + 2]!;
    out[o++] = B64[n >>> 18]!;
    out[o++] = B64[(n >>> 12) & 63]!;
    out[o++] = B64[(n >>> 6) & 63]!;
    out[o++] = B64[n & 63]!;
  }
  const rest = src.length - i;
  if (rest > 0) {
    const n = (src[i]! << 16) | (rest === 2 ? src[i + 1]! << 8 : 0);
    out[o++] = B64[n >>> 18]!;
    out[o++] = B64[(n >>> 12) & 63]!;
    out[o++] = rest === 2 ? B64[(n >>> 6) & 63]! : 61;
    out[o++] = 61;
  }
  return o - at;
}

/** The 165-byte SPL token account layout (mint, owner, amount, no delegate, initialized, not native). */
function accountData(fixture: ChainFixture, owner: string, amount: bigint): Uint8Array {
  const data = new Uint8Array(165);
  data.set(decode58(fixture.mint), 0);
  data.set(decode58(owner), 32);
  new DataView(data.buffer).setBigUint64(64, amount, true);
  data[108] = 1; // AccountState::Initialized
  return data;
}

const decode58 = (s: string): Uint8Array => bs58.decode(s);

/** Writes the accounts of one reply, in order: the wallets' token accounts, then the holders'. */
class AccountWriter {
  private readonly wallets: FixtureTokenAccount[];
  private readonly amountBytes = new Uint8Array(8);
  private readonly amountView = new DataView(this.amountBytes.buffer);
  private readonly fastSlice: boolean;
  readonly total: number;

  constructor(
    private readonly fixture: ChainFixture,
    private readonly req: ScanRequest,
  ) {
    this.wallets = fixture.wallets().flatMap((w) => w.accounts);
    this.total = req.empty ? 0 : this.wallets.length + fixture.holderCount;
    this.fastSlice = req.dataSlice?.offset === 64 && req.dataSlice.length === 8;
  }

  /** Account k as JSON at out[at…]; returns the bytes written. */
  write(out: Uint8Array, at: number, k: number): number {
    const { fixture, wallets, req } = this;
    let o = at;
    if (k > 0) out[o++] = 44; // ","
    out.set(PRE_DATA, o);
    o += PRE_DATA.length;
    const isWallet = k < wallets.length;
    if (this.fastSlice) {
      // The hot path of the benchmark: no BigInt, no owner key, just the amount's eight bytes.
      if (isWallet) this.amountView.setBigUint64(0, wallets[k]!.amount, true);
      else {
        const a = fixture.holderAmount(k - wallets.length);
        this.amountView.setUint32(0, a % 4294967296, true);
        this.amountView.setUint32(4, Math.floor(a / 4294967296), true);
      }
      o += base64Into(this.amountBytes, out, o);
    } else {
      const amount = isWallet ? wallets[k]!.amount : BigInt(fixture.holderAmount(k - wallets.length));
      const owner = isWallet ? wallets[k]!.owner : fixture.holderOwner(k - wallets.length);
      const full = accountData(fixture, owner, amount);
      const slice = req.dataSlice ? full.subarray(req.dataSlice.offset, req.dataSlice.offset + req.dataSlice.length) : full;
      o += base64Into(slice, out, o);
    }
    out.set(POST_DATA, o);
    o += POST_DATA.length;
    const key = isWallet ? decode58(wallets[k]!.address) : fixture.keys.bytes(KeyDomain.holderAccount, k - wallets.length);
    o += base58Into(key, out, o);
    out.set(END, o);
    return o + END.length - at;
  }
}

export function scanStream(fixture: ChainFixture, req: ScanRequest): ReadableStream<Uint8Array> {
  const writer = new AccountWriter(fixture, req);
  const limit = req.truncateAfter ?? writer.total;
  let next = 0;
  let headerSent = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const out = new Uint8Array(CHUNK_BYTES);
      let o = 0;
      if (!headerSent) {
        const head = `{"jsonrpc":"2.0","id":${JSON.stringify(req.id ?? null)},"result":${req.withContext ? `{"context":{"slot":${fixture.currentSlot()}},"value":[` : "["}`;
        o += enc.encodeInto(head, out).written;
        headerSent = true;
      }
      while (next < limit && o < CHUNK_BYTES - 2048) o += writer.write(out, o, next++);
      if (next >= limit) {
        // The "malformed" switch stops here without closing the JSON: a reply cut off mid-stream.
        if (req.truncateAfter === null) o += enc.encodeInto(req.withContext ? "]}}" : "]}", out.subarray(o)).written;
        controller.enqueue(out.subarray(0, o));
        controller.close();
        return;
      }
      controller.enqueue(out.subarray(0, o));
    },
  });
}
