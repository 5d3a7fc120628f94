import type { AppContext } from "../context";
import { formatUnits } from "../chain/service";
import { csvRecords } from "../http/csv";
import { rowConditions, type RowFilters } from "./filters";
import { SEVERITIES, severityOfRank } from "./glossary";
import type { RunRow } from "./runs";

// export.json and export (CSV): the rows of the selected runs, streamed page by page (PAGE rows per SQLite read,
// keyset on (run, id) through audit_rows_run_idx), pulled: the next page is read only when the client has taken
// the previous one. export.json's pages are written by SQLite itself (json_object per row, group_concat per page,
// returned as one BLOB): one buffer per page and no per-row JS objects or strings, which is what kept the heap
// growing past the 50 MB budget for a million rows (bench/README.md). The envelope is fixed; `count` comes last.

const PAGE = 1000;
/**
 * Every this many pages the stream asks the collector for a concurrent pass (Bun.gc(false) does not block).
 * Each page leaves ~0.5 MB of row objects and strings behind; left to its own pacing the collector let a
 * million-row export grow the heap by ~60 MB before collecting, against the 50 MB budget (bench/README.md).
 */
const GC_EVERY_PAGES = 16;
const encoder = new TextEncoder();

export const EXPORT_COLUMNS = [
  "run_id",
  "signature",
  "kind",
  "slot",
  "block_time",
  "delta",
  "max_abs_delta",
  "anomaly_types",
  "severity",
  "declaration_id",
  "triage_status",
  "detail",
] as const;

interface RawRow {
  id: number;
  run_id: number;
  signature: string;
  kind: string;
  slot: number | null;
  block_time: string | null;
  delta_raw: string;
  types: string;
  severity_rank: number;
  declaration_id: number | null;
  triage: string | null;
  detail: string | null;
}

export function exportRowOf(r: RawRow, decimals: number) {
  const delta = BigInt(r.delta_raw);
  return {
    run_id: r.run_id,
    signature: r.signature,
    kind: r.kind,
    slot: r.slot,
    block_time: r.block_time,
    delta: formatUnits(delta, decimals),
    max_abs_delta: formatUnits(delta < 0n ? -delta : delta, decimals),
    anomaly_types: r.types ? r.types.split(",") : [],
    severity: severityOfRank(r.severity_rank),
    declaration_id: r.declaration_id,
    triage_status: r.triage,
    detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null,
  };
}
export type ExportRow = ReturnType<typeof exportRowOf>;

/** One CSV record of an export row: null → empty, arrays and objects → JSON text (as the other CSVs do). */
export function exportCells(row: ExportRow): Array<string | number> {
  return EXPORT_COLUMNS.map((c) => {
    const v = row[c];
    if (v === null || v === undefined) return "";
    return typeof v === "object" ? JSON.stringify(v) : v;
  });
}

/** Pages of rows of the given runs (in run order) that pass the filters. */
function* pages(ctx: AppContext, runs: RunRow[], filters: RowFilters): Generator<ExportRow[]> {
  let served = 0;
  for (const run of runs) {
    const c = rowConditions(filters, run.decimals);
    const sql = `SELECT r.id, r.run_id, r.signature, r.kind, r.slot, r.block_time, r.delta_raw, r.types, r.severity_rank, r.declaration_id, r.detail, t.status AS triage
      FROM audit_rows r LEFT JOIN audit_triage t ON t.signature = r.signature
      WHERE r.run_id = ? AND r.id > ?${c.sql} ORDER BY r.id LIMIT ${PAGE}`;
    const statement = ctx.db.sqlite.prepare(sql);
    let after = 0;
    for (;;) {
      const rows = statement.all(run.id, after, ...c.params) as RawRow[];
      if (rows.length === 0) break;
      yield rows.map((r) => exportRowOf(r, run.decimals));
      if (++served % GC_EVERY_PAGES === 0) Bun.gc(false);
      after = rows[rows.length - 1]!.id;
      if (rows.length < PAGE) break;
    }
    statement.finalize();
  }
}

/** A pull stream: a page is read when the consumer asks for the next chunk (highWaterMark 0: none ahead). */
function streamOf(chunks: Generator<string | Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const next = chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(typeof next.value === "string" ? encoder.encode(next.value) : next.value);
      },
      cancel() {
        chunks.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * A decimal string of raw units in SQL, exactly as formatUnits writes it, from audit_rows.abs_key (|raw| as 40
 * zero-padded digits) and the sign of delta_raw: whole part without leading zeros ("0" when empty), fraction
 * without trailing zeros (no point when empty).
 */
function sqlUnits(decimals: number, signed: boolean): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 30) throw new Error(`unexpected decimals ${decimals}`);
  const whole = `coalesce(nullif(ltrim(substr(r.abs_key, 1, ${40 - decimals}), '0'), ''), '0')`;
  const frac = decimals ? `rtrim(substr(r.abs_key, ${41 - decimals}), '0')` : "''";
  const sign = signed ? "(CASE WHEN substr(r.delta_raw, 1, 1) = '-' THEN '-' ELSE '' END) || " : "";
  return `${sign}${whole} || (CASE WHEN ${frac} = '' THEN '' ELSE '.' || ${frac} END)`;
}

/** One export row as JSON text, built by SQLite: the same keys, order and values as JSON.stringify(exportRowOf(r)). */
function sqlRowJson(decimals: number): string {
  const severity = `CASE r.severity_rank ${SEVERITIES.map((s, i) => `WHEN ${i + 1} THEN '${s}'`).join(" ")} END`;
  return `json_object('run_id', r.run_id, 'signature', r.signature, 'kind', r.kind, 'slot', r.slot, 'block_time', r.block_time,
    'delta', ${sqlUnits(decimals, true)}, 'max_abs_delta', ${sqlUnits(decimals, false)},
    'anomaly_types', CASE WHEN r.types = '' THEN json_array() ELSE json('["' || replace(r.types, ',', '","') || '"]') END,
    'severity', ${severity}, 'declaration_id', r.declaration_id, 'triage_status', t.status, 'detail', json(r.detail))`;
}

/** export.json's rows as byte pages: `[,]row,row,…` per page (a leading comma after the first), and the count. */
function* jsonPages(ctx: AppContext, runs: RunRow[], filters: RowFilters, counter: { count: number }): Generator<Uint8Array> {
  for (const run of runs) {
    const c = rowConditions(filters, run.decimals);
    const statement = ctx.db.sqlite.prepare(
      `SELECT CAST((CASE WHEN ? THEN ',' ELSE '' END) || group_concat(j, ',' ORDER BY id) AS BLOB) AS chunk, count(*) AS n, max(id) AS last
       FROM (SELECT r.id, ${sqlRowJson(run.decimals)} AS j
             FROM audit_rows r LEFT JOIN audit_triage t ON t.signature = r.signature
             WHERE r.run_id = ? AND r.id > ?${c.sql} ORDER BY r.id LIMIT ${PAGE})`,
    );
    let after = 0;
    try {
      for (;;) {
        const page = statement.get(counter.count > 0 ? 1 : 0, run.id, after, ...c.params) as { chunk: Uint8Array | null; n: number; last: number | null };
        if (page.n === 0 || page.chunk === null) break;
        counter.count += page.n;
        yield page.chunk;
        after = page.last!;
        if (page.n < PAGE) break;
      }
    } finally {
      statement.finalize();
    }
  }
}

/** `{"success":true,<head fields>,"rows":[…],"count":N}` as a stream. */
export function exportJsonStream(ctx: AppContext, head: Record<string, unknown>, runs: RunRow[], filters: RowFilters): ReadableStream<Uint8Array> {
  function* chunks(): Generator<string | Uint8Array> {
    const open = JSON.stringify({ success: true, ...head });
    yield `${open.slice(0, -1)},"rows":[`;
    const counter = { count: 0 };
    yield* jsonPages(ctx, runs, filters, counter);
    yield `],"count":${counter.count}}`;
  }
  return streamOf(chunks());
}

/** RFC 4180 CSV (src/http/csv.ts) as a stream: a header, then one record per row. */
export function exportCsvStream(ctx: AppContext, runs: RunRow[], filters: RowFilters): ReadableStream<Uint8Array> {
  function* chunks(): Generator<string> {
    yield csvRecords([[...EXPORT_COLUMNS]]);
    for (const page of pages(ctx, runs, filters)) yield csvRecords(page.map(exportCells));
  }
  return streamOf(chunks());
}
