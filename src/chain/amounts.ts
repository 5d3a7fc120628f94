// Token amounts are raw integer base units (u64 on chain) held as BigInt and published as exact decimal
// strings: never a float, so 1234567.000001 stays exactly that.

/** raw 1234500 with 6 decimals → "1.2345"; trailing fractional zeros are dropped, the sign is kept. */
export function formatUnits(raw: bigint, decimals: number): string {
  const negative = raw < 0n;
  const digits = (negative ? -raw : raw).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const frac = decimals > 0 ? digits.slice(digits.length - decimals).replace(/0+$/, "") : "";
  return `${negative ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

/** part / total in percent, rounded half-up to four decimals; null when there is no total. */
export function percentOf(part: bigint, total: bigint): number | null {
  if (total <= 0n) return null;
  const scaled = (part * 2_000_000n + total) / (2n * total); // percent × 10^4, rounded
  return Number(scaled) / 10_000;
}

export function parseRaw(value: unknown, what: string): bigint {
  if (typeof value !== "string" || !/^\d{1,40}$/.test(value)) throw new Error(`${what} is not a raw integer amount: ${JSON.stringify(value)?.slice(0, 40)}`);
  return BigInt(value);
}
