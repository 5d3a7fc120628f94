// The messenger console page's markup (Eta, every value escaped; src/http/html.ts). The frame and the table styles
// are the console's (src/auth/operator-page.ts); only the chart and the range form add a few rules of their own.
import { compileHtml, type SafeHtml } from "../../http/html";
import type { CampaignRow, ConsoleData, DayPoint, MissionLine } from "./console-page-data";

const STYLE = `<style>
svg.chart { display:block; width:100%; max-width:760px; height:auto; margin:8px 0; }
/* The chart scales with the column: on a phone its text is drawn larger in its own units to stay readable. */
@media (max-width: 700px) { svg.chart text { font-size:18px; } }
form.range { display:flex; flex-wrap:wrap; gap:8px 12px; align-items:center; margin:12px 0; }
form.range input[type=number] { font:inherit; width:6em; padding:4px 8px; border:1px solid var(--line); border-radius:6px; }
dl.totals { display:grid; grid-template-columns:repeat(auto-fit, minmax(150px, 1fr)); gap:8px; margin:12px 0; }
dl.totals div { border:1px solid var(--line); border-radius:8px; padding:8px 12px; }
dl.totals dt { color:var(--muted); font-size:13px; } dl.totals dd { margin:0; font-size:18px; font-weight:600; overflow-wrap:anywhere; }
details summary { cursor:pointer; color:var(--accent); margin:8px 0; }
table.data button { white-space:nowrap; padding:2px 10px; }
/* Short identifiers break only where they must: whole in the wide table, wrapped in the narrow one. */
@media (min-width: 701px) { table.data td.key, table.data td.key code { overflow-wrap:normal; } }
</style>`;

interface Missions {
  rows: MissionLine[];
  total: number;
  csrfToken: string | null;
  days: number;
}

const missionsHtml = compileHtml<Missions>(
  "messenger-console-missions",
  `<section id="missions"><h2>Missions</h2>
<p class="muted">Progress source: <strong>server</strong> — the server counts the event itself; <strong>self-reported</strong> — the mini-app's word, under tighter caps. Caps: progress units a player may add per UTC day, and accepted events per mission per minute.</p>
<% if (it.rows.length === 0) { %><p class="muted" id="missions-none">None.</p><% } else { %><table class="data" id="mission-rows"><thead><tr><th>Mission</th><th>Title</th><th>Counts</th><th>Progress source</th><th>Target</th><th>Reward</th><th>Caps</th><th>State</th><th>Revision</th><th>Change</th></tr></thead><tbody>
<% for (const m of it.rows) { %><tr id="mission-<%= m.key %>"><td data-label="Mission" class="key"><code><%= m.key %></code></td><td data-label="Title"><%= m.title %></td><td data-label="Counts" class="key"><code><%= m.eventType %></code></td><td data-label="Progress source"><span class="badge <%= m.serverCounted ? "ok" : "warn" %>"><%= m.source %></span></td><td data-label="Target"><%= m.target %></td><td data-label="Reward"><%= m.reward %></td><td data-label="Caps"><%= m.caps %></td><td data-label="State"><span class="<%= m.active ? "badge ok" : "badge" %>"><%= m.active ? "active" : "inactive" %></span></td><td data-label="Revision"><%= m.revision %> <span class="muted">(<%= m.updated %>)</span></td><td data-label="Change"><form class="inline" method="post" action="/admin/console/messenger/missions/<%= m.key %>/state"><% if (it.csrfToken !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrfToken %>"><% } %><input type="hidden" name="active" value="<%= m.active ? "0" : "1" %>"><input type="hidden" name="revision" value="<%= m.revision %>"><input type="hidden" name="days" value="<%= it.days %>"><button type="submit" id="toggle-<%= m.key %>" aria-label="<%= m.active ? "Deactivate" : "Activate" %> mission <%= m.key %>"><%= m.active ? "Deactivate" : "Activate" %></button></form></td></tr>
<% } %></tbody></table><% if (it.total > it.rows.length) { %><p class="muted" id="missions-more">Showing the first <%= it.rows.length %> of <%= it.total %>; the missions JSON below pages through the rest.</p><% } %><% } %></section>`,
);

const campaignsHtml = compileHtml<{ rows: CampaignRow[]; cut: boolean; defaultWheel: string }>(
  "messenger-console-campaigns",
  `<section id="campaigns"><h2>Campaigns</h2>
<p class="muted">Enabled catalog and wheel campaigns that are running now or are scheduled to start; ended and disabled ones are in the JSON lists below. A player outside every wheel campaign spins the built-in wheel: <span id="default-wheel"><%= it.defaultWheel %></span>.</p>
<% if (it.rows.length === 0) { %><p class="muted" id="campaigns-none">None.</p><% } else { %><table class="data" id="campaign-rows"><thead><tr><th>Campaign</th><th>Kind</th><th>Game</th><th>Audience</th><th>Window</th><th>State</th></tr></thead><tbody>
<% for (const c of it.rows) { %><tr><td data-label="Campaign"><%= c.title %></td><td data-label="Kind" class="key"><%= c.kind %> <code><%= c.key %></code></td><td data-label="Game" class="key"><code><%= c.game %></code></td><td data-label="Audience" class="key"><code><%= c.audience %></code></td><td data-label="Window"><%= c.window %></td><td data-label="State"><span class="badge <%= c.state === "active" ? "ok" : "warn" %>"><%= c.state %></span></td></tr>
<% } %></tbody></table><% } %><% if (it.cut) { %><p class="muted" id="campaigns-more">Only the latest 200 of each kind were read; the JSON lists below hold the rest.</p><% } %></section>`,
);

interface BodyData {
  generatedAt: string;
  days: number;
  maxDays: number;
  from: string;
  to: string;
  error: string | null;
  done: string | null;
  chart: SafeHtml;
  totals: ConsoleData["totals"];
  games: ConsoleData["games"];
  series: DayPoint[];
  campaigns: SafeHtml;
  missions: SafeHtml;
  exports: Array<readonly [string, string]>;
}

const bodyHtml = compileHtml<BodyData>(
  "messenger-console-page",
  `${STYLE}<h1>Messenger</h1>
<p class="lead">The Telegram mini-app's games, campaigns and missions. As of <%= it.generatedAt %>; all times UTC.</p>
<% if (it.done !== null) { %><section class="summary ready" id="done" role="status"><p><%= it.done %></p></section><% } %>
<% if (it.error !== null) { %><p class="error" id="page-error" role="alert"><%= it.error %></p><% } %>
<form class="range" method="get" action="/admin/console/messenger" id="range-form"><label for="days">Days</label><input type="number" id="days" name="days" min="1" max="<%= it.maxDays %>" step="1" required value="<%= it.days %>"><button type="submit" id="range-submit">Show</button><span class="muted">the last N UTC days, today included (1–<%= it.maxDays %>)</span></form>
<section id="overview"><h2>Overview, <%= it.from %> to <%= it.to %></h2>
<dl class="totals" id="totals"><% for (const t of it.totals) { %><div><dt><%= t.label %></dt><dd id="<%= t.id %>"><%= t.value %></dd></div><% } %></dl>
<%= it.chart %>
<p class="muted">Credits are what the plays paid out, in points (a free spin and a missile counted at their shop price); players are those with any game ledger entry that day. Counted from the daily aggregates, folded from the ledger just now.</p>
<details id="per-day"><summary>The numbers per day (<%= it.series.length %> days)</summary>
<table class="data" id="day-rows"><thead><tr><th>Day</th><th>Plays</th><th>Players</th><th>Credits (points value)</th></tr></thead><tbody>
<% for (const p of it.series) { %><tr><td data-label="Day"><%= p.day %></td><td data-label="Plays"><%= p.plays %></td><td data-label="Players"><%= p.players %></td><td data-label="Credits"><%= p.credits %></td></tr>
<% } %></tbody></table></details>
<h3>Per game</h3>
<table class="data" id="game-rows"><thead><tr><th>Game</th><th>Plays</th><th>Players</th><th>Credits (points value)</th><th>Cost (points value)</th><th>Return to player</th></tr></thead><tbody>
<% for (const g of it.games) { %><tr id="game-<%= g.game %>"><td data-label="Game"><code><%= g.game %></code></td><td data-label="Plays"><%= g.plays %></td><td data-label="Players"><%= g.players %></td><td data-label="Credits"><%= g.credits %></td><td data-label="Cost"><%= g.cost %></td><td data-label="Return to player"><%= g.rtp %></td></tr>
<% } %></tbody></table></section>
<%= it.campaigns %>
<%= it.missions %>
<section id="exports"><h2>Exports</h2><p class="muted">Every messenger admin read, with this session (or the admin bearer token).</p><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

export interface PageExtras {
  error: string | null;
  done: string | null;
  csrfToken: string | null;
  maxDays: number;
  chart: SafeHtml;
  exports: Array<readonly [string, string]>;
}

export function consoleBody(d: ConsoleData, x: PageExtras): SafeHtml {
  return bodyHtml({
    generatedAt: d.generatedAt,
    days: d.days,
    maxDays: x.maxDays,
    from: d.from,
    to: d.to,
    error: x.error,
    done: x.done,
    chart: x.chart,
    totals: d.totals,
    games: d.games,
    series: d.series,
    campaigns: campaignsHtml({ rows: d.campaigns, cut: d.campaignsCut, defaultWheel: d.defaultWheel }),
    missions: missionsHtml({ rows: d.missions, total: d.missionsTotal, csrfToken: x.csrfToken, days: d.days }),
    exports: x.exports,
  });
}

/** The page when MESSENGER_BOT_TOKEN is unset: it says so plainly rather than answering the JSON 503. */
export const notConfiguredBody = compileHtml<{ generatedAt: string; error: string | null }>(
  "messenger-console-not-configured",
  `<h1>Messenger</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC.</p>
<% if (it.error !== null) { %><p class="error" id="page-error" role="alert"><%= it.error %></p><% } %>
<section id="not-configured" class="summary attention"><p><strong>The Telegram bot is not configured (MESSENGER_BOT_TOKEN is unset).</strong></p>
<ul><li>The mini-app and every messenger admin route, the exports included, answer <code>503 messenger_not_configured</code> until it is set.</li>
<li>Set <code>MESSENGER_BOT_TOKEN</code> (and <code>MESSENGER_WEBHOOK_SECRET</code>) as docs/messenger.md, "Configuration", describes, then restart Herald; the <a href="/admin/ops/config">configuration page</a> shows what this process read.</li></ul></section>`,
);
