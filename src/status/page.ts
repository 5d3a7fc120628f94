import type { AppContext } from "../context";
import type { CheckBase, Level } from "./check-types";
import { FRESHNESS_PROOFS, type FreshnessCheck } from "./checks-chain";
import { CHECK_NAMES } from "./engine";
import { listIncidents, type IncidentView } from "./incidents";
import { latencyPercentiles } from "./latency";
import { loadPolicy } from "./policy";
import { systemStatus } from "./service";
import { dailyBars, uptimeFrom, uptimeSource, type DayBar, type UptimeCache } from "./uptime";
import { formatPct } from "./badge";
import { escapeXml as e } from "../http/xml-escape";
import { PAGE_CSS } from "./page-style";

// GET /status: the human status page. Server-rendered HTML with inline CSS — no build step, no JavaScript,
// readable in a text browser. Everything on it comes from the same verbs as the JSON API, so the page and
// the API cannot disagree.

const HEADLINE: Record<Level, string> = { ok: "All systems operational", warn: "Degraded: some checks need attention", bad: "Outage: at least one check is failing" };
const RECENT_INCIDENT_HOURS = 24 * 14;

const statusTag = (l: Level | "none") => `<span class="tag tag-${l}">${l === "none" ? "no data" : l.toUpperCase()}</span>`;

function barsHtml(label: string, bars: DayBar[]): string {
  const items = bars
    .map((b) => {
      const text = b.uptime_pct === null ? `${b.date}: no data` : `${b.date}: ${formatPct(b.uptime_pct)} up`;
      return `<li class="bar bar-${b.level}" title="${e(text)}"><span class="sr">${e(text)}</span></li>`;
    })
    .join("");
  return `<div class="bars-row"><div class="bars-label">${e(label)}</div><ol class="bars" aria-label="${e(label)}: one bar per day, oldest first">${items}</ol></div>`;
}

function incidentHtml(i: IncidentView): string {
  const reasons = Object.entries(i.summary).map(([name, why]) => `<li><code>${e(name)}</code>: ${e(why)}</li>`).join("");
  return `<article class="incident" id="incident-${i.id}">
<h3>${statusTag(i.severity)} ${i.status === "open" ? "Ongoing" : "Resolved"}: ${e(Object.keys(i.checks).join(", "))}</h3>
<p>Started <time datetime="${e(i.started_at)}">${e(i.started_at)}</time>${i.ended_at ? `, resolved <time datetime="${e(i.ended_at)}">${e(i.ended_at)}</time>` : ", still open"} (${i.duration_minutes} min).</p>
<ul>${reasons}</ul>
</article>`;
}

function checksTable(checks: Record<string, CheckBase>, uptime90: Record<string, { uptime_pct: number | null }>): string {
  const rows = CHECK_NAMES.map((name) => {
    const c = checks[name]!;
    const up = uptime90[name]?.uptime_pct ?? null;
    return `<tr id="check-${name}" class="row-${c.status}"><th scope="row"><code>${e(name)}</code></th><td>${statusTag(c.status)}</td><td>${e(c.summary)}</td><td>${up === null ? "no data" : formatPct(up)}</td><td><a href="/status/badge/${name}.svg?window=90d">badge</a></td></tr>`;
  }).join("\n");
  return `<table><thead><tr><th scope="col">Check</th><th scope="col">Status</th><th scope="col">Details</th><th scope="col">Uptime 90 d</th><th scope="col">Badge</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

function proofsTable(checks: Record<string, CheckBase>): string {
  const rows = (Object.keys(FRESHNESS_PROOFS) as Array<keyof typeof FRESHNESS_PROOFS>).map((name) => {
    // A check that could not be evaluated lacks the proof's fields: show what is known, never throw.
    const c = checks[name] as Partial<FreshnessCheck> & CheckBase;
    const def = FRESHNESS_PROOFS[name];
    const age = c.age_hours === null || c.age_hours === undefined ? "—" : `${c.age_hours} h`;
    const limit = c.stale_after_hours === undefined ? "—" : `${c.stale_after_hours} h`;
    return `<tr><th scope="row">${e(def.label)}</th><td>${statusTag(c.status)} ${e(c.freshness_status ?? "unknown")}</td><td>${age}</td><td>${limit}</td><td><a href="${def.path}.json">JSON</a> · <a href="${def.path}.csv">CSV</a></td></tr>`;
  }).join("\n");
  return `<table><thead><tr><th scope="col">Proof</th><th scope="col">Freshness</th><th scope="col">Age</th><th scope="col">Stale after</th><th scope="col">Evidence</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

function latencyHtml(l: ReturnType<typeof latencyPercentiles>): string {
  const ms = (v: number | null) => (v === null ? "—" : `${v} ms`);
  const o = l.overall;
  return `<dl class="latency"><div><dt>p50</dt><dd>${ms(o.p50_ms)}</dd></div><div><dt>p95</dt><dd>${ms(o.p95_ms)}</dd></div><div><dt>p99</dt><dd>${ms(o.p99_ms)}</dd></div><div><dt>requests</dt><dd>${o.samples}</dd></div></dl>
<p class="muted">Nearest-rank percentiles of server time over the last ${l.window.hours} h (not averages). <a href="/api/public/latency-percentiles?hours=24">Per endpoint</a>.</p>`;
}

function windowsLine(src: ReturnType<typeof uptimeSource>, exclude: boolean): string {
  const parts = ([["24 h", 24], ["7 d", 168], ["30 d", 720], ["90 d", 2160]] as const).map(([label, hours]) => {
    const up = uptimeFrom(src, hours, exclude).overall.uptime_pct;
    return `<div><dt>${label}</dt><dd>${up === null ? "no data" : formatPct(up)}</dd></div>`;
  });
  return `<dl class="windows">${parts.join("")}</dl>`;
}

/** Renders the whole page from live data. */
export function statusPage(ctx: AppContext, cache?: UptimeCache): string {
  const status = systemStatus(ctx);
  const exclude = loadPolicy(ctx).policy.exclude_maintenance_default;
  const src = uptimeSource(ctx, 24 * 90, cache);
  const bars = dailyBars(src, 90, exclude);
  const uptime90 = uptimeFrom(src, 24 * 90, exclude).checks;
  const incidents = listIncidents(ctx, RECENT_INCIDENT_HOURS, 50).incidents;
  const latency = latencyPercentiles(ctx, 24);
  const maint = status.maintenance.windows
    .map((w) => `<li>${statusTag(w.phase === "active" ? "warn" : "ok")} <strong>${e(w.title)}</strong>: ${e(w.starts_at)} to ${e(w.ends_at)} (${w.phase})${w.description ? ` — ${e(w.description)}` : ""}</li>`)
    .join("");
  const checks = status.checks as unknown as Record<string, CheckBase>;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Herald status: ${status.overall.toUpperCase()}</title>
<link rel="alternate" type="application/rss+xml" title="Herald incidents" href="/status/feed.rss">
<style>${PAGE_CSS}</style></head>
<body>
<header class="overall overall-${status.overall}">
<h1>Herald status</h1>
<p class="headline" id="overall">${statusTag(status.overall)} ${HEADLINE[status.overall]}</p>
<p class="muted">Evaluated <time datetime="${e(status.generated_at)}">${e(status.generated_at)}</time> · policy ${e(status.policy_version)} · last stored snapshot ${e(status.last_snapshot_at ?? "none yet")}</p>
</header>
<main>
${maint ? `<section id="maintenance"><h2>Maintenance</h2><ul>${maint}</ul></section>` : ""}
<section id="incidents"><h2>Incidents (last 14 days)</h2>
${incidents.length ? incidents.map(incidentHtml).join("\n") : "<p>No incidents in the last 14 days.</p>"}
</section>
<section id="checks"><h2>Checks</h2>
${checksTable(checks, uptime90)}
</section>
<section id="uptime"><h2>Uptime</h2>
${windowsLine(src, exclude)}
<p class="muted">One bar per UTC day, oldest first: green = no degraded time, amber = some, red = degraded 5% of the day or more, grey = not observed.${exclude ? " Maintenance windows are left out." : ""}</p>
${barsHtml("overall", bars.overall)}
${CHECK_NAMES.map((n) => barsHtml(n, bars.checks[n]!)).join("\n")}
</section>
<section id="proofs"><h2>Proof freshness</h2>
${proofsTable(checks)}
</section>
<section id="latency"><h2>Response times</h2>
${latencyHtml(latency)}
</section>
</main>
<footer><p>Machine-readable: <a href="/api/public/system-status">status JSON</a> · <a href="/api/public/system-status/uptime?hours=720">uptime</a> · <a href="/api/public/system-status/incidents">incidents</a> · <a href="/api/public/system-status/policy">policy</a> · <a href="/status/feed.rss">RSS</a> · <a href="/trust.json">trust.json</a> · <a href="/developers/deprecations.json">deprecations</a></p>
<p><img src="/status/badge/overall.svg?window=30d" alt="30-day uptime badge" height="20"></p></footer>
</body></html>
`;
}
