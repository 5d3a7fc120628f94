// A statement's query plan on the engine the test runs on (HERALD_TEST_ENGINE): SQLite's EXPLAIN QUERY PLAN, or
// PostgreSQL's EXPLAIN with seq scans priced out. PostgreSQL picks a Seq Scan on any small test table whatever its
// indexes, so only with enable_seqscan off does a Seq Scan in the plan mean that no index could serve the statement.
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { join } from "node:path";
import type { Param, Queryable } from "../../src/db/port";
import type { TestApp } from "./app";
import { testEngine } from "./engine";

/** The plan's lines: SQLite's `detail` column (`SEARCH t USING INDEX …`), PostgreSQL's `QUERY PLAN` lines. */
export async function planOf(h: TestApp, sql: string, params: readonly Param[]): Promise<string[]> {
  if (testEngine() === "sqlite") {
    // On a connection of its own: bun:sqlite leaves an EXPLAIN of a write in progress after reading its plan, which
    // would keep the app's connection from committing.
    const db = new Database(join(h.dir, "herald.db"), { readonly: true });
    try {
      return db
        .prepare<{ detail: string }, SQLQueryBindings[]>(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...(params as SQLQueryBindings[]))
        .map((p) => p.detail);
    } finally {
      db.close();
    }
  }
  return h.ctx.store.tx(async (t: Queryable) => {
    await t.run("SET LOCAL enable_seqscan = off");
    const plan = await t.all<Record<string, string>>(`EXPLAIN ${sql}`, params);
    return plan.map((p) => Object.values(p)[0]!);
  });
}

/**
 * The lines of a plan that read a whole table: a SCAN of a table on SQLite (json_each and a constant row are none), a
 * Seq Scan on PostgreSQL.
 */
export const fullReads = (plan: readonly string[]): string[] =>
  testEngine() === "sqlite" ? plan.filter((d) => /^SCAN /.test(d) && !/^SCAN (json_each|CONSTANT)/.test(d)) : plan.filter((l) => l.includes("Seq Scan"));

/** The lines of a SQLite plan that sort every row found (none on PostgreSQL, whose plans say Sort instead). */
export const sortsAll = (plan: readonly string[]): string[] => (testEngine() === "sqlite" ? plan.filter((d) => /TEMP B-TREE FOR ORDER BY/.test(d)) : []);
