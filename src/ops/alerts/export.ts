import { sha256Hex } from "../../auth/admin";
import { strToU8, zipSync } from "fflate";
import type { AppContext } from "../../context";
import { csvTable } from "../../http/formats/csv";
import { columnsOf } from "../csv-columns";
import { AlertRow, OpsAlertRunSummary } from "./model";
import { type AlertRunFilter, type AlertRunRow, listAlertRuns, type RunSummary, runsOfPage, summarizeRuns } from "./service";

// The alerts-monitor exports: export.json (paged rows), runs/export (one CSV line per run) and export.zip (the whole
// window, with manifest.json naming each file's bytes and sha256; fflate writes a CRC-32 per entry).

/** The most alert rows runs/export and export.zip carry: about a year of 15-minute runs of ~20 alerts is more. */
export const EXPORT_MAX_ROWS = 50_000;

/** alerts.csv: one record per alert row; details as its JSON text, null as an empty cell. */
export const alertsCsv = (rows: AlertRunRow[]) =>
  csvTable(
    rows.map((r) => ({ ...r, details: r.details === null ? null : JSON.stringify(r.details) })),
    columnsOf(AlertRow),
  );

export const runsCsv = (runs: RunSummary[]) => csvTable(runs, columnsOf(OpsAlertRunSummary));

/** export.json: one page of alert rows and the runs they belong to. */
export async function alertsExport(ctx: AppContext, f: AlertRunFilter) {
  const page = await listAlertRuns(ctx, f);
  return {
    generated_at: ctx.clock.now().toISOString(),
    window: { ...page.window, days: f.days },
    query: { days: f.days, source: f.source, status: f.status, limit: f.limit, offset: f.offset, cursor: null },
    count: page.rows.length,
    total: page.total,
    alerts: page.rows,
    // The page's runs, each whole (a run the page cuts is not relabelled by the part on this page).
    runs: await runsOfPage(ctx, page),
    pagination: page.pagination,
  };
}

/** Every run of the window (up to EXPORT_MAX_ROWS alert rows), newest first. */
export async function windowRuns(ctx: AppContext, f: Omit<AlertRunFilter, "limit" | "offset">) {
  return summarizeRuns((await listAlertRuns(ctx, { ...f, limit: EXPORT_MAX_ROWS, offset: 0 })).rows);
}

export const exportStamp = (ctx: AppContext) => ctx.clock.now().toISOString().slice(0, 16).replace(/[-:]/g, "");

/** export.zip: the window's artifacts and a manifest of their sizes and sha256, as one ZIP archive. */
export async function alertsZip(ctx: AppContext, f: Omit<AlertRunFilter, "limit" | "offset">): Promise<Uint8Array> {
  const json = await alertsExport(ctx, { ...f, limit: EXPORT_MAX_ROWS, offset: 0 });
  const files: Array<[string, Uint8Array]> = [
    ["alerts.json", strToU8(`${JSON.stringify({ success: true, ...json }, null, 2)}\n`)],
    ["alerts.csv", strToU8(alertsCsv(json.alerts))],
    ["runs.csv", strToU8(runsCsv(json.runs))],
  ];
  const manifest = {
    generated_at: json.generated_at,
    window: json.window,
    query: { days: f.days, source: f.source, status: f.status },
    files: files.map(([name, bytes]) => ({ name, bytes: bytes.byteLength, sha256: sha256Hex(bytes) })),
  };
  const mtime = ctx.clock.now();
  const entries: Record<string, [Uint8Array, { mtime: Date }]> = {};
  for (const [name, bytes] of [...files, ["manifest.json", strToU8(`${JSON.stringify(manifest, null, 2)}\n`)] as [string, Uint8Array]]) {
    entries[name] = [bytes, { mtime }];
  }
  return zipSync(entries, { level: 6 });
}
