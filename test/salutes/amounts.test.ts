import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { AppError } from "../../src/http/errors/errors";
import {
  configDecimalToMinor,
  exactDecimalOf,
  formatScaled,
  MAX_EXACT_MINOR,
  maxAmountMinor,
  minorToNumber,
  multiplyExact,
  parseAmountMinor,
  toScaled,
} from "../../src/salutes/amounts";

const rules = { decimals: 2, maxAmount: 1_000_000_000 };

const problemOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("invalid_payload");
    return ((err as AppError).details as Array<{ problem: string }>)[0]!.problem;
  }
  throw new Error("expected a 400");
};

describe("exact decimals of a number's shortest form", () => {
  test.each([
    ["12.5", 125n, 1],
    ["100", 100n, 0],
    ["0.05", 5n, 2],
    ["1e-7", 1n, 7],
    ["1.5e-7", 15n, 8],
    ["1e+21", 10n ** 21n, 0],
    ["1.2345e+21", 12345n * 10n ** 17n, 0],
    ["0.30000000000000004", 30000000000000004n, 17],
    ["1.50", 15n, 1],
    ["0", 0n, 0],
  ])("%s", (text, digits, scale) => {
    expect(exactDecimalOf(text)).toEqual({ negative: false, digits, scale });
  });

  test("sign, and text that is not a number", () => {
    expect(exactDecimalOf("-2.5")).toEqual({ negative: true, digits: 25n, scale: 1 });
    expect(exactDecimalOf("-0")).toEqual({ negative: false, digits: 0n, scale: 0 });
    for (const bad of ["NaN", "Infinity", "", "1.", ".5", "1e", "0x10", "1_000"]) expect(exactDecimalOf(bad)).toBeNull();
  });

  test("every finite double's shortest form reads back as that double", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const d = exactDecimalOf(String(x))!;
        const text = (d.negative ? "-" : "") + formatScaled(d.digits, d.scale);
        expect(Number(text)).toBe(x === 0 ? 0 : x);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("parseAmountMinor", () => {
  test("whole, fractional and exponent-form amounts convert exactly", () => {
    expect(parseAmountMinor(12.5, rules)).toBe(1250);
    expect(parseAmountMinor(0.29, rules)).toBe(29); // 0.29 * 100 is 28.999999999999996 in floats
    expect(parseAmountMinor(1.005, { ...rules, decimals: 3 })).toBe(1005);
    expect(parseAmountMinor(1e-2, rules)).toBe(1);
    expect(parseAmountMinor(1e-6, { ...rules, decimals: 6 })).toBe(1);
    expect(parseAmountMinor(1_000_000_000, rules)).toBe(100_000_000_000);
    expect(parseAmountMinor(5, { ...rules, decimals: 0 })).toBe(5);
  });

  test.each([
    ["a string", "10", "must be a JSON number (not a string, boolean or null)"],
    ["null", null, "must be a JSON number (not a string, boolean or null)"],
    ["a boolean", false, "must be a JSON number (not a string, boolean or null)"],
    ["undefined", undefined, "must be a JSON number (not a string, boolean or null)"],
    ["NaN", Number.NaN, "must be a finite number"],
    ["Infinity", Number.POSITIVE_INFINITY, "must be a finite number"],
    ["zero", 0, "must be greater than 0"],
    ["negative zero", -0, "must be greater than 0"],
    ["negative", -1, "must be greater than 0"],
    ["three decimals", 12.345, "must have at most 2 decimal places (got 12.345)"],
    ["0.1 + 0.2", 0.1 + 0.2, "must have at most 2 decimal places (got 0.30000000000000004)"],
    ["1e-7", 1e-7, "must have at most 2 decimal places (got 1e-7)"],
    ["1e21", 1e21, "must be at most 1000000000"],
    ["over the maximum", 1_000_000_000.01, "must be at most 1000000000"],
  ])("%s is refused", (_label, value, problem) => {
    expect(problemOf(() => parseAmountMinor(value, rules))).toBe(problem);
  });

  test("one decimal place is worded in the singular", () => {
    expect(problemOf(() => parseAmountMinor(0.25, { ...rules, decimals: 1 }))).toBe("must have at most 1 decimal place (got 0.25)");
  });

  test("the maximum never passes 15 significant digits", () => {
    expect(maxAmountMinor({ decimals: 6, maxAmount: 1_000_000_000_000 })).toBe(MAX_EXACT_MINOR);
    expect(maxAmountMinor({ decimals: 2, maxAmount: 1_000_000_000 })).toBe(100_000_000_000);
  });
});

describe("round trip: minor units → JSON number → minor units", () => {
  test("every amount shown parses back to the same minor units, and prints as its exact decimal", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 1, max: MAX_EXACT_MINOR }), (decimals, raw) => {
        const r = { decimals, maxAmount: 1_000_000_000_000 };
        const minor = Math.min(raw, maxAmountMinor(r));
        const shown = minorToNumber(minor, decimals);
        expect(String(shown)).toBe(formatScaled(BigInt(minor), decimals));
        // Through JSON, as a partner's client would send it back.
        expect(parseAmountMinor(JSON.parse(JSON.stringify(shown)), r)).toBe(minor);
      }),
      { numRuns: 5000 },
    );
  });

  test("any double is either refused or accepted as exactly its own value", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }),
        fc.oneof(
          fc.double(),
          fc.double({ min: 0, max: 1e9 }),
          fc.integer({ min: 0, max: 10 ** 9 }).map((n) => n / 100),
        ),
        (decimals, x) => {
          const r = { decimals, maxAmount: 1_000_000_000 };
          let minor: number;
          try {
            minor = parseAmountMinor(x, r);
          } catch (err) {
            expect((err as AppError).code).toBe("invalid_payload");
            return;
          }
          expect(minor).toBeGreaterThan(0);
          expect(Number.isInteger(minor)).toBe(true);
          expect(minorToNumber(minor, decimals)).toBe(x);
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe("scaling, config decimals and exact products", () => {
  test("toScaled rounds only when asked", () => {
    const d = exactDecimalOf("10.005")!;
    expect(toScaled(d, 2)).toBeNull();
    expect(toScaled(d, 2, "floor")).toBe(1000n);
    expect(toScaled(d, 2, "ceil")).toBe(1001n);
    expect(toScaled(d, 4)).toBe(100050n);
  });

  test("configured bounds round inward", () => {
    expect(configDecimalToMinor("10", 2, "ceil")).toBe(1000);
    expect(configDecimalToMinor("10.001", 2, "ceil")).toBe(1001);
    expect(configDecimalToMinor("10.009", 2, "floor")).toBe(1000);
    expect(configDecimalToMinor("999999999999999.5", 2, "floor")).toBe(MAX_EXACT_MINOR);
  });

  test.each([
    [1000, 2, "0.01", "0.1"],
    [1250, 2, "0.01", "0.125"],
    [1, 2, "0.000000001", "0.00000000001"],
    [123456789, 2, "3", "3703703.67"],
    [5, 0, "2.5", "12.5"],
    [100, 2, "0", "0"],
  ])("%d minor at %d decimals × %s = %s", (minor, decimals, rate, expected) => {
    expect(multiplyExact(minor, decimals, rate)).toBe(expected);
  });

  test("products agree with BigInt arithmetic", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 ** 12 }),
        fc.integer({ min: 0, max: 10 ** 9 }),
        fc.integer({ min: 0, max: 9 }),
        (minor, rateDigits, rateScale) => {
          const rate = formatScaled(BigInt(rateDigits), rateScale);
          const product = multiplyExact(minor, 2, rate);
          const back = exactDecimalOf(product)!;
          // product × 10^(2 + rateScale) == minor × rateDigits
          expect(toScaled(back, 2 + rateScale)).toBe(BigInt(minor) * BigInt(rateDigits));
        },
      ),
    );
  });
});
