import { existsSync, realpathSync, statSync } from "node:fs";
import type { Config } from "../config";
import {
  changesSince,
  type CompletedCopy,
  type CopyState,
  copyPlan,
  copyState,
  copyTable,
  openSource,
  type Progress,
  recordCompletion,
  resetSequences,
  type SourceDatabase,
  type TablePlan,
} from "../db/copy-to-postgres";
import { countOf } from "../db/port";
import { PostgresStore } from "../db/postgres-engine";
import { migratePostgres } from "../db/postgres-migrate";
import { flagString, type ParsedArgs, UsageError } from "./args";
import { emit } from "./output";

export const MIGRATE_TO_POSTGRES_HELP = `herald migrate-to-postgres — copy a SQLite database into PostgreSQL

Usage: herald migrate-to-postgres [--from FILE] [--to postgres://…] [--batch N] [--force] [--json]

  --from FILE   the SQLite file (default HERALD_DB_PATH); stop the server that writes it first, or copy a backup
                (herald backup) — rows written during the copy would be left behind
  --to URL      the PostgreSQL database (default DATABASE_URL); its migrations are applied first
  --batch N     rows per transaction (100–10000, default 1000)
  --force       copy into a database that already holds rows (rows with the same key are kept, not replaced)

Tables are copied in foreign-key order, in batches, with a progress line (rows/s, ETA) on stderr. An interrupted
copy (a crash, Ctrl-C) resumes where it stopped when run again with the same --from. Afterwards it checks that every
table has the source's row count and that every salutes balance equals the sum of its ledger on both sides and
agrees between them, and records the move as finished. Run again over a finished move, it copies nothing and says
so ("already migrated"): a target unchanged since is checked again; one the instances have written to since is
reported as moved on (its newer rows counted) and only its own balances are checked. A text value holding U+0000
(NUL), which SQLite stores and PostgreSQL's text cannot, is copied with U+FFFD in its place; the summary counts them
by table and column (nul_replaced).

Exit: 0 copied and checked, or this file's move already finished (nothing copied); 1 a check failed; 2 refused
(usage, a target holding rows no copy of this file put there, an unfinished copy of another file); 3 the target
holds a finished move from another file (nothing copied). docs/postgres.md, "Moving".`;

const BALANCE_CHECK = `SELECT b.user_id, b.balance_minor, (SELECT COALESCE(SUM(l.delta_minor), 0) FROM salutes_ledger l WHERE l.user_id = b.user_id) AS total
  FROM salutes_balances b ORDER BY b.user_id`;

interface Balance {
  user_id: number;
  balance_minor: number;
  total: number;
}

/**
 * The salutes ledger's invariant on both sides, and the same balances on both: the problems found. Without a source
 * (a target in use since the copy, whose balances have moved on), the target's invariant alone.
 */
async function checkBalances(source: SourceDatabase | null, target: PostgresStore): Promise<string[]> {
  const here = source ? (source.query(BALANCE_CHECK).all() as Balance[]) : [];
  const there = await target.all<Balance>(BALANCE_CHECK);
  const problems: string[] = [];
  for (const [side, rows] of [
    ["source", here],
    ["target", there],
  ] as const) {
    const off = rows.filter((r) => r.balance_minor !== r.total);
    if (off.length) problems.push(`${off.length} ${side} balance(s) differ from the sum of their ledger (user ${off[0]!.user_id} first)`);
  }
  if (!source) return problems;
  const byUser = new Map(there.map((r) => [r.user_id, r.balance_minor]));
  const differ = here.filter((r) => byUser.get(r.user_id) !== r.balance_minor);
  if (differ.length) problems.push(`${differ.length} balance(s) differ between source and target (user ${differ[0]!.user_id} first)`);
  return problems;
}

/** One progress line: on a terminal rewritten in place, else one line every few seconds. */
function progressReporter(json: boolean) {
  const tty = process.stderr.isTTY === true;
  let lastLine = 0;
  let started = performance.now();
  return {
    table(p: TablePlan) {
      started = performance.now();
      if (!json) process.stderr.write(`${p.name}: ${p.rows.toLocaleString("en-US")} rows\n`);
    },
    batch(p: Progress) {
      const now = performance.now();
      if (!tty && now - lastLine < 5_000 && p.copied < p.total) return;
      lastLine = now;
      const rate = p.now / Math.max(0.001, (now - started) / 1000);
      const eta = rate > 0 ? Math.ceil((p.total - p.copied) / rate) : 0;
      const pct = p.total ? Math.min(100, Math.floor((p.copied * 100) / p.total)) : 100;
      const bar = "#".repeat(Math.floor(pct / 5)).padEnd(20, ".");
      const line = `  [${bar}] ${p.copied.toLocaleString("en-US")}/${p.total.toLocaleString("en-US")} rows  ${Math.round(rate).toLocaleString("en-US")} rows/s  ETA ${eta} s`;
      process.stderr.write(tty ? `\r${line}` : `${line}\n`);
    },
    done() {
      if (tty) process.stderr.write("\n");
    },
  };
}

/** Exit code when the target holds a finished move from another file: nothing copied (0 is this file's move, done). */
export const MIGRATED_ELSEWHERE_EXIT = 3;

const whenOf = (done: CompletedCopy) => (done.completedAt ? `on ${done.completedAt}` : "by an earlier run");

/**
 * A run over a finished move of this file: nothing is copied. A target unchanged since is checked again as the first
 * run checked it; one the instances have written to since is no longer the source's copy (balances moved, rows
 * added and pruned), so only its own invariant is checked, and the report says how far it has moved on.
 */
async function alreadyMigrated(
  source: SourceDatabase,
  target: PostgresStore,
  plans: TablePlan[],
  state: CopyState,
  done: CompletedCopy,
  json: boolean,
  nowIso: string,
): Promise<number> {
  const sourceRows = plans.reduce((n, p) => n + p.rows, 0);
  const since = changesSince(done, state.counts);
  const sourceChanged = sourceRows !== done.sourceRows;
  const problems: string[] = [];
  let checked: string;
  if (since.tables.length === 0 && !sourceChanged) {
    // Against the counts recorded when the move was checked (a --force move adds to other rows); a move finished by
    // an older Herald recorded none, so against the source's.
    for (const p of plans)
      if (state.counts[p.name] !== (done.completedAt ? (done.targetRows[p.name] ?? 0) : p.rows))
        problems.push(`${p.name}: ${p.rows.toLocaleString("en-US")} rows in the source, ${(state.counts[p.name] ?? 0).toLocaleString("en-US")} in the target`);
    problems.push(...(await checkBalances(source, target)));
    // A copy finished by an earlier Herald may have stopped before its sequences moved; setting them again is a no-op.
    await resetSequences(target);
    if (!problems.length && !done.completedAt) await recordCompletion(target, done.source, nowIso, sourceRows, state.counts);
    checked = "checked again: every table's row count, and every salutes balance = Σ its ledger on both sides";
  } else {
    problems.push(...(await checkBalances(null, target)));
    checked = "checked: every salutes balance = Σ its ledger in the target (the source is no longer its measure)";
  }
  const n = (x: number) => x.toLocaleString("en-US");
  const moved = since.tables.length
    ? `the target has moved on since (it is in use): ${n(since.newer)} newer rows${since.fewer ? `, ${n(since.fewer)} fewer` : ""} in ${since.tables.length} tables (${since.tables.slice(0, 4).join(", ")}${since.tables.length > 4 ? ", …" : ""})`
    : "the target has not changed since";
  emit(
    json,
    {
      success: problems.length === 0,
      already_migrated: true,
      from: done.source,
      completed_at: done.completedAt,
      tables: plans.length,
      rows: sourceRows,
      copied_now: 0,
      target_changes: since,
      source_rows_at_copy: done.sourceRows,
      problems,
    },
    () =>
      [
        `already migrated: ${done.source} was copied into this database ${whenOf(done)} (${n(done.sourceRows)} rows); nothing copied`,
        moved,
        ...(sourceChanged
          ? [`the source has changed since (${n(done.sourceRows)} rows then, ${n(sourceRows)} now): what was written to it after the copy is not copied`]
          : []),
        problems.length ? `CHECK FAILED:\n  ${problems.join("\n  ")}` : checked,
      ].join("\n"),
  );
  return problems.length ? 1 : 0;
}

export async function migrateToPostgresCommand(config: Config, args: ParsedArgs, json: boolean, nowIso: string): Promise<number> {
  const from = flagString(args, "from") ?? config.dbPath;
  const to = flagString(args, "to") ?? config.database.url;
  const batchRaw = flagString(args, "batch");
  const force = args.flags.force === true;
  if (args.positionals.length) throw new UsageError(`migrate-to-postgres takes no positional arguments (got ${args.positionals.join(" ")})`);
  if (!to || !/^postgres(ql)?:\/\//.test(to)) throw new UsageError("--to must be a postgres:// URL (or set DATABASE_URL)");
  if (!existsSync(from) || !statSync(from).isFile()) throw new UsageError(`--from: no SQLite file at ${from}`);
  if (batchRaw !== undefined && !/^\d{3,5}$/.test(batchRaw)) throw new UsageError("--batch must be a whole number from 100 to 10000");
  const batch = batchRaw === undefined ? 1000 : Number(batchRaw);
  if (batch < 100 || batch > 10_000) throw new UsageError("--batch must be a whole number from 100 to 10000");
  const sourceId = realpathSync(from);

  const source = openSource(from);
  // A one-off copy, not a request: its statements and batches get the server's five minutes, not the request deadlines.
  const target = new PostgresStore({ url: to, poolMax: 2, statementTimeoutMs: 300_000, queryTimeoutMs: 300_000, transactionTimeoutMs: 300_000 });
  try {
    await target.ping();
    await migratePostgres(target, nowIso);
    const plans = await copyPlan(source, target);
    const state = await copyState(target, plans);
    const sourceRows = plans.reduce((n, p) => n + p.rows, 0);
    if (state.completed?.source === sourceId) return await alreadyMigrated(source, target, plans, state, state.completed, json, nowIso);
    if (state.completed && !force) {
      // Another file's move, finished (and most likely in use): it takes no second source, and --force is not the way.
      const done = state.completed;
      const since = changesSince(done, state.counts);
      const message = `this database was migrated from ${done.source} ${whenOf(done)}${since.newer ? ` and has ${since.newer.toLocaleString("en-US")} newer rows since (it is in use)` : ""}; nothing copied from ${sourceId}. To check that migration, run again with --from ${done.source}`;
      if (json)
        emit(
          json,
          { success: false, error: "migrated_from_another_file", message, migrated_from: done.source, completed_at: done.completedAt, copied_now: 0 },
          () => "",
        );
      process.stderr.write(`herald: ${message}\n`);
      return MIGRATED_ELSEWHERE_EXIT;
    }
    if (state.source !== null && state.source !== sourceId && !force) {
      throw new UsageError(
        `the target holds an unfinished copy of another file (${state.source}); nothing copied. Run again with --from ${state.source} to finish it, or copy ${sourceId} into an empty database`,
      );
    }
    if (state.source === null && state.rowsPresent > 0 && !force) {
      const where = Object.entries(state.counts)
        .filter(([name, n]) => n > 0 && name !== "partner_keys_version")
        .map(([name, n]) => `${name} ${n.toLocaleString("en-US")}`);
      throw new UsageError(
        `the target already holds ${state.rowsPresent.toLocaleString("en-US")} rows that no copy of this file put there (${where.slice(0, 5).join(", ")}${where.length > 5 ? ", …" : ""}); nothing copied. Copy into an empty database`,
      );
    }
    const report = progressReporter(json);
    const started = performance.now();
    const copied: Record<string, number> = {};
    let copiedNow = 0;
    const replaced = new Map<string, number>();
    for (const plan of plans) {
      report.table(plan);
      const r = await copyTable(source, target, plan, sourceId, batch, (p) => report.batch(p), replaced);
      copied[plan.name] = r.copied;
      copiedNow += r.now;
      report.done();
    }
    await resetSequences(target);
    const seconds = (performance.now() - started) / 1000;

    const problems: string[] = [];
    const counts: Record<string, number> = {};
    for (const plan of plans) {
      const there = await countOf(target, `SELECT count(*) AS n FROM "${plan.name}"`);
      counts[plan.name] = there;
      // partner_keys_version is written by the target's own migration as well as by the copy.
      if (there !== plan.rows && !(force && there > plan.rows))
        problems.push(`${plan.name}: ${plan.rows.toLocaleString("en-US")} rows in the source, ${there.toLocaleString("en-US")} in the target`);
    }
    problems.push(...(await checkBalances(source, target)));
    if (!problems.length) await recordCompletion(target, sourceId, nowIso, sourceRows, counts);
    const earlier = sourceRows - copiedNow;
    const summary = {
      success: problems.length === 0,
      from: sourceId,
      tables: plans.length,
      rows: sourceRows,
      // Rows this run copied; the others were copied by an earlier, interrupted run.
      copied_now: copiedNow,
      seconds: Number(seconds.toFixed(2)),
      rows_per_second: Math.round(copiedNow / Math.max(seconds, 0.001)),
      per_table: Object.fromEntries(plans.map((p) => [p.name, p.rows])),
      nul_replaced: Object.fromEntries(replaced),
      problems,
    };
    emit(json, summary, () =>
      [
        `copied ${copiedNow.toLocaleString("en-US")} rows of ${plans.length} tables in ${seconds.toFixed(1)} s (${summary.rows_per_second.toLocaleString("en-US")} rows/s)${earlier > 0 ? `; ${earlier.toLocaleString("en-US")} of the source's ${sourceRows.toLocaleString("en-US")} had been copied by an earlier run` : ""}`,
        ...(replaced.size
          ? [
              `replaced U+0000 (NUL, which PostgreSQL's text cannot hold) with U+FFFD in ${[...replaced.values()].reduce((a, b) => a + b, 0).toLocaleString("en-US")} text values: ${[...replaced].map(([at, n]) => `${at} ${n}`).join(", ")}`,
            ]
          : []),
        problems.length
          ? `CHECK FAILED:\n  ${problems.join("\n  ")}`
          : "checked: every table's row count, and every salutes balance = Σ its ledger on both sides",
      ].join("\n"),
    );
    return problems.length ? 1 : 0;
  } finally {
    source.close();
    await target.close();
  }
}
