import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ChainFixture } from "../../src/chain/fixture-data";
import { scanStream } from "../../src/chain/fixture-scan";
import { HolderAccumulator } from "../../src/chain/holders";
import { RpcCallError } from "../../src/solana/rpc-errors";
import { ProgramAccountsScanner } from "../../src/solana/scan-parser";
import { expectedHolders } from "../support/solana-rpc";

// The streaming getProgramAccounts reader: the same answer however the bytes are split into chunks, and a
// typed error (never a wrong count) for anything that is not a complete, well-formed reply.

async function replyBytes(f: ChainFixture): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const reader = scanStream(f, { id: 1, dataSlice: { offset: 64, length: 8 }, withContext: false, truncateAfter: null, empty: false }).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value.slice());
  }
  return Buffer.concat(parts);
}

function scan(bytes: Uint8Array, cuts: number[]) {
  const acc = new HolderAccumulator();
  const scanner = new ProgramAccountsScanner(acc.sink);
  let at = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((a, b) => a - b).concat(bytes.length)) {
    scanner.push(bytes.subarray(at, cut));
    at = cut;
  }
  scanner.end();
  const r = acc.result();
  return { accounts: r.accounts, holders: r.holders, total: r.total, top: r.top.map((t) => `${t.address}:${t.amount}`) };
}

const text = (s: string) => new TextEncoder().encode(s);
const failure = (s: string, step = 0) => {
  try {
    const bytes = text(s);
    scan(bytes, step > 0 ? Array.from({ length: Math.ceil(bytes.length / step) }, (_, k) => k * step) : []);
    return null;
  } catch (err) {
    return err;
  }
};

describe("ProgramAccountsScanner", () => {
  test("counts exactly what a brute-force sort of the fixture says", async () => {
    const f = new ChainFixture({ seed: "parser", holders: 300 });
    const whole = scan(await replyBytes(f), []);
    const e = expectedHolders(f);
    expect(whole).toMatchObject({ accounts: e.accounts, holders: e.holders, total: e.total });
    expect(whole.top.reduce((s, t) => s + BigInt(t.split(":")[1]!), 0n)).toBe(e.top10);
  });

  test("any chunking gives the same result (every token may be cut anywhere)", async () => {
    const f = new ChainFixture({ seed: "parser", holders: 40 });
    const bytes = await replyBytes(f);
    const whole = scan(bytes, []);
    for (const step of [1, 2, 3, 5, 7, 13, 64]) {
      expect(
        scan(
          bytes,
          Array.from({ length: Math.ceil(bytes.length / step) }, (_, k) => k * step),
        ),
      ).toEqual(whole);
    }
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), (cuts) => {
        expect(scan(bytes, cuts)).toEqual(whole);
      }),
      { numRuns: 150 },
    );
  });

  test("escaped quotes and backslashes in fields it skips do not confuse it, however cut", () => {
    const reply = `{"jsonrpc":"2.0","result":[{"account":{"data":["AQAAAAAAAAA=","base64"],"note":"a \\"quoted\\" \\\\ word\\\\","owner":"x"},"pubkey":"9EVthMCQwN6pWeBjaniiQwLNYAgApKUiyn63mWGVUUZm"}],"id":1}`;
    for (const step of [0, 1, 2, 3]) {
      const bytes = text(reply);
      const r = scan(bytes, step ? Array.from({ length: bytes.length }, (_, k) => k * step) : []);
      expect(r).toMatchObject({ accounts: 1, holders: 1, total: 1n });
    }
  });

  test("amounts above 2^53 stay exact", () => {
    // u64 max: 18446744073709551615 = base64 of eight 0xff bytes.
    const reply = `{"result":[{"account":{"data":["//////////8=","base64"]},"pubkey":"9EVthMCQwN6pWeBjaniiQwLNYAgApKUiyn63mWGVUUZm"},{"account":{"data":["AQAAAAAAAAA=","base64"]},"pubkey":"A2FkkD2oUo3HdotC2FLrtjj1nTDcdSx8YSaxswwjChxc"}]}`;
    const r = scan(text(reply), []);
    expect(r.total).toBe(18446744073709551615n + 1n);
    expect(r.top[0]).toBe("9EVthMCQwN6pWeBjaniiQwLNYAgApKUiyn63mWGVUUZm:18446744073709551615");
  });

  test("an empty result is zero accounts, not an error", () => {
    expect(scan(text('{"jsonrpc":"2.0","result":[],"id":1}'), [])).toMatchObject({ accounts: 0, holders: 0, total: 0n });
  });

  test("a JSON-RPC error reply becomes an rpc_error with its code", () => {
    const err = failure('{"jsonrpc":"2.0","error":{"code":-32010,"message":"TokenkegQ excluded from account secondary indexes"},"id":1}', 3) as RpcCallError;
    expect(err).toBeInstanceOf(RpcCallError);
    expect(err.outcome).toBe("rpc_error");
    expect(err.opts.rpcCode).toBe(-32010);
  });

  test("anything else is a malformed reply", () => {
    const pk = "9EVthMCQwN6pWeBjaniiQwLNYAgApKUiyn63mWGVUUZm";
    const cases = [
      '{"jsonrpc":"2.0","result":[{"account":{"data":["AQAAAAAAAAA=","base64"]},"pubkey":"' + pk + '"}', // truncated
      "<html>502 Bad Gateway</html>",
      '{"jsonrpc":"2.0","id":1}', // no result
      '{"result":{"context":{"slot":1},"value":[]}}', // withContext shape, not requested
      '{"result":[1,2,3]}',
      '{"result":["x"]}',
      '{"result":[{"account":{"data":["AQAAAAAAAAA=","base58"]},"pubkey":"' + pk + '"}]}',
      '{"result":[{"account":{"data":["AQAAAAAAAAAA","base64"]},"pubkey":"' + pk + '"}]}', // 9 bytes
      '{"result":[{"account":{"data":["AQAA$AAAAAA=","base64"]},"pubkey":"' + pk + '"}]}',
      '{"result":[{"account":{"data":["AQAAAAAAAAA=","base64"]}}]}', // no pubkey
      '{"result":[{"pubkey":"' + pk + '"}]}', // no data
      '{"result":[]}]',
      '{"result":[]} {}',
      '{"result":[}',
    ];
    for (const c of cases) {
      for (const step of [0, 1, 4]) {
        const err = failure(c, step) as RpcCallError | null;
        expect(err, `${c} (step ${step})`).toBeInstanceOf(RpcCallError);
        expect(err!.outcome).toBe("malformed");
      }
    }
  });
});
