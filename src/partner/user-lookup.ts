import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";
import { pageOf, type PageRequest } from "../http/pagination";
import { SELECT_USER_WITH_PRIMARY, userView, type UserWithPrimary } from "./users-service";
import { walletsByUser } from "./wallets-service";

export interface UserFilter {
  status?: "active" | "suspended";
  /** Substring of external_id, username, display_name or email (case-insensitive for ASCII). */
  q?: string;
  /** Exact matches; email and username are stored lower-cased, so these are case-insensitive. */
  email?: string;
  username?: string;
  /** Exact address of any of the user's wallets, on any chain. */
  wallet?: string;
  includeWallets: boolean;
}

/** `%` and `_` in a search term are literal characters, not wildcards a partner could use to enumerate. */
const likeTerm = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const blankToNull = (s: string | undefined) => (s === undefined || s.trim() === "" ? null : s.trim());

/**
 * GET /users and GET /user-lookup: this owner's users, newest first, keyset-paged by id. Every clause is
 * bound; absent filters are NULL and switch themselves off.
 */
export function listUsers(ctx: AppContext, owner: Owner, filter: UserFilter, page: PageRequest) {
  if (page.after !== null && typeof page.after !== "number") {
    throw new AppError("invalid_query", "cursor is not a cursor of this list", {
      details: [{ field: "cursor", problem: "use pagination.next_cursor from a previous page" }],
    });
  }
  const q = blankToNull(filter.q);
  const email = blankToNull(filter.email)?.toLowerCase() ?? null;
  const username = blankToNull(filter.username)?.toLowerCase() ?? null;
  const wallet = blankToNull(filter.wallet);
  const rows = ctx.db.sqlite
    .query(
      `${SELECT_USER_WITH_PRIMARY}
       WHERE u.partner = ?1 AND u.mode = ?2
         AND (?3 IS NULL OR u.status = ?3)
         AND (?4 IS NULL OR u.external_id LIKE ?4 ESCAPE '\\' OR u.username LIKE ?4 ESCAPE '\\'
              OR u.display_name LIKE ?4 ESCAPE '\\' OR u.email LIKE ?4 ESCAPE '\\')
         AND (?5 IS NULL OR u.email = ?5)
         AND (?6 IS NULL OR u.username = ?6)
         AND (?7 IS NULL OR u.id IN (SELECT w.user_id FROM wallet_links w WHERE w.partner = ?1 AND w.mode = ?2 AND w.wallet_address = ?7))
         AND (?8 IS NULL OR u.id < ?8)
       ORDER BY u.id DESC LIMIT ?9 OFFSET ?10`,
    )
    .all(
      owner.partner,
      owner.mode,
      filter.status ?? null,
      q === null ? null : likeTerm(q),
      email,
      username,
      wallet,
      page.after,
      page.limit + 1,
      page.offset,
    ) as UserWithPrimary[];
  const p = pageOf(rows, page, (r) => r.id);
  const wallets = filter.includeWallets
    ? walletsByUser(
        ctx.db.sqlite,
        p.items.map((u) => u.id),
      )
    : null;
  return {
    count: p.count,
    users: p.items.map((u) => userView(u, wallets?.get(u.id))),
    pagination: p.pagination,
    /** The page and every filter as applied (normalised); routes echo the ones they accept. */
    query: p.query,
    applied: { status: filter.status ?? null, q, email, username, wallet, include_wallets: filter.includeWallets },
  };
}
