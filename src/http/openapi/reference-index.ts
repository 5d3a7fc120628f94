import { AUDIENCES, audienceOf, type AudienceSlug } from "./audiences";
import { escapeHtml } from "../formats/html";
import type { OpenApiDocument } from "./components";
import { METHODS } from "./subset";

// The operations of each audience as plain HTML in the reference page (/api/docs), shown from the first paint while
// Scalar starts (~2.5 s at 4× CPU throttling even for one operation: bench/README.md, "docs"). Built with the
// documents (in the worker under `herald serve`): it is as long as the document.

interface Entry {
  method: string;
  path: string;
  summary: string;
  tag: string;
}

/**
 * The list: one section per audience (`data-audience`; the page shows the one its address names), the operations
 * grouped by their first tag in the document's tag order, each linking to Scalar's id for it
 * (`#partners/tag/partner/POST/api/partner/users`).
 */
export function referenceIndex(doc: OpenApiDocument): string {
  const byAudience = new Map<AudienceSlug, Entry[]>(AUDIENCES.map((a) => [a.slug, []]));
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const op = raw as { tags?: string[]; summary?: string; security?: Array<Record<string, unknown>> };
      const tags = op.tags ?? [];
      byAudience.get(audienceOf(op))!.push({ method: method.toUpperCase(), path, summary: op.summary ?? "", tag: tags[0] ?? "default" });
    }
  }
  const order = (doc.tags ?? []).map((t) => t.name);
  const rank = (tag: string) => (order.includes(tag) ? order.indexOf(tag) : order.length);
  const sections = AUDIENCES.map((a) => {
    const entries = byAudience.get(a.slug)!;
    const tags = [...new Set(entries.map((e) => e.tag))].sort((x, y) => rank(x) - rank(y));
    const groups = tags.map((tag) => {
      const items = entries
        .filter((e) => e.tag === tag)
        .map((e) => {
          const href = `#${a.slug}/tag/${encodeURIComponent(tag)}/${e.method}${e.path}`;
          return `<li data-operation><a href="${escapeHtml(href)}"><b>${e.method}</b> <code>${escapeHtml(e.path)}</code> ${escapeHtml(e.summary)}</a></li>`;
        })
        .join("");
      return `<h2>${escapeHtml(tag)}</h2><ul>${items}</ul>`;
    });
    return `<section data-audience="${a.slug}"><h1>${escapeHtml(`${String(doc.info.title)}: ${a.title}`)}</h1>${groups.join("")}</section>`;
  });
  return `<div class="ix"><p>The interactive reference is loading; meanwhile, the operations (the whole document: <a href="/api/openapi.json">/api/openapi.json</a>).</p>${sections.join("")}</div>`;
}
