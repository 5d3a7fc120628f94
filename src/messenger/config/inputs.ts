// What the games-configuration verbs share: the refusal that names a field, instants normalised to one ISO form
// (so windows compare as text), and list pages.
import { parseCalendarStrict } from "../../clock";
import { AppError } from "../../http/errors/errors";
import { type KeyPageRequest, keyPageOf, type parseKeyPage, type SortKey } from "../../http/pagination";

type NoFields = Record<never, never>;

export const badField = (field: string, problem: string) => new AppError("invalid_payload", `${field} ${problem}`, { details: [{ field, problem }] });

/**
 * An ISO 8601 instant as Herald stores it (`2026-01-01T00:00:00.000Z`). Years 2000–9999 only: the stored form must
 * keep its length for text comparison, and nothing earlier is a real campaign date.
 */
export function isoOrThrow(raw: string, field: string): string {
  const ms = parseCalendarStrict(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(ms)) throw badField(field, "must be an ISO 8601 UTC time such as 2026-01-01T00:00:00Z");
  const iso = new Date(ms).toISOString();
  if (iso < "2000-01-01" || iso >= "9999") throw badField(field, "must be between the years 2000 and 9998");
  return iso;
}

/** limit, offset and cursor as the list route's query schema (AdminPageQuery) checked them. */
export type PageInput = Parameters<typeof parseKeyPage>[0];

/**
 * A page from rows fetched with LIMIT limit+1 (the extra row only says whether more exist), its cursor the last row's
 * whole sort key (AdminPageQuery says why), with the applied limit and offset in `pagination` (MessengerAdminPage).
 */
export function paged<R>(rows: R[], page: KeyPageRequest, keyOf: (row: R) => SortKey) {
  const p = keyPageOf(rows, page, keyOf);
  return { items: p.items, count: p.count, pagination: { limit: page.limit, offset: page.offset, ...p.pagination }, query: p.query };
}

/**
 * The value of an AdminListAnswer (model.ts: its fields and their order) from a page (`paged`, `keyPageOf`, `offsetPage`).
 * `NoInfer`: the figures' type is what the caller passed, never one read back from the route's declared answer.
 */
export function adminListAnswer<K extends string, T, Q extends object, P, F extends object = NoFields, B extends object = NoFields>(
  key: K,
  page: { count: number; items: T[]; query: Q; pagination: P },
  filters?: F,
  between?: B,
) {
  return { [key]: page.items, count: page.count, ...between, pagination: page.pagination, query: { ...page.query, ...filters } } as {
    [X in K]: T[];
  } & { count: number } & NoInfer<B> & { pagination: P; query: Q & F };
}
