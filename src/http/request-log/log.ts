import type { Database, Statement } from "bun:sqlite";
import type { Logger } from "../../log";
import { errorFields } from "../../log";
import { RollupCatchUp } from "./catchup";
import { RollupWriter } from "./rollup";

export interface RequestLogEntry {
  at: string;
  method: string;
  route: string;
  status: number;
  latencyUs: number;
  partnerKeyId: string | null;
  clientIp: string | null;
  requestId: string;
  errorCode: string | null;
}

/** SQL for a key id's request_log_keys.ref (one `?`); NULL, which matches no row, for a key never logged. */
export const KEY_REF = "SELECT ref FROM request_log_keys WHERE key_id = ?";

/** Rows past this are dropped (and counted) rather than letting a stuck disk grow memory without bound. */
const MAX_BUFFERED = 50_000;
const BATCH_WHEN = 1_000;

/**
 * The request log is written in batches, never one INSERT on the request's own path: a request only pushes
 * onto an in-memory buffer; a timer (and a size trigger) writes the buffer in one transaction. The buffer is
 * per-process and lost on a hard crash — acceptable for analytics, and flushed on graceful shutdown.
 */
export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;
  private catchUpTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly insert: Statement;
  private readonly insertMany: (rows: RequestLogEntry[]) => void;
  private readonly addKey: Statement;
  private readonly refOfKey: Statement;
  /** request_log_keys.ref by key id, as committed; cleared when a flush fails (its new refs rolled back). */
  private readonly refs = new Map<string, number>();
  dropped = 0;
  flushedBatches = 0;

  constructor(
    private readonly sqlite: Database,
    private readonly log: Logger,
  ) {
    const rollups = new RollupWriter(sqlite);
    this.insert = sqlite.prepare(
      "INSERT INTO request_log (at, method, route, status, latency_us, key_ref, client_ip, request_id, error_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.addKey = sqlite.prepare("INSERT INTO request_log_keys (key_id) VALUES (?) ON CONFLICT (key_id) DO NOTHING");
    this.refOfKey = sqlite.prepare(KEY_REF);
    this.insertMany = sqlite.transaction((rows: RequestLogEntry[]) => {
      for (const r of rows) {
        const ref = r.partnerKeyId === null ? null : this.keyRef(r.partnerKeyId);
        this.insert.run(r.at, r.method, r.route, r.status, r.latencyUs, ref, r.clientIp, r.requestId, r.errorCode);
      }
      // The hourly rollups commit with the rows they count (src/http/request-log/rollup.ts).
      rollups.apply(rows);
    });
  }

  /** Retention: deletes the rows written before `before` (ISO time); the number deleted. The hourly rollups stay. */
  prune(before: string): number {
    return this.sqlite.query("DELETE FROM request_log WHERE at < ?").run(before).changes;
  }

  /** The key's request_log_keys.ref, added on its first row (inside the flush's transaction). */
  private keyRef(keyId: string): number {
    let ref = this.refs.get(keyId);
    if (ref === undefined) {
      this.addKey.run(keyId);
      ref = (this.refOfKey.get(keyId) as { ref: number }).ref;
      if (this.refs.size >= 10_000) this.refs.clear();
      this.refs.set(keyId, ref);
    }
    return ref;
  }

  record(entry: RequestLogEntry): void {
    if (this.buffer.length >= MAX_BUFFERED) {
      this.dropped++;
      return;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= BATCH_WHEN) queueMicrotask(() => this.flush());
  }

  get pending(): number {
    return this.buffer.length;
  }

  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.flush(), intervalMs);
    this.timer.unref?.();
    this.startCatchUp();
  }

  /**
   * Levels the hourly rollups with request_log once per start (a database upgraded from before the rollups has
   * rows but no rollups), in bounded steps with the event loop free between them: a step compares 6 hours and
   * rebuilds at most ~20,000 rows (src/http/request-log/catchup.ts).
   */
  private startCatchUp(): void {
    const catchUp = new RollupCatchUp(this.sqlite);
    const started = performance.now();
    const step = () => {
      this.catchUpTimer = null;
      try {
        const p = catchUp.step();
        if (!p.done) {
          this.catchUpTimer = setTimeout(step, 0);
          this.catchUpTimer.unref?.();
        } else if (p.rebuiltHours > 0) {
          this.log.info("request-log rollups caught up", { ...p, ms: Math.round(performance.now() - started) });
        }
      } catch (err) {
        this.log.warn("request-log rollup catch-up failed; it runs again at the next start", errorFields(err));
      }
    };
    this.catchUpTimer = setTimeout(step, 0);
    this.catchUpTimer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.catchUpTimer) clearTimeout(this.catchUpTimer);
    this.catchUpTimer = null;
    this.flush();
  }

  /** Writes everything buffered in one transaction; returns the number of rows written. */
  flush(): number {
    if (this.buffer.length === 0) return 0;
    const rows = this.buffer;
    this.buffer = [];
    try {
      this.insertMany(rows);
      this.flushedBatches++;
      return rows.length;
    } catch (err) {
      // A ref learnt inside the failed transaction was rolled back with it.
      this.refs.clear();
      // Put the rows back (bounded) so a transient SQLITE_BUSY does not lose them.
      this.buffer = rows.concat(this.buffer).slice(0, MAX_BUFFERED);
      this.log.warn("request log flush failed", errorFields(err));
      return 0;
    }
  }
}
