import type { AppContext } from "../../context";
import { type IncidentView, listIncidents } from "../incidents/incidents";
import { rfc822, xmlText } from "../../http/formats/xml-escape";

// The incident feeds: /status/feed.rss (RSS 2.0, what Statuspage and Upptime subscribers expect) and
// /status/feed.json (JSON Feed 1.1, https://jsonfeed.org/version/1.1). One item per incident of either source,
// newest first; its id is stable (herald-incident-<id>), and its title and text change as the incident moves
// (an operator update, [Resolved]), with date_modified saying when, so a reader that re-reads items sees it.
// JSON Feed is built as a typed object and serialised by JSON.stringify, which does all the escaping there is.

const FEED_HOURS = 24 * 90;
const FEED_LIMIT = 50;

const stateWord = (i: IncidentView) => (i.status === "open" ? "Ongoing" : "Resolved");
const itemTitle = (i: IncidentView) => `[${stateWord(i)}] ${i.title}`;
const itemLink = (base: string, i: IncidentView) => `${base}/status#incident-${i.id}`;

/** The item's text: what happened, then (operator incidents) every update, newest first. */
function itemLines(i: IncidentView): string[] {
  const checks = Object.entries(i.checks)
    .map(([name, level]) => `${name} (${level})`)
    .join(", ");
  return [
    `Started ${i.started_at}${i.ended_at ? `, resolved ${i.ended_at}` : ", still open"} (${i.duration_minutes} min).`,
    `Severity: ${i.severity}.${i.components.length ? ` Components: ${i.components.join(", ")}.` : ""}${checks ? ` Checks involved: ${checks}.` : ""}`,
    ...Object.entries(i.summary).map(([name, why]) => `${name}: ${why}`),
    ...i.updates.map((u) => `${u.created_at} ${u.state}: ${u.message}`),
  ];
}

function rssItem(base: string, i: IncidentView): string {
  return `    <item>
      <title>${xmlText(itemTitle(i))}</title>
      <link>${xmlText(itemLink(base, i))}</link>
      <guid isPermaLink="false">herald-incident-${i.id}</guid>
      <pubDate>${rfc822(i.started_at)}</pubDate>
      <category>${i.severity}</category>
      <description>${xmlText(itemLines(i).join("\n"))}</description>
    </item>`;
}

const DESCRIPTION =
  "Incidents of the Herald service: opened automatically when the overall status leaves ok and resolved when it returns, and written by the operators with their updates.";

export async function incidentsFeed(ctx: AppContext): Promise<string> {
  const base = ctx.config.publicBaseUrl;
  const { incidents } = await listIncidents(ctx, FEED_HOURS, FEED_LIMIT);
  const now = ctx.clock.now();
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>Herald status: incidents</title>
    <link>${xmlText(`${base}/status`)}</link>
    <description>${xmlText(DESCRIPTION)}</description>
    <language>en</language>
    <lastBuildDate>${rfc822(now)}</lastBuildDate>
    <ttl>5</ttl>
    <atom:link href="${xmlText(`${base}/status/feed.rss`)}" rel="self" type="application/rss+xml"/>
${incidents.map((i) => rssItem(base, i)).join("\n")}
  </channel>
</rss>
`;
}

/**
 * JSON Feed 1.1: the fields the spec requires (version, title, items[].id, content) and the useful optional ones
 * (routes.ts documents them field by field).
 */
export async function incidentsJsonFeed(ctx: AppContext): Promise<string> {
  const base = ctx.config.publicBaseUrl;
  const { incidents } = await listIncidents(ctx, FEED_HOURS, FEED_LIMIT);
  const feed = {
    version: "https://jsonfeed.org/version/1.1",
    title: "Herald status: incidents",
    home_page_url: `${base}/status`,
    feed_url: `${base}/status/feed.json`,
    description: DESCRIPTION,
    language: "en",
    authors: [{ name: "Herald operators", url: `${base}/status` }],
    items: incidents.map((i) => ({
      id: `herald-incident-${i.id}`,
      url: itemLink(base, i),
      title: itemTitle(i),
      content_text: itemLines(i).join("\n"),
      date_published: i.started_at,
      date_modified: i.updated_at,
      tags: [i.source, i.severity, i.status, ...i.components],
      // A JSON Feed extension (keys starting with "_" are reserved for them): the incident's own fields.
      _herald: {
        source: i.source,
        status: i.status,
        state: i.state,
        severity: i.severity,
        components: i.components,
        started_at: i.started_at,
        ended_at: i.ended_at,
      },
    })),
  };
  return `${JSON.stringify(feed, null, 2)}\n`;
}
