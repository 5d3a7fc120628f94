import type { AppContext } from "../context";
import { ERROR_CATALOG } from "../http/errors/errors";
import type { CatalogEntry } from "../http/errors/error-entry";
import { compileHtml, type SafeHtml } from "../http/formats/html";
import { playbookMarkdown } from "./playbook";
import { downloadPath, PORTAL_DOWNLOADS } from "./portal-downloads";
import { pagePath, PORTAL_PAGES } from "./portal-pages";
import type { Registry } from "./registry";
import { SDK_DOWNLOAD_PREFIX, SDK_MANIFEST_PATH, sdkTarball } from "./sdk";
import { entryView, published } from "./service";

// The parts of the developer portal's pages that the portal writes itself, from what the code holds rather than from
// a document: the list of pages, the Python signer's file with the downloads, the error catalog, the changelog. Each
// is Markdown rendered like the docs, except the catalog, a template over the catalog's entries.

/** The index page's list of the other pages, with what each holds. */
export function pagesMarkdown(): string {
  const rows = PORTAL_PAGES.filter((p) => p.slug).map((p) => `- [${p.title}](${pagePath(p.slug)}): ${p.summary}.`);
  return ["## The pages", "", ...rows, ""].join("\n");
}

/** The signing page's end: the Python signer as served, and every file to download. */
export function signersMarkdown(): string {
  const python = PORTAL_DOWNLOADS.find((d) => d.file === "herald_sign.py")!;
  return [
    "## Python",
    "",
    `[herald_sign.py](${downloadPath(python)}) (standard library only) signs a request as [the canonical string](#3-the-canonical-string)`,
    "says and sends it: `herald(method, url, body)` adds the nonce and an `Idempotency-Key` to a mutation and returns the",
    "answer's JSON. When Herald refuses, it raises `HeraldError`: its `code` is the body's `error` (branch on it), with",
    "`status`, `message`, `request_id` (quote it to the operators) and the whole `body` (a replay's `original_response`).",
    "",
    "```python",
    python.text.trimEnd(),
    "```",
    "",
    "## Downloads",
    "",
    ...PORTAL_DOWNLOADS.map((d) => `- [${d.file}](${downloadPath(d)}): ${d.title.toLowerCase()}, ${d.description} (\`${d.source}\`).`),
    `- [${sdkTarball.file}](${SDK_DOWNLOAD_PREFIX}${sdkTarball.file}): the TypeScript SDK, \`@herald/client\` (its manifest, with the checksums: [sdk-manifest.json](${SDK_MANIFEST_PATH})).`,
    "",
  ].join("\n");
}

/** The codes a partner's calls may meet: the catalog's entries of the partner, sandbox and salutes routes. */
const PARTNER_GROUPS = new Set(["partner", "sandbox", "salutes"]);

/** A catalog entry as the errors page shows it. */
const catalogRow = ([code, e]: [string, CatalogEntry]) => ({
  code,
  status: e.http_status,
  title: e.title,
  retryClass: e.retry_class,
  behavior: e.retry_behavior,
  rationale: e.status_rationale,
});

const catalogHtml = compileHtml<{ rows: Array<ReturnType<typeof catalogRow>>; count: number }>(
  "developer-portal-catalog",
  `<h2 id="the-error-catalog">The error catalog</h2>
<p>The <%= it.count %> codes a partner route may answer, from the catalog this server runs with: the same entries as
<a href="/api/partner/errors.json"><code>/api/partner/errors.json</code></a> (public, no signature) and
<a href="/developers/api-errors.json"><code>/developers/api-errors.json</code></a>, which also give each code's
modes, route groups and Retry-After. Each code's address here is <code>#</code> and the code.</p>
<dl class="catalog"><% for (const r of it.rows) { %>
<dt id="<%= r.code %>"><code><%= r.code %></code> <span class="meta">HTTP <%= r.status %> · <%= r.retryClass %></span></dt>
<dd><strong><%= r.title %>.</strong> <%= r.behavior %><% if (r.rationale) { %> <span class="meta">Why <%= r.status %>: <%= r.rationale %></span><% } %></dd><% } %>
</dl>
`,
);

/** The errors page's catalog, in code order. */
export function catalogSection(): SafeHtml {
  const rows = Object.entries(ERROR_CATALOG as Record<string, CatalogEntry>)
    .filter(([, e]) => e.endpoint_groups.some((g) => PARTNER_GROUPS.has(g)))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(catalogRow);
  return catalogHtml({ rows, count: rows.length });
}

/**
 * The changelog page: the changes the registry records (an announced deprecation is the one kind of change a partner
 * must act on; new fields and routes ship without one), then the playbook as /developers/deprecations-playbook.md
 * serves it. Computed per request: a deprecation's phase moves with the clock.
 */
export function changelogMarkdown(ctx: AppContext, reg: Registry): string {
  const entries = published(ctx, reg).map((d) => entryView(ctx, reg, d));
  const changes = entries.length
    ? entries.map(
        (e) =>
          `- **${e.announced_at.slice(0, 10)}**: ${e.title} (\`${e.id}\`, ${e.phase}; sunset ${e.sunset_at.slice(0, 10)}). ${e.description} Migration: ${e.migration_guide}`,
      )
    : ["- No breaking change and no deprecation has been announced: every v1 route answers as documented."];
  const playbook = playbookMarkdown(ctx, reg).replace(/^# .*\n/, "");
  return [
    "## Changelog",
    "",
    `The deprecation registry of this build (version ${reg.version}, updated ${reg.updated_at.slice(0, 10)}); the same as data:`,
    "[deprecations.json](/developers/deprecations.json), [RSS](/developers/deprecations.rss), and the steps below as",
    "[Markdown](/developers/deprecations-playbook.md) and [JSON](/developers/deprecations-playbook.json).",
    "",
    ...changes,
    "",
    "## Versioning and deprecation policy",
    "",
    playbook.replace(/^## /gm, "### "),
  ].join("\n");
}
