import { malformed, rpcError } from "./rpc-errors";

// A streaming reader for one reply shape: getProgramAccounts with base64 data, i.e.
//   {"jsonrpc":"2.0","result":[{"account":{"data":["<b64>","base64"],…},"pubkey":"<base58>"}, …],"id":1}
// A million token accounts are ~230 MB of JSON; parsing it whole would hold the text and a million objects.
// This tokenizer walks the bytes as they arrive, keeps only the current account's pubkey and amount bytes in
// two small reused buffers, and hands each account to `onAccount` as it closes. Memory stays flat whatever
// the account count. It checks the structure it relies on and reports anything else as a malformed reply.

export type AccountSink = (pubkey: Uint8Array, pubkeyLength: number, amountLo: number, amountHi: number) => void;

const QUOTE = 34,
  BACKSLASH = 92,
  COLON = 58,
  COMMA = 44;
const LBRACE = 123,
  RBRACE = 125,
  LBRACKET = 91,
  RBRACKET = 93;
const enc = new TextEncoder();
// Key ids: only the keys on the path to the two values read. Anything else is OTHER.
const OTHER = 0,
  RESULT = 1,
  ERROR = 2,
  ACCOUNT = 3,
  PUBKEY = 4,
  DATA = 5;
const KEYS: Array<[number, Uint8Array]> = [
  [RESULT, enc.encode("result")],
  [ERROR, enc.encode("error")],
  [ACCOUNT, enc.encode("account")],
  [PUBKEY, enc.encode("pubkey")],
  [DATA, enc.encode("data")],
];
const BASE64_WORD = enc.encode("base64");
function equalBytes(buf: Uint8Array, from: number, to: number, word: Uint8Array): boolean {
  if (to - from !== word.length) return false;
  for (let k = 0; k < word.length; k++) if (buf[from + k] !== word[k]) return false;
  return true;
}

function keyId(buf: Uint8Array, from: number, to: number): number {
  for (const [id, word] of KEYS) if (equalBytes(buf, from, to, word)) return id;
  return OTHER;
}

const B64_VALUES = new Int16Array(256).fill(-1);
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split("").forEach((c, i) => (B64_VALUES[c.charCodeAt(0)] = i));
const MAX_DEPTH = 64;
/** Error replies are small: the first bytes are kept so a JSON-RPC error can be parsed once the reply ends. */
const HEAD_BYTES = 64 * 1024;

// What the string being read is for.
const S_SKIP = 0,
  S_KEY = 1,
  S_PUBKEY = 2,
  S_DATA = 3,
  S_ENCODING = 4;

export class ProgramAccountsScanner {
  private depth = 0;
  private readonly kind = new Uint8Array(MAX_DEPTH); // 1 = object, 2 = array
  private readonly key = new Uint8Array(MAX_DEPTH); // current key id per object level
  private readonly index = new Int32Array(MAX_DEPTH); // current element index per array level
  private readonly expectKey = new Uint8Array(MAX_DEPTH);
  private inString = false;
  private escaped = false;
  private stringRole = S_SKIP;
  private inScalar = false;
  private readonly cap = new Uint8Array(256);
  private capLen = 0;
  private readonly pubkey = new Uint8Array(64);
  private pubkeyLen = 0;
  private amountLo = 0;
  private amountHi = 0;
  private hasData = false;
  private sawResult = false;
  private sawError = false;
  private done = false;
  private head = new Uint8Array(HEAD_BYTES);
  private headLen = 0;
  private bytesSeen = 0;
  accounts = 0;

  constructor(private readonly onAccount: AccountSink) {}

  push(chunk: Uint8Array): void {
    if (this.headLen < HEAD_BYTES) {
      const n = Math.min(chunk.length, HEAD_BYTES - this.headLen);
      this.head.set(chunk.subarray(0, n), this.headLen);
      this.headLen += n;
    }
    this.bytesSeen += chunk.length;
    const len = chunk.length;
    let i = 0;
    // A token cut by the previous chunk's end continues first.
    if (this.inString) i = this.readString(chunk, 0);
    else if (this.inScalar) i = this.skipScalar(chunk, 0);
    while (i < len) {
      const c = chunk[i]!;
      if (c <= 32) {
        i++;
        continue;
      }
      if (this.done) throw malformed("bytes after the end of the reply");
      switch (c) {
        case QUOTE:
          this.startString();
          i = this.readString(chunk, i + 1);
          continue;
        case LBRACE:
        case LBRACKET:
          this.open(c === LBRACE ? 1 : 2);
          break;
        case RBRACE:
        case RBRACKET:
          this.close(c === RBRACE ? 1 : 2);
          break;
        case COLON:
          if (this.kind[this.depth] !== 1) throw malformed("':' outside an object");
          this.expectKey[this.depth] = 0;
          break;
        case COMMA:
          if (this.kind[this.depth] === 1) this.expectKey[this.depth] = 1;
          else if (this.kind[this.depth] === 2) this.index[this.depth]! += 1;
          else throw malformed("',' outside a container");
          break;
        default:
          if (this.depth === 0) throw malformed("the reply is not a JSON object");
          if (this.kind[this.depth] === 1 && this.expectKey[this.depth]) throw malformed("a value where a key belongs");
          if (this.depth === 2 && this.inResultArray()) throw malformed("a result element that is not an account object");
          this.inScalar = true; // number, true, false, null: read past
          i = this.skipScalar(chunk, i + 1);
          continue;
      }
      i++;
    }
  }

  /** Reads past a number or literal; returns the index of the delimiter that ends it (or len). */
  private skipScalar(chunk: Uint8Array, i: number): number {
    const len = chunk.length;
    while (i < len) {
      const c = chunk[i]!;
      if (c === COMMA || c === RBRACE || c === RBRACKET || c <= 32) {
        this.inScalar = false;
        return i;
      }
      i++;
    }
    return len;
  }

  /** Call when the body has ended; throws for truncated replies, JSON-RPC errors and missing results. */
  end(): { accounts: number; bytes: number } {
    if (!this.done || this.inString) throw malformed(`the reply ended early (after ${this.bytesSeen} bytes, ${this.accounts} accounts)`);
    if (this.sawError) {
      if (this.bytesSeen > HEAD_BYTES) throw malformed("an error reply of unexpected size");
      let parsed: { error?: { code?: unknown; message?: unknown } };
      try {
        parsed = JSON.parse(new TextDecoder().decode(this.head.subarray(0, this.headLen)));
      } catch {
        throw malformed("an error reply that is not JSON");
      }
      throw rpcError(parsed.error?.code, String(parsed.error?.message ?? "unknown error"));
    }
    if (!this.sawResult) throw malformed("no result array in the reply");
    return { accounts: this.accounts, bytes: this.bytesSeen };
  }

  private open(kind: number): void {
    const d = this.depth;
    if (d === 0 && kind !== 1) throw malformed("the reply is not a JSON object");
    if (d >= 1 && this.kind[d] === 1 && this.expectKey[d]) throw malformed("a value where a key belongs");
    if (d + 1 >= MAX_DEPTH) throw malformed("nesting too deep");
    // The result must be an array (withContext replies are not requested).
    if (d === 1 && this.key[1] === RESULT) {
      if (kind !== 2) throw malformed("result is not an array");
      this.sawResult = true;
    }
    if (d === 1 && this.key[1] === ERROR) this.sawError = true;
    this.depth = d + 1;
    this.kind[d + 1] = kind;
    this.key[d + 1] = OTHER;
    this.index[d + 1] = 0;
    this.expectKey[d + 1] = kind === 1 ? 1 : 0;
    if (this.inAccounts(d + 1) && kind === 1) this.beginAccount();
  }

  private close(kind: number): void {
    const d = this.depth;
    if (d === 0 || this.kind[d] !== kind) throw malformed("mismatched brackets");
    if (kind === 1 && this.inAccounts(d)) this.finishAccount();
    this.depth = d - 1;
    if (this.depth === 0) this.done = true;
  }

  private inResultArray(): boolean {
    return this.key[1] === RESULT && this.kind[2] === 2;
  }

  /** Depth d is an element of the result array. */
  private inAccounts(d: number): boolean {
    return d === 3 && this.key[1] === RESULT && this.kind[2] === 2;
  }

  private beginAccount(): void {
    this.pubkeyLen = 0;
    this.hasData = false;
  }

  private finishAccount(): void {
    if (this.pubkeyLen < 32 || this.pubkeyLen > 44) throw malformed(`account ${this.accounts} has no valid pubkey`);
    if (!this.hasData) throw malformed(`account ${this.accounts} has no base64 data`);
    this.accounts++;
    this.onAccount(this.pubkey, this.pubkeyLen, this.amountLo, this.amountHi);
  }

  private startString(): void {
    const d = this.depth;
    if (d === 0) throw malformed("the reply is not a JSON object");
    if (d === 2 && this.inResultArray()) throw malformed("a result element that is not an account object");
    this.inString = true;
    this.escaped = false;
    this.capLen = 0;
    if (this.kind[d] === 1 && this.expectKey[d]) this.stringRole = d <= 4 ? S_KEY : S_SKIP;
    else if (d === 3 && this.kind[3] === 1 && this.key[3] === PUBKEY && this.inAccounts(3)) this.stringRole = S_PUBKEY;
    else if (d === 5 && this.kind[5] === 2 && this.key[4] === DATA && this.key[3] === ACCOUNT && this.inAccounts(3)) {
      this.stringRole = this.index[5] === 0 ? S_DATA : this.index[5] === 1 ? S_ENCODING : S_SKIP;
    } else this.stringRole = S_SKIP;
  }

  /** Reads string bytes from i; returns the index after the closing quote, or len if the chunk ended inside. */
  private readString(chunk: Uint8Array, i: number): number {
    const len = chunk.length;
    if (this.stringRole === S_SKIP) {
      // Fast path: jump to the next quote; an odd run of backslashes right before it means it is escaped.
      if (this.escaped) {
        this.escaped = false;
        i++;
      }
      while (i < len) {
        const q = chunk.indexOf(QUOTE, i);
        const stop = q === -1 ? len : q;
        let run = 0;
        while (stop - run - 1 >= i && chunk[stop - run - 1] === BACKSLASH) run++;
        if (q === -1) {
          this.escaped = run % 2 === 1; // the chunk ended inside an escape
          return len;
        }
        if (run % 2 === 0) {
          this.inString = false;
          return q + 1;
        }
        i = q + 1;
      }
      return len;
    }
    // The common case: the whole string is in this chunk and its quote is not escaped — read it in place.
    // Otherwise gather it byte by byte (escapes are refused: keys, addresses and base64 never need them).
    if (this.capLen === 0) {
      const q = chunk.indexOf(QUOTE, i);
      if (q !== -1 && (q === i || chunk[q - 1] !== BACKSLASH)) {
        this.inString = false;
        this.endCapture(chunk, i, q);
        return q + 1;
      }
    }
    while (i < len) {
      const c = chunk[i++]!;
      if (c === QUOTE) {
        this.inString = false;
        this.endCapture(this.cap, 0, this.capLen);
        return i;
      }
      if (c === BACKSLASH) throw malformed("escapes in an address or base64 string");
      if (this.capLen >= this.cap.length) throw malformed("an address or key string too long");
      this.cap[this.capLen++] = c;
    }
    return len;
  }

  private endCapture(buf: Uint8Array, from: number, to: number): void {
    switch (this.stringRole) {
      case S_KEY:
        this.key[this.depth] = keyId(buf, from, to);
        break;
      case S_PUBKEY:
        if (to - from > 64) throw malformed("pubkey too long");
        this.pubkey.set(buf.subarray(from, to));
        this.pubkeyLen = to - from;
        break;
      case S_DATA:
        this.decodeAmount(buf, from, to);
        break;
      case S_ENCODING:
        if (!equalBytes(buf, from, to, BASE64_WORD)) throw malformed("account data is not base64");
        break;
    }
  }

  /** The data slice is the token account's u64 amount, little-endian: 8 bytes, 12 base64 characters. */
  private decodeAmount(buf: Uint8Array, from: number, to: number): void {
    if (to - from !== 12 || buf[from + 11] !== 61 || buf[from + 10] === 61) throw malformed("account data is not an 8-byte amount slice");
    const v = (k: number) => {
      const x = B64_VALUES[buf[from + k]!]!;
      if (x < 0) throw malformed("invalid base64 in account data");
      return x;
    };
    const n0 = (v(0) << 18) | (v(1) << 12) | (v(2) << 6) | v(3);
    const n1 = (v(4) << 18) | (v(5) << 12) | (v(6) << 6) | v(7);
    const n2 = (v(8) << 18) | (v(9) << 12) | (v(10) << 6);
    // bytes b0..b7 (little-endian u64): n0 = b0 b1 b2, n1 = b3 b4 b5, n2 = b6 b7
    const b0 = n0 >>> 16,
      b1 = (n0 >>> 8) & 255,
      b2 = n0 & 255;
    const b3 = n1 >>> 16,
      b4 = (n1 >>> 8) & 255,
      b5 = n1 & 255;
    const b6 = n2 >>> 16,
      b7 = (n2 >>> 8) & 255;
    this.amountLo = (b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)) >>> 0;
    this.amountHi = (b4 | (b5 << 8) | (b6 << 16) | (b7 << 24)) >>> 0;
    this.hasData = true;
  }
}
