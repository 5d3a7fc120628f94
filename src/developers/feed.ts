import type { AppContext } from "../context";
import { rfc822, xmlText as escapeXml } from "../http/formats/xml-escape";
import type { Registry } from "./registry";
import { entryView, published } from "./service";

/** GET /developers/deprecations.rss: RSS 2.0, one item per announced deprecation (none today: an empty channel). */
export function deprecationsFeed(ctx: AppContext, reg: Registry): string {
  const base = ctx.config.publicBaseUrl;
  const items = published(ctx, reg).map((d) => {
    const e = entryView(ctx, reg, d);
    const endpoints = e.endpoints.map((x) => `${x.method} ${x.path}`).join(", ");
    const text = `${e.description}\n\nEndpoints: ${endpoints}.${e.replacement ? ` Replacement: ${e.replacement.method} ${e.replacement.path}.` : ""}\nDeprecated ${e.deprecated_at}; sunset ${e.sunset_at}. Migration guide: ${e.migration_guide}`;
    return `    <item>
      <title>${escapeXml(`${e.title} (sunset ${e.sunset_at.slice(0, 10)})`)}</title>
      <link>${escapeXml(`${base}/developers/deprecations.json#${e.id}`)}</link>
      <guid isPermaLink="false">herald-deprecation-${escapeXml(e.id)}</guid>
      <pubDate>${rfc822(e.announced_at)}</pubDate>
      <description>${escapeXml(text)}</description>
    </item>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>Herald API deprecations</title>
    <link>${escapeXml(`${base}/developers/deprecations.json`)}</link>
    <description>Deprecation calendar of the Herald API: at least ${reg.policy.minimum_notice_days} days' notice before any sunset.</description>
    <language>en</language>
    <lastBuildDate>${rfc822(reg.updated_at)}</lastBuildDate>
    <atom:link href="${escapeXml(`${base}/developers/deprecations.rss`)}" rel="self" type="application/rss+xml"/>
${items.join("\n")}
  </channel>
</rss>
`;
}
