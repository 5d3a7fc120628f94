// Salutes amounts (docs/design.md §5): JSON numbers on the wire, integer minor units (10^-SALUTES_DECIMALS) inside.
// Nothing here multiplies floats: a number is judged and converted through its exact decimal digits, so
// 0.29 becomes 29 minor units, never 28.999999999999996.
import { ValidationError } from "../http/errors/errors";

export interface AmountRules {
  /** SALUTES_DECIMALS: decimal places an amount may have. */
  decimals: number;
  /** SALUTES_MAX_AMOUNT: largest single amount, in whole salutes. */
  maxAmount: number;
}

/** An exact non-negative decimal: value = digits × 10^-scale, with no trailing zeros after the point. */
export interface ExactDecimal {
  negative: boolean;
  digits: bigint;
  scale: number;
}

const NUMBER_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i;

/**
 * The exact decimal a JS number prints as (its shortest round-trip form, `String(n)`), exponent forms included:
 * "1e-7" → 1 × 10^-7, "1.5e+21" → 15 × 10^20. Judging decimals on this form is what a partner sees: 0.1 + 0.2
 * prints as 0.30000000000000004 and so has 17 decimal places, not 1.
 */
export function exactDecimalOf(text: string): ExactDecimal | null {
  const m = NUMBER_TEXT.exec(text.trim());
  if (!m) return null;
  const [, sign, intPart, fracPart = "", expPart = "0"] = m;
  let digits = (intPart! + fracPart).replace(/^0+(?=\d)/, "");
  let scale = fracPart.length - Number(expPart);
  // Normalise: trailing zeros carry no precision ("1.50" has one decimal place, "100" none).
  while (scale > 0 && digits.length > 1 && digits.endsWith("0")) {
    digits = digits.slice(0, -1);
    scale--;
  }
  let value = BigInt(digits);
  if (scale < 0) {
    value *= 10n ** BigInt(-scale);
    scale = 0;
  }
  if (value === 0n) scale = 0;
  return { negative: sign === "-" && value !== 0n, digits: value, scale };
}

/** Rescales an exact decimal to `scale` places, rounding toward zero ("floor") or away from it ("ceil"). */
export function toScaled(d: ExactDecimal, scale: number, rounding: "exact" | "floor" | "ceil" = "exact"): bigint | null {
  if (d.scale <= scale) return d.digits * 10n ** BigInt(scale - d.scale);
  const divisor = 10n ** BigInt(d.scale - scale);
  const quotient = d.digits / divisor;
  if (d.digits % divisor === 0n) return quotient;
  if (rounding === "exact") return null;
  return rounding === "floor" ? quotient : quotient + 1n;
}

/** Minor units as the exact decimal text, trailing zeros dropped: 1250 at 2 decimals → "12.5". */
export function formatScaled(value: bigint, scale: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

/**
 * Minor units shown as a JSON number. Both operands are exact doubles (|minor| ≤ 2^53, 10^d ≤ 10^6) and IEEE
 * division rounds once, so this is the double nearest the true decimal — the one `String()` prints as exactly
 * that decimal. (Cheaper than going through the string; the round-trip property test pins the equivalence.)
 */
export function minorToNumber(minor: number, decimals: number): number {
  return decimals === 0 ? minor : minor / 10 ** decimals;
}

/**
 * The largest amount or balance, in minor units: 15 digits. A double round-trips every decimal of at most 15
 * significant digits (DBL_DIG), so any accepted amount reads back from JSON as exactly what the partner wrote and
 * every balance we show prints as its exact decimal. At 16 digits JSON.parse("9007199254.740991") already
 * prints as a different number, which would credit a value nobody sent.
 */
export const MAX_EXACT_MINOR = 999_999_999_999_999;

const invalid = (field: string, problem: string) => new ValidationError(`${field} ${problem}`, [{ field, problem }]);

/**
 * A request amount → positive integer minor units, or a 400 naming the rule broken. Only JSON numbers are
 * amounts: "10", null, true and non-finite values are refused rather than coerced.
 */
export function parseAmountMinor(value: unknown, rules: AmountRules, field = "amount"): number {
  if (typeof value !== "number") throw invalid(field, "must be a JSON number (not a string, boolean or null)");
  if (!Number.isFinite(value)) throw invalid(field, "must be a finite number");
  if (!(value > 0)) throw invalid(field, "must be greater than 0");
  const exact = exactDecimalOf(String(value));
  if (!exact) throw invalid(field, "must be a plain decimal number");
  if (exact.scale > rules.decimals) {
    throw invalid(field, `must have at most ${rules.decimals} decimal place${rules.decimals === 1 ? "" : "s"} (got ${String(value)})`);
  }
  const minor = toScaled(exact, rules.decimals)!;
  const maxMinor = maxAmountMinor(rules);
  if (minor > BigInt(maxMinor)) throw invalid(field, `must be at most ${formatScaled(BigInt(maxMinor), rules.decimals)}`);
  return Number(minor);
}

/** SALUTES_MAX_AMOUNT in minor units, capped where integers stop being exact. */
export function maxAmountMinor(rules: AmountRules): number {
  const configured = BigInt(rules.maxAmount) * 10n ** BigInt(rules.decimals);
  return configured > BigInt(MAX_EXACT_MINOR) ? MAX_EXACT_MINOR : Number(configured);
}

/** A configured decimal string (e.g. SALUTES_CONVERSION_MIN "10.005") in minor units, rounded as asked. */
export function configDecimalToMinor(text: string, decimals: number, rounding: "floor" | "ceil"): number {
  const exact = exactDecimalOf(text);
  if (!exact || exact.negative) throw new Error(`not a non-negative decimal: ${text}`);
  const minor = toScaled(exact, decimals, rounding)!;
  return minor > BigInt(MAX_EXACT_MINOR) ? MAX_EXACT_MINOR : Number(minor);
}

/** amount (minor units at `decimals`) × rate (an exact decimal string), exactly, as decimal text. */
export function multiplyExact(amountMinor: number, decimals: number, rate: string): string {
  const r = exactDecimalOf(rate);
  if (!r || r.negative) throw new Error(`not a non-negative decimal rate: ${rate}`);
  return formatScaled(BigInt(amountMinor) * r.digits, decimals + r.scale);
}
