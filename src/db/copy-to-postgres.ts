import { Database } from "bun:sqlite";
import { countOf, type Param } from "./port";
import { parentsFirst } from "./postgres-ddl";
import type { PostgresStore } from "./postgres-engine";

// Copies an SQLite database (Herald's file) into a PostgreSQL database migrated to the same schema
// (`herald migrate-to-postgres`). Generic over the tables the file has — no domain's knowledge: every table in
// foreign-key order (parents before children), in batches by rowid, each batch one INSERT … ON CONFLICT DO
// NOTHING in one transaction. A table's progress is recorded in the target (herald_copy_progress) in the same
// transaction as its batch, so a copy interrupted by a crash resumes where it stopped. Identity sequences are moved
// past the copied ids at the end. A copy made and checked is recorded as finished (herald_copy_completed): running
// the command again copies nothing and says so, whatever the instances have written since.

/** The SQLite tables that are the file's own bookkeeping, never copied. */
const SKIPPED = new Set(["__drizzle_migrations", "sqlite_sequence", "sqlite_stat1"]);

export interface TablePlan {
  name: string;
  columns: string[];
  rows: number;
}

/** Every table of the file in foreign-key order, with the columns both databases have. */
export async function copyPlan(source: Database, target: PostgresStore): Promise<TablePlan[]> {
  const names = (
    source.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>
  )
    .map((r) => r.name)
    .filter((n) => !SKIPPED.has(n));
  const parentsOf = (n: string) => (source.query(`PRAGMA foreign_key_list("${n}")`).all() as Array<{ table: string }>).map((f) => f.table);
  const ordered = parentsFirst(names, parentsOf);
  const plans: TablePlan[] = [];
  for (const name of ordered) {
    const here = (source.query(`PRAGMA table_info("${name}")`).all() as Array<{ name: string }>).map((c) => c.name);
    const there = new Set(
      (
        await target.all<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ?", [name])
      ).map((c) => c.column_name),
    );
    if (there.size === 0) throw new Error(`the target has no table ${name}: is it migrated to this Herald's version?`);
    const missing = here.filter((c) => !there.has(c));
    if (missing.length) throw new Error(`the target's ${name} lacks column(s) ${missing.join(", ")}: run the same Herald version on both`);
    const rows = (source.query(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n;
    plans.push({ name, columns: here, rows });
  }
  return plans;
}

const PROGRESS_DDL = `CREATE TABLE IF NOT EXISTS herald_copy_progress (
  table_name text PRIMARY KEY, last_rowid bigint NOT NULL, copied bigint NOT NULL, done integer NOT NULL, source text NOT NULL)`;

// Written once a copy has been made and checked: which file, when, and how many rows each table held then. A later
// run compares the tables with it to tell a finished move (nothing to do) from one the instances have moved on from
// (rows written since: nothing to copy, and the source no longer the measure of the target).
const COMPLETED_DDL = `CREATE TABLE IF NOT EXISTS herald_copy_completed (
  source text PRIMARY KEY, completed_at text NOT NULL, source_rows bigint NOT NULL, target_rows text NOT NULL)`;

/** A finished copy into the target. */
export interface CompletedCopy {
  source: string;
  /** When its check passed; null for a copy finished before this was recorded (every table's progress done). */
  completedAt: string | null;
  sourceRows: number;
  /** Each table's row count in the target when the copy was finished. */
  targetRows: Record<string, number>;
}

export interface CopyState {
  /** The source recorded by an earlier (interrupted or finished) copy into this target, or null. */
  source: string | null;
  /** Rows in the target's tables outside the copy's own bookkeeping. */
  rowsPresent: number;
  /** Each planned table's row count in the target now. */
  counts: Record<string, number>;
  /** A finished copy, if the target holds one. */
  completed: CompletedCopy | null;
}

/** What the target holds already: an earlier copy's progress or completion, and its rows. */
export async function copyState(target: PostgresStore, plans: TablePlan[]): Promise<CopyState> {
  await target.run(PROGRESS_DDL);
  await target.run(COMPLETED_DDL);
  const source = (await target.get<{ source: string }>("SELECT source FROM herald_copy_progress LIMIT 1"))?.source ?? null;
  const counts: Record<string, number> = {};
  let rowsPresent = 0;
  for (const p of plans) {
    counts[p.name] = await countOf(target, `SELECT count(*) AS n FROM "${p.name}"`);
    // The one row migrations write themselves (the key-version counter) is not data.
    if (p.name !== "partner_keys_version") rowsPresent += counts[p.name]!;
  }
  return { source, rowsPresent, counts, completed: await completedCopy(target, plans) };
}

async function completedCopy(target: PostgresStore, plans: TablePlan[]): Promise<CompletedCopy | null> {
  const row = await target.get<{ source: string; completed_at: string; source_rows: number; target_rows: string }>(
    "SELECT source, completed_at, source_rows, target_rows FROM herald_copy_completed ORDER BY completed_at DESC LIMIT 1",
  );
  if (row) return { source: row.source, completedAt: row.completed_at, sourceRows: row.source_rows, targetRows: JSON.parse(row.target_rows) };
  // A copy finished by an earlier Herald, which recorded only each table's progress: finished when every table is.
  const progress = await target.all<{ table_name: string; copied: number; done: number; source: string }>(
    "SELECT table_name, copied, done, source FROM herald_copy_progress",
  );
  const byTable = new Map(progress.map((r) => [r.table_name, r]));
  if (!progress.length || !plans.every((p) => byTable.get(p.name)?.done === 1)) return null;
  const targetRows = Object.fromEntries(plans.map((p) => [p.name, byTable.get(p.name)!.copied]));
  return { source: progress[0]!.source, completedAt: null, sourceRows: progress.reduce((n, r) => n + r.copied, 0), targetRows };
}

/** Records a copy as finished and checked (see COMPLETED_DDL). */
export async function recordCompletion(target: PostgresStore, sourceId: string, nowIso: string, sourceRows: number, counts: Record<string, number>) {
  await target.run(
    `INSERT INTO herald_copy_completed (source, completed_at, source_rows, target_rows) VALUES (?, ?, ?, ?)
     ON CONFLICT (source) DO UPDATE SET completed_at = excluded.completed_at, source_rows = excluded.source_rows, target_rows = excluded.target_rows`,
    [sourceId, nowIso, sourceRows, JSON.stringify(counts)],
  );
}

/** Rows the target gained and lost since a finished copy, table by table (the instances' writes, the prune jobs). */
export function changesSince(done: CompletedCopy, counts: Record<string, number>): { newer: number; fewer: number; tables: string[] } {
  let newer = 0;
  let fewer = 0;
  const tables: string[] = [];
  for (const [name, now] of Object.entries(counts)) {
    const then = done.targetRows[name] ?? 0;
    if (now > then) newer += now - then;
    if (now < then) fewer += then - now;
    if (now !== then) tables.push(name);
  }
  return { newer, fewer, tables };
}

export interface Progress {
  table: string;
  copied: number;
  /** Of `copied`, the rows this run copied: a resumed copy's rate is theirs, not the earlier run's too. */
  now: number;
  total: number;
}

/** Stands for U+0000 (NUL) in copied text: PostgreSQL's text cannot hold NUL, SQLite's can. */
export const NUL_REPLACEMENT = "\uFFFD";

/**
 * Copies `plan.name` from rowid `after` on, `batch` rows a transaction; calls `onBatch` after each. Rows the target
 * has already (same primary key) are left alone, so a resumed copy never doubles one. A text value holding U+0000
 * (which SQLite stores and PostgreSQL refuses) is copied with U+FFFD in its place — as Herald stores unpaired
 * surrogates — and counted in `replaced` by "table.column", for the command to report.
 */
export async function copyTable(
  source: Database,
  target: PostgresStore,
  plan: TablePlan,
  sourceId: string,
  batch: number,
  onBatch: (p: Progress) => void,
  replaced: Map<string, number> = new Map(),
): Promise<{ copied: number; now: number }> {
  const state = await target.get<{ last_rowid: number; copied: number; done: number }>(
    "SELECT last_rowid, copied, done FROM herald_copy_progress WHERE table_name = ?",
    [plan.name],
  );
  if (state?.done) return { copied: state.copied, now: 0 };
  let after = state?.last_rowid ?? 0;
  let copied = state?.copied ?? 0;
  // Rows this run copied (a resumed copy starts after the rows an earlier run copied).
  let now = 0;
  const cols = plan.columns.map((c) => `"${c}"`).join(", ");
  // PostgreSQL takes at most 65,535 parameters in a statement: a wide table gets smaller batches.
  batch = Math.max(1, Math.min(batch, Math.floor(60_000 / plan.columns.length)));
  const read = source.query(`SELECT rowid AS herald_rowid, ${cols} FROM "${plan.name}" WHERE rowid > ? ORDER BY rowid LIMIT ?`);
  for (;;) {
    const rows = read.all(after, batch) as Array<Record<string, unknown>>;
    if (rows.length === 0) break;
    const values = rows.map(() => `(${plan.columns.map(() => "?").join(", ")})`).join(", ");
    const params: Param[] = [];
    for (const r of rows) {
      for (const c of plan.columns) {
        const v = r[c];
        if (typeof v === "string" && v.includes("\u0000")) {
          params.push(v.replaceAll("\u0000", NUL_REPLACEMENT));
          const at = `${plan.name}.${c}`;
          replaced.set(at, (replaced.get(at) ?? 0) + 1);
        } else params.push(v as Param);
      }
    }
    const last = rows[rows.length - 1]!.herald_rowid as number;
    await target.tx(async (t) => {
      await t.run(`INSERT INTO "${plan.name}" (${cols}) VALUES ${values} ON CONFLICT DO NOTHING`, params);
      await t.run(
        `INSERT INTO herald_copy_progress (table_name, last_rowid, copied, done, source) VALUES (?, ?, ?, 0, ?)
         ON CONFLICT (table_name) DO UPDATE SET last_rowid = excluded.last_rowid, copied = excluded.copied`,
        [plan.name, last, copied + rows.length, sourceId],
      );
    });
    after = last;
    copied += rows.length;
    now += rows.length;
    onBatch({ table: plan.name, copied, now, total: plan.rows });
  }
  await target.run(
    `INSERT INTO herald_copy_progress (table_name, last_rowid, copied, done, source) VALUES (?, ?, ?, 1, ?)
     ON CONFLICT (table_name) DO UPDATE SET done = 1, copied = excluded.copied`,
    [plan.name, after, copied, sourceId],
  );
  return { copied, now };
}

/** Moves every identity sequence past the largest id copied, so the next row the service writes gets a new id. */
export async function resetSequences(target: PostgresStore): Promise<void> {
  const identities = await target.all<{ table_name: string; column_name: string }>(
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES'",
  );
  for (const c of identities) {
    await target.get(
      `SELECT setval(pg_get_serial_sequence(?, ?), GREATEST((SELECT COALESCE(max("${c.column_name}"), 0) FROM "${c.table_name}"), 1), (SELECT count(*) > 0 FROM "${c.table_name}"))`,
      [c.table_name, c.column_name],
    );
  }
}

/** A read-only connection to the SQLite file being copied. */
export type SourceDatabase = Database;

/** Opens the source file read-only (a running server may be writing it: stop it first, see the command's help). */
export function openSource(path: string): Database {
  return new Database(path, { readonly: true, strict: true });
}
