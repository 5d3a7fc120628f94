import type { Queryable } from "../db/port";

// Job leadership over the storage port (when a lease is taken: src/jobs/registry.ts). One statement decides, so two
// instances can never both win: the row is inserted, or taken over when its lease has expired, or renewed by its own
// holder — a compare-and-swap with expiry (Grafana's server_lock idea). The same SQL on SQLite and PostgreSQL
// (INSERT … ON CONFLICT … DO UPDATE … WHERE).

export interface Lease {
  name: string;
  holder: string;
  untilMs: number;
}

export class JobLeases {
  constructor(private readonly db: Queryable) {}

  /**
   * Takes or renews the lease of `name` for `holder` until nowMs + ttlMs; true when `holder` holds it afterwards.
   * Another holder's unexpired lease is left alone (false).
   */
  async acquire(name: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean> {
    await this.db.run(
      `INSERT INTO job_leases (name, holder, until_ms, acquired_at_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET
         holder = excluded.holder,
         until_ms = excluded.until_ms,
         acquired_at_ms = CASE WHEN job_leases.holder = excluded.holder THEN job_leases.acquired_at_ms ELSE excluded.acquired_at_ms END
       WHERE job_leases.holder = excluded.holder OR job_leases.until_ms <= ?`,
      [name, holder, nowMs + ttlMs, nowMs, nowMs],
    );
    const row = await this.db.get<{ holder: string }>("SELECT holder FROM job_leases WHERE name = ?", [name]);
    return row?.holder === holder;
  }

  /** Gives the lease up now (a clean shutdown), if `holder` holds it; another instance may take it at once. */
  async release(name: string, holder: string): Promise<void> {
    await this.db.run("DELETE FROM job_leases WHERE name = ? AND holder = ?", [name, holder]);
  }

  async current(name: string): Promise<Lease | null> {
    const row = await this.db.get<{ name: string; holder: string; until_ms: number }>("SELECT name, holder, until_ms FROM job_leases WHERE name = ?", [name]);
    return row ? { name: row.name, holder: row.holder, untilMs: row.until_ms } : null;
  }
}
