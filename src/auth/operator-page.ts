import { OPERATOR_NO_STORE } from "../http/cache-control";
import { compileHtml, htmlResponse, type SafeHtml } from "../http/html";
import { pageSecurityHeaders, withPageSecurity } from "../http/security-headers";

// The frame of every operator page (the config page, the sign-in form; later the readiness page): one column,
// inline CSS, no JavaScript, readable from 390 px (a phone) up. Templates are Eta with auto-escaping
// (src/http/html.ts); the CSRF token is printed only into hidden form fields, never into a URL.

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
ul.exports { padding-left:20px; }
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

/** A whole operator page: the frame around `body`. */
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
