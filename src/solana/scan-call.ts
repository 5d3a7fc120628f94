import { httpError, malformed, RpcCallError, timeoutError } from "./rpc-errors";
import { ProgramAccountsScanner, type AccountSink } from "./scan-parser";
import { AMOUNT_OFFSET, TOKEN_ACCOUNT_SIZE, TOKEN_PROGRAM_ID } from "./constants";

// getProgramAccounts outside @solana/web3.js on purpose: Connection.getProgramAccounts parses the whole reply
// and builds a PublicKey and a Buffer per account — gigabytes at a million accounts. Here the request asks for
// the amount bytes only (dataSlice) and the reply is read as a stream (scan-parser.ts).

export interface ScanRequest {
  mint: string;
  /** Called once per attempt: a fresh sink, so a retried scan never counts a half-read reply. */
  begin(): AccountSink;
}

export interface ScanResult {
  accounts: number;
  bytes: number;
}

export const SCAN_METHOD = `getProgramAccounts(${TOKEN_PROGRAM_ID}, dataSize=${TOKEN_ACCOUNT_SIZE}, memcmp@0=mint, dataSlice=${AMOUNT_OFFSET}+8, base64, streamed)`;

export function scanBody(mint: string): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "getProgramAccounts",
    params: [
      TOKEN_PROGRAM_ID,
      {
        encoding: "base64",
        commitment: "confirmed",
        dataSlice: { offset: AMOUNT_OFFSET, length: 8 },
        filters: [{ dataSize: TOKEN_ACCOUNT_SIZE }, { memcmp: { offset: 0, bytes: mint } }],
      },
    ],
  });
}

/** Reply bytes parsed between two turns of the event loop: ~4,400 accounts of the amount-slice shape (~240 bytes each). */
export const SCAN_SLICE_BYTES = 1 << 20;

/** A turn of the event loop (a macrotask): timers, probes and requests run before the scan goes on. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Feeds the reply to the scanner in slices of SCAN_SLICE_BYTES with a turn of the event loop between them. Awaiting
 * `read()` alone does not free the loop: when the body is already buffered each read resolves as a microtask, so a
 * fast or buffered reply (or one large chunk) would be parsed in one stretch, every timer and request waiting behind
 * it. The scanner takes a token cut anywhere, so a chunk may be sliced at any byte.
 */
export async function feedScanner(scanner: ProgramAccountsScanner, reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> }): Promise<void> {
  let sinceTurn = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done || value === undefined) return;
    // A chunk past the slice size is parsed a slice at a time too (a transport may hand over megabytes at once).
    for (let at = 0; at < value.length; at += SCAN_SLICE_BYTES) {
      const slice = value.subarray(at, at + SCAN_SLICE_BYTES);
      scanner.push(slice);
      sinceTurn += slice.length;
      if (sinceTurn >= SCAN_SLICE_BYTES) {
        sinceTurn = 0;
        await nextTurn();
      }
    }
  }
}

export async function streamProgramAccounts(url: string, req: ScanRequest, timeoutMs: number): Promise<ScanResult> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: scanBody(req.mint), signal: abort.signal });
    if (!res.ok) {
      await res.body?.cancel();
      throw httpError(res.status, res.headers.get("retry-after"));
    }
    if (!res.body) throw malformed("no body");
    const scanner = new ProgramAccountsScanner(req.begin());
    await feedScanner(scanner, res.body.getReader());
    return scanner.end();
  } catch (err) {
    if (err instanceof RpcCallError) throw err;
    if (abort.signal.aborted) throw timeoutError(timeoutMs);
    throw new RpcCallError("network", `cannot read from the RPC node: ${(err as Error).message ?? String(err)}`, { retryable: true, hostFault: true });
  } finally {
    clearTimeout(timer);
  }
}
