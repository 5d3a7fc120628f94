import type { AppContext } from "../../context";
import { formatUnits } from "../../chain/service";
import { csvRecords } from "../../http/formats/csv";
import { ExportRowSchema } from "./audit-model";
import { rowConditions, type RowFilters } from "./filters";
import { severityOfRank } from "../audit/glossary";
import type { RunRow } from "./runs";
import { jsonPage, PAGE, type RawRow, rowsPage } from "../store/exports";

// export.json and export (CSV): the rows of the selected runs, streamed page by page (keyset on (run, id) through
// audit_rows_run_idx), pulled: the next page is read only when the client has taken the previous one.
// export.json's pages are written by the database itself (../store/exports.ts): one string and one buffer per page
// and no per-row JS objects or strings, which is what kept the heap growing past the 50 MB budget for a million
// rows (bench/README.md). The envelope is fixed; `count` comes last.

/**
 * Every this many pages the stream asks the collector for a concurrent pass (Bun.gc(false) does not block).
 * Each page leaves ~0.5 MB of row objects and strings behind; left to its own pacing the collector let a
 * million-row export grow the heap by ~60 MB before collecting, against the 50 MB budget (bench/README.md).
 */
const GC_EVERY_PAGES = 16;
const encoder = new TextEncoder();

/** The export's columns, in order: the row schema's fields (the JSON rows and the registry's row_schema). */
export const EXPORT_COLUMNS = Object.keys(ExportRowSchema.properties) as Array<keyof typeof ExportRowSchema.properties>;

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
async function* pages(ctx: AppContext, runs: RunRow[], filters: RowFilters): AsyncGenerator<ExportRow[]> {
  let served = 0;
  for (const run of runs) {
    const c = rowConditions(filters, run.decimals);
    let after = 0;
    for (;;) {
      const rows = await rowsPage(ctx.store, run.id, after, c);
      if (rows.length === 0) break;
      yield rows.map((r) => exportRowOf(r, run.decimals));
      if (++served % GC_EVERY_PAGES === 0) Bun.gc(false);
      after = rows[rows.length - 1]!.id;
      if (rows.length < PAGE) break;
    }
  }
}

/** A pull stream: a page is read when the consumer asks for the next chunk (highWaterMark 0: none ahead). */
function streamOf(chunks: AsyncGenerator<string | Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(typeof next.value === "string" ? encoder.encode(next.value) : next.value);
      },
      async cancel() {
        await chunks.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/** A raw control character: JSON text must escape it, and the SQL that writes a page does not (store/exports.ts). */
const CONTROL = /[\u0000-\u001f]/;

/** export.json's rows as byte pages: `[,]row,row,…` per page (a comma before every page after the first), and the count. */
async function* jsonPages(ctx: AppContext, runs: RunRow[], filters: RowFilters, counter: { count: number }): AsyncGenerator<Uint8Array | string> {
  for (const run of runs) {
    const c = rowConditions(filters, run.decimals);
    let after = 0;
    for (;;) {
      const page = await jsonPage(ctx.store, run.id, run.decimals, after, c);
      if (page.n === 0 || page.chunk === null) break;
      if (counter.count > 0) yield ",";
      counter.count += page.n;
      // Never in practice (signatures are base58, times ISO-8601): a page whose text holds a control character is
      // written again row by row, so the answer stays valid JSON whatever a row holds.
      yield CONTROL.test(page.chunk)
        ? (await rowsPage(ctx.store, run.id, after, c)).map((r) => JSON.stringify(exportRowOf(r, run.decimals))).join(",")
        : encoder.encode(page.chunk);
      after = page.last!;
      if (page.n < PAGE) break;
    }
  }
}

/** `{"success":true,<head fields>,"rows":[…],"count":N}` as a stream. */
export function exportJsonStream(ctx: AppContext, head: Record<string, unknown>, runs: RunRow[], filters: RowFilters): ReadableStream<Uint8Array> {
  async function* chunks(): AsyncGenerator<string | Uint8Array> {
    const open = JSON.stringify({ success: true, ...head });
    yield `${open.slice(0, -1)},"rows":[`;
    const counter = { count: 0 };
    yield* jsonPages(ctx, runs, filters, counter);
    yield `],"count":${counter.count}}`;
  }
  return streamOf(chunks());
}

/** RFC 4180 CSV (src/http/formats/csv.ts) as a stream: a header, then one record per row. */
export function exportCsvStream(ctx: AppContext, runs: RunRow[], filters: RowFilters): ReadableStream<Uint8Array> {
  async function* chunks(): AsyncGenerator<string> {
    yield csvRecords([[...EXPORT_COLUMNS]]);
    for await (const page of pages(ctx, runs, filters)) yield csvRecords(page.map(exportCells));
  }
  return streamOf(chunks());
}
