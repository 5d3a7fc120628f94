import { AppError } from "../../http/errors/errors";

// Token amounts on the way in: decimal strings ("12345.678901") to raw integer units with the mint's decimals,
// exactly (BigInt), refusing more fractional digits than the mint has. On the way out chain/service's
// formatUnits turns raw units back into the same decimal strings.

const DECIMAL = /^(\d{1,30})(?:\.(\d{1,30}))?$/;

/** "12.5" with 6 decimals → 12500000n; null when the text is not a non-negative decimal with ≤ decimals digits. */
export function parseUnits(text: string, decimals: number): bigint | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const frac = m[2] ?? "";
  if (frac.length > decimals && /[^0]/.test(frac.slice(decimals))) return null;
  return BigInt(m[1]!) * 10n ** BigInt(decimals) + BigInt((frac.slice(0, decimals) || "0").padEnd(decimals, "0"));
}

/** parseUnits or a 400 naming the field (`query.min_abs_delta`, `body.amount`). */
export function parseUnitsOrThrow(text: string, decimals: number, field: string, code: "invalid_query" | "invalid_payload"): bigint {
  const raw = parseUnits(text.trim(), decimals);
  if (raw === null) {
    const problem = `must be a non-negative decimal token amount with at most ${decimals} fractional digits (such as 1000 or 12.5); got ${JSON.stringify(text.slice(0, 40))}`;
    throw new AppError(code, `${field} ${problem}`, { details: [{ field, problem }] });
  }
  return raw;
}

/** |raw| as 40 zero-padded digits: text order is numeric order (audit_rows.abs_key). */
export const absKey = (raw: bigint): string => (raw < 0n ? -raw : raw).toString().padStart(40, "0");

export const absOf = (raw: bigint): bigint => (raw < 0n ? -raw : raw);
