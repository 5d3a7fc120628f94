// The query-plan guard (docs/storage-port.md "The query-plan guard"): the plan of every distinct statement Herald's
// code sent during the suite (test/support/statement-log.ts), on a migrated database of one engine, refused when it
// reads the whole of a table that grows (test/support/growing-tables.ts) unless the allow-list says why that read is
// bounded. .ci/query-plans.ts runs it on the suite's log in CI; test/db/query-plan-guard.test.ts plants statements.
//
// SQLite plans without statistics (Herald's file has none: nothing runs ANALYZE) and takes every table to be large,
// so a `SCAN t` in its plan means no index serves the statement. PostgreSQL picks a Seq Scan on any small table
// whatever its indexes, so the plan is read after `SET LOCAL enable_seqscan = off` (test/support/query-plans.ts): a
// Seq Scan that survives that means no index can serve it. A walk of a whole index (SQLite `SCAN t USING INDEX`, a
// PostgreSQL index scan with no Index Cond, or with one on a later column than the index's first: PostgreSQL 15 has
// no skip scan) is a full read too unless the statement stops at a LIMIT: with one it is a warning (the walk ends at
// the page's end when the filter keeps most rows).
import type { Dialect, Param, Queryable } from "../../src/db/port";
import { ALLOWED, type Allowed, GROWING } from "./growing-tables";
import { sentBySource, shapeOf } from "./statement-log";

export interface Candidate {
  sql: string;
  params: readonly Param[];
  /** Who sent it, nearest first (`src/salutes/store/ledger.ts:88`); the guard judges what src/ sent. */
  stack: readonly string[];
}

/** A statement's plan lines on the guard's database (SQLite's `detail` column, PostgreSQL's QUERY PLAN lines). */
export type Planner = (sql: string, params: readonly Param[]) => Promise<string[]>;

export interface GuardOptions {
  engine: Dialect;
  /** Default: GROWING's tables. */
  growing?: readonly string[];
  /** Default: ALLOWED. */
  allowed?: readonly Allowed[];
  /** The schema's indexes (`indexesOf`): a walk of a partial one is no full read; on PostgreSQL, a condition on a later column than the first is. */
  indexes?: ReadonlyMap<string, IndexInfo>;
  /** The statements are a whole suite's: an allow-list entry that matches none of them is stale (reported). */
  complete: boolean;
}

export interface Finding {
  sql: string;
  table: string;
  /** The plan line that reads the whole table (or sorts), and the whole plan. */
  line: string;
  plan: string[];
  from: readonly string[];
}

export interface GuardReport {
  engine: Dialect;
  /** Distinct statements (by shape) in, and how many had their plan read. */
  distinct: number;
  examined: number;
  /** Statements sent only by tests' own code (seeds, checks), and by the migration runner: not judged. */
  byTests: number;
  migrations: number;
  fullReads: Finding[];
  allowed: Array<Finding & { reason: string }>;
  /** Warnings: a sort of every row found, a whole-index walk that a LIMIT may stop. */
  warnings: Array<Finding & { why: string }>;
  stale: Allowed[];
  /** Statements whose plan could not be read (a SQLite-only fragment planned on PostgreSQL, a parameter lost). */
  errors: Array<{ sql: string; error: string; from: readonly string[] }>;
}

const MIGRATION = /^src\/db\/(postgres-)?migrate\.ts:/;
const EXAMINED_HEADS = new Set(["SELECT", "WITH", "UPDATE", "DELETE", "INSERT"]);

/** Whether a statement is one whose plan can read a table: a read, an update, a delete, an INSERT … SELECT. */
export function plannable(sql: string): boolean {
  const head = /^\s*\(?\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? "";
  if (!EXAMINED_HEADS.has(head)) return false;
  return head !== "INSERT" || /\bSELECT\b/i.test(sql);
}

/** The growing tables a statement names. */
export function growingNamed(sql: string, growing: ReadonlySet<string>): string[] {
  const words = new Set(sql.match(/\w+/g) ?? []);
  return [...growing].filter((t) => words.has(t));
}

const NOT_ALIAS =
  /^(WHERE|JOIN|INNER|LEFT|RIGHT|FULL|CROSS|OUTER|ON|USING|SET|ORDER|GROUP|LIMIT|OFFSET|HAVING|UNION|EXCEPT|INTERSECT|VALUES|SELECT|RETURNING|FOR|WINDOW|AS|NATURAL|DEFAULT|INDEXED|NOT)$/i;

/** alias → tables, from `FROM t a`, `JOIN t AS a`, `UPDATE t a` (SQLite's plan names a table by its alias). */
export function aliasesOf(sql: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (alias: string, table: string) => {
    let s = out.get(alias);
    if (!s) out.set(alias, (s = new Set()));
    s.add(table);
  };
  for (const m of sql.matchAll(/\b(?:FROM|JOIN|UPDATE|INTO)\s+"?(\w+)"?(?:\s+(?:AS\s+)?"?(\w+)"?)?/gi)) {
    add(m[1]!, m[1]!);
    if (m[2] && !NOT_ALIAS.test(m[2])) add(m[2], m[1]!);
  }
  return out;
}

/** An index of the schema: its table, its columns in order, and whether it is partial (`indexesOf`). */
export interface IndexInfo {
  table: string;
  columns: string[];
  /** A partial index holds only the rows its WHERE names: walking all of it reads those rows, not the table. */
  partial: boolean;
}

/** The schema's indexes, to tell a scan down an index's leading column from a walk of all of it. */
export async function indexesOf(q: Queryable): Promise<Map<string, IndexInfo>> {
  const rows =
    q.dialect === "sqlite"
      ? await q.all<{ name: string; table: string; def: string }>(
          "SELECT name, tbl_name AS \"table\", sql AS def FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL",
        )
      : await q.all<{ name: string; table: string; def: string }>(
          'SELECT indexname AS name, tablename AS "table", indexdef AS def FROM pg_indexes WHERE schemaname = current_schema()',
        );
  const out = new Map<string, IndexInfo>();
  for (const r of rows) {
    const list = /\((.*?)\)(?:\s+WHERE\s.*)?$/is.exec(r.def)?.[1] ?? "";
    const columns = list.split(",").map(
      (c) =>
        c
          .trim()
          .replace(/^[`"]|[`"]$/g, "")
          .split(/[`"\s(]/)[0]!,
    );
    out.set(r.name, { table: r.table, columns, partial: /\)\s+WHERE\s/is.test(r.def) });
  }
  return out;
}

interface Read {
  table: string;
  line: string;
  /** A walk of a whole index, which a LIMIT may stop (not a plain table scan). */
  indexWalk: boolean;
}

/** The plan lines that read a whole growing table, on either engine. */
export function wholeReads(
  engine: Dialect,
  sql: string,
  plan: readonly string[],
  growing: ReadonlySet<string>,
  indexes?: ReadonlyMap<string, IndexInfo>,
): Read[] {
  const reads: Read[] = [];
  if (engine === "sqlite") {
    const aliases = aliasesOf(sql);
    for (const line of plan) {
      const m = /^SCAN (\w+)(.*)$/.exec(line);
      if (!m) continue;
      const tables = growing.has(m[1]!) ? [m[1]!] : [...(aliases.get(m[1]!) ?? [])].filter((t) => growing.has(t));
      const index = /USING (?:COVERING )?INDEX (\w+)/.exec(m[2]!)?.[1];
      if (index && indexes?.get(index)?.partial) continue;
      const indexWalk = index !== undefined;
      for (const table of new Set(tables)) reads.push({ table, line, indexWalk });
    }
    return reads;
  }
  plan.forEach((line, i) => {
    const seq = /Seq Scan on "?(\w+)"?/.exec(line);
    if (seq && growing.has(seq[1]!)) reads.push({ table: seq[1]!, line: line.trim(), indexWalk: false });
    const scan = /Index (?:Only )?Scan(?: Backward)? using "?(\w+)"? on "?(\w+)"?/.exec(line);
    const bitmap = /Bitmap Index Scan on "?(\w+)"?/.exec(line);
    const index = scan?.[1] ?? bitmap?.[1];
    const table = scan?.[2] ?? (bitmap ? indexes?.get(bitmap[1]!)?.table : undefined);
    if (!index || !table || !growing.has(table) || indexes?.get(index)?.partial) return;
    // The node's own detail lines: deeper than it, up to the next node.
    const depth = line.search(/\S/);
    let cond = "";
    for (let j = i + 1; j < plan.length; j++) {
      const next = plan[j]!;
      if (next.search(/\S/) <= depth || next.includes("->")) break;
      cond += / Index Cond: (.*)$/.exec(next)?.[1] ?? "";
    }
    // A condition on a later column of the index only (PostgreSQL 15 has no skip scan) walks all of it.
    const leading = indexes?.get(index)?.columns[0];
    const bounded = cond !== "" && (leading === undefined || new RegExp(`(^|[^\\w'])(\\w+\\.)?"?${leading}"?\\b`).test(cond.replace(/'[^']*'/g, "''")));
    if (!bounded) reads.push({ table, line: line.trim(), indexWalk: true });
  });
  return reads;
}

const spaced = (s: string) => s.replace(/\s+/g, " ").trim();

function allows(entry: Allowed, sql: string): boolean {
  return typeof entry.statement === "string" ? shapeOf(entry.statement) === shapeOf(sql) : entry.statement.test(sql) || entry.statement.test(spaced(sql));
}

/** One statement per shape, sent by src/ where any of its sightings was. */
export function distinctStatements(all: readonly Candidate[]): Candidate[] {
  const byShape = new Map<string, Candidate>();
  for (const c of all) {
    const key = shapeOf(c.sql);
    const had = byShape.get(key);
    if (!had || (!sentBySource(had.stack) && sentBySource(c.stack))) byShape.set(key, c);
  }
  return [...byShape.values()];
}

/** Reads each statement's plan and sorts what it found (see GuardReport). */
export async function guardPlans(statements: readonly Candidate[], plan: Planner, opts: GuardOptions): Promise<GuardReport> {
  const growing = new Set(opts.growing ?? Object.keys(GROWING));
  const allowed = (opts.allowed ?? ALLOWED).filter((a) => !a.engine || a.engine === opts.engine);
  const distinct = distinctStatements(statements);
  const report: GuardReport = {
    engine: opts.engine,
    distinct: distinct.length,
    examined: 0,
    byTests: 0,
    migrations: 0,
    fullReads: [],
    allowed: [],
    warnings: [],
    stale: [],
    errors: [],
  };
  for (const c of distinct) {
    if (!sentBySource(c.stack)) {
      report.byTests++;
      continue;
    }
    // A migration runs once per database, at start, in a transaction with a deadline of its own.
    if (MIGRATION.test(c.stack[0]!)) {
      report.migrations++;
      continue;
    }
    if (!plannable(c.sql) || growingNamed(c.sql, growing).length === 0) continue;
    report.examined++;
    let lines: string[];
    try {
      lines = await plan(c.sql, c.params);
    } catch (err) {
      report.errors.push({ sql: c.sql, error: String((err as Error)?.message ?? err).split("\n")[0]!, from: c.stack });
      continue;
    }
    const entry = allowed.find((a) => allows(a, c.sql));
    const limited = /\bLIMIT\b/i.test(c.sql);
    for (const read of wholeReads(opts.engine, c.sql, lines, growing, opts.indexes)) {
      const finding: Finding = { sql: c.sql, table: read.table, line: read.line, plan: lines, from: c.stack };
      if (entry) report.allowed.push({ ...finding, reason: entry.reason });
      else if (read.indexWalk && limited)
        report.warnings.push({ ...finding, why: "walks a whole index; its LIMIT stops the walk if the filter keeps most rows" });
      else report.fullReads.push(finding);
    }
    if (opts.engine === "sqlite" && !entry) {
      const sort = lines.find((l) => /USE TEMP B-TREE FOR ORDER BY/.test(l));
      if (sort)
        report.warnings.push({
          sql: c.sql,
          table: growingNamed(c.sql, growing).join(", "),
          line: sort,
          plan: lines,
          from: c.stack,
          why: "sorts every row found",
        });
    }
  }
  if (opts.complete) report.stale = allowed.filter((a) => !distinct.some((c) => allows(a, c.sql)));
  return report;
}

export const guardFailed = (r: GuardReport): boolean => r.fullReads.length > 0 || r.stale.length > 0;

const short = (sql: string, n = 600) => (spaced(sql).length > n ? `${spaced(sql).slice(0, n)} …` : spaced(sql));

/** The report as lines for a person: what fails first, each with its statement, plan line and sender. */
export function formatReport(r: GuardReport, opts: { verbose?: boolean } = {}): string[] {
  const out: string[] = [];
  const finding = (f: Finding) => [`  table ${f.table}: ${f.line}`, `    ${short(f.sql)}`, `    sent by ${f.from.join(" ← ") || "(unknown)"}`];
  if (r.fullReads.length) {
    out.push(
      `FULL READS of growing tables (${r.fullReads.length}): add an index or a bound, or allow-list the statement with why it is bounded (test/support/growing-tables.ts):`,
    );
    for (const f of r.fullReads) out.push(...finding(f));
  }
  if (r.stale.length) {
    out.push(`STALE allow-list entries (${r.stale.length}): they match no statement the suite sent; remove them (or pass --partial for a partial run):`);
    for (const a of r.stale) out.push(`  ${a.statement instanceof RegExp ? a.statement : short(a.statement)} — ${a.reason}`);
  }
  if (r.warnings.length) {
    out.push(`warnings (${r.warnings.length}, not failures):`);
    for (const w of r.warnings) out.push(`  ${w.why}:`, ...finding(w));
  }
  if (r.errors.length) {
    out.push(`plans not read (${r.errors.length}, not failures):`);
    for (const e of r.errors) out.push(`  ${e.error}`, `    ${short(e.sql, 300)}`, `    sent by ${e.from.join(" ← ")}`);
  }
  if (opts.verbose && r.allowed.length) {
    out.push(`allowed (${r.allowed.length}):`);
    for (const a of r.allowed) out.push(...finding(a), `    because: ${a.reason}`);
  }
  out.push(
    `query plans (${r.engine}): ${r.distinct} distinct statements, ${r.examined} of Herald's on growing tables planned, ${r.byTests} sent by tests only, ${r.migrations} by migrations; ` +
      `${r.fullReads.length} full reads, ${r.allowed.length} allowed, ${r.stale.length} stale entries, ${r.warnings.length} warnings, ${r.errors.length} not planned`,
  );
  return out;
}
