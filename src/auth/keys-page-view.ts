import type { AppContext } from "../context";
import { compileHtml } from "../http/html";
import { type Notice, notice, when } from "./console-kit";
import type { PartnerKeyView, PartnerKeys } from "./keys";
import type { RotationAnswer } from "./keys-page-replay";

// What the console's partners page shows (src/auth/keys-page.ts holds its routes): the keys of the filter, a page
// at a time, grouped by partner, with a rotate and a disable form on each active key; and the one-time answer
// page of a rotation. Never a secret on the list; the rotation's secret only on its own answer page.

export const PARTNERS_PATH = "/admin/console/partners";
export const KEYS_PAGE_SIZE = 50;

export interface KeyFilter {
  partner: string;
  mode: "" | "sandbox" | "live";
  status: "" | "active" | "disabled";
  offset: number;
}

export const NO_FILTER: KeyFilter = { partner: "", mode: "", status: "", offset: 0 };

type KeyRow = PartnerKeyView & { badge: string; created: string; lastUsed: string; overlap: string | null; formId: string };

interface PageData {
  generatedAt: string;
  filter: KeyFilter;
  filterError: string | null;
  partnerNames: string[];
  partners: Array<{ name: string; id: string; count: string; keys: KeyRow[] }>;
  total: number;
  active: number;
  range: string;
  newer: string | null;
  older: string | null;
  csrf: string | null;
  notice: ReturnType<typeof notice>;
}

const STYLE = `<style>form.filters { display:flex; flex-wrap:wrap; gap:8px 14px; align-items:flex-end; margin:12px 0; } form.filters label { display:flex; flex-direction:column; font-size:13px; color:var(--muted); } details.act { margin:2px 0; } details.act summary { cursor:pointer; color:var(--accent); white-space:nowrap; } details.act form { margin:6px 0 10px; display:flex; flex-wrap:wrap; gap:6px 10px; align-items:center; } details.act input[type=text] { min-width:0; width:16em; max-width:100%; } nav.pages { display:flex; flex-wrap:wrap; gap:8px 16px; margin:8px 0; }</style>`;

const hidden = `<% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %>`;

const body = compileHtml<PageData>(
  "console-partners",
  `${STYLE}<h1>Partners &amp; keys</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. Every partner API key, never its secret; rotating and disabling are audited as from the API.</p>
<%= it.notice %>
<form method="get" action="${PARTNERS_PATH}" id="filters" class="filters"><label>Partner <input name="partner" maxlength="64" list="partner-names" value="<%= it.filter.partner %>"></label><datalist id="partner-names"><% for (const n of it.partnerNames) { %><option value="<%= n %>"><% } %></datalist>
<label>Mode <select name="mode"><option value="">any</option><% for (const m of ["sandbox", "live"]) { %><option<%= it.filter.mode === m ? " selected" : "" %>><%= m %></option><% } %></select></label>
<label>State <select name="status"><option value="">any</option><% for (const s of ["active", "disabled"]) { %><option<%= it.filter.status === s ? " selected" : "" %>><%= s %></option><% } %></select></label> <button type="submit" id="apply">Show</button> <a href="${PARTNERS_PATH}" id="clear">All keys</a></form>
<% if (it.filterError !== null) { %><p class="error" id="filter-error" role="alert"><%= it.filterError %></p><% } %>
<p class="muted" id="key-count"><%= it.total %> <%= it.total === 1 ? "key" : "keys" %> (<%= it.active %> active)<% if (it.range) { %>; showing <%= it.range %><% } %>.</p>
<% for (const p of it.partners) { %><section class="partner" id="<%= p.id %>"><h2><%= p.name %></h2><p class="muted"><%= p.count %></p>
<table class="data"><thead><tr><th>Key</th><th>Mode</th><th>State</th><th>Scopes</th><th>Created</th><th>Last used</th><th>Actions</th></tr></thead><tbody>
<% for (const k of p.keys) { %><tr id="key-<%= k.key_id %>"><td data-label="Key"><code class="key-id"><%= k.key_id %></code></td><td data-label="Mode" class="short"><%= k.mode %></td><td data-label="State"><span class="badge <%= k.badge %>"><%= k.status %></span><% if (k.disabled_reason) { %> <span class="reason"><%= k.disabled_reason %></span><% } %><% if (k.overlap) { %> <span class="muted">old secret valid until <%= k.overlap %></span><% } %></td><td data-label="Scopes" class="short"><%= k.scopes.join(", ") %></td><td data-label="Created"><%= k.created %></td><td data-label="Last used"><%= k.lastUsed %></td>
<td data-label="Actions"><% if (k.status === "active") { %><details class="act"><summary>Rotate</summary><form method="post" action="${PARTNERS_PATH}/keys/<%= k.key_id %>/rotate">${hidden}<input type="hidden" name="form_id" value="<%= k.formId %>"><label>Old secret keeps working <input type="number" name="overlap_hours" min="0" max="24" value="24" required> hours</label> <button type="submit" id="rotate-<%= k.key_id %>">Rotate secret</button></form></details>
<details class="act"><summary>Disable</summary><form method="post" action="${PARTNERS_PATH}/keys/<%= k.key_id %>/disable">${hidden}<label>Why <input type="text" name="reason" maxlength="500" required></label> <label><input type="checkbox" name="confirm" value="yes" required> requests with this key stop at once</label> <button type="submit" id="disable-<%= k.key_id %>">Disable key</button></form></details><% } else { %><span class="muted">disabled keys cannot be rotated: make a new key</span><% } %></td></tr>
<% } %></tbody></table></section><% } %>
<% if (it.partners.length === 0) { %><p class="muted" id="keys-none">None.<% if (it.partnerNames.length === 0) { %> Keys are made with <code>herald keys create</code> or <code>POST /admin/partners/keys</code>.<% } %></p><% } %>
<% if (it.newer !== null || it.older !== null) { %><nav class="pages" aria-label="Pages of keys"><% if (it.newer !== null) { %><a id="newer" href="<%= it.newer %>">← Previous</a><% } %><% if (it.older !== null) { %><a id="older" href="<%= it.older %>">Next →</a><% } %></nav><% } %>
<section id="exports"><h2>Exports</h2><ul class="exports"><li><a href="/admin/partners/keys">Partner keys (JSON, GET /admin/partners/keys)</a></li></ul></section>`,
);

const secretBody = compileHtml<RotationAnswer & { replayed: boolean }>(
  "console-partner-secret",
  `<h1>New secret for <code id="key-id"><%= it.keyId %></code></h1>
<p class="lead">Rotated <%= it.at %>; all times UTC.</p>
<section class="summary attention" id="copy-now"><p><strong>Copy it now: it is shown this once.</strong> Herald keeps only its encrypted form and will not show it again once you leave this page.</p></section>
<% if (it.replayed) { %><p class="muted" id="replayed">This form was sent twice (a double click?): the key was rotated once, and this is that rotation's secret.</p><% } %>
<p><label for="secret">Secret of <%= it.partner %> (<%= it.mode %>)</label></p>
<p><textarea id="secret" readonly rows="3" spellcheck="false" autocomplete="off" style="width:100%;font:14px ui-monospace,SFMono-Regular,Menlo,monospace;padding:8px;border:1px solid var(--line);border-radius:6px;overflow-wrap:anywhere"><%= it.secret %></textarea></p>
<p class="muted" id="overlap"><% if (it.until) { %>The old secret keeps working until <%= it.until %>, so the partner can switch without downtime.<% } else { %>The old secret stopped working now.<% } %> Give the new one to <%= it.partner %> over a private channel.</p>
<p><a href="${PARTNERS_PATH}" id="back">Back to partners &amp; keys</a></p>`,
);

export const secretPage = (answer: RotationAnswer, replayed: boolean) => secretBody({ ...answer, replayed });

/** An id for a partner's section: its name in lower case, other characters as dashes (unique on the page). */
function sectionId(name: string, taken: Set<string>): string {
  const base = `partner-${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  let id = base;
  for (let i = 2; taken.has(id); i++) id = `${base}-${i}`;
  taken.add(id);
  return id;
}

function hrefOf(f: KeyFilter, offset: number): string {
  const q = new URLSearchParams();
  if (f.partner) q.set("partner", f.partner);
  if (f.mode) q.set("mode", f.mode);
  if (f.status) q.set("status", f.status);
  if (offset > 0) q.set("offset", String(offset));
  const s = q.toString();
  return s ? `${PARTNERS_PATH}?${s}` : PARTNERS_PATH;
}

export interface KeysView {
  filter: KeyFilter;
  filterError: string | null;
  csrf: string | null;
  notice: Notice;
  /** A fresh random form_id for each rotate form. */
  formId: () => string;
}

/** The page's body: the filtered keys sorted by partner then age, one page of them, grouped by partner. */
export async function keysBody(ctx: AppContext, keys: PartnerKeys, view: KeysView) {
  const { filter } = view;
  const all = await keys.list();
  const list = (await keys.list({ partner: filter.partner || undefined, mode: filter.mode || undefined, status: filter.status || undefined })).sort((a, b) =>
    a.partner === b.partner ? 0 : a.partner < b.partner ? -1 : 1,
  );
  const slice = list.slice(filter.offset, filter.offset + KEYS_PAGE_SIZE);
  const nowIso = ctx.clock.now().toISOString();
  const byPartner = new Map<string, KeyRow[]>();
  for (const k of slice) {
    const row: KeyRow = {
      ...k,
      badge: k.status === "active" ? "ok" : "bad",
      created: when(k.created_at)!,
      lastUsed: when(k.last_used_at) ?? "never",
      overlap: k.previous_secret_valid_until && k.previous_secret_valid_until > nowIso ? when(k.previous_secret_valid_until) : null,
      formId: view.formId(),
    };
    byPartner.set(k.partner, [...(byPartner.get(k.partner) ?? []), row]);
  }
  const taken = new Set<string>();
  const ofPartner = (name: string) => list.filter((k) => k.partner === name);
  return body({
    generatedAt: when(nowIso)!,
    filter,
    filterError: view.filterError,
    partnerNames: [...new Set(all.map((k) => k.partner))].sort(),
    partners: [...byPartner].map(([name, rows]) => {
      const mine = ofPartner(name);
      const active = mine.filter((k) => k.status === "active").length;
      return { name, id: sectionId(name, taken), count: `${mine.length} ${mine.length === 1 ? "key" : "keys"}, ${active} active`, keys: rows };
    }),
    total: list.length,
    active: list.filter((k) => k.status === "active").length,
    range: list.length > KEYS_PAGE_SIZE && slice.length > 0 ? `${filter.offset + 1}–${filter.offset + slice.length}` : "",
    newer: filter.offset > 0 ? hrefOf(filter, Math.max(0, Math.min(filter.offset, list.length) - KEYS_PAGE_SIZE)) : null,
    older: filter.offset + slice.length < list.length ? hrefOf(filter, filter.offset + slice.length) : null,
    csrf: view.csrf,
    notice: notice(view.notice),
  });
}
