import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { formatUnits } from "../../chain/service";
import { schemaView } from "../../http/schema-view";
import { AuditRunSchema } from "./audit-model";
import { ANOMALY_TYPES, type AnomalyType, SEVERITIES, type Severity } from "../audit/glossary";
import { completeRunBefore, completeRunOfDay, getRun, type RunRow } from "../store/runs";
import { storedThresholds, thresholdsView } from "../operator-inputs/thresholds";

// Audit runs as the reports read them: one row each with its precomputed aggregates, and the run selectors
// (a run id, latest, previous, a UTC date) every route with run, run_a or run_b accepts. The SQL is in
// ../store/runs.ts.

export type { RunRow };
/** What a run parameter selected: the selector as given (or its fallback) and the run it names. */
export type Selected = { selector: string; run: RunRow | null };

export type Selector = { kind: "id"; id: number } | { kind: "latest" } | { kind: "previous" } | { kind: "date"; day: string };

const badSelector = (field: string, raw: string) => {
  const problem = `must be a run id, latest, previous or a UTC date (YYYY-MM-DD); got ${JSON.stringify(raw.slice(0, 40))}`;
  return new AppError("invalid_query", `${field} ${problem}`, { details: [{ field, problem }] });
};

/** Parses a selector; a malformed one is a 400 naming the parameter. */
export function parseSelector(raw: string, field: string): Selector {
  const v = raw.trim();
  if (v === "latest" || v === "previous") return { kind: v };
  if (/^[1-9]\d{0,15}$/.test(v) && Number(v) <= Number.MAX_SAFE_INTEGER) return { kind: "id", id: Number(v) };
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (m) {
    const d = new Date(`${v}T00:00:00Z`);
    if (!Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v) return { kind: "date", day: v };
  }
  throw badSelector(field, raw);
}

export async function runOf(ctx: AppContext, s: Selector): Promise<RunRow | null> {
  switch (s.kind) {
    case "id":
      return getRun(ctx.store, s.id);
    case "latest":
      return completeRunBefore(ctx.store, null);
    case "previous": {
      const latest = await completeRunBefore(ctx.store, null);
      return latest ? completeRunBefore(ctx.store, latest.id) : null;
    }
    case "date":
      return completeRunOfDay(ctx.store, s.day);
  }
}

/**
 * The run for a query parameter. Absent: the fallback selector, and null when it names nothing yet (a new
 * deployment). Given: the run it names, or 404 run_not_found.
 */
export async function selectRun(ctx: AppContext, raw: string | undefined, field: string, fallback: "latest" | "previous" = "latest"): Promise<Selected> {
  if (raw === undefined || raw === "") return { selector: fallback, run: await runOf(ctx, { kind: fallback }) };
  const run = await runOf(ctx, parseSelector(raw, field));
  if (!run)
    throw new AppError(
      "run_not_found",
      `${field}=${JSON.stringify(raw.slice(0, 40))} names no ${raw === "latest" || raw === "previous" || /-/.test(raw) ? "complete " : ""}audit run`,
      { details: [{ field, problem: "names no audit run" }] },
    );
  return { selector: raw.trim(), run };
}

export const parseCounts = <K extends string>(text: string) => JSON.parse(text) as Record<K, number>;

const everyKey = <K extends string>(keys: readonly K[], counts: Partial<Record<K, number>>): Record<K, number> =>
  Object.fromEntries(keys.map((k) => [k, counts[k] ?? 0])) as Record<K, number>;

/** A run as runs.json and summary.json show it. */
export function runView(r: RunRow, selectedId: number | null) {
  return schemaView(AuditRunSchema, r, {
    run: r.id,
    is_complete: r.is_complete === 1,
    is_selected: r.id === selectedId,
    overall: r.is_complete === 1 ? r.overall : null,
    max_abs_delta: formatUnits(BigInt(r.max_abs_delta_raw), r.decimals),
    // Every key, zero when absent: a run that crashed or is still running has stored none.
    severity_counts: everyKey(SEVERITIES, parseCounts<Severity>(r.severity_counts)),
    type_counts: everyKey(ANOMALY_TYPES, parseCounts<AnomalyType>(r.type_counts)),
    thresholds: thresholdsView(storedThresholds(r.thresholds)),
  });
}
