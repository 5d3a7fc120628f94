import type { AppContext } from "../../context";

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
    hasData: (b) => isObject(b.stats) && Object.values(b.stats).some((v) => v !== null),
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

export interface ProbeResult {
  probe: string;
  url: string;
  status: number | null;
  latency_ms: number | null;
  had_data: boolean;
  ok: boolean;
  error: string | null;
}

export interface ProbeRunRow extends ProbeResult {
  at: string;
  run_id: string;
}

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

export interface ProbeRun {
  run_id: string;
  at: string;
  base_url: string;
  results: ProbeResult[];
}

/**
 * Runs every probe once against `baseUrl` (one after another, so each latency is the endpoint's own and a run
 * adds at most one request at a time), records one ops_probe_runs row per probe and returns them.
 */
export async function runSyntheticProbes(ctx: AppContext, baseUrl: string, probes: readonly ProbeDefinition[] = PROBES): Promise<ProbeRun> {
  const at = ctx.clock.now().toISOString();
  const runId = `pr_${Buffer.from(ctx.rng.bytes(8)).toString("hex")}`;
  const results: ProbeResult[] = [];
  for (const def of probes) results.push(await probeOnce(def, baseUrl, ctx.config.readiness.probeTimeoutMs));
  const insert = ctx.db.sqlite.prepare(
    "INSERT INTO ops_probe_runs (run_id, at, probe, url, status, latency_ms, had_data, ok, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  ctx.db.sqlite.transaction(() => {
    for (const r of results) insert.run(runId, at, r.probe, r.url, r.status, r.latency_ms, r.had_data ? 1 : 0, r.ok ? 1 : 0, r.error);
  })();
  return { run_id: runId, at, base_url: baseUrl, results };
}

/** Deletes probe rows older than SYNTHETIC_PROBE_RETENTION_DAYS; returns how many. */
export function pruneProbeRuns(ctx: AppContext): number {
  const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.readiness.probeRetentionDays * 86_400_000).toISOString();
  return ctx.db.sqlite.prepare("DELETE FROM ops_probe_runs WHERE at < ?").run(cutoff).changes;
}

/** The newest row of each probe in PROBES (null for a probe that never ran), in PROBES order. */
export function latestProbeRuns(ctx: AppContext, probes: readonly ProbeDefinition[] = PROBES): Array<{ probe: string; run: ProbeRunRow | null }> {
  // ops_probe_runs_probe_idx (probe, at): one index seek per probe, however many runs are kept.
  const latest = ctx.db.sqlite.prepare(
    "SELECT at, run_id, probe, url, status, latency_ms, had_data, ok, error FROM ops_probe_runs WHERE probe = ? ORDER BY at DESC, id DESC LIMIT 1",
  );
  return probes.map((def) => {
    const r = latest.get(def.name) as (Omit<ProbeRunRow, "had_data" | "ok"> & { had_data: number; ok: number }) | null;
    return { probe: def.name, run: r ? { ...r, had_data: r.had_data === 1, ok: r.ok === 1 } : null };
  });
}

export const ZERO_HISTORY_DEFAULT_LIMIT = 100;
export const ZERO_HISTORY_MAX_LIMIT = 1000;
export const ZERO_HISTORY_DEFAULT_DAYS = 7;
export const ZERO_HISTORY_MAX_DAYS = 90;

/** The probe rows of the last `days` days that failed or came back without data, newest first. */
export function zeroHistory(ctx: AppContext, input: { limit?: number; days?: number }): ProbeRunRow[] {
  const limit = input.limit ?? ZERO_HISTORY_DEFAULT_LIMIT;
  const days = input.days ?? ZERO_HISTORY_DEFAULT_DAYS;
  const since = new Date(ctx.clock.now().getTime() - days * 86_400_000).toISOString();
  // ops_probe_runs_at_idx: the range on `at`, read newest first; the filter is applied on those rows only.
  const rows = ctx.db.sqlite
    .query(
      `SELECT at, run_id, probe, url, status, latency_ms, had_data, ok, error FROM ops_probe_runs
        WHERE at >= ? AND (ok = 0 OR had_data = 0) ORDER BY at DESC, id DESC LIMIT ?`,
    )
    .all(since, limit) as Array<Omit<ProbeRunRow, "had_data" | "ok"> & { had_data: number; ok: number }>;
  return rows.map((r) => ({ ...r, had_data: r.had_data === 1, ok: r.ok === 1 }));
}
