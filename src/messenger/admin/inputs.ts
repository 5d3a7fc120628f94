// What the games-configuration verbs share: the refusal that names a field, instants normalised to one ISO form
// (so windows compare as text), and offset pages.
import { AppError } from "../../http/errors";

export const badField = (field: string, problem: string) => new AppError("invalid_payload", `${field} ${problem}`, { details: [{ field, problem }] });

/**
 * An ISO 8601 instant as Herald stores it (`2026-01-01T00:00:00.000Z`). Years 2000–9999 only: the stored form must
 * keep its length for text comparison, and nothing earlier is a real campaign date.
 */
export function isoOrThrow(raw: string, field: string): string {
  const ms = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(ms)) throw badField(field, "must be an ISO 8601 UTC time such as 2026-01-01T00:00:00Z");
  const iso = new Date(ms).toISOString();
  if (iso < "2000-01-01" || iso >= "9999") throw badField(field, "must be between the years 2000 and 9998");
  return iso;
}

export interface Page {
  limit: number;
  offset: number;
}

export const pageFrom = (q: { limit?: number; offset?: number }): Page => ({ limit: q.limit ?? 50, offset: q.offset ?? 0 });

/** A page from rows fetched with LIMIT limit+1: the extra row only says whether more exist. */
export function paged<R>(rows: R[], page: Page) {
  const hasMore = rows.length > page.limit;
  const items = hasMore ? rows.slice(0, page.limit) : rows;
  return {
    items,
    count: items.length,
    pagination: { limit: page.limit, offset: page.offset, has_more: hasMore, next_offset: hasMore ? page.offset + items.length : null },
  };
}
