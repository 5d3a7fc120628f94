import { compileHtml, SafeHtml } from "../http/formats/html";
import { downloadPath, PORTAL_DOWNLOADS } from "./portal-downloads";
import { pagePath, PORTAL_PAGES, type PortalPage } from "./portal-pages";
import { SDK_DOWNLOAD_PREFIX, sdkTarball } from "./sdk";

// The developer portal's page around a rendered body: the same look as the front door (src/system/home.ts), a
// navigation of every page (a row of links on a phone, a column beside the text from 900 px on), the downloads, and
// where the text comes from. No script, no image, nothing from elsewhere: styles only, inline. Code blocks and table
// cells wrap instead of scrolling sideways, so the page is never wider than a 390 px screen and has no region a
// keyboard user would have to scroll.

const CSS = `
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #fff; }
a { color: #0969da; } a:focus-visible { outline: 2px solid #0969da; outline-offset: 2px; }
.skip { position: absolute; left: -10000px; } .skip:focus { position: static; }
header.top { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 10px 16px; display: flex; flex-wrap: wrap; gap: 4px 24px; align-items: baseline; }
header.top .brand { margin: 0; font-weight: 600; font-size: 17px; }
header.top .brand a { color: #1f2328; text-decoration: none; }
header.top ul, nav.pages ul { list-style: none; margin: 0; padding: 0; }
header.top ul { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 14px; }
.layout { max-width: 1200px; margin: 0 auto; padding: 0 16px; }
nav.pages { border-bottom: 1px solid #d1d9e0; padding: 12px 0; font-size: 15px; }
nav.pages ul { display: flex; flex-wrap: wrap; gap: 6px 16px; }
nav.pages .label { margin: 12px 0 4px; font-size: 13px; font-weight: 600; color: #59636e; text-transform: uppercase; letter-spacing: .04em; }
nav.pages .label:first-child { margin-top: 0; }
nav.pages a[aria-current="page"] { color: #1f2328; font-weight: 700; text-decoration: none; border-left: 3px solid #0969da; padding-left: 6px; }
main { min-width: 0; padding: 4px 0 32px; }
@media (min-width: 900px) {
  .layout { display: grid; grid-template-columns: 230px minmax(0, 1fr); gap: 48px; }
  nav.pages { border-bottom: 0; padding: 24px 0; }
  nav.pages ul { display: block; }
  nav.pages li { margin: 5px 0; }
}
h1 { font-size: 30px; line-height: 1.25; margin: 24px 0 12px; }
h2 { font-size: 22px; line-height: 1.3; margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 1px solid #d1d9e0; }
h3 { font-size: 18px; margin: 28px 0 8px; } h4 { font-size: 16px; margin: 24px 0 8px; }
h1, h2, h3, h4, p, li, dt, dd { overflow-wrap: anywhere; }
td, th { overflow-wrap: break-word; } td code, th code, td a, th a { overflow-wrap: anywhere; }
@media (max-width: 599px) { td, th { overflow-wrap: anywhere; } }
code { font: 0.875em/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #eff2f5; padding: 1px 4px; border-radius: 4px; }
pre { background: #f6f8fa; border: 1px solid #d1d9e0; border-radius: 6px; padding: 12px 14px; white-space: pre-wrap; overflow-wrap: anywhere; }
pre code { background: none; padding: 0; font-size: 13.5px; }
table { border-collapse: collapse; margin: 14px 0; font-size: 14.5px; width: 100%; }
th, td { border: 1px solid #d1d9e0; padding: 6px 9px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } .align-center { text-align: center; } .align-right { text-align: right; }
blockquote { margin: 12px 0; padding: 0 14px; border-left: 4px solid #d1d9e0; color: #3d444d; }
dl.catalog dt { margin-top: 14px; font-weight: 600; } dl.catalog dd { margin: 2px 0 0 16px; }
.meta { color: #59636e; font-weight: 400; }
nav.pager { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 12px; margin-top: 40px; padding-top: 16px; border-top: 1px solid #d1d9e0; }
footer { border-top: 1px solid #d1d9e0; color: #59636e; font-size: 14px; padding: 16px; }
footer p { max-width: 1200px; margin: 4px auto; }
`;

const link = (p: PortalPage, current: PortalPage) => ({ href: pagePath(p.slug), title: p.title, current: p === current });
type NavLink = ReturnType<typeof link>;

interface LayoutData {
  title: string;
  pages: NavLink[];
  files: Array<{ href: string; title: string }>;
  body: SafeHtml;
  previous: NavLink | null;
  next: NavLink | null;
  sources: string;
}

// The stylesheet is our constant, part of the template's source; every value is escaped (src/http/formats/html.ts).
const layout = compileHtml<LayoutData>(
  "developer-portal",
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title><%= it.title %> · Herald developer portal</title><style>${CSS}</style></head>
<body>
<header class="top"><a class="skip" href="#content">Skip to the text</a><p class="brand"><a href="/developers">Herald developer portal</a></p>
<ul><li><a href="/">Home</a></li><li><a href="/api/docs">API reference</a></li><li><a href="/status">Status</a></li></ul></header>
<div class="layout">
<nav class="pages" aria-label="Developer portal">
<p class="label" id="nav-guides">Guides</p>
<ul aria-labelledby="nav-guides"><% for (const p of it.pages) { %><li><a href="<%= p.href %>"<% if (p.current) { %> aria-current="page"<% } %>><%= p.title %></a></li><% } %></ul>
<p class="label" id="nav-files">Downloads</p>
<ul aria-labelledby="nav-files"><% for (const f of it.files) { %><li><a href="<%= f.href %>"><%= f.title %></a></li><% } %></ul>
</nav>
<main id="content">
<h1><%= it.title %></h1>
<%= it.body %>
<nav class="pager" aria-label="Previous and next page"><% if (it.previous) { %><a href="<%= it.previous.href %>" rel="prev">← <%= it.previous.title %></a><% } else { %><span></span><% } %><% if (it.next) { %><a href="<%= it.next.href %>" rel="next"><%= it.next.title %> →</a><% } %></nav>
</main>
</div>
<footer><p>Rendered from <%= it.sources %> of this Herald build; the API reference is <a href="/api/docs">/api/docs</a>, the whole contract <a href="/api/openapi.yaml">/api/openapi.yaml</a>.</p></footer>
</body></html>`,
);

const FILES = [
  ...PORTAL_DOWNLOADS.map((d) => ({ href: downloadPath(d), title: d.file })),
  { href: SDK_DOWNLOAD_PREFIX + sdkTarball.file, title: "TypeScript SDK (.tgz)" },
];

/**
 * The whole page. `body` is the rendered Markdown of the repository's own docs and the portal's own parts: marked
 * writes it from Markdown with raw HTML shown as text (src/developers/portal-markdown.ts), hence markup we trust.
 */
export function portalHtml(page: PortalPage, body: string, sources: readonly string[]): string {
  const at = PORTAL_PAGES.indexOf(page);
  const previous = PORTAL_PAGES[at - 1];
  const next = PORTAL_PAGES[at + 1];
  return layout({
    title: page.title,
    pages: PORTAL_PAGES.map((p) => link(p, page)),
    files: FILES,
    body: new SafeHtml(body),
    previous: previous ? link(previous, page) : null,
    next: next ? link(next, page) : null,
    sources: sources.length ? sources.join(" and ") : "the code",
  }).value;
}
