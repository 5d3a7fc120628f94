import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../../db/batched-delete";
import { BufferedWriter } from "../../db/buffered-writer";
import { type Param, placeholders, type Queryable, type Store, StoreUnavailable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import { errorFields, isoTimes, type Logger } from "../../log";
import { RollupCatchUp } from "./catchup";
import { applyRollups } from "./rollup";
import { applySummaries } from "./summary";
import type { RequestLogEntry, requestLogKeys, TimedEntry } from "./tables";

export type { RequestLogEntry } from "./tables";

/** A rollup catch-up step that met a database outage is tried again after this long. */
const CATCH_UP_RETRY_MS = 5_000;

/** SQL for a key id's request_log_keys.ref (one `?`); NULL, which matches no row, for a key never logged. */
export const KEY_REF = "SELECT ref FROM request_log_keys WHERE key_id = ?";

const MAX_BUFFERED = 50_000;
const BATCH_WHEN = 1_000;
/** Rows per INSERT: a batch is written as a few multi-row statements, each size prepared once (100 × 9 parameters). */
const INSERT_SIZES = [100, 10, 1] as const;
const COLUMNS = "(at, method, route, status, latency_us, key_ref, client_ip, request_id, error_code)";
const INSERT_OF = new Map(INSERT_SIZES.map((n) => [n, `INSERT INTO request_log ${COLUMNS} VALUES ${Array(n).fill("(?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`]));
/** Keys per statement when a batch names keys not seen before. */
const KEYS_PER_STATEMENT = 100;

/**
 * The request log, written in batches (src/db/buffered-writer.ts: lost on a hard crash, acceptable for analytics),
 * never an INSERT on the request's path; each batch in one transaction with the rollups of the same rows.
 */
export class RequestLog {
  private readonly writer: BufferedWriter<RequestLogEntry>;
  private catchUpTimer: ReturnType<typeof setTimeout> | null = null;
  /** The catch-up step in progress, awaited by stop() so that it never outlives the store. */
  private catchUpStep: Promise<void> | null = null;
  /** request_log_keys.ref by key id, committed ones only: a flush adds what it learnt after its commit. */
  private readonly refs = new Map<string, number>();

  /**
   * `catchUpOnStart`: level the hourly rollups with request_log when start() runs (catchup.ts, on either engine: a
   * SQLite database from before the rollups, or one moved to PostgreSQL with rows the rollups never saw).
   */
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly catchUpOnStart = false,
  ) {
    this.writer = new BufferedWriter<RequestLogEntry>({
      maxBuffered: MAX_BUFFERED,
      batchRows: BATCH_WHEN,
      write: (rows) => this.write(rows),
      // A database outage is logged once, when it begins (src/db/health.ts), not at every flush.
      failed: (err) => {
        if (!(err instanceof StoreUnavailable)) this.log.warn("request log flush failed", errorFields(err));
      },
    });
  }

  get dropped(): number {
    return this.writer.dropped;
  }

  get flushedBatches(): number {
    return this.writer.batches;
  }

  /**
   * Retention: deletes the rows written before `before` (ISO time), in batches down request_log_at_idx (one
   * statement over a million rows held every request 1.7 s on SQLite); what the time bound left goes at the next
   * call. The hourly rollups stay.
   */
  prune(before: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
    return deleteInBatches(this.store, { table: "request_log", where: "at < ?", params: [before], ...bound });
  }

  /**
   * Retention of the summaries per key and route (summary.ts): deletes the hours before `beforeHour`
   * (`YYYY-MM-DDTHH`) and the days before its day, in batches down their `hour` and `day` indexes, as prune() does.
   */
  async pruneSummaries(beforeHour: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
    const hourly = await deleteInBatches(this.store, { table: "request_summary_hourly", where: "hour < ?", params: [beforeHour], ...bound });
    // A day goes once all of its hours have: the day of `beforeHour` stays while any hour of it does.
    const daily = await deleteInBatches(this.store, { table: "request_summary_daily", where: "day < ?", params: [beforeHour.slice(0, 10)], ...bound });
    return { deleted: hourly.deleted + daily.deleted, statements: hourly.statements + daily.statements, done: hourly.done && daily.done };
  }

  record(entry: RequestLogEntry): void {
    this.writer.record(entry);
  }

  get pending(): number {
    return this.writer.pending;
  }

  start(intervalMs: number): void {
    if (this.writer.start(intervalMs) && this.catchUpOnStart) this.startCatchUp();
  }

  /** Levels the rollups with request_log once per start, in bounded steps with the event loop free between them (catchup.ts). */
  private startCatchUp(): void {
    const catchUp = new RollupCatchUp(this.store);
    const started = performance.now();
    const later = (ms: number) => {
      this.catchUpTimer = setTimeout(() => {
        this.catchUpStep = step();
      }, ms);
      this.catchUpTimer.unref?.();
    };
    const step = async () => {
      this.catchUpTimer = null;
      try {
        const p = await catchUp.step();
        // stop() stops the flush timer: no further step after it.
        if (!p.done && this.writer.running) later(0);
        else if (p.rebuiltHours > 0) this.log.info("request-log rollups caught up", { ...p, ms: Math.round(performance.now() - started) });
      } catch (err) {
        // The database is away (its outage is logged once, src/db/health.ts): the step is tried again later.
        if (err instanceof StoreUnavailable && this.writer.running) later(CATCH_UP_RETRY_MS);
        else this.log.warn("request-log rollup catch-up failed; it runs again at the next start", errorFields(err));
      }
    };
    later(0);
  }

  /** BufferedWriter.stop(), the rollup catch-up's step awaited before the last write. */
  async stop(): Promise<void> {
    this.writer.stopTimers();
    if (this.catchUpTimer) clearTimeout(this.catchUpTimer);
    this.catchUpTimer = null;
    await this.catchUpStep;
    await this.writer.flush();
  }

  /** Readers of request_log await it first to include the latest requests (BufferedWriter.flush). */
  flush(): Promise<number> {
    return this.writer.flush();
  }

  /** One batch in one transaction; a throw leaves the rows to the writer, which keeps them for the next flush. */
  private async write(entries: RequestLogEntry[]): Promise<void> {
    const rows = withIsoTimes(entries);
    const learnt = new Map<string, number>();
    await this.store.tx(async (t) => {
      learnt.clear();
      await this.learnRefs(t, rows, learnt);
      const refOf = (keyId: string) => this.refs.get(keyId) ?? learnt.get(keyId)!;
      // Sent in this order: the rows, the hourly rollups (whose row lock orders this flush with an hour's rebuild),
      // then the summaries per key and route (summary.ts).
      await Promise.all([
        insertRows(t, rows, refOf),
        applyRollups(t, rows),
        applySummaries(t, rows, (r) => (r.partnerKeyId === null ? null : refOf(r.partnerKeyId))),
      ]);
    });
    // Only after the commit: the refs learnt inside a failed transaction were rolled back with it.
    if (this.refs.size + learnt.size > 10_000) this.refs.clear();
    for (const [k, v] of learnt) this.refs.set(k, v);
  }

  /**
   * The refs of the batch's keys not known yet, added on their first row (inside the flush's transaction), in key
   * order so that two instances adding the same keys at once on PostgreSQL take their locks in the same order.
   */
  private async learnRefs(t: Queryable, rows: readonly TimedEntry[], learnt: Map<string, number>): Promise<void> {
    const fresh = new Set<string>();
    for (const r of rows) if (r.partnerKeyId !== null && !this.refs.has(r.partnerKeyId)) fresh.add(r.partnerKeyId);
    const keys = [...fresh].sort();
    for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) {
      const chunk = keys.slice(i, i + KEYS_PER_STATEMENT);
      await t.run(`INSERT INTO request_log_keys (key_id) VALUES ${chunk.map(() => "(?)").join(", ")} ON CONFLICT (key_id) DO NOTHING`, chunk);
      const found = await t.all<Pick<RowOf<typeof requestLogKeys>, "ref" | "key_id">>(
        `SELECT ref, key_id FROM request_log_keys WHERE key_id IN (${placeholders(chunk.length)})`,
        chunk,
      );
      for (const f of found) learnt.set(f.key_id, f.ref);
    }
  }
}

/**
 * The batch with every time as ISO text, in place. Requests answered in the same millisecond share one string: at
 * ~70,000 requests a second that is one Date and one toISOString a millisecond instead of one a request (~0.15 µs
 * each, timed alone).
 */
function withIsoTimes(rows: RequestLogEntry[]): TimedEntry[] {
  const isoOf = isoTimes();
  for (const r of rows) if (typeof r.at === "number") r.at = isoOf(r.at);
  return rows as TimedEntry[];
}

/**
 * The batch as a few multi-row INSERTs (100 rows, then 10, then 1 at a time), in the order the requests ended,
 * sent together: on PostgreSQL they ride in one round trip.
 */
async function insertRows(t: Queryable, rows: readonly TimedEntry[], refOf: (keyId: string) => number): Promise<void> {
  const sent: Array<Promise<unknown>> = [];
  let i = 0;
  for (const size of INSERT_SIZES) {
    const sql = INSERT_OF.get(size)!;
    while (rows.length - i >= size) {
      const params: Param[] = [];
      for (const r of rows.slice(i, i + size)) {
        params.push(
          r.at,
          r.method,
          r.route,
          r.status,
          r.latencyUs,
          r.partnerKeyId === null ? null : refOf(r.partnerKeyId),
          r.clientIp,
          r.requestId,
          r.errorCode,
        );
      }
      sent.push(t.run(sql, params));
      i += size;
    }
  }
  await Promise.all(sent);
}
