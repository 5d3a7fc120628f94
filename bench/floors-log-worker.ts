// The request-log writer of bench/floors-server.ts's logged cases: herald's request_log table (its columns and two
// indexes) and its hourly rollup, written as herald's flush writes a batch — multi-row INSERTs of 100 rows, then
// the rollup upsert, in one transaction. `requestLogWriter` runs on the serving thread (CASE=json-logged); loaded as
// a Worker (CASE=json-logged-worker) it takes `{ db }`, then row batches by postMessage, and writes them on its own
// thread with its own connection.
import { Database } from "bun:sqlite";

type LogRow = [at: string, method: string, route: string, status: number, latencyUs: number, requestId: string];

export function requestLogWriter(path: string): (rows: LogRow[]) => void {
  if (!path) throw new Error("floors: DB=<path> names the logged cases' SQLite file");
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec(`CREATE TABLE IF NOT EXISTS request_log (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, method TEXT NOT NULL,
    route TEXT NOT NULL, status INTEGER NOT NULL, latency_us INTEGER NOT NULL, key_ref INTEGER, client_ip TEXT, request_id TEXT NOT NULL,
    error_code TEXT)`);
  db.exec("CREATE INDEX IF NOT EXISTS request_log_key_at_idx ON request_log (key_ref, at)");
  db.exec("CREATE INDEX IF NOT EXISTS request_log_at_idx ON request_log (at)");
  db.exec("CREATE TABLE IF NOT EXISTS request_log_hourly (hour TEXT PRIMARY KEY, requests INTEGER NOT NULL, forbidden INTEGER NOT NULL)");
  const insert100 = db.prepare(
    `INSERT INTO request_log (at, method, route, status, latency_us, key_ref, client_ip, request_id, error_code) VALUES ${Array(100)
      .fill("(?, ?, ?, ?, ?, NULL, NULL, ?, NULL)")
      .join(", ")}`,
  );
  const insert1 = db.prepare(
    "INSERT INTO request_log (at, method, route, status, latency_us, key_ref, client_ip, request_id, error_code) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, NULL)",
  );
  const rollup = db.prepare(
    "INSERT INTO request_log_hourly (hour, requests, forbidden) VALUES (?, ?, 0) ON CONFLICT (hour) DO UPDATE SET requests = request_log_hourly.requests + excluded.requests",
  );
  const write = db.transaction((rows: LogRow[]) => {
    let i = 0;
    for (; i + 100 <= rows.length; i += 100) insert100.run(...rows.slice(i, i + 100).flat());
    for (; i < rows.length; i++) insert1.run(...rows[i]!);
    rollup.run(rows[0]![0].slice(0, 13), rows.length);
  });
  return (rows) => {
    if (rows.length) write.immediate(rows);
  };
}

declare const self: Worker;
if (!Bun.isMainThread) {
  let write: ((rows: LogRow[]) => void) | null = null;
  self.onmessage = (event: MessageEvent) => {
    if (write === null) write = requestLogWriter((event.data as { db: string }).db);
    else write(event.data as LogRow[]);
  };
}
