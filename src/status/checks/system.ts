import type { AppContext } from "../../context";
import { migrationStatusOn } from "../../db/migrate";
import { requestOutcomesTask } from "../store/read-models";
import { deliveryHealth } from "../../webhooks/service";
import { levelAtLeast, round2, worst } from "./types";
import type { StatusPolicy } from "./policy";

/**
 * The database answers and takes writes, on either engine and written once: the store's ping (on PostgreSQL: the
 * server answers and is a primary, not a standby in recovery) and an empty transaction (on SQLite: BEGIN IMMEDIATE
 * takes the write lock without writing, which proves the file writable and not wedged behind another writer).
 */
export async function databaseCheck(ctx: AppContext, policy: StatusPolicy) {
  let writable = false;
  let error: string | null = null;
  try {
    await ctx.store.ping();
    await ctx.store.tx(async (t) => {
      await t.get("SELECT 1 AS one");
    });
    writable = true;
  } catch (err) {
    // The engine's message (e.g. "database is locked"), never a path or SQL of ours.
    error = (err as Error).message.slice(0, 200);
  }
  let m = { applied: 0, total: 0, current: false };
  try {
    m = await migrationStatusOn(ctx.store);
  } catch (err) {
    error ??= (err as Error).message.slice(0, 200);
  }
  const status = worst([writable ? "ok" : "bad", m.current ? "ok" : policy.checks.database.migrations_behind]);
  const summary = !writable ? `not writable: ${error}` : m.current ? "writable, migrations current" : `migrations behind: ${m.applied}/${m.total} applied`;
  return { status, summary, writable, migrations_applied: m.applied, migrations_total: m.total, migrations_current: m.current, error };
}

/** Delivery backlog (queued + processing) and dead letters over every partner, and the last hour's deliveries: the operator's view. */
export async function webhooksCheck(ctx: AppContext, policy: StatusPolicy) {
  const p = policy.checks.webhooks;
  const h = await deliveryHealth(ctx, null);
  const backlog = levelAtLeast(h.pending_events, p.backlog_warn, p.backlog_bad);
  const dead = levelAtLeast(h.dead_letter_events, p.dead_letters_warn, p.dead_letters_bad);
  const summary = `${h.pending_events} pending, ${h.failed_events} retrying, ${h.dead_letter_events} dead-lettered, ${h.delivered_events} delivered in the last hour`;
  return { status: worst([backlog, dead]), summary, ...h };
}

/**
 * Share of requests answered 5xx over the last window_minutes of the request log (ending at `requestsBefore` when
 * given: the trust dashboard counts the requests before the current minute, see trustDashboard). 4xx are the
 * caller's mistakes (counted, not judged); health probes are not in the log.
 */
export async function requestErrorsCheck(ctx: AppContext, policy: StatusPolicy, requestsBefore?: Date) {
  const p = policy.checks.request_errors;
  await ctx.requestLog.flush(); // buffered off the request path: judge the latest requests too
  const end = requestsBefore ?? ctx.clock.now();
  const since = new Date(end.getTime() - p.window_minutes * 60_000).toISOString();
  // In the read worker: the window's requests grow with the traffic.
  const row = await ctx.store.apart(requestOutcomesTask, { sinceIso: since, beforeIso: requestsBefore?.toISOString() });
  const rate = row.total ? round2((row.server / row.total) * 100) : null;
  // Fewer than min_requests: a handful of requests says nothing about a rate.
  const judged = row.total >= Math.max(1, p.min_requests);
  const status = judged && rate !== null ? levelAtLeast(rate, p.error_rate_warn_pct, p.error_rate_bad_pct) : "ok";
  const summary = `${row.server} of ${row.total} requests failed with 5xx in ${p.window_minutes} min${judged ? "" : ` (not judged below ${p.min_requests} requests)`}`;
  return {
    status,
    summary,
    window_minutes: p.window_minutes,
    total_requests: row.total,
    server_errors: row.server,
    client_errors: row.client,
    error_rate_pct: rate,
    judged,
  };
}
