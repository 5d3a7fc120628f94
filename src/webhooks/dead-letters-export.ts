import { apartTask } from "../db/apart";
import { columnTable, csvTableInSlices } from "../http/formats/csv";
import { type OperatorFilter, type OperatorRow, operatorDeadLetterRows } from "./deliveries-store";

// The dead-letters console's exports (JSON and CSV, src/webhooks/dead-letters-page.ts): one row shape for both, and
// the CSV written whole in the read worker. The CSV is up to 10,000 rows: at 10M rows its reads took ~280 ms (the
// rows and the count over every dead letter) and csv-stringify ~65 ms more, all of it on the event loop; in the
// worker, only the text crosses back (a string is copied at once; 10,000 row objects took ~15 ms to clone). This
// file imports nothing of Elysia's, so the read worker stays small.

/**
 * A dead letter as the exports give it (JSON and CSV: the same keys, in this order), each read from its delivery row:
 * `dead_since` is its last change (when it was dead-lettered).
 */
export const { columns: EXPORT_COLUMNS, rowOf: exportRowOf } = columnTable({
  delivery_id: (r: OperatorRow) => r.id,
  partner: (r: OperatorRow) => r.partner,
  mode: (r: OperatorRow) => r.mode,
  event_id: (r: OperatorRow) => r.event_public_id,
  event_type: (r: OperatorRow) => r.event_type,
  webhook_id: (r: OperatorRow) => r.webhook_id,
  attempts: (r: OperatorRow) => r.attempts,
  last_status_code: (r: OperatorRow) => r.last_status_code,
  last_error: (r: OperatorRow) => r.last_error,
  reason_tag: (r: OperatorRow) => r.reason_tag,
  target_url: (r: OperatorRow) => r.target_url,
  created_at: (r: OperatorRow) => r.created_at,
  dead_since: (r: OperatorRow) => r.updated_at,
});

/**
 * The newest `limit` dead letters matching the filter as CSV (RFC 4180, header row), written in the read worker on
 * SQLite; on PostgreSQL, where a task runs on the event loop, a slice at a time.
 */
export const deadLettersCsvTask = apartTask("dead-letters-csv", async (q, a: { filter: OperatorFilter; limit: number }) => {
  const rows = await operatorDeadLetterRows(q, a.filter, { before: null, limit: a.limit, offset: 0 });
  return csvTableInSlices(rows.map(exportRowOf), EXPORT_COLUMNS);
});
