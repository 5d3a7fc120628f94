import { describe, expect, test } from "bun:test";
import {
  authorityChanged,
  classifyTransaction,
  rowDelta,
  severityOf,
  type ActiveDeclaration,
  type RawLimits,
  type TxFacts,
} from "../../src/transparency/audit/detector";
import { parseUnits } from "../../src/transparency/audit/amounts";

// The rules as pure functions, at their edges (the end-to-end cases are in audit-run.test.ts).

const limits: RawLimits = { large: 1_000n, medium: 100n, high: 500n, critical: 2_000n };
const tx = (over: Partial<TxFacts>): TxFacts => ({
  signature: "S",
  slot: 1,
  blockTime: "2026-01-01T00:00:00.000Z",
  status: "ok",
  delta: 0n,
  moved: 0n,
  hasEarlierTwin: false,
  ...over,
});
const decl = (over: Partial<ActiveDeclaration>): ActiveDeclaration => ({
  id: 1,
  direction: "outflow",
  amountRaw: 50n,
  signature: null,
  windowStart: "2026-01-01T00:00:00.000Z",
  windowEnd: "2026-01-01T00:00:00.000Z",
  remaining: 1,
  ...over,
});

describe("classifyTransaction", () => {
  test("large_transfer at exactly the threshold, not one unit below; severity by amount level", () => {
    expect(classifyTransaction(tx({ delta: -1_000n, moved: 1_000n }), [], limits)).toEqual({
      types: ["untracked_outflow", "large_transfer"],
      severity: "high",
      declarationId: null,
    });
    expect(classifyTransaction(tx({ delta: -999n, moved: 999n }), [], limits)).toEqual({ types: ["untracked_outflow"], severity: "high", declarationId: null });
    expect(classifyTransaction(tx({ delta: 99n, moved: 99n }), [], limits).severity).toBe("low");
    expect(classifyTransaction(tx({ delta: 100n, moved: 100n }), [], limits).severity).toBe("medium");
    expect(classifyTransaction(tx({ delta: 2_000n, moved: 2_000n }), [], limits).severity).toBe("critical");
  });

  test("failed and zero-delta transactions are clean; a twin with amount 0 is not a duplicate", () => {
    expect(classifyTransaction(tx({ status: "failed", hasEarlierTwin: true }), [], limits).types).toEqual([]);
    expect(classifyTransaction(tx({ moved: 500n }), [], limits).types).toEqual([]);
    expect(classifyTransaction(tx({ moved: 500n, hasEarlierTwin: true }), [], limits)).toEqual({
      types: ["duplicate_signature"],
      severity: "low",
      declarationId: null,
    });
  });

  test("a declaration matches direction, exact amount, window (inclusive), signature, and is used up", () => {
    const d = [decl({ remaining: 1 })];
    expect(classifyTransaction(tx({ delta: -50n, moved: 50n }), d, limits)).toEqual({ types: [], severity: null, declarationId: 1 });
    expect(classifyTransaction(tx({ delta: -50n, moved: 50n }), d, limits).types).toEqual(["untracked_outflow"]); // used up
    for (const [t, ds] of [
      [tx({ delta: -51n }), [decl({})]],
      [tx({ delta: 50n }), [decl({})]],
      [tx({ delta: -50n, blockTime: "2026-01-01T00:00:00.001Z" }), [decl({})]],
      [tx({ delta: -50n, blockTime: null }), [decl({})]],
      [tx({ delta: -50n, signature: "A" }), [decl({ signature: "B" })]],
    ] as const) {
      expect(classifyTransaction(t, [...ds], limits).declarationId).toBeNull();
    }
    expect(classifyTransaction(tx({ delta: -50n, signature: "B" }), [decl({ signature: "B" })], limits).declarationId).toBe(1);
    // A declared duplicate is still a duplicate; a declared large transfer is not large_transfer.
    expect(classifyTransaction(tx({ delta: -50n, moved: 50n, hasEarlierTwin: true }), [decl({})], limits).types).toEqual(["duplicate_signature"]);
  });
});

describe("LP wallets (lpDelta): trades", () => {
  test("never untracked; large_transfer at exactly the threshold even when a declaration covers token_delta; the larger delta is the row's", () => {
    expect(classifyTransaction(tx({ lpDelta: -999n, moved: 999n }), [], limits)).toEqual({ types: [], severity: null, declarationId: null });
    expect(classifyTransaction(tx({ lpDelta: 1_000n, moved: 1_000n }), [], limits)).toEqual({
      types: ["large_transfer"],
      severity: "high",
      declarationId: null,
    });
    expect(classifyTransaction(tx({ lpDelta: -2_000n, moved: 2_000n, status: "failed" }), [], limits).types).toEqual([]);
    // The declaration clears the treasury side only.
    expect(classifyTransaction(tx({ delta: -50n, lpDelta: 1_500n, moved: 1_500n }), [decl({})], limits)).toEqual({
      types: ["large_transfer"],
      severity: "high",
      declarationId: 1,
    });
    expect(rowDelta({ delta: -50n, lpDelta: 1_500n })).toBe(1_500n);
    expect(rowDelta({ delta: -50n, lpDelta: 50n })).toBe(-50n); // a tie keeps token_delta
    expect(rowDelta({ delta: 7n })).toBe(7n);
    expect(classifyTransaction(tx({ lpDelta: 500n, moved: 500n, hasEarlierTwin: true }), [], limits)).toEqual({
      types: ["duplicate_signature"],
      severity: "high",
      declarationId: null,
    });
  });
});

describe("the other rules", () => {
  test("severity takes the highest of the types' base and the amount level", () => {
    expect(severityOf(["authority_change"], 0n, limits)).toBe("critical");
    expect(severityOf(["sync_gap"], 0n, limits)).toBe("medium");
    expect(severityOf(["untracked_inflow"], 600n, limits)).toBe("high");
    expect(severityOf([], 10_000n, limits)).toBeNull();
  });

  test("authority_change: a changed field, or the first snapshot that mismatches the expectation", () => {
    const a = (m: string | null, f: string | null, mismatch = false) => ({ mintAuthority: m, freezeAuthority: f, mismatch });
    expect(authorityChanged(a(null, null), a(null, null)).changed).toBe(false);
    expect(authorityChanged(a("X", null), a(null, null))).toEqual({ changed: true, fields: ["mint_authority"], newMismatch: false });
    expect(authorityChanged(a("X", null, true), null)).toEqual({ changed: true, fields: [], newMismatch: true });
    expect(authorityChanged(a("X", null, true), a("X", null, true)).changed).toBe(false); // still mismatching: flagged once
  });

  test("parseUnits is exact and refuses more fractional digits than the mint has", () => {
    expect(parseUnits("12345.678901", 6)).toBe(12_345_678_901n);
    expect(parseUnits("0.1", 0)).toBeNull();
    expect(parseUnits("1.50", 1)).toBe(15n);
    expect(parseUnits("99999999999999999999", 6)).toBe(99_999_999_999_999_999_999_000_000n);
    for (const bad of ["-1", "1e3", "", ".5", "1.", " 1"]) expect(parseUnits(bad, 6)).toBeNull();
  });
});
