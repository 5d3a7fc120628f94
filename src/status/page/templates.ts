import { compileHtml, type SafeHtml } from "../../http/formats/html";
import { PAGE_CSS } from "./style";

// The status page's templates (Eta, auto-escaped: see src/http/formats/html.ts for the rules). Each partial renders
// one thing from plain data; page.ts gathers the data and joins the partials. Ids are stable: tests, anchors
// in the feeds (#incident-<id>) and people's bookmarks point at them.

export type TagLevel = "ok" | "warn" | "bad" | "none";

export const tagHtml = compileHtml<{ level: TagLevel; text: string }>("tag", `<span class="tag tag-<%= it.level %>"><%= it.text %></span>`);

/** 90 daily bars and, under them, the span they cover and the uptime over it (Statuspage's layout). */
export const barsHtml = compileHtml<{
  label: string;
  /** `old`: older than 30 days, hidden on narrow screens (90 bars do not fit a phone). */
  bars: Array<{ level: TagLevel; text: string; old: boolean }>;
  uptime: string;
}>(
  "bars",
  `<div class="bars-row"><ol class="bars" aria-label="<%= it.label %>: one bar per day, oldest first"><% for (const b of it.bars) { %>` +
    `<li class="bar bar-<%= b.level %><%= b.old ? " bar-old" : "" %>" title="<%= b.text %>"><span class="sr"><%= b.text %></span></li><% } %></ol>` +
    `<div class="bars-foot"><span><span class="wide">90 days ago</span><span class="narrow">30 days ago</span></span><span class="bars-uptime"><%= it.uptime %></span><span>Today</span></div></div>`,
);

/** A time as an ISO value (for <time datetime>) and as text people read ("2026-03-10 11:50 UTC"). */
export interface TimeData {
  iso: string;
  text: string;
}

export const incidentHtml = compileHtml<{
  id: number;
  tag: SafeHtml;
  title: string;
  sourceLabel: string;
  startedAt: TimeData;
  endedAt: TimeData | null;
  duration: string;
  components: string[];
  reasons: Array<{ check: string; why: string }>;
  updates: Array<{ state: string; message: string; at: TimeData }>;
  open: boolean;
}>(
  "incident",
  `<article class="incident<%= it.open ? " incident-open" : "" %>" id="incident-<%= it.id %>">
<h3><%= it.tag %> <%= it.title %></h3>
<p class="muted"><%= it.sourceLabel %> · started <time datetime="<%= it.startedAt.iso %>"><%= it.startedAt.text %></time><% if (it.endedAt !== null) { %>, resolved <time datetime="<%= it.endedAt.iso %>"><%= it.endedAt.text %></time><% } else { %>, still open<% } %> (<%= it.duration %>)<% if (it.components.length) { %> · affects <%= it.components.join(", ") %><% } %></p>
<% if (it.updates.length) { %><ol class="updates"><% for (const u of it.updates) { %><li class="update update-<%= u.state %>"><strong class="state"><%= u.state %></strong> <time datetime="<%= u.at.iso %>"><%= u.at.text %></time><p><%= u.message %></p></li><% } %></ol><% } %>
<% if (it.reasons.length) { %><ul class="reasons"><% for (const r of it.reasons) { %><li><code><%= r.check %></code>: <%= r.why %></li><% } %></ul><% } %>
</article>`,
);

export const checkRowHtml = compileHtml<{
  name: string;
  rowClass: string;
  tag: SafeHtml;
  summary: string;
  uptime: string;
}>(
  "check-row",
  `<tr id="check-<%= it.name %>" class="<%= it.rowClass %>"><th scope="row"><code><%= it.name %></code></th><td class="status"><%= it.tag %></td><td class="details"><%= it.summary %></td>` +
    `<td class="uptime"><span class="cell-label">90 d: </span><%= it.uptime %></td><td class="badge"><a href="/status/badge/<%= it.name %>.svg?window=90d">badge</a></td></tr>`,
);

export const componentHtml = compileHtml<{
  id: string;
  name: string;
  description: string;
  tag: SafeHtml;
  bars: SafeHtml;
  rows: SafeHtml;
  /** Show the checks without a click (a degraded component). */
  open: boolean;
}>(
  "component",
  `<article class="component" id="component-<%= it.id %>">
<div class="component-head"><h3><%= it.name %></h3><%= it.tag %></div>
<p class="muted"><%= it.description %></p>
<%= it.bars %>
<details<%= it.open ? " open" : "" %>><summary>Checks</summary>
<table class="checks"><thead><tr><th scope="col">Check</th><th scope="col">Status</th><th scope="col">Details</th><th scope="col">Uptime 90 d</th><th scope="col">Badge</th></tr></thead><tbody>
<%= it.rows %>
</tbody></table></details>
</article>`,
);

export const proofRowHtml = compileHtml<{
  label: string;
  tag: SafeHtml;
  freshness: string;
  age: string;
  limit: string;
  path: string;
}>(
  "proof-row",
  `<tr><th scope="row"><%= it.label %></th><td><%= it.tag %> <%= it.freshness %></td><td><span class="cell-label">age </span><%= it.age %></td><td><span class="cell-label">stale after </span><%= it.limit %></td>` +
    `<td><a href="<%= it.path %>.json">JSON</a> · <a href="<%= it.path %>.csv">CSV</a></td></tr>`,
);

// The stylesheet is part of the template's source (our constant, compiled in), never data: escaping does not
// apply inside <style>, so nothing from outside may reach it.
export const pageHtml = compileHtml<{
  level: "ok" | "warn" | "bad";
  levelText: string;
  headlineTag: SafeHtml;
  headline: string;
  generatedAt: TimeData;
  policyVersion: string;
  lastSnapshot: string;
  active: SafeHtml | null;
  maintenance: Array<{ tag: SafeHtml; title: string; startsAt: string; endsAt: string; phase: string; description: string | null }>;
  windows: Array<{ label: string; value: string; since: string | null }>;
  excludeMaintenance: boolean;
  overallBars: SafeHtml;
  components: SafeHtml;
  past: SafeHtml | null;
  proofs: SafeHtml;
  latency: { p50: string; p95: string; p99: string; samples: number; hours: number };
}>(
  "status-page",
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Herald status: <%= it.levelText %></title>
<link rel="alternate" type="application/rss+xml" title="Herald incidents (RSS)" href="/status/feed.rss">
<link rel="alternate" type="application/feed+json" title="Herald incidents (JSON Feed)" href="/status/feed.json">
<style>${PAGE_CSS}</style></head>
<body><div class="wrap">
<header class="card overall overall-<%= it.level %>">
<h1>Herald status</h1>
<p class="headline" id="overall"><%= it.headlineTag %> <%= it.headline %></p>
<p class="muted">Evaluated <time datetime="<%= it.generatedAt.iso %>"><%= it.generatedAt.text %></time> · policy <%= it.policyVersion %> · last stored snapshot <%= it.lastSnapshot %></p>
</header>
<main>
<% if (it.active !== null) { %><section class="card" id="active-incidents"><h2>Active incidents</h2>
<%= it.active %>
</section><% } %>
<% if (it.maintenance.length) { %><section class="card" id="maintenance"><h2>Maintenance</h2><ul><% for (const w of it.maintenance) { %><li><%= w.tag %> <strong><%= w.title %></strong>: <%= w.startsAt %> to <%= w.endsAt %> (<%= w.phase %>)<% if (w.description !== null) { %> — <%= w.description %><% } %></li><% } %></ul></section><% } %>
<section class="card" id="uptime"><h2>Uptime</h2>
<dl class="windows"><% for (const w of it.windows) { %><div><dt><%= w.label %></dt><dd><%= w.value %></dd><% if (w.since !== null) { %><dd class="since">since <%= w.since %></dd><% } %></div><% } %></dl>
<%= it.overallBars %>
<p class="muted">Uptime counts only the time the service was being watched (a status snapshot a minute): a window reaching back before monitoring began says "since". One bar per UTC day, oldest first: green = no degraded time, amber = some, red = degraded 5% of the day or more, grey = not observed.<% if (it.excludeMaintenance) { %> Maintenance windows are left out.<% } %></p>
</section>
<section class="card" id="components"><h2>Components</h2>
<p class="muted">Each component shows the worst of its checks and of any open incident the operators report for it. Checks with nothing to judge in this deployment are <span class="tag tag-none">NOT CONFIGURED</span> and do not count.</p>
<%= it.components %>
</section>
<section class="card" id="incidents"><h2>Past incidents (14 days)</h2>
<% if (it.past !== null) { %><%= it.past %><% } else { %><p>No incidents in the last 14 days.</p><% } %>
</section>
<section class="card" id="proofs"><h2>Proof freshness</h2>
<table class="proofs"><thead><tr><th scope="col">Proof</th><th scope="col">Freshness</th><th scope="col">Age</th><th scope="col">Stale after</th><th scope="col">Evidence</th></tr></thead><tbody>
<%= it.proofs %>
</tbody></table>
</section>
<section class="card" id="latency"><h2>Response times</h2>
<dl class="latency"><div><dt>p50</dt><dd><%= it.latency.p50 %></dd></div><div><dt>p95</dt><dd><%= it.latency.p95 %></dd></div><div><dt>p99</dt><dd><%= it.latency.p99 %></dd></div><div><dt>requests</dt><dd><%= it.latency.samples %></dd></div></dl>
<p class="muted">Percentiles of server time over the last <%= it.latency.hours %> h (not averages), read from latency histograms: within 9 % of the exact figure. <a href="/api/public/latency-percentiles?hours=24">Per endpoint</a>.</p>
</section>
</main>
<footer><p>Machine-readable: <a href="/api/public/system-status">status JSON</a> · <a href="/api/public/system-status/uptime?hours=720">uptime</a> · <a href="/api/public/system-status/incidents">incidents</a> · <a href="/api/public/system-status/policy">policy</a> · <a href="/status/feed.rss">RSS</a> · <a href="/status/feed.json">JSON Feed</a> · <a href="/trust.json">trust.json</a> · <a href="/developers/deprecations.json">deprecations</a></p>
<p><img src="/status/badge/overall.svg?window=30d" alt="30-day uptime badge" height="20"></p></footer>
</div></body></html>
`,
);
