import { type ProblemDetail, problemsOrThrow } from "../http/errors/errors";
import { isAddress } from "../solana/constants";

/**
 * The rules for user and wallet fields, in one place so create, update and link agree. Each check returns the
 * normalised value or records a problem; `orThrow` raises one 400 naming every bad field at once.
 */
export class FieldCheck {
  readonly problems: ProblemDetail[] = [];

  private fail(field: string, problem: string): undefined {
    this.problems.push({ field, problem });
    return undefined;
  }

  externalId(v: string): string | undefined {
    return /^[A-Za-z0-9._:@-]{1,128}$/.test(v) ? v : this.fail("external_id", "must be 1–128 characters of A–Z a–z 0–9 . _ : @ -");
  }

  /** Lower-cased, so the unique index on the raw column makes usernames unique case-insensitively. */
  username(v: string): string | undefined {
    return /^[A-Za-z0-9_.]{3,32}$/.test(v) ? v.toLowerCase() : this.fail("username", "must be 3–32 characters of a–z 0–9 _ . (letters are lower-cased)");
  }

  displayName(v: string): string | undefined {
    const s = v.trim();
    if (s.length === 0 || s.length > 100) return this.fail("display_name", "must be 1–100 characters, not blank");
    // Control characters break logs, CSV exports and the partner's own UI; they are never a real name.
    if (/\p{Cc}/u.test(s)) return this.fail("display_name", "must not contain control characters");
    return s;
  }

  /**
   * A deliberately plain check (local@domain.tld, no spaces or quotes): stricter RFC 5322 parsing rejects
   * nothing partners send and accepts addresses no mail system delivers. Lower-cased so lookups are exact.
   */
  email(v: string): string | undefined {
    const s = v.trim();
    const ok =
      s.length <= 254 &&
      /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/.test(s);
    return ok ? s.toLowerCase() : this.fail("email", "must be an email address like name@example.com (≤ 254 characters)");
  }

  blockchain(v: string | undefined): string | undefined {
    const s = (v ?? "solana").toLowerCase();
    return /^[a-z0-9-]{2,32}$/.test(s) ? s : this.fail("blockchain", "must be 2–32 characters of a–z 0–9 - (e.g. solana)");
  }

  /** Solana addresses must decode to a 32-byte key; other chains get a shape check only (letters and digits). */
  walletAddress(v: string, chain: string | undefined, field = "wallet_address"): string | undefined {
    if (chain === undefined) return undefined;
    if (chain === "solana") return isAddress(v) ? v : this.fail(field, "must be a Solana address: base58 of 32 bytes");
    return /^[A-Za-z0-9]{16,128}$/.test(v) ? v : this.fail(field, "must be 16–128 letters and digits");
  }

  label(v: string | null | undefined): string | null | undefined {
    if (v === undefined || v === null) return v;
    const s = v.trim();
    if (s.length === 0 || s.length > 64 || /\p{Cc}/u.test(s)) return this.fail("label", "must be 1–64 characters without control characters (null clears it)");
    return s;
  }

  orThrow(what: string, code?: Parameters<typeof problemsOrThrow>[2]): void {
    problemsOrThrow(what, this.problems, code);
  }
}
