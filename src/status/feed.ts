import type { AppContext } from "../context";
import { listIncidents } from "./incidents";
import type { IncidentView } from "./incidents";
import { rfc822, xmlText } from "../http/xml-escape";

// /status/feed.rss: incidents as RSS 2.0 (what Statuspage and Upptime subscribers expect). One item per
// incident; its guid is stable, and an incident's item changes (title [Resolved], description) when it closes,
// so a reader that re-reads items sees the resolution.

const FEED_HOURS = 24 * 90;
const FEED_LIMIT = 50;

function itemOf(base: string, i: IncidentView): string {
  const checks = Object.entries(i.checks).map(([name, level]) => `${name} (${level})`).join(", ");
  const state = i.status === "open" ? "Ongoing" : "Resolved";
  const title = `[${state}] ${i.severity === "bad" ? "Outage" : "Degraded service"}: ${Object.keys(i.checks).join(", ") || "overall"}`;
  const lines = [
    `Started ${i.started_at}${i.ended_at ? `, resolved ${i.ended_at}` : ", still open"} (${i.duration_minutes} min).`,
    `Severity: ${i.severity}. Checks involved: ${checks}.`,
    ...Object.entries(i.summary).map(([name, why]) => `${name}: ${why}`),
  ];
  return `    <item>
      <title>${xmlText(title)}</title>
      <link>${xmlText(`${base}/status#incident-${i.id}`)}</link>
      <guid isPermaLink="false">herald-incident-${i.id}</guid>
      <pubDate>${rfc822(i.started_at)}</pubDate>
      <category>${i.severity}</category>
      <description>${xmlText(lines.join("\n"))}</description>
    </item>`;
}

export function incidentsFeed(ctx: AppContext): string {
  const base = ctx.config.publicBaseUrl;
  const { incidents } = listIncidents(ctx, FEED_HOURS, FEED_LIMIT);
  const now = ctx.clock.now();
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>Herald status: incidents</title>
    <link>${xmlText(`${base}/status`)}</link>
    <description>Incidents of the Herald service: opened when the overall status leaves ok, resolved when it returns.</description>
    <language>en</language>
    <lastBuildDate>${rfc822(now)}</lastBuildDate>
    <ttl>5</ttl>
    <atom:link href="${xmlText(`${base}/status/feed.rss`)}" rel="self" type="application/rss+xml"/>
${incidents.map((i) => itemOf(base, i)).join("\n")}
  </channel>
</rss>
`;
}
