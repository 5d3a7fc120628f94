import { OPERATOR_NO_STORE } from "../http/caching/cache-control";
import { compileHtml, escapeHtml, htmlResponse, joinHtml, SafeHtml } from "../http/formats/html";
import { pageSecurityHeaders, withPageSecurity } from "../http/security-headers";

// The frame of every operator page (the config page, the sign-in form; later the readiness page): one column,
// inline CSS, no JavaScript, readable from 390 px (a phone) up. Templates are Eta with auto-escaping
// (src/http/formats/html.ts); the CSRF token is printed only into hidden form fields, never into a URL.

const CSS = `
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#f6f8fa; --accent:#0969da; --warn:#9a6700; --warn-bg:#fff8c5; --bad:#d1242f; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:#fff; }
header.top { display:flex; flex-wrap:wrap; align-items:center; justify-content:space-between; gap:8px 16px; padding:12px 20px; border-bottom:1px solid var(--line); background:var(--bg); }
header.top .brand { font-weight:600; }
header.top nav { display:flex; flex-wrap:wrap; gap:4px 14px; align-items:center; flex-basis:100%; font-size:14px; }
header.top nav a[aria-current=page] { font-weight:600; color:var(--fg); text-decoration:none; border-bottom:2px solid var(--accent); }
header.top .account { display:flex; flex-wrap:wrap; gap:8px; align-items:center; }
header.top .who { color:var(--muted); font-size:13px; }
main { max-width:1100px; margin:0 auto; padding:20px; }
h1 { font-size:24px; margin:0 0 4px; }
h1, h2, h3, p, li, label, summary { overflow-wrap:anywhere; }
input, select, textarea { max-width:100%; }
h2 { font-size:18px; margin:28px 0 8px; padding-bottom:4px; border-bottom:1px solid var(--line); }
p.lead, .muted { color:var(--muted); }
a { color:var(--accent); }
button { font:inherit; padding:6px 14px; border:1px solid var(--line); border-radius:6px; background:#fff; cursor:pointer; }
button.primary { background:#1f883d; border-color:#1a7f37; color:#fff; font-weight:600; }
form.inline { display:inline; margin:0; }
.card { max-width:420px; margin:48px auto; padding:24px; border:1px solid var(--line); border-radius:8px; background:#fff; }
.card label { display:block; font-weight:600; margin:0 0 6px; }
.card input[type=password] { width:100%; font:inherit; padding:8px 10px; border:1px solid var(--line); border-radius:6px; margin-bottom:14px; }
.error { color:var(--bad); border:1px solid var(--bad); border-radius:6px; padding:8px 10px; background:#ffebe9; }
.legend { display:flex; flex-wrap:wrap; gap:8px 16px; font-size:13px; color:var(--muted); }
.badge { display:inline-block; font-size:12px; padding:0 6px; border-radius:10px; border:1px solid var(--line); color:var(--muted); white-space:nowrap; }
.badge.changed { background:var(--warn-bg); border-color:#d4a72c; color:var(--warn); font-weight:600; }
table.vars { width:100%; border-collapse:collapse; table-layout:fixed; }
/* A fixed-layout table: a word breaks only when longer than its whole column; a variable's value may break anywhere. */
table.vars th, table.vars td { text-align:left; vertical-align:top; padding:6px 8px; border-bottom:1px solid var(--line); overflow-wrap:break-word; }
table.vars td code { overflow-wrap:anywhere; }
table.vars th { font-size:13px; color:var(--muted); font-weight:600; }
table.vars col.name { width:28%; } table.vars col.value { width:24%; } table.vars col.source { width:11%; }
table.vars tr.changed td { background:var(--warn-bg); }
table.vars code { font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; }
td.doc { color:var(--muted); font-size:13px; }
h3 { font-size:15px; margin:18px 0 6px; }
.badge.ok { background:#dafbe1; border-color:#4ac26b; color:#116329; }
.badge.warn { background:var(--warn-bg); border-color:#d4a72c; color:var(--warn); }
.badge.bad { background:#ffebe9; border-color:#ff8182; color:var(--bad); font-weight:600; }
.summary { margin:16px 0 8px; padding:10px 16px; border:1px solid var(--line); border-radius:8px; }
.summary p { margin:0; } .summary ul { margin:6px 0 0; padding-left:20px; }
.summary.ready { background:#dafbe1; border-color:#4ac26b; }
.summary.attention { background:var(--warn-bg); border-color:#d4a72c; }
table.data { width:100%; border-collapse:collapse; }
table.data th, table.data td { text-align:left; vertical-align:top; padding:6px 8px; border-bottom:1px solid var(--line); overflow-wrap:anywhere; }
/*
 * A data table's cells may break anywhere, so that a long name, URL or error wraps inside its column instead of pushing
 * the table past the page. A narrow column would then squeeze a short word too ("sandbo x"): a cell of short words (a
 * mode, a list of scopes) is marked .short and wraps only between its words. A key id (code.key-id) never breaks either: one line, whole for reading and
 * copying, scrolling sideways in a column narrower than it (its grid track may shrink to nothing, so it cannot widen
 * the table); from 900 px up its column keeps room for all 32 characters.
 */
table.data .short { overflow-wrap:normal; }
table.data code.key-id { display:inline-grid; grid-template-columns:minmax(0, max-content); max-width:100%; overflow-x:auto; overflow-wrap:normal; white-space:nowrap; vertical-align:bottom; }
@media (min-width: 900px) { table.data code.key-id { min-width:32ch; } }
table.data th { font-size:13px; color:var(--muted); font-weight:600; white-space:nowrap; }
table.data code { font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; }
table.data td.err { color:var(--bad); font-size:13px; }
table.data td.warn { color:var(--warn); font-weight:600; }
table.data td.act { white-space:nowrap; }
ul.exports { padding-left:20px; }
nav.pages { display:flex; flex-wrap:wrap; gap:8px 16px; margin:8px 0; }
form.filters { display:flex; flex-wrap:wrap; gap:8px 14px; align-items:flex-end; margin:8px 0 12px; }
form.filters label, form.stack label { display:flex; flex-direction:column; font-size:13px; color:var(--muted); max-width:100%; }
form.filters label.wide { flex:1 1 16em; }
form.filters input, form.filters select, form.stack input { font:inherit; padding:4px 8px; border:1px solid var(--line); border-radius:6px; color:var(--fg); max-width:100%; }
dl.facts { display:grid; grid-template-columns:max-content minmax(0,1fr); gap:4px 16px; margin:12px 0; }
dl.facts dt { color:var(--muted); font-size:13px; } dl.facts dd { margin:0; overflow-wrap:anywhere; }
pre.block { white-space:pre-wrap; overflow-wrap:anywhere; font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; background:var(--bg); border:1px solid var(--line); border-radius:6px; padding:8px 10px; margin:0; }
details.act { margin:2px 0; } details.act summary { cursor:pointer; color:var(--accent); white-space:nowrap; }
details.act form { margin:6px 0 10px; display:flex; flex-wrap:wrap; gap:6px 10px; align-items:center; } details.act form p { margin:4px 0; }
details.act input[type=text] { min-width:0; width:16em; max-width:100%; } details.act textarea { width:100%; }
@media (max-width: 700px) {
  table.data, table.data tbody, table.data tr { display:block; width:100%; }
  table.data thead { display:none; }
  table.data tr { border-bottom:1px solid var(--line); padding:6px 0; }
  /* A row becomes a name line, then its label: value pairs flowing side by side. */
  table.data td { display:inline-block; border:0; padding:1px 14px 1px 4px; }
  table.data td:first-child, table.data td.err { display:block; }
  table.data td:empty { display:none; }
  table.data td::before { content:attr(data-label) ": "; color:var(--muted); font-size:13px; }
}
@media (max-width: 700px) {
  main { padding:12px; }
  table.vars, table.vars tbody, table.vars tr, table.vars td { display:block; width:100%; }
  table.vars thead, table.vars colgroup { display:none; }
  table.vars tr { border-bottom:1px solid var(--line); padding:6px 0; }
  table.vars td { border:0; padding:2px 4px; }
}
`;

/**
 * The console header: every operator area, in the order an on-call person looks (is it ready, what fires, what
 * broke, then the areas by owner). A page that is one of these passes its href as `current`.
 */
export const CONSOLE_NAV: ReadonlyArray<readonly [href: string, label: string]> = [
  ["/admin/ops/readiness", "Readiness"],
  ["/admin/console/alerts", "Alerts"],
  ["/admin/console/incidents", "Incidents"],
  ["/admin/console/403-digest", "403 digest"],
  ["/admin/console/preflight", "Preflight guards"],
  ["/admin/console/backups", "Backups"],
  ["/admin/console/partners", "Partners & keys"],
  ["/admin/console/dead-letters", "Webhook dead letters"],
  ["/admin/console/audit-runs", "Audit runs"],
  ["/admin/console/messenger", "Messenger"],
  ["/admin/ops/link-inbox", "Link inbox"],
  ["/admin/ops/config", "Configuration"],
];

export interface LayoutData {
  title: string;
  /** The CONSOLE_NAV href of this page, marked in the header (aria-current); omitted on pages that are not in it. */
  current?: string;
  /** Who is signed in ("admin:ops#3"), or null on the sign-in page. */
  who: string | null;
  /** The session's CSRF token for the sign-out form; null when the page was opened with a bearer token. */
  csrfToken: string | null;
  body: SafeHtml;
}

// The stylesheet is part of the template's source (our constant), never data: escaping does not apply in <style>.
const layoutHtml = compileHtml<LayoutData & { nav: typeof CONSOLE_NAV }>(
  "operator-layout",
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title><%= it.title %></title><style>${CSS}</style></head>
<body><header class="top"><span class="brand">Herald operator console</span>
<% if (it.who !== null) { %><div class="account"><span class="who">signed in as <%= it.who %></span>
<% if (it.csrfToken !== null) { %><form class="inline" method="post" action="/admin/sign-out"><input type="hidden" name="csrf_token" value="<%= it.csrfToken %>"><button type="submit" id="sign-out">Sign out</button></form><% } else { %><span class="who">(bearer token: no session to sign out of)</span><% } %></div>
<nav id="console-nav" aria-label="Operator areas"><% for (const [href, label] of it.nav) { %><a href="<%= href %>"<% if (href === it.current) { %> aria-current="page"<% } %>><%= label %></a><% } %></nav><% } %>
</header>
<main><%= it.body %></main></body></html>`,
);

export const operatorPage = (data: LayoutData): SafeHtml => layoutHtml({ ...data, nav: CONSOLE_NAV });

export interface SignInData {
  /** The form's own CSRF token (double-submit: the same value is in the herald_signin_csrf cookie). */
  csrfToken: string;
  /** Where to go after signing in (already checked by safeNext), or null for the config page. */
  next: string | null;
  error: string | null;
}

export const signInBodyHtml = compileHtml<SignInData>(
  "sign-in",
  `<div class="card"><h1>Operator sign-in</h1>
<p class="muted">Paste an admin token (from the first-start banner or <code>herald admin-token create</code>). The browser keeps a session cookie, never the token.</p>
<% if (it.error !== null) { %><p class="error" id="sign-in-error" role="alert"><%= it.error %></p><% } %>
<form method="post" action="/admin/sign-in" autocomplete="off">
<label for="token">Admin token</label><input type="password" id="token" name="token" required maxlength="512" autofocus>
<input type="hidden" name="csrf_token" value="<%= it.csrfToken %>">
<% if (it.next !== null) { %><input type="hidden" name="next" value="<%= it.next %>"><% } %>
<button type="submit" class="primary" id="sign-in">Sign in</button>
</form></div>`,
);

/**
 * Operator pages are never cached, never framed (clickjacking a sign-out button), load nothing from elsewhere (their
 * images are Herald's own charts) and post their forms only to us.
 */
const PAGE_HEADERS = pageSecurityHeaders({ images: ["'self'"], formAction: "'self'" });

export function operatorPageResponse(page: SafeHtml, status = 200, setCookies: string[] = []): Response {
  const res = withPageSecurity(htmlResponse(page, OPERATOR_NO_STORE, status), PAGE_HEADERS);
  for (const c of setCookies) res.headers.append("set-cookie", c);
  return res;
}

// The partials every console page draws with (src/console/kit.ts composes them into a page): the line a form's
// result or refusal leaves, the CSRF field, a data table from its columns, a pager, the export list, a list of facts
// and a labelled choice. Each is a template of its own, so its values are escaped as anywhere else.

/** `2026-04-01 12:00:00 UTC` from an ISO time; null stays null. */
export const when = (iso: string | null | undefined): string | null => (iso ? `${iso.slice(0, 19).replace("T", " ")} UTC` : null);

/** A file size for a person: 512 B, 3.4 KiB, 12.0 MiB. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export interface Notice {
  /** A sentence shown as a success line (from the form's 303), or null. */
  done: string | null;
  /** A sentence shown as an error line (a refused form or query), or null. */
  error: string | null;
}

export const notice = compileHtml<Notice>(
  "console-notice",
  `<% if (it.done !== null) { %><section class="summary ready" id="done" role="status"><p><%= it.done %></p></section><% } %><% if (it.error !== null) { %><p class="error" id="form-error" role="alert"><%= it.error %></p><% } %>`,
);

/** The page's heading, when it was drawn, what it is about, and the notice of a form or a refusal. */
export const pageHead = compileHtml<{ heading: string; generatedAt: string; lead: string; notice: SafeHtml }>(
  "console-head",
  `<h1><%= it.heading %></h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC.<% if (it.lead) { %> <%= it.lead %><% } %></p>
<%= it.notice %>`,
);

const csrfHtml = compileHtml<{ token: string }>("console-csrf", `<input type="hidden" name="csrf_token" value="<%= it.token %>">`);
/** The CSRF field of every form on a page opened with the session (nothing with a bearer token, which needs none). */
export const csrfInput = (token: string | null): SafeHtml => (token === null ? new SafeHtml("") : csrfHtml({ token }));

const codeHtml = compileHtml<{ text: string | number }>("cell-code", `<code><%= it.text %></code>`);
const badgeHtml = compileHtml<{ kind: string; text: string | number }>("cell-badge", `<span class="badge <%= it.kind %>"><%= it.text %></span>`);
const linkHtml = compileHtml<{ href: string; text: Cell; id: string | null }>(
  "cell-link",
  `<a<% if (it.id !== null) { %> id="<%= it.id %>"<% } %> href="<%= it.href %>"><%= it.text %></a>`,
);
const mutedHtml = compileHtml<{ text: string | number }>("cell-muted", `<span class="muted"><%= it.text %></span>`);
export const code = (text: string | number): SafeHtml => codeHtml({ text });
export const badge = (kind: string, text: string | number): SafeHtml => badgeHtml({ kind, text });
export const link = (href: string, text: Cell, id: string | null = null): SafeHtml => linkHtml({ href, text, id });
export const muted = (text: string | number): SafeHtml => mutedHtml({ text });
/** Cells side by side in one cell. */
export const cells = (...parts: Cell[]): SafeHtml => new SafeHtml(parts.map((p) => (p instanceof SafeHtml ? p.value : escapeHtml(p))).join(" "));

export type Cell = string | number | null | SafeHtml;
/** A column: its cell, or its cell and the class of its td (short, err, warn, act…). */
export type Column<R> = ((row: R) => Cell) | { cell: (row: R) => Cell; class: string | ((row: R) => string) };

export interface TableSpec<R> {
  id?: string;
  rows: readonly R[];
  /** Header → cell, in order; each td carries its header as data-label, which the narrow layout prints before it. */
  columns: Record<string, Column<R>>;
  rowId?: (row: R) => string;
  /** What stands instead of an empty table (id `<id>-none`); without it an empty table keeps its header. */
  empty?: string;
  /** The pager below the table, when it is one page of a list; the rows shown are the table's. */
  pages?: Omit<PagerSpec, "shown">;
}

const tableHtml = compileHtml<{
  id: string | null;
  heads: string[];
  empty: string | null;
  rows: Array<{ id: string | null; cells: Array<[string, string, Cell]> }>;
}>(
  "console-table",
  `<% if (it.rows.length === 0 && it.empty !== null) { %><p class="muted"<% if (it.id) { %> id="<%= it.id %>-none"<% } %>><%= it.empty %></p><% } else { %><table class="data"<% if (it.id) { %> id="<%= it.id %>"<% } %>><thead><tr><% for (const h of it.heads) { %><th><%= h %></th><% } %></tr></thead><tbody>
<% for (const r of it.rows) { %><tr<% if (r.id) { %> id="<%= r.id %>"<% } %>><% for (const [label, cls, value] of r.cells) { %><td data-label="<%= label %>"<% if (cls) { %> class="<%= cls %>"<% } %>><%= value %></td><% } %></tr>
<% } %></tbody></table><% } %>`,
);

export function dataTable<R>(t: TableSpec<R>): SafeHtml {
  const columns = Object.entries(t.columns);
  const table = tableHtml({
    id: t.id ?? null,
    heads: columns.map(([h]) => h),
    empty: t.empty ?? null,
    rows: t.rows.map((r) => ({
      id: t.rowId?.(r) ?? null,
      cells: columns.map(([label, c]): [string, string, Cell] =>
        typeof c === "function" ? [label, "", c(r)] : [label, typeof c.class === "string" ? c.class : c.class(r), c.cell(r)],
      ),
    })),
  });
  return t.pages ? joinHtml([table, pager({ ...t.pages, shown: t.rows.length })]) : table;
}

export interface PagerSpec {
  /** The nav's id; its links are `<id>-newer` and `<id>-older`. */
  id: string;
  offset: number;
  /** Rows on this page, and at most on one. */
  shown: number;
  pageSize: number;
  /** Rows in all, when known: the pager then says which it shows ("26–30 of 30"). */
  total?: number;
  /** Whether more follow (default: offset + shown < total). */
  hasMore?: boolean;
  href: (offset: number) => string;
  labels?: readonly [newer: string, older: string];
}

const pagerHtml = compileHtml<{ id: string; range: string; newer: string | null; older: string | null; labels: readonly [string, string] }>(
  "console-pager",
  `<% if (it.range || it.newer !== null || it.older !== null) { %><nav class="pages muted" id="<%= it.id %>" aria-label="Pages"><% if (it.range) { %><span><%= it.range %></span><% } %><% if (it.newer !== null) { %><a id="<%= it.id %>-newer" href="<%= it.newer %>">← <%= it.labels[0] %></a><% } %><% if (it.older !== null) { %><a id="<%= it.id %>-older" href="<%= it.older %>"><%= it.labels[1] %> →</a><% } %></nav><% } %>`,
);

type QueryPart = string | number | null | undefined;

/** A page's query parts that are set (not "", 0, null or undefined), as text: its links, and its forms' way back. */
export const setParts = (parts: Record<string, QueryPart>): Record<string, string> =>
  Object.fromEntries(Object.entries(parts).flatMap(([k, v]) => (v ? [[k, String(v)]] : [])));

/** `path?…` with the set parts of `parts` in their order (`path` alone when none), then `anchor`. */
export function hrefWith(path: string, parts: Record<string, QueryPart>, anchor = ""): string {
  const s = new URLSearchParams(setParts(parts)).toString();
  return `${path}${s ? `?${s}` : ""}${anchor}`;
}

/** Newer and Older links of an offset-paged list. */
export function pager(p: PagerSpec): SafeHtml {
  const hasMore = p.hasMore ?? (p.total !== undefined && p.offset + p.shown < p.total);
  return pagerHtml({
    id: p.id,
    range: p.total === undefined || p.shown === 0 ? "" : `${p.offset + 1}–${p.offset + p.shown} of ${p.total}`,
    newer: p.offset > 0 ? p.href(Math.max(0, Math.min(p.offset, p.total ?? p.offset) - p.pageSize)) : null,
    older: hasMore ? p.href(p.offset + p.shown) : null,
    labels: p.labels ?? ["Newer", "Older"],
  });
}

/** The page's exports (every GET a person may want from here), with a line below them. */
export const exportList = compileHtml<{ links: ReadonlyArray<readonly [label: string, href: string]>; note?: string }>(
  "console-exports",
  `<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.links) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul><% if (it.note) { %><p class="muted"><%= it.note %></p><% } %></section>`,
);

/** A row's "End now" button (a silence, a suppression rule): one form posting to `action`, its button `end-<id>`. */
export const endNowForm = compileHtml<{ action: string; id: number; csrf: SafeHtml }>(
  "console-end-now",
  `<form class="inline" method="post" action="<%= it.action %>"><%= it.csrf %><button type="submit" id="end-<%= it.id %>">End now</button></form>`,
);

/** Label → value (and the value's id), as a definition list. */
export const facts = compileHtml<{ facts: ReadonlyArray<readonly [label: string, value: Cell, id?: string]> }>(
  "console-facts",
  `<dl class="facts"><% for (const [label, value, id] of it.facts) { %><dt><%= label %></dt><dd<% if (id) { %> id="<%= id %>"<% } %>><%= value ?? "–" %></dd><% } %></dl>`,
);

/** A labelled select of a GET form, `any` (an empty value) first when given. */
export const choice = compileHtml<{ label: string; name: string; options: readonly string[]; value: string; any?: string }>(
  "console-choice",
  `<label><%= it.label %> <select name="<%= it.name %>"><% if (it.any) { %><option value=""><%= it.any %></option><% } %><% for (const o of it.options) { %><option<%= o === it.value ? " selected" : "" %>><%= o %></option><% } %></select></label>`,
);
