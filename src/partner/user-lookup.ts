import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { queryProblem } from "../http/errors/errors";
import { pageOf, type PageRequest } from "../http/pagination";
import { listUserRows } from "./store/users";
import type { UsersModel } from "./users-model";
import { userView } from "./users-service";
import { walletsByUser } from "./wallets-service";

/** The lookup's filters (q a substring, the others exact; email and username are stored lower-cased). */
export type UserFilter = Partial<Pick<typeof UsersModel.lookupQuery.static, "status" | "q" | "email" | "username" | "wallet">> & { includeWallets: boolean };

const blankToNull = (s: string | undefined) => (s === undefined || s.trim() === "" ? null : s.trim());

/**
 * GET /users and GET /user-lookup: this owner's users, newest first, keyset-paged by id. Only the filters given
 * reach the statement (listUserRows), so that each exact one finds its rows down its index; a q search looks through
 * a bounded window of users a page, so its page can be short with `has_more` (follow `next_cursor`).
 */
export async function listUsers(ctx: AppContext, owner: Owner, filter: UserFilter, page: PageRequest) {
  if (page.after !== null && typeof page.after !== "number") {
    throw queryProblem("cursor", "is not a cursor of this list; use pagination.next_cursor from a previous page");
  }
  const q = blankToNull(filter.q);
  const email = blankToNull(filter.email)?.toLowerCase() ?? null;
  const username = blankToNull(filter.username)?.toLowerCase() ?? null;
  const wallet = blankToNull(filter.wallet);
  const { rows, resumeAt } = await listUserRows(ctx.store, owner, {
    status: filter.status ?? null,
    q,
    email,
    username,
    wallet,
    afterId: page.after,
    limit: page.limit + 1,
    offset: page.offset,
  });
  const p = pageOf(rows, page, (r) => r.id, resumeAt);
  const ids = p.items.map((u) => u.id);
  const wallets = filter.includeWallets ? await walletsByUser(ctx.store, ids) : null;
  return {
    count: p.count,
    items: p.items.map((u) => userView(u, wallets?.get(u.id))),
    pagination: p.pagination,
    /** The page and every filter as applied (normalised); routes echo the ones they accept. */
    query: p.query,
    applied: { status: filter.status ?? null, q, email, username, wallet, include_wallets: filter.includeWallets },
  };
}
