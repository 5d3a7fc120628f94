import type { AppContext } from "../../context";
import { failuresSince } from "../../jobs/store";
import { incidentsInWindow } from "../../status/incidents-service";
import { deadLetterGrowthSince, firingAlerts } from "../alerts/views";
import { ownBackupsApply, POSTGRES_BACKUP_HINT } from "../backups/engine";
import { type BackupEntry, listBackups } from "../backups/list";
import { eventLoopLag } from "../event-loop-lag";
import { linkTargetHealth } from "../link-inbox/target-health";
import { latestProbeRuns, type ProbeRunRow, zeroHistory } from "./probes";
import { noiseExport } from "./service";

// What the readiness page (GET /admin/ops/readiness) shows, gathered from the functions that own each figure.
// Nothing here has SQL of its own, so the page can never disagree with the exports it links to.

const DAY_MS = 86_400_000;
/** Failing or empty probe rows of the last 24 h shown on the page; the CSV export has the rest. */
export const PROBE_PROBLEMS_SHOWN = 20;
export const BACKUPS_SHOWN = 5;

/** A probe's latest run: answered with data, answered without, did not answer properly, over 24 h old, or none. */
export type ProbeState = "ok" | "empty" | "failed" | "stale" | "never";

function probeState(run: ProbeRunRow | null, since: string): ProbeState {
  if (!run) return "never";
  if (run.at < since) return "stale";
  if (!run.ok) return "failed";
  return run.had_data ? "ok" : "empty";
}

/** Why a probe is a reason, by its state; an empty answer is not one (without TOKEN_MINT two probes are empty by design). */
const PROBE_REASONS = { failed: "probe latest run failed", stale: "probe has not run in the last 24 h", never: "probe never ran" } as const;

/**
 * "ready" unless something below is named in a reason (docs/operations.md has the rule). On PostgreSQL the
 * database's own backups apply, which Herald cannot see: nothing is said about them. A silenced alert still counts:
 * a silence holds back notices, it does not make the problem go away.
 */
export function readinessSummary(o: ReadinessParts): { ready: boolean; reasons: string[] } {
  const reasons: string[] = [];
  for (const [state, words] of Object.entries(PROBE_REASONS)) {
    const probes = o.probes.latest.filter((p) => p.state === state).map((p) => p.probe);
    if (probes.length) reasons.push(`${words}: ${probes.join(", ")}`);
  }
  for (const w of o.noise.windows) {
    if (!w.within_threshold) reasons.push(`403 noise over the threshold in the ${w.window_days}-day window (${w.noise_percent ?? 0} %)`);
  }
  const failing = o.jobs.filter((j) => j.enabled && j.last_run?.ok === false).map((j) => j.name);
  if (failing.length) reasons.push(`job latest run failed: ${failing.join(", ")}`);
  const newest = o.backups.newest[0];
  if (o.backups.applies && !newest) reasons.push("no backup in the backups folder");
  else if (o.backups.applies && newest && newest.integrity !== "ok") reasons.push(`newest backup ${newest.name} has integrity "${newest.integrity}"`);
  const a = o.alerting;
  for (const t of a.targets.filter((x) => x.dead)) reasons.push(`notification target dead: ${t.target} (${t.reason ?? "dead"})`);
  if (a.open_incidents.length) reasons.push(`open incident: ${a.open_incidents.map((i) => `#${i.id} ${i.title} (${i.severity})`).join(", ")}`);
  if (a.firing.length) reasons.push(`alert firing: ${a.firing.map((f) => `${f.key} (${f.level}${f.silenced_by ? ", silenced" : ""})`).join(", ")}`);
  const dl = a.dead_letters;
  if (dl.growth_24h > 0) reasons.push(`webhook dead letters grew in the last 24 h: +${dl.growth_24h}${dl.now === null ? "" : ` (now ${dl.now})`}`);
  return { ready: reasons.length === 0, reasons };
}

/**
 * The on-demand backups, where they apply (SQLite). On PostgreSQL `applies` is false, nothing is listed and `note`
 * points at the database's own backups and PITR: no backup reason is raised there, since Herald cannot see them.
 */
async function backupsOverview(ctx: AppContext) {
  const keep = ctx.config.backupKeep;
  if (!ownBackupsApply(ctx.store.dialect)) return { applies: false, newest: [] as BackupEntry[], total: 0, keep, note: POSTGRES_BACKUP_HINT };
  const page = await listBackups(ctx, { limit: BACKUPS_SHOWN, offset: 0 });
  return { applies: true, newest: page.items, total: page.total, keep, note: null };
}

type ReadinessParts = Awaited<ReturnType<typeof readinessParts>>;
export type ReadinessOverview = Awaited<ReturnType<typeof readinessOverview>>;

/** Each part of the page as of `since` (24 h ago); `alerting` says whether the alerts reach people, and what they should have heard of. */
async function readinessParts(ctx: AppContext, since: string) {
  const latest = (await latestProbeRuns(ctx)).map(({ probe, run }) => ({ probe, run, state: probeState(run, since) }));
  const problems = await zeroHistory(ctx, { days: 1, limit: PROBE_PROBLEMS_SHOWN });
  const noise = await noiseExport(ctx, { days: 30, compact: true });
  const failures = await failuresSince(ctx.store, since);
  const jobs = (await ctx.jobs.list()).map((j) => ({ ...j, failures_24h: failures.get(j.name) ?? 0 }));
  const open = (await incidentsInWindow(ctx, { since: null, until: null, status: "open", limit: 50, offset: 0 })).items;
  const dead = await deadLetterGrowthSince(ctx, since);
  const alerting = {
    firing: await firingAlerts(ctx),
    open_incidents: open.map((i) => ({ id: i.id, title: i.title, severity: i.current_severity ?? i.severity, started_at: i.started_at })),
    targets: await linkTargetHealth(ctx),
    // Webhook dead letters: the count at the newest monitor run, and the growth over the last 24 h.
    dead_letters: { now: dead.now, growth_24h: dead.growth },
  };
  return { probes: { latest, problems }, noise, jobs, backups: await backupsOverview(ctx), alerting };
}

/**
 * This process's event-loop lag over the last minute (GET /admin/ops/readiness/event-loop.json). Per instance: behind
 * a load balancer the page and the JSON show the instance that answered, named by `instance_id`.
 */
export function eventLoopReport(ctx: AppContext) {
  return { generated_at: ctx.clock.now().toISOString(), instance_id: ctx.instanceId, event_loop: eventLoopLag(ctx).snapshot() };
}

/**
 * Everything the readiness page shows, as of the context's clock. The event-loop lag is shown beside the summary,
 * not judged in it: a stall is over within the minute it shows; the HeraldEventLoopStalled alert counts them over time.
 */
export async function readinessOverview(ctx: AppContext) {
  const now = ctx.clock.now();
  const parts = await readinessParts(ctx, new Date(now.getTime() - DAY_MS).toISOString());
  const database = { engine: ctx.store.dialect, version: await ctx.store.version() };
  const { instance_id, event_loop } = eventLoopReport(ctx);
  return { generated_at: now.toISOString(), database, instance_id, event_loop, ...parts, summary: readinessSummary(parts) };
}
