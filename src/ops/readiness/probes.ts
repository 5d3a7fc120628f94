import type { AppContext } from "../../context";
import type { BatchedDeleteResult } from "../../db/batched-delete";
import { deleteProbeRunsBefore, insertProbeRuns, newestProbeRun, type ProbeRead, probeProblemsSince } from "./store";

// Synthetic probes: Herald calling its own public endpoints over real HTTP, the way a partner or a status
// page would, so a broken route, a hung handler or an endpoint that answers 200 with nothing in it shows up
// before a user reports it. Calling the service code directly would skip the HTTP core, the rate limiter and
// the serialiser — exactly the layers a probe is for. Only Herald's own base URL is ever called.

type Json = Record<string, unknown>;

export interface ProbeDefinition {
  name: string;
  /** Path and query on Herald's own base URL. */
  path: string;
  /** What "had data" means for this answer (its JSON body, already known to be success: true). */
  hasData(body: Json): boolean;
  hasDataRule: string;
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export const PROBES: readonly ProbeDefinition[] = [
  {
    name: "system_status",
    path: "/api/public/system-status",
    hasData: (b) => typeof b.overall === "string" && isObject(b.checks) && Object.keys(b.checks).length > 0,
    hasDataRule: "overall is set and checks has at least one check",
  },
  {
    name: "public_stats",
    path: "/api/public-stats",
    // The figures, not their sources: a source is named ("unavailable") even when its figure is null.
    hasData: (b) => isObject(b.stats) && Object.entries(b.stats).some(([k, v]) => !k.endsWith("_source") && v !== null),
    hasDataRule: "stats has at least one non-null figure (all null while TOKEN_MINT is unset or before the first snapshot)",
  },
  {
    name: "holder_cache_proof",
    path: "/api/public/holder-cache-freshness.json",
    hasData: (b) => typeof b.snapshot_at_utc === "string",
    hasDataRule: "snapshot_at_utc is set (a holders snapshot exists)",
  },
  {
    name: "share_link_validate",
    path: "/api/public/audio-share-links/validate?track_url=%2Fherald-synthetic-probe",
    hasData: (b) => b.valid === true && typeof b.destination_url === "string",
    hasDataRule: "valid is true and destination_url is set for a site-relative track page",
  },
];

/** A probe's row as read back, its flags as booleans; without at and run_id, one probe's answer. */
export type ProbeRunRow = Omit<ProbeRead, "had_data" | "ok"> & { had_data: boolean; ok: boolean };
export type ProbeResult = Omit<ProbeRunRow, "at" | "run_id">;

const short = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

/** One probe: a GET with a time limit; ok = a 2xx JSON answer with success: true; had_data per the probe's rule. */
async function probeOnce(def: ProbeDefinition, baseUrl: string, timeoutMs: number): Promise<ProbeResult> {
  const url = `${baseUrl.replace(/\/+$/, "")}${def.path}`;
  const t0 = performance.now();
  const elapsed = () => Math.round(performance.now() - t0);
  try {
    const res = await fetch(url, {
      redirect: "manual",
      headers: { accept: "application/json", "user-agent": "herald-synthetic-probe/1" },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const latency = elapsed();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { probe: def.name, url, status: res.status, latency_ms: latency, had_data: false, ok: false, error: `HTTP ${res.status}: the answer is not JSON` };
    }
    if (!res.ok || !isObject(body) || body.success !== true) {
      const code = isObject(body) && typeof body.error === "string" ? ` ${short(body.error)}` : "";
      return { probe: def.name, url, status: res.status, latency_ms: latency, had_data: false, ok: false, error: `HTTP ${res.status}${code}` };
    }
    return { probe: def.name, url, status: res.status, latency_ms: latency, had_data: def.hasData(body), ok: true, error: null };
  } catch (err) {
    const e = err as Error & { code?: string };
    const timedOut = e.name === "TimeoutError" || e.name === "AbortError";
    const message = e.code && !e.message.startsWith(e.code) ? `${e.code}: ${e.message}` : e.message;
    const error = timedOut ? `timed out after ${timeoutMs} ms` : short(message);
    return { probe: def.name, url, status: null, latency_ms: timedOut ? null : elapsed(), had_data: false, ok: false, error };
  }
}

/**
 * Runs every probe once against `baseUrl` (one after another, so each latency is the endpoint's own and a run
 * adds at most one request at a time), records one ops_probe_runs row per probe and returns them.
 */
export async function runSyntheticProbes(ctx: AppContext, baseUrl: string, probes: readonly ProbeDefinition[] = PROBES) {
  const at = ctx.clock.now().toISOString();
  const runId = `pr_${Buffer.from(ctx.rng.bytes(8)).toString("hex")}`;
  const results: ProbeResult[] = [];
  for (const def of probes) results.push(await probeOnce(def, baseUrl, ctx.config.readiness.probeTimeoutMs));
  // Written after every probe answered: the transaction holds no connection while the probes wait on the network.
  const rows = results.map((r) => ({ run_id: runId, at, ...r, had_data: r.had_data ? 1 : 0, ok: r.ok ? 1 : 0 }));
  await ctx.store.tx((t) => insertProbeRuns(t, rows));
  return { run_id: runId, at, base_url: baseUrl, results };
}

/** Deletes probe rows older than SYNTHETIC_PROBE_RETENTION_DAYS, in bounded batches; how many, and whether all. */
export async function pruneProbeRuns(ctx: AppContext): Promise<BatchedDeleteResult> {
  const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.readiness.probeRetentionDays * 86_400_000).toISOString();
  return deleteProbeRunsBefore(ctx.store, cutoff);
}

const probeRow = (r: ProbeRead): ProbeRunRow => ({ ...r, had_data: r.had_data === 1, ok: r.ok === 1 });

/** The newest row of each probe in PROBES (null for a probe that never ran), in PROBES order. */
export async function latestProbeRuns(ctx: AppContext, probes: readonly ProbeDefinition[] = PROBES) {
  const out: Array<{ probe: string; run: ProbeRunRow | null }> = [];
  for (const def of probes) {
    const r = await newestProbeRun(ctx.store, def.name);
    out.push({ probe: def.name, run: r ? probeRow(r) : null });
  }
  return out;
}

export const ZERO_HISTORY_DEFAULT_LIMIT = 100;
export const ZERO_HISTORY_MAX_LIMIT = 1000;
export const ZERO_HISTORY_DEFAULT_DAYS = 7;
export const ZERO_HISTORY_MAX_DAYS = 90;

/** The probe rows of the last `days` days that failed or came back without data, newest first. */
export async function zeroHistory(ctx: AppContext, input: { limit?: number; days?: number }): Promise<ProbeRunRow[]> {
  const limit = input.limit ?? ZERO_HISTORY_DEFAULT_LIMIT;
  const days = input.days ?? ZERO_HISTORY_DEFAULT_DAYS;
  const since = new Date(ctx.clock.now().getTime() - days * 86_400_000).toISOString();
  return (await probeProblemsSince(ctx.store, since, limit)).map(probeRow);
}
