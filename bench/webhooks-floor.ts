// The bare PostgreSQL dispatcher of the `webhooks` benchmark (issue 49): what any dispatcher on PostgreSQL can do
// on this machine, measured in the same run as herald's. It does the row work a delivery must do, in herald's own
// tables — lease the delivery (status, attempts, lease token) and write its attempt row before the request leaves,
// then record the delivery's outcome and its attempt's — with as little as possible around it:
//   - a lease is ONE statement in autocommit (a data-modifying CTE: take due rows FOR UPDATE SKIP LOCKED, mark them,
//     insert their attempt rows, read what the send needs), one round trip and one commit per batch of up to
//     2 × `inFlight`, taken again as soon as the local queue runs below 2 × `inFlight` (as herald leases up to three
//     times WEBHOOK_CONCURRENCY ahead of its sends: one lease at a time, so the bigger each, the fewer commits wait);
//   - a send is a signed fetch POST (the same envelope and signature as herald's) with up to `sends` at once (by
//     default `inFlight`): herald's defaults send 4 at once to the benchmark's one receiver host (its per-host
//     limit), its "16 per host" case 16;
//   - successes are written together, as herald does on PostgreSQL: those that finish while a write is in flight
//     share the next transaction, two statements each by primary key, sent at once.
// What it leaves out, and herald cannot: retries and failures (every answer here is a 204), interrupted attempts,
// lease renewal, replays' reason tags, encrypted secrets, the target's address check, the webhook's health.
import { SQL } from "bun";
import { webhookSignature } from "../src/client/sign";

interface Due {
  id: string;
  attempt_id: string;
  public_id: string;
  event_type: string;
  data: string;
  target_url: string;
}

const LEASE = `WITH due AS (
    SELECT id FROM webhook_deliveries WHERE status = 'queued' AND next_attempt_at <= $1
    ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED),
  d AS (
    UPDATE webhook_deliveries w SET status = 'processing', attempts = w.attempts + 1, lease_until = $3, lease_token = $4,
      last_attempt_at = $1, updated_at = $1
    FROM due WHERE w.id = due.id RETURNING w.id, w.event_id, w.webhook_id, w.attempts),
  a AS (
    INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms)
    SELECT id, attempts, $1, 0 FROM d RETURNING id, delivery_id)
  SELECT d.id, a.id AS attempt_id, e.public_id, e.event_type, e.data, h.target_url
  FROM d JOIN a ON a.delivery_id = d.id JOIN events e ON e.id = d.event_id JOIN webhooks h ON h.id = d.webhook_id
  ORDER BY d.id`;

const SECRET = "whsec_bench_floor";
const MAX_BATCH = 64;

/**
 * Drains every queued delivery of the database at `url` (the benchmark then counts what succeeded): leases up to
 * 2 × `inFlight` at a time, sends up to `sends` (default `inFlight`) at once.
 */
export async function bareDrain(url: string, opts: { inFlight: number; poolMax: number; sends?: number }): Promise<void> {
  const sql = new SQL(url, { max: opts.poolMax });
  const queue: Due[] = [];
  let leasing: Promise<void> | null = null;
  let dry = false;
  let wake: Array<() => void> = [];
  const token = crypto.randomUUID();
  const refill = () => {
    if (leasing || dry) return;
    const now = new Date();
    leasing = sql
      .unsafe<Due[]>(LEASE, [now.toISOString(), 2 * opts.inFlight, new Date(now.getTime() + 60_000).toISOString(), token])
      .then((rows) => {
        if (rows.length === 0) dry = true;
        queue.push(...rows);
      })
      .finally(() => {
        leasing = null;
        const woken = wake;
        wake = [];
        for (const w of woken) w();
      });
  };

  let failure: { error: unknown } | null = null;
  const pending: Array<{ id: string; attempt: string; ms: number; startedIso: string }> = [];
  let writing: Promise<void> | null = null;
  const write = (): Promise<void> => {
    if (writing || pending.length === 0) return writing ?? Promise.resolve();
    const batch = pending.splice(0, MAX_BATCH);
    const nowIso = new Date().toISOString();
    const written: Promise<void> = sql
      .begin((tx) =>
        Promise.all(
          batch.flatMap((s) => [
            tx`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, lease_until = NULL, lease_token = NULL,
                 last_status_code = 204, delivered_at = ${nowIso}, updated_at = ${nowIso} WHERE id = ${s.id} AND lease_token = ${token}`,
            tx`UPDATE webhook_attempts SET started_at = ${s.startedIso}, duration_ms = ${s.ms}, status_code = 204 WHERE id = ${s.attempt}`,
          ]),
        ),
      )
      .then(
        () => {},
        (error: unknown) => {
          failure ??= { error };
        },
      )
      .finally(() => {
        writing = null;
        if (pending.length) void write();
      });
    writing = written;
    return written;
  };

  const worker = async () => {
    for (let round = 0; round < 10_000_000; round++) {
      if (queue.length < 2 * opts.inFlight) refill();
      const d = queue.shift();
      if (!d) {
        if (dry && !leasing) return;
        await new Promise<void>((resolve) => (leasing ? wake.push(resolve) : setTimeout(resolve, 1)));
        continue;
      }
      const started = new Date();
      const body = JSON.stringify({ event_id: d.public_id, event_type: d.event_type, data: JSON.parse(d.data) });
      const ts = Math.floor(started.getTime() / 1000);
      const res = await fetch(d.target_url, {
        method: "POST",
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(10_000),
        headers: {
          "content-type": "application/json",
          "user-agent": "Herald-Webhooks/1",
          "x-webhook-id": d.public_id,
          "x-webhook-event": d.event_type,
          "x-webhook-timestamp": String(ts),
          "x-webhook-signature": webhookSignature(SECRET, ts, body),
        },
      });
      await res.arrayBuffer();
      if (res.status !== 204) throw new Error(`the receiver answered ${res.status}`);
      pending.push({ id: d.id, attempt: d.attempt_id, ms: Date.now() - started.getTime(), startedIso: started.toISOString() });
      void write();
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.sends ?? opts.inFlight }, worker));
    for (let i = 0; i < 10_000 && (writing || pending.length); i++) await write();
    if (failure) throw (failure as { error: unknown }).error;
  } finally {
    await sql.close();
  }
}
