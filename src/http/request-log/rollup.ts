import type { Queryable, Store } from "../../db/port";
import ipaddr from "ipaddr.js";
import { compareText, hourOf, hourStartIso, nextHour } from "./hours";
import { rebuildSummaryHour } from "./summary";
import type { TimedEntry } from "./tables";

/**
 * Hourly rollups of request_log (tables.ts): request_log_hourly (requests and 403s per UTC
 * hour) and request_log_403_hourly (the 403s per hour by route template, partner key id and client prefix).
 * The operators' digest reads these few rows per hour instead of scanning millions of request_log rows.
 *
 * Two writers keep them, both through the storage port on either engine: the request-log flush, in the same
 * transaction as the rows it writes (so a rollup never counts a row that was rolled back); and the catch-up
 * (rebuildHour below, src/http/request-log/catchup.ts), which rebuilds an hour from request_log when the rollup
 * counts fewer requests than request_log holds (a database upgraded from before the rollups, one moved by
 * herald migrate-to-postgres, or rows written by another tool).
 */

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.\d{1,3}$/;

/**
 * The client's network as the digest groups it: IPv4 /24 (`203.0.113.0/24`), IPv6 /48 (`2001:db8:1::/48`, RFC
 * 5952 form), an IPv4-mapped IPv6 address as its IPv4 /24; "" when the address is missing or unparsable. A /24
 * or /48 is what one scanner or one customer network typically holds, so a probe that rotates addresses
 * inside it still reads as one client.
 */
export function clientPrefix(ip: string | null): string {
  if (!ip) return "";
  const v4 = IPV4.exec(ip);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.0/24`;
  try {
    let addr = ipaddr.parse(ip);
    if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
    if (addr.kind() === "ipv4") {
      const [a, b, c] = (addr as ipaddr.IPv4).octets;
      return `${a}.${b}.${c}.0/24`;
    }
    const p = (addr as ipaddr.IPv6).parts;
    return `${new ipaddr.IPv6([p[0]!, p[1]!, p[2]!, 0, 0, 0, 0, 0]).toRFC5952String()}/48`;
  } catch {
    return "";
  }
}

/** A row as the flush sees it: enough to roll it up. */
type RollupRow = Pick<TimedEntry, "at" | "route" | "status" | "partnerKeyId" | "clientIp">;

// Qualified column names on the right: PostgreSQL finds a bare `requests` ambiguous between the row and `excluded`.
const UPSERT_HOURLY =
  "INSERT INTO request_log_hourly (hour, requests, forbidden) VALUES (?, ?, ?) ON CONFLICT (hour) DO UPDATE SET requests = request_log_hourly.requests + excluded.requests, forbidden = request_log_hourly.forbidden + excluded.forbidden";
const UPSERT_403 =
  "INSERT INTO request_log_403_hourly (hour, route, partner_key_id, client_prefix, count) VALUES (?, ?, ?, ?, ?) ON CONFLICT (hour, route, partner_key_id, client_prefix) DO UPDATE SET count = request_log_403_hourly.count + excluded.count";

const INSERT_403 = "INSERT INTO request_log_403_hourly (hour, route, partner_key_id, client_prefix, count) VALUES (?, ?, ?, ?, ?)";

type Forbidden = [string, string, string, string, number];

/** Adds `n` 403s to their request_log_403_hourly row in `into`: hour, route, partner key id ("" without one), client prefix, count. */
function countForbidden(into: Map<string, Forbidden>, hour: string, route: string, keyId: string | null, ip: string | null, n: number): void {
  const key = keyId ?? "";
  const prefix = clientPrefix(ip);
  const id = `${hour}\u0000${route}\u0000${key}\u0000${prefix}`;
  const row = into.get(id);
  if (row) row[4] += n;
  else into.set(id, [hour, route, key, prefix, n]);
}

/**
 * A batch's rollup increments, `[hour, requests, forbidden]` and `[hour, route, key, prefix, count]`, aggregated in
 * memory, so a batch of 1,000 rows in one hour costs one upsert plus one per distinct 403 key — not one per row.
 * Sorted, so that two instances flushing at once on PostgreSQL lock rollup rows in the same order (no deadlock).
 */
function rollupDelta(rows: readonly RollupRow[]) {
  // Almost every batch falls in one hour: count it in locals, and use the map only when the hour changes.
  let hour = "";
  let requests = 0;
  let forbidden = 0;
  const hours = new Map<string, [string, number, number]>();
  let f403: Map<string, Forbidden> | null = null;
  const closeHour = () => {
    if (requests === 0) return;
    const t = hours.get(hour);
    if (t) {
      t[1] += requests;
      t[2] += forbidden;
    } else hours.set(hour, [hour, requests, forbidden]);
  };
  for (const r of rows) {
    const h = hourOf(r.at);
    if (h !== hour) {
      closeHour();
      hour = h;
      requests = 0;
      forbidden = 0;
    }
    requests++;
    if (r.status !== 403) continue;
    forbidden++;
    countForbidden((f403 ??= new Map()), h, r.route, r.partnerKeyId, r.clientIp, 1);
  }
  closeHour();
  return {
    hourly: [...hours.values()].sort((a, b) => compareText(a[0], b[0])),
    forbidden: f403 ? [...f403.entries()].sort((a, b) => compareText(a[0], b[0])).map(([, e]) => e) : [],
  };
}

/** Adds a batch to the rollups, inside the flush's transaction (see the file's head). */
export async function applyRollups(t: Queryable, rows: readonly RollupRow[]): Promise<void> {
  const d = rollupDelta(rows);
  // Sent together, in this order (one round trip on PostgreSQL; the locks are still taken in it).
  await Promise.all([...d.hourly.map((row) => t.run(UPSERT_HOURLY, row)), ...d.forbidden.map((row) => t.run(UPSERT_403, row))]);
}

/**
 * Takes the hour's request_log_hourly row for the rebuild's transaction (made at 0 when missing): on PostgreSQL the
 * upsert holds its row lock until commit. A flush of another instance upserts the same row first thing in its own
 * transaction (applyRollups, hourly before 403 rows), so the two take turns: a flush that got there first has
 * committed its rows before the rebuild counts them; one that comes later waits, then adds its own rows on top of
 * the rebuilt count. Either way no row is counted twice or lost. On SQLite the write lock serialises them anyway.
 */
const LOCK_HOUR =
  "INSERT INTO request_log_hourly (hour, requests, forbidden) VALUES (?, 0, 0) ON CONFLICT (hour) DO UPDATE SET requests = request_log_hourly.requests";

/**
 * Rebuilds one hour of both rollups and of the summaries per key and route (summary.ts) from request_log, in one
 * transaction that first locks the hour (LOCK_HOUR).
 * Returns the number of request_log rows the hour holds.
 */
export function rebuildHour(store: Store, hour: string, parts: { rollups: boolean; summaries: boolean } = { rollups: true, summaries: true }): Promise<number> {
  const from = hourStartIso(hour);
  const to = hourStartIso(nextHour(hour));
  return store.tx(async (t) => {
    await t.run(LOCK_HOUR, [hour]);
    if (parts.summaries) await rebuildSummaryHour(t, hour);
    const totals = (await t.get<{ n: number; f: number }>(
      "SELECT count(*) AS n, count(*) FILTER (WHERE status = 403) AS f FROM request_log WHERE at >= ? AND at < ?",
      [from, to],
    ))!;
    // A rollup that counts more than request_log is kept (RollupCatchUp says why).
    if (!parts.rollups) return totals.n;
    await t.run("DELETE FROM request_log_403_hourly WHERE hour = ?", [hour]);
    if (totals.n === 0) {
      await t.run("DELETE FROM request_log_hourly WHERE hour = ?", [hour]);
      return 0;
    }
    await t.run("UPDATE request_log_hourly SET requests = ?, forbidden = ? WHERE hour = ?", [totals.n, totals.f, hour]);
    // key_id, not key_ref, in the GROUP BY: the same grouping (one ref per key id), and PostgreSQL wants every
    // selected column grouped.
    const groups = await t.all<{ route: string; key_id: string | null; ip: string | null; n: number }>(
      `SELECT r.route AS route, k.key_id AS key_id, r.client_ip AS ip, count(*) AS n FROM request_log r LEFT JOIN request_log_keys k ON k.ref = r.key_ref
        WHERE r.at >= ? AND r.at < ? AND r.status = 403 GROUP BY r.route, k.key_id, r.client_ip`,
      [from, to],
    );
    // Addresses fold into prefixes here (in TypeScript: IPv6 needs parsing), then each key is written once.
    const folded = new Map<string, Forbidden>();
    for (const g of groups) countForbidden(folded, hour, g.route, g.key_id, g.ip, g.n);
    for (const row of folded.values()) await t.run(INSERT_403, row);
    return totals.n;
  });
}
