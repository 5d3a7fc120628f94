import type { Owner } from "../../auth/actors";
import { IN_KEY_LIST } from "../../db/batched-delete";
import { changed, type Dialect, type Queryable, scanWindow, UniqueViolation, Where } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { partnerUsers } from "../tables";

// partner_users: the only SQL that touches it (docs/design.md §8a). Every query names the owner (partner + mode).

export type UserRow = Omit<RowOf<typeof partnerUsers>, "mode" | "status"> & { mode: "sandbox" | "live"; status: "active" | "suspended" };
export type UserWithPrimary = UserRow & { primary_wallet: string | null };

const BY_OWNER_ID = "SELECT * FROM partner_users WHERE id = ? AND partner = ? AND mode = ?";

export const userOf = (q: Queryable, owner: Owner, id: number) => q.get<UserRow>(BY_OWNER_ID, [id, owner.partner, owner.mode]);

export const SELECT_USER_WITH_PRIMARY = `SELECT u.*, (SELECT w.wallet_address FROM wallet_links w WHERE w.user_id = u.id AND w.is_primary = 1) AS primary_wallet FROM partner_users u`;

export const userWithPrimary = (q: Queryable, id: number) => q.get<UserWithPrimary>(`${SELECT_USER_WITH_PRIMARY} WHERE u.id = ?`, [id]);

export async function externalIdHolder(q: Queryable, owner: Owner, externalId: string): Promise<number | null> {
  return (
    (await q.get<{ id: number }>("SELECT id FROM partner_users WHERE partner = ? AND mode = ? AND external_id = ?", [owner.partner, owner.mode, externalId]))
      ?.id ?? null
  );
}

export async function usernameHolder(q: Queryable, owner: Owner, username: string, exceptUserId: number | null): Promise<number | null> {
  const row = await q.get<{ id: number }>("SELECT id FROM partner_users WHERE partner = ? AND mode = ? AND username = ? AND id <> ?", [
    owner.partner,
    owner.mode,
    username,
    exceptUserId ?? 0,
  ]);
  return row?.id ?? null;
}

export async function insertUser(
  q: Queryable,
  owner: Owner,
  u: Pick<UserRow, "external_id" | "username" | "display_name" | "email" | "status" | "is_verified"> & { at: string },
): Promise<UserRow> {
  return (await q.get<UserRow>(
    `INSERT INTO partner_users (partner, mode, external_id, username, display_name, email, status, is_verified, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [owner.partner, owner.mode, u.external_id, u.username, u.display_name, u.email, u.status, u.is_verified, u.at, u.at],
  ))!;
}

export const PATCHABLE = ["username", "display_name", "email", "status", "is_verified"] as const;
export type Patchable = (typeof PATCHABLE)[number];

/** Sets the named fields (names from PATCHABLE only, never from a request) and updated_at. */
export async function updateUserFields(q: Queryable, id: number, fields: Patchable[], values: Partial<Record<Patchable, string | number | null>>, at: string) {
  for (const f of fields) if (!PATCHABLE.includes(f)) throw new Error(`not a patchable field: ${f}`);
  const sets = fields.map((f) => `${f} = ?`).join(", ");
  await q.run(`UPDATE partner_users SET ${sets}, updated_at = ? WHERE id = ?`, [...fields.map((f) => values[f] ?? null), at, id]);
}

/**
 * Takes the user's row lock for the rest of the transaction `t`, so changes to one user's wallets (who is primary)
 * run one after another on every engine: a no-op UPDATE locks the row on PostgreSQL (SELECT … FOR UPDATE is not
 * SQLite), and SQLite's writer is single already. False when the row is gone (a sandbox reset deleted the user
 * after the caller read it): nothing is locked then.
 */
export async function lockUser(t: Queryable, id: number): Promise<boolean> {
  return changed(t, "UPDATE partner_users SET updated_at = updated_at WHERE id = ?", [id]);
}

export async function touchUser(q: Queryable, id: number, at: string): Promise<void> {
  await q.run("UPDATE partner_users SET updated_at = ? WHERE id = ?", [at, id]);
}

export interface UserListFilter {
  status: string | null;
  /** A substring to find in any case in external_id, username, display_name or email. */
  q: string | null;
  email: string | null;
  username: string | null;
  wallet: string | null;
  afterId: number | null;
  limit: number;
  offset: number;
}

/**
 * This owner's users, newest first, with only the filters that are set in the WHERE: a `(? IS NULL OR u.email = ?)`
 * clause cannot use an index (the planner chooses one plan for every value of the parameter), so a lookup by email
 * walked all of the owner's users. Each exact filter finds its rows down an index: email partner_users_email_idx,
 * username partner_users_username_idx, wallet wallet_links_owner_wallet_idx, status partner_users_status_idx; with
 * none, the list walks the owner's users newest first down partner_users_owner_idx and stops at the page's end.
 *
 * `q` is a substring in any case (`anyCaseContains`), which no index holds: without an exact filter but status, a
 * page looks through at most SCAN_WINDOW users from where it starts (`scanWindow`), and `resumeAt` is where the next
 * page starts when the window ended before the owner's users did (the page may be short, even empty).
 */
export async function listUserRows(q: Queryable, owner: Owner, f: UserListFilter): Promise<{ rows: UserWithPrimary[]; resumeAt: number | null }> {
  const search = f.q === null ? null : anyCaseContains(q.dialect, f.q);
  const contains = (column: string) => `u.${column} ${search?.test}`;
  const w = new Where()
    .add("u.partner = ? AND u.mode = ?", owner.partner, owner.mode)
    .when(f.status, "u.status = ?")
    .when(search?.pattern ?? null, `(${["external_id", "username", "display_name", "email"].map(contains).join(" OR ")})`, 4)
    .when(f.email, "u.email = ?")
    .when(f.username, "u.username = ?");
  if (f.wallet !== null) {
    w.add("u.id IN (SELECT w.user_id FROM wallet_links w WHERE w.partner = ? AND w.mode = ? AND w.wallet_address = ?)", owner.partner, owner.mode, f.wallet);
  }
  w.when(f.afterId, "u.id < ?");
  const windowed = search !== null && f.email === null && f.username === null && f.wallet === null;
  const scope = new Where().add("partner = ? AND mode = ?", owner.partner, owner.mode).when(f.status, "status = ?").when(f.afterId, "id < ?");
  const win = windowed ? await scanWindow(q, "partner_users", scope) : null;
  if (win && win.edge !== null) w.add(`u.id ${win.bound}`, win.edge);
  const rows = await q.all<UserWithPrimary>(`${SELECT_USER_WITH_PRIMARY} ${w.sql} ORDER BY u.id DESC LIMIT ? OFFSET ?`, [...w.params, f.limit, f.offset]);
  return { rows, resumeAt: (await win?.resumeAt(rows.length < f.limit)) ?? null };
}

/**
 * How to find `term` anywhere in a column, in any case, in every script; its characters are literal (a partner
 * cannot use wildcards to enumerate). An ASCII term: LIKE on SQLite (which folds ASCII letters itself), ILIKE on
 * PostgreSQL. Any other: each letter becomes the class of its cases (`[Ää]`), for GLOB on SQLite and a regular
 * expression (`~`) on PostgreSQL. lower() would not do: SQLite's folds ASCII letters only (a stored "Иван" or "Ädam"
 * was never found), PostgreSQL's follows the database's locale. A q matching none of an owner's 100,000 users, over
 * HTTP on SQLite (medians of 7, bench/README.md): lower(column) LIKE before, 55–79 ms; LIKE now, 36–37 ms; the classes
 * of a non-ASCII term, 75 ms.
 */
export function anyCaseContains(dialect: Dialect, term: string): { test: string; pattern: string } {
  const sqlite = dialect === "sqlite";
  if ([...term].every((c) => c.charCodeAt(0) < 128)) {
    return { test: `${sqlite ? "LIKE" : "ILIKE"} ? ESCAPE '\\'`, pattern: `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%` };
  }
  let out = "";
  for (const c of term) {
    const cases = [...new Set([c, c.toLowerCase(), c.toUpperCase()])].filter((v) => [...v].length === 1);
    if (cases.length > 1) out += `[${cases.join("")}]`;
    else if (sqlite) out += "*?[".includes(c) ? `[${c}]` : c;
    else out += /[\\^$.|?*+()[\]{}]/.test(c) ? `\\${c}` : c;
  }
  return sqlite ? { test: "GLOB ?", pattern: `*${out}*` } : { test: "~ ?", pattern: out };
}

/** Which rule a unique index of users and wallets enforces, on either engine (SQLite names the columns, PostgreSQL the index). */
export function violatedRule(err: unknown): "external_id" | "username" | "wallet" | null {
  if (!(err instanceof UniqueViolation)) return null;
  const c = err.constraint;
  if (c === "partner_users_external_idx" || c.includes("partner_users.external_id")) return "external_id";
  if (c === "partner_users_username_idx" || c.includes("partner_users.username")) return "username";
  if (c === "wallet_links_owner_address_idx" || c.startsWith("wallet_links.partner")) return "wallet";
  return null;
}

// ---- the sandbox reset (see src/partner/sandbox-service.ts), children before parents. Every statement names
// mode = 'sandbox' as a LITERAL on its own line: whatever partner or ids it is handed, it cannot touch a live row.

/** What remains of the partner's sandbox wallets and users, in the reset's transaction, down the (partner, mode) indexes. */
export const SANDBOX_DELETES = [
  ["wallet_links", "DELETE FROM wallet_links WHERE partner = ? AND mode = 'sandbox'"],
  ["partner_users", "DELETE FROM partner_users WHERE partner = ? AND mode = 'sandbox'"],
] as const;

/** The bulk of the partner's sandbox wallets, in batches before the reset's transaction, down wallet_links_owner_wallet_idx. */
export const sandboxWalletsBatch = (partner: string) => ({
  table: "wallet_links" as const,
  where: "partner = ? AND mode = 'sandbox'",
  params: [partner],
});

/** The partner's sandbox users after `afterId`, in id order, `limit` of them down partner_users_owner_idx: the reset walks them. */
export async function sandboxUserIdsAfter(q: Queryable, partner: string, afterId: number, limit: number): Promise<number[]> {
  const rows = await q.all<{ id: number }>("SELECT id FROM partner_users WHERE partner = ? AND mode = 'sandbox' AND id > ? ORDER BY id LIMIT ?", [
    partner,
    afterId,
    limit,
  ]);
  return rows.map((r) => r.id);
}

/** Every sandbox user of the partner, in the reset's transaction: after its batches, the fixture users and those made meanwhile. */
export async function sandboxUserIds(q: Queryable, partner: string): Promise<number[]> {
  return (await q.all<{ id: number }>("SELECT id FROM partner_users WHERE partner = ? AND mode = 'sandbox' ORDER BY id", [partner])).map((r) => r.id);
}

/**
 * These sandbox users and what remains of their wallets, by id (ONE parameter, IN_KEY_LIST), in a transaction of the
 * reset. SQLite may take the owner's index for the wallets rather than wallet_links_user_idx: after the wallets'
 * batches (sandboxWalletsBatch) it holds only those written meanwhile.
 */
export const sandboxDeletesOf = (dialect: Dialect, partner: string, userIds: readonly number[]) => {
  const list = IN_KEY_LIST[dialect];
  return {
    params: [list.encode(userIds), partner],
    deletes: [
      ["wallet_links", `DELETE FROM wallet_links WHERE user_id ${list.sql} AND partner = ? AND mode = 'sandbox'`],
      ["partner_users", `DELETE FROM partner_users WHERE id ${list.sql} AND partner = ? AND mode = 'sandbox'`],
    ] as const,
  };
};
