import { t } from "elysia";
import { AppError } from "./errors";
import { intQuery } from "./params";
import { named } from "./openapi-names";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
export const MAX_OFFSET = 1_000_000_000;

/** Query fields every list route accepts; domains spread these into their own query schema. */
export const PageQuery = {
  limit: intQuery({ minimum: 1, maximum: MAX_LIMIT, defaultValue: DEFAULT_LIMIT, description: "rows per page" }),
  offset: intQuery({ minimum: 0, maximum: MAX_OFFSET, defaultValue: 0, description: "rows to skip (ignored with cursor)" }),
  cursor: t.Optional(t.String({ description: "opaque next_cursor from the previous page" })),
  include_meta: t.Optional(t.String()),
};

export const PaginationSchema = named(
  "Pagination",
  t.Object({
    has_more: t.Boolean(),
    next_offset: t.Union([t.Integer(), t.Null()]),
    next_cursor: t.Union([t.String(), t.Null()]),
  }),
);

export interface PageRequest {
  limit: number;
  offset: number;
  /** The sort key of the last row of the previous page, decoded from the cursor; null = start at offset. */
  after: number | null;
  cursor: string | null;
}

const badQuery = (field: string, problem: string) => new AppError("invalid_query", `${field} ${problem}`, { details: [{ field, problem }] });

/**
 * Cursors are keyset positions (the last row's sort key), so a page boundary never shifts when rows are
 * inserted before it — unlike offsets. They are base64url JSON: opaque to clients, but not secret.
 */
export function encodeCursor(after: number): string {
  return Buffer.from(JSON.stringify({ a: after })).toString("base64url");
}

/** The page a list route was asked for; limit and offset were coerced and bounds-checked by PageQuery. */
export function parsePage(query: { limit?: number; offset?: number; cursor?: string }): PageRequest {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const offset = query.offset ?? 0;
  let after: number | null = null;
  const cursor = query.cursor || null;
  if (cursor) {
    try {
      const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { a?: unknown };
      // Every list pages by integer id; anything else is not a cursor we issued.
      if (typeof decoded.a !== "number" || !Number.isSafeInteger(decoded.a)) throw new Error("shape");
      after = decoded.a;
    } catch {
      throw badQuery("cursor", "is not a cursor this service issued; use pagination.next_cursor from a previous page");
    }
    if (query.offset !== undefined && query.offset !== 0) {
      throw badQuery("offset", "cannot be combined with cursor; a cursor already marks the position");
    }
  }
  return { limit, offset: after === null ? offset : 0, after, cursor };
}

/**
 * Shapes a page from rows fetched with LIMIT limit+1 (the extra row only says whether more exist).
 * `keyOf` gives the row's sort key for the next cursor.
 */
export function pageOf<R>(rows: R[], page: PageRequest, keyOf: (row: R) => number) {
  const hasMore = rows.length > page.limit;
  const items = hasMore ? rows.slice(0, page.limit) : rows;
  const last = items[items.length - 1];
  return {
    items,
    count: items.length,
    pagination: {
      has_more: hasMore,
      next_offset: hasMore && page.after === null ? page.offset + items.length : null,
      next_cursor: hasMore && last !== undefined ? encodeCursor(keyOf(last)) : null,
    },
    query: { limit: page.limit, offset: page.offset, cursor: page.cursor },
  };
}
