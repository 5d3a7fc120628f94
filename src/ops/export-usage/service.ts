import type { AppContext } from "../../context";
import { csvTable } from "../../http/formats/csv";
import { insertUsage, type UsageRow, usageBetween } from "./store";

// Export usage (ops_export_usage): one row per download of an operator-console export — who (the admin actor
// label), which (the route template), when, how many bytes of body, and how: `export` for a direct download
// (recorded by the hook in src/ops/export-usage/recorder.ts), `token` for a link-inbox download token (recorded
// by the link inbox through recordExportUsage). Read back per UTC day and export for the usage exports and charts.

export const USAGE_SOURCES = ["export", "token"] as const;
export type UsageSource = (typeof USAGE_SOURCES)[number];
export type UsageSourceFilter = "all" | UsageSource;

export type ExportUsageInput = Omit<UsageRow, "id" | "at" | "source"> & { source: UsageSource; at?: string };

/** Records one download. Cheap (one INSERT): only export downloads call it, never ordinary routes. */
export async function recordExportUsage(ctx: Pick<AppContext, "store" | "clock">, u: ExportUsageInput): Promise<void> {
  const bytes = Number.isFinite(u.bytes) && u.bytes > 0 ? Math.floor(u.bytes) : 0;
  await insertUsage(ctx.store, {
    at: u.at ?? ctx.clock.now().toISOString(),
    actor: u.actor.slice(0, 200),
    export: u.export.slice(0, 300),
    bytes,
    source: u.source,
  });
}

export type UsageReport = Awaited<ReturnType<typeof exportUsage>>;

const DAY_MS = 86_400_000;
const dayOf = (iso: string) => iso.slice(0, 10);

/**
 * Usage in the last `days` UTC days (from 00:00 of the first), one row per (day, export) ordered by day then export;
 * `series` has every day of the window (zeros included) for the charts.
 */
export async function exportUsage(ctx: AppContext, days: number, source: UsageSourceFilter) {
  const now = ctx.clock.now();
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const from = new Date(today - (days - 1) * DAY_MS).toISOString();
  const to = now.toISOString();
  const raw = await usageBetween(ctx.store, from, to, source);

  // One group per (day, export); `who` becomes its sorted operators (the admin actor labels) and their count.
  const groups = new Map<string, { day: string; export: string; downloads: number; bytes: number; who: Set<string> }>();
  const series = new Map(
    Array.from({ length: days }, (_, i) => {
      const day = dayOf(new Date(today - (days - 1 - i) * DAY_MS).toISOString());
      return [day, { day, downloads: 0, export_downloads: 0, token_downloads: 0, bytes: 0 }];
    }),
  );
  for (const r of raw) {
    const day = dayOf(r.at);
    const key = `${day}\u0000${r.export}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { day, export: r.export, downloads: 0, bytes: 0, who: new Set() }));
    g.downloads++;
    g.bytes += r.bytes;
    g.who.add(r.actor);
    const s = series.get(day);
    if (s) {
      s.downloads++;
      s.bytes += r.bytes;
      if (r.source === "token") s.token_downloads++;
      else s.export_downloads++;
    }
  }
  const rows = [...groups.values()]
    .map(({ who, ...g }) => ({ ...g, actors: who.size, operators: [...who].sort() }))
    .sort((a, b) => (a.day === b.day ? (a.export < b.export ? -1 : 1) : a.day < b.day ? -1 : 1));
  return {
    generated_at: to,
    window: { from, to, days },
    query: { days, source },
    count: rows.length,
    rows,
    series: [...series.values()],
    totals: {
      downloads: raw.length,
      bytes: raw.reduce((n, r) => n + r.bytes, 0),
      actors: new Set(raw.map((r) => r.actor)).size,
      exports: new Set(raw.map((r) => r.export)).size,
    },
  };
}

export const USAGE_CSV_COLUMNS = ["day", "export", "downloads", "bytes", "actors", "operators"] as const;

/** export-usage.csv: the JSON's rows, the same columns (operators joined by a space), RFC 4180 by src/http/formats/csv.ts. */
const joined = (row: UsageReport["rows"][number]) => ({ ...row, operators: row.operators.join(" ") });
export const usageCsv = (r: UsageReport) => csvTable(r.rows.map(joined), USAGE_CSV_COLUMNS);
