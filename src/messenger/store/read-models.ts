import { placeholders, type Queryable } from "../../db/port";

// Reads of other domains' tables, each a read model on purpose and allowed by name in
// test/conventions/layering.test.ts: the rollout checklist's mini-app traffic (request_log) and a manual grant's
// request id in the audit trail (admin_audit). Nothing here writes.

/**
 * Of the newest `scan` request-log rows in [sinceIso, untilIso), those on `routes`: how many, and how many were
 * refused with one of `codes`.
 */
export async function refusalsOnRoutes(
  q: Queryable,
  w: { sinceIso: string; untilIso: string; scan: number },
  routes: readonly string[],
  codes: readonly string[],
): Promise<{ total: number; refused: number }> {
  const r = await q.get<{ total: number; refused: number }>(
    `SELECT COUNT(*) AS total, count(*) FILTER (WHERE error_code IN (${placeholders(codes.length)})) AS refused
     FROM (SELECT route, error_code FROM request_log WHERE at >= ? AND at < ? ORDER BY at DESC LIMIT ?) recent
     WHERE route IN (${placeholders(routes.length)})`,
    [...codes, w.sinceIso, w.untilIso, w.scan, ...routes],
  );
  return r ?? { total: 0, refused: 0 };
}

/**
 * The targets of audit rows of `action` other than `exceptTarget` whose details carry this request_id. The details
 * are JSON text: LIKE narrows the rows (its `_` and case rules may let a few more through) and TypeScript compares
 * the parsed value exactly — no JSON function is common to both engines.
 */
export async function auditTargetsWithRequestId(q: Queryable, action: string, requestId: string, exceptTarget: string): Promise<string[]> {
  const pattern = `%"request_id":${JSON.stringify(requestId).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await q.all<{ target: string | null; details: string | null }>(
    "SELECT target, details FROM admin_audit WHERE action = ? AND target <> ? AND details LIKE ? ESCAPE '\\'",
    [action, exceptTarget, pattern],
  );
  return rows.filter((r) => r.details !== null && (JSON.parse(r.details) as { request_id?: unknown }).request_id === requestId).map((r) => r.target ?? "");
}
