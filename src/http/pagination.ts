import type { TInteger, TProperties, TSchema } from "@sinclair/typebox";
import { t } from "elysia";
import { AppError, queryProblem } from "./errors/errors";
import { intQuery } from "./params";
import { named } from "./openapi/names";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
/**
 * The deepest offset a list that issues cursors pages to. An offset costs what it skips (the database reads and drops
 * that many rows: 141 ms for 500,000 ledger entries on SQLite, the whole service stalled meanwhile), a cursor costs
 * the same on every page; past this `parsePage` answers 400 offset_too_large naming the cursor.
 */
export const MAX_OFFSET = 10_000;
/**
 * The largest offset the query schemas parse. Lists paged by offset only (no cursor to page with instead) take all of
 * it; on a list with a cursor an offset above MAX_OFFSET is refused by the list's own check with a code that names the
 * cursor, rather than by the schema's generic invalid_query.
 */
export const MAX_OFFSET_PARSED = 1_000_000_000;
/** Longer than any cursor Herald issues (an id, or two or three sort-key parts of at most MAX_KEY_PART_CHARS). */
export const MAX_CURSOR_CHARS = 512;
/** The longest text part of a sort-key cursor (times are 24 characters, keys and codes at most 64). */
const MAX_KEY_PART_CHARS = 100;

/** Query fields every list route accepts; domains spread these into their own query schema. */
export const PageQuery = {
  limit: intQuery({ minimum: 1, maximum: MAX_LIMIT, defaultValue: DEFAULT_LIMIT, description: "rows per page" }),
  offset: intQuery({
    minimum: 0,
    maximum: MAX_OFFSET_PARSED,
    defaultValue: 0,
    description: `rows to skip (ignored with cursor); above ${MAX_OFFSET} it is 400 offset_too_large: page deeper with cursor (pagination.next_cursor)`,
  }),
  cursor: t.Optional(t.String({ maxLength: MAX_CURSOR_CHARS, description: "opaque next_cursor from the previous page" })),
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

/** The page a list route was asked for: by an integer id (PageRequest) or a compound sort key (KeyPageRequest). */
export interface PageRequest<K = number> {
  limit: number;
  offset: number;
  /** The sort key of the last row of the previous page, decoded from the cursor; null = start at offset. */
  after: K | null;
  cursor: string | null;
}

/** The 400 for a cursor Herald did not issue (or one that names a position the list no longer has). */
export const badCursor = () => queryProblem("cursor", "is not a cursor this service issued; use pagination.next_cursor from a previous page");

/**
 * Cursors are keyset positions (the last row's sort key), so a page boundary never shifts when rows are
 * inserted before it — unlike offsets. They are base64url JSON: opaque to clients, but not secret.
 */
export function encodeCursor(after: number): string {
  return Buffer.from(JSON.stringify({ a: after })).toString("base64url");
}

interface PageQueryValues {
  limit?: number;
  offset?: number;
  cursor?: string;
}

/** The cursor's decoded position, or the 400 for one Herald did not issue; refuses a cursor with an offset. */
function cursorPosition<P>(query: PageQueryValues, cursor: string, read: (decoded: Record<string, unknown>) => P | null): P {
  let position: P | null = null;
  try {
    const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (decoded && typeof decoded === "object" && !Array.isArray(decoded)) position = read(decoded as Record<string, unknown>);
  } catch {
    position = null;
  }
  if (position === null) throw badCursor();
  if (query.offset !== undefined && query.offset !== 0) {
    throw queryProblem("offset", "cannot be combined with cursor; a cursor already marks the position");
  }
  return position;
}

/**
 * The offset asked for (the callers page lists that issue cursors). Past MAX_OFFSET the 400's code is its own (not
 * invalid_query) so that a client can tell "page with the cursor instead" from a malformed value, and the message
 * names the cursor.
 */
function boundedOffset(query: PageQueryValues): number {
  const offset = query.offset ?? 0;
  if (offset <= MAX_OFFSET) return offset;
  const problem = `is ${offset}, past ${MAX_OFFSET}, the deepest offset this list pages to; page deeper with cursor: pass pagination.next_cursor of the previous page as cursor`;
  throw new AppError("offset_too_large", `Invalid request parameters: query.offset ${problem}`, { details: [{ field: "query.offset", problem }] });
}

/**
 * The page a list route was asked for; limit and offset were coerced and bounds-checked by PageQuery, and an offset
 * past MAX_OFFSET is refused here (offset_too_large): only lists that issue cursors use it.
 */
export function parsePage(query: PageQueryValues): PageRequest {
  // Lists paged by integer id (never negative); anything else is not a cursor we issued.
  return pageRequest(query, (d) => (Number.isSafeInteger(d.a) && (d.a as number) >= 0 ? (d.a as number) : null));
}

/** The page asked for, its cursor's position read by `read` (null: not a cursor of this list). */
function pageRequest<P>(query: PageQueryValues, read: (decoded: Record<string, unknown>) => P | null) {
  const cursor = query.cursor || null;
  const after = cursor ? cursorPosition(query, cursor, read) : null;
  return { limit: query.limit ?? DEFAULT_LIMIT, offset: after === null ? boundedOffset(query) : 0, after, cursor };
}

/**
 * Lists ordered by several columns (a start time, then a key) page by the last row's whole sort key: `shape`
 * says what each part is, so a cursor from another list (or a forged one) is refused as not issued here.
 */
export type SortKeyShape = ReadonlyArray<"text" | "integer">;
export type SortKey = ReadonlyArray<string | number>;

export type KeyPageRequest = PageRequest<SortKey>;

const fitsShape = (key: unknown, shape: SortKeyShape): key is SortKey =>
  Array.isArray(key) &&
  key.length === shape.length &&
  key.every((part, i) => (shape[i] === "integer" ? Number.isSafeInteger(part) : typeof part === "string" && part.length <= MAX_KEY_PART_CHARS));

/** parsePage for a list paged by a compound sort key (see SortKeyShape). */
export function parseKeyPage(query: PageQueryValues, shape: SortKeyShape): KeyPageRequest {
  return pageRequest(query, (d) => (fitsShape(d.k, shape) ? d.k : null));
}

/** pageOf for a list paged by a compound sort key: `keyOf` gives a row's key in the order of the list's shape. */
export function keyPageOf<R>(rows: R[], page: KeyPageRequest, keyOf: (row: R) => SortKey) {
  return shapePage(rows, page, (row) => Buffer.from(JSON.stringify({ k: keyOf(row) })).toString("base64url"));
}

/**
 * Shapes a page from rows fetched with LIMIT limit+1 (the extra row only says whether more exist).
 * `keyOf` gives the row's sort key for the next cursor; `resumeAt`, where a windowed walk goes on after a short page.
 */
export function pageOf<R>(rows: R[], page: PageRequest, keyOf: (row: R) => number, resumeAt: number | null = null) {
  const p = shapePage(rows, page, (row) => encodeCursor(keyOf(row)));
  // A filtered walk that stopped at its window (scanWindow, src/db/port.ts): a short page, more beyond it.
  if (resumeAt !== null) p.pagination = { has_more: true, next_offset: null, next_cursor: encodeCursor(resumeAt) };
  return p;
}

function shapePage<R>(rows: R[], page: PageRequest<unknown>, cursorOf: (row: R) => string) {
  const hasMore = rows.length > page.limit;
  const items = hasMore ? rows.slice(0, page.limit) : rows;
  const last = items[items.length - 1];
  return {
    items,
    count: items.length,
    pagination: {
      has_more: hasMore,
      next_offset: hasMore && page.after === null ? page.offset + items.length : null,
      next_cursor: hasMore && last !== undefined ? cursorOf(last) : null,
    },
    query: { limit: page.limit, offset: page.offset, cursor: page.cursor },
  };
}

/**
 * A page of a list paged by offset only (no cursor is issued), from rows fetched with LIMIT limit+1 OFFSET offset:
 * the extra row only says whether more exist.
 */
export function offsetPage<R>(rows: R[], limit: number, offset: number) {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  return { items, ...offsetShape(items.length, hasMore, limit, offset) };
}

/**
 * A page of a list paged by offset only whose total is counted anyway (the operators' lists show it): `has_more`
 * comes from the total instead of an extra row.
 */
export function totalPage<R>(items: R[], total: number, limit: number, offset: number) {
  return offsetShape(items.length, offset + items.length < total, limit, offset);
}

/**
 * Query fields of a list paged by offset only (no cursor is issued); domains spread these into their own query schema.
 * Its offset is not refused past MAX_OFFSET: such a list offers no other way to its older rows.
 */
export const OffsetPageQuery = {
  limit: PageQuery.limit,
  offset: intQuery({ minimum: 0, maximum: MAX_OFFSET_PARSED, defaultValue: 0, description: "rows to skip" }),
  include_meta: PageQuery.include_meta,
};

/**
 * A page of a list that is read whole and is short (the jobs, what fires now, the link targets: a few dozen rows,
 * in an order of their own rather than by a key a cursor could hold), paged by offset: the rows of the page, `total`
 * (all of them), `count`, the `query` echo and `pagination`.
 */
export function slicePage<R>(all: readonly R[], query: { limit?: number; offset?: number }) {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const offset = query.offset ?? 0;
  const items = all.slice(offset, offset + limit);
  return { items, total: all.length, ...totalPage(items, all.length, limit, offset) };
}

/** `count`, `query` and `pagination` of an offset-only page of `count` items. */
function offsetShape(count: number, hasMore: boolean, limit: number, offset: number) {
  return {
    count,
    query: { limit, offset, cursor: null },
    pagination: { has_more: hasMore, next_offset: hasMore ? offset + count : null, next_cursor: null },
  };
}

/**
 * A `query` echo: the paging fields, then the route's own filters; a filter named like a paging field replaces it
 * where it stands (a `cursor` with a description of its own), in the type as in the schema.
 */
const echoOf = <E extends TProperties, F extends TProperties>(paging: E, filters: F) => t.Object<Omit<E, keyof F> & F>({ ...paging, ...filters });

/** The `query` echo of one kind of list: its paging fields (`paging`), then the route's own filters. */
const echoWith =
  <E extends TProperties>(paging: E) =>
  <F extends TProperties>(filters: F = {} as F) =>
    echoOf(paging, filters);

/** The paging fields echoed by a list paged by cursor or offset (`pageOf`, `keyPageOf`). */
const PAGE_ECHO = { limit: t.Integer(), offset: t.Integer(), cursor: t.Union([t.String(), t.Null()]) };
/** By a list paged by offset only: `cursor` is always null (none is issued). */
const OFFSET_ECHO = { limit: t.Integer(), offset: t.Integer(), cursor: t.Null() };
/**
 * By a "latest N" view: a route that answers the newest `limit` rows and takes no offset or cursor (the status trend
 * and incidents, the latest transactions, the threshold history).
 */
const LATEST_ECHO = { limit: t.Integer(), offset: t.Literal(0), cursor: t.Null() };

export const PageQueryEcho = echoWith(PAGE_ECHO);
export const OffsetQueryEcho = echoWith(OFFSET_ECHO);
export const LatestQueryEcho = echoWith(LATEST_ECHO);

/**
 * `count`, `query` and `pagination` of a "latest N" view, from rows fetched with LIMIT limit+1: `has_more` says older rows
 * exist beyond these; such a view has no next page to ask for (next_offset and next_cursor are null).
 */
export function latestPage<R, F extends Record<string, unknown>>(rows: R[], limit: number, filters: F = {} as F) {
  const { items, count, query, pagination } = offsetPage(rows, limit, 0);
  return { items, count, query: { ...query, offset: 0 as const, ...filters }, pagination: { ...pagination, next_offset: null } };
}

/**
 * The fields of a list answer, declared once in the order every list answers them: `count`, the list's own figures
 * (`between`: a `total`, counts by state …), the items under the route's own name, the `query` echo and `pagination`
 * (spread into the route's Envelope). A `count` in `between`, or a filter named like one of the echo's own fields
 * (`cursor`), replaces that field where it stands: the way to describe it.
 */
const listFields = <K extends string, I extends TSchema, Q extends TSchema, B extends TProperties>(key: K, items: I, query: Q, between?: B) =>
  ({ count: t.Integer(), ...between, [key]: items, query, pagination: PaginationSchema }) as {
    count: TInteger;
    query: Q;
    pagination: typeof PaginationSchema;
  } & B & { [P in K]: I };

type NoFields = Record<never, never>;

/** The fields of a list answer whose `query` echo has these paging fields; see listFields. */
const answerWith =
  <E extends TProperties>(paging: E) =>
  <K extends string, I extends TSchema, F extends TProperties = NoFields, B extends TProperties = NoFields>(key: K, items: I, filters?: F, between?: B) =>
    listFields(key, items, echoOf(paging, filters ?? ({} as F)), between);

/** The fields of a list answer paged by cursor or offset (`pageOf`, `keyPageOf`). */
export const ListAnswer = answerWith(PAGE_ECHO);

/** The fields of a list answer paged by offset only (`offsetPage`, `totalPage`, `slicePage`). */
export const OffsetListAnswer = answerWith(OFFSET_ECHO);

/** The fields of a "latest N" view's answer (`latestPage`). */
export const LatestListAnswer = answerWith(LATEST_ECHO);

/**
 * The value of a list answer from a page (`pageOf`, `keyPageOf`, `totalPage` …): `count`, the list's own figures
 * (`between`), its items under `key`, `filters` echoed after the page's, and `pagination` — the order of listFields.
 * `NoInfer`: the figures' type is what the caller passed, never one read back from the route's declared answer.
 */
export function listAnswer<K extends string, T, Q extends object, P, F extends object = NoFields, B extends object = NoFields>(
  key: K,
  page: { count: number; items: T[]; query: Q; pagination: P },
  filters?: F,
  between?: B,
) {
  return { count: page.count, ...between, [key]: page.items, query: { ...page.query, ...filters }, pagination: page.pagination } as {
    count: number;
    query: Q & F;
    pagination: P;
  } & NoInfer<B> & { [X in K]: T[] };
}
