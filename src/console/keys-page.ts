import { t } from "elysia";
import type { AppContext } from "../context";
import { AppError } from "../http/errors/errors";
import { compileHtml, type SafeHtml } from "../http/formats/html";
import { intQuery } from "../http/params";
import { actorLabel } from "../auth/actors";
import { consoleRoute, form, framedPage, refusal } from "./kit";
import type { Guards } from "../auth/guards";
import { MAX_ROTATION_OVERLAP_HOURS, type PartnerKeyView } from "../auth/keys";
import { type RotationAnswer, RotationForms } from "./keys-page-replay";
import { badge, cells, choice, dataTable, hrefWith, muted, pager, when } from "./frame";
import type { OperatorRequest } from "../auth/session-plugin";

// GET /admin/console/partners: the partners and their API keys (never a secret), filtered by a GET form and a page
// at a time, grouped by partner, with a form per key to disable it (a reason and a confirmation box) and to rotate
// its secret. A rotation answers with the new secret on its own page, once: 200, private, no-store, never in a URL
// or the log. Same verbs and audit rows as POST /admin/partners/keys/{key_id}/disable|rotate, with the operator's actor.

const PATH = "/admin/console/partners";
const PAGE_SIZE = 50;
const KEY_ID = /^hk_[A-Za-z0-9_-]{1,64}$/;
const PARTNER = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;
const KeyParams = { key_id: t.String({ minLength: 1, maxLength: 80 }) };

interface KeyFilter {
  partner: string;
  mode: "" | "sandbox" | "live";
  status: "" | "active" | "disabled";
  offset: number;
}

/** The filter from the query; a value the form cannot produce is dropped and named on the page (400). */
function filterOf(q: { partner?: string; mode?: string; status?: string; offset?: number }): { filter: KeyFilter; error: string | null } {
  const problems: string[] = [];
  const valid = <V extends string>(value: string, ok: boolean, problem: string): V | "" => {
    if (value !== "" && !ok) problems.push(problem);
    return ok ? (value as V) : "";
  };
  const partner = (q.partner ?? "").trim();
  const mode = q.mode ?? "";
  const status = q.status ?? "";
  const filter: KeyFilter = {
    partner: valid(partner, PARTNER.test(partner), "a partner name is 1–64 letters, digits, spaces, dots, dashes or underscores"),
    mode: valid(mode, mode === "sandbox" || mode === "live", "mode is sandbox or live"),
    status: valid(status, status === "active" || status === "disabled", "state is active or disabled"),
    offset: q.offset ?? 0,
  };
  return { filter, error: problems.length ? `That filter was not applied: ${problems.join("; ")}.` : null };
}

const hrefOf = (f: KeyFilter, offset: number) => hrefWith(PATH, { partner: f.partner, mode: f.mode, status: f.status, offset });

/** An id for a partner's section: its name in lower case, other characters as dashes (unique on the page). */
function sectionId(name: string, taken: Set<string>): string {
  const base = `partner-${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  let id = base;
  for (let i = 2; taken.has(id); i++) id = `${base}-${i}`;
  taken.add(id);
  return id;
}

const filterForm = compileHtml<{ filter: KeyFilter; partnerNames: string[]; mode: SafeHtml; status: SafeHtml }>(
  "console-partners-filter",
  `<form method="get" action="${PATH}" id="filters" class="filters"><label>Partner <input name="partner" maxlength="64" list="partner-names" value="<%= it.filter.partner %>"></label><datalist id="partner-names"><% for (const n of it.partnerNames) { %><option value="<%= n %>"><% } %></datalist>
<%= it.mode %> <%= it.status %> <button type="submit" id="apply">Show</button> <a href="${PATH}" id="clear">All keys</a></form>`,
);

const partnerSection = compileHtml<{ id: string; name: string; count: string; table: SafeHtml }>(
  "console-partner",
  `<section class="partner" id="<%= it.id %>"><h2><%= it.name %></h2><p class="muted"><%= it.count %></p>
<%= it.table %></section>`,
);

const actions = compileHtml<{ key: PartnerKeyView; csrf: SafeHtml; formId: string }>(
  "console-partner-key-actions",
  `<% if (it.key.status === "active") { %><details class="act"><summary>Rotate</summary><form method="post" action="${PATH}/keys/<%= it.key.key_id %>/rotate"><%= it.csrf %><input type="hidden" name="form_id" value="<%= it.formId %>"><label>Old secret keeps working <input type="number" name="overlap_hours" min="0" max="24" value="24" required> hours</label> <button type="submit" id="rotate-<%= it.key.key_id %>">Rotate secret</button></form></details>
<details class="act"><summary>Disable</summary><form method="post" action="${PATH}/keys/<%= it.key.key_id %>/disable"><%= it.csrf %><label>Why <input type="text" name="reason" maxlength="500" required></label> <label><input type="checkbox" name="confirm" value="yes" required> requests with this key stop at once</label> <button type="submit" id="disable-<%= it.key.key_id %>">Disable key</button></form></details><% } else { %><span class="muted">disabled keys cannot be rotated: make a new key</span><% } %>`,
);

const body = compileHtml<{
  filterForm: SafeHtml;
  total: number;
  active: number;
  range: string;
  partners: SafeHtml[];
  empty: boolean;
  noKeys: boolean;
  pager: SafeHtml;
}>(
  "console-partners",
  `<%= it.filterForm %>
<p class="muted" id="key-count"><%= it.total %> <%= it.total === 1 ? "key" : "keys" %> (<%= it.active %> active)<% if (it.range) { %>; showing <%= it.range %><% } %>.</p>
<% for (const p of it.partners) { %><%= p %><% } %>
<% if (it.empty) { %><p class="muted" id="keys-none">None.<% if (it.noKeys) { %> Keys are made with <code>herald keys create</code> or <code>POST /admin/partners/keys</code>.<% } %></p><% } %>
<%= it.pager %>`,
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
<p><a href="${PATH}" id="back">Back to partners &amp; keys</a></p>`,
);

export function keysPageRoutes(ctx: AppContext, guards: Guards) {
  const keys = guards.partner.keys;
  const forms = new RotationForms(ctx.clock);
  const formId = () => Buffer.from(ctx.rng.bytes(16)).toString("hex");
  const who = (operator: OperatorRequest) => operator.session?.handle ?? actorLabel(operator.actor);
  const secretPage = (operator: OperatorRequest, answer: RotationAnswer, replayed: boolean) =>
    framedPage(operator, "New secret", PATH, secretBody({ ...answer, replayed }));

  return consoleRoute(ctx, guards, {
    path: PATH,
    title: "Partners & keys",
    lead: "Every partner API key, never its secret; rotating and disabling are audited as from the API.",
    summary: "Partners and keys (HTML page): every partner key by partner with its mode, state, scopes and use; forms to disable or rotate one",
    query: {
      partner: t.Optional(t.String({ maxLength: 64, description: "one partner's keys (its exact name)" })),
      mode: t.Optional(t.String({ maxLength: 16, description: "sandbox or live keys only (empty: both)" })),
      status: t.Optional(t.String({ maxLength: 16, description: "active or disabled keys only (empty: both)" })),
      offset: intQuery({ minimum: 0, maximum: 100_000, defaultValue: 0, description: "keys to skip (pagination)" }),
    },
    done: { field: "key", pattern: KEY_ID, says: { disabled: (key) => `Key ${key} disabled: requests with it are refused from now on.` } },
    async load(q, call) {
      const { filter, error } = filterOf(q);
      // A browser gets the page with the filter's message; a script (no text/html in Accept) the JSON envelope.
      if (error !== null) call.refuse(new AppError("invalid_query", error));
      const all = await keys.list();
      const list = await keys.list({ partner: filter.partner || undefined, mode: filter.mode || undefined, status: filter.status || undefined });
      return { filter, all, list: list.sort((a, b) => (a.partner === b.partner ? 0 : a.partner < b.partner ? -1 : 1)) };
    },
    view: ({ filter, all, list }, { csrf }) => {
      const slice = list.slice(filter.offset, filter.offset + PAGE_SIZE);
      const nowIso = ctx.clock.now().toISOString();
      const partnerNames = [...new Set(all.map((k) => k.partner))].sort();
      const taken = new Set<string>();
      const partners = [...new Set(slice.map((k) => k.partner))].map((name) => {
        const mine = list.filter((k) => k.partner === name);
        const active = mine.filter((k) => k.status === "active").length;
        return partnerSection({
          id: sectionId(name, taken),
          name,
          count: `${mine.length} ${mine.length === 1 ? "key" : "keys"}, ${active} active`,
          table: dataTable({
            rows: slice.filter((k) => k.partner === name),
            rowId: (k) => `key-${k.key_id}`,
            columns: {
              Key: (k) => keyId({ id: k.key_id }),
              Mode: { class: "short", cell: (k) => k.mode },
              State: (k) =>
                cells(
                  badge(k.status === "active" ? "ok" : "bad", k.status),
                  k.disabled_reason ? reason({ text: k.disabled_reason }) : null,
                  k.previous_secret_valid_until && k.previous_secret_valid_until > nowIso
                    ? muted(`old secret valid until ${when(k.previous_secret_valid_until)}`)
                    : null,
                ),
              Scopes: { class: "short", cell: (k) => k.scopes.join(", ") },
              Created: (k) => when(k.created_at),
              "Last used": (k) => when(k.last_used_at) ?? "never",
              Actions: (k) => actions({ key: k, csrf, formId: formId() }),
            },
          }),
        });
      });
      return body({
        filterForm: filterForm({
          filter,
          partnerNames,
          mode: choice({ label: "Mode", name: "mode", options: ["sandbox", "live"], value: filter.mode, any: "any" }),
          status: choice({ label: "State", name: "status", options: ["active", "disabled"], value: filter.status, any: "any" }),
        }),
        total: list.length,
        active: list.filter((k) => k.status === "active").length,
        range: list.length > PAGE_SIZE && slice.length > 0 ? `${filter.offset + 1}–${filter.offset + slice.length}` : "",
        partners,
        empty: partners.length === 0,
        noKeys: partnerNames.length === 0,
        pager: pager({
          id: "key-pages",
          offset: filter.offset,
          shown: slice.length,
          pageSize: PAGE_SIZE,
          hasMore: filter.offset + slice.length < list.length,
          href: (o) => hrefOf(filter, o),
          labels: ["Previous", "Next"],
        }),
      });
    },
    exports: () => ({ links: [["Partner keys (JSON, GET /admin/partners/keys)", "/admin/partners/keys"]] }),
    forms: [
      form({
        path: "/keys/:key_id/disable",
        params: KeyParams,
        body: {
          reason: t.String({ maxLength: 500, description: "why (kept with the key and in the audit row)" }),
          confirm: t.Optional(t.String({ maxLength: 3, description: "yes: the confirmation box" })),
        },
        summary: "Disable a partner key from the partners page (audited as partner_key.disable, as POST /admin/partners/keys/{key_id}/disable)",
        refusals: { 400: "no reason, or the confirmation box not ticked", 404: "no such key" },
        run: async ({ operator, params, body: b }) => {
          if (!KEY_ID.test(params.key_id)) throw refusal(404, "Nothing was changed: that is not a key id Herald knows.");
          if (b.confirm !== "yes") throw refusal(400, "Nothing was changed: tick the box to confirm that requests with this key stop at once.");
          if (b.reason.trim() === "") throw refusal(400, "Nothing was changed: say why the key is disabled (the reason is kept with the key).");
          await keys.disable(params.key_id, b.reason.trim(), operator.actor, operator.requestId);
          return { done: "disabled", key: params.key_id };
        },
      }),
      form({
        path: "/keys/:key_id/rotate",
        params: KeyParams,
        body: {
          overlap_hours: t.String({ maxLength: 2, description: "0 to 24: how long the old secret keeps working" }),
          form_id: t.Optional(t.String({ pattern: "^[0-9a-f]{32}$", description: "the rendered form's random id: a second post of it does not rotate again" })),
        },
        summary: "Rotate a partner key's secret from the partners page (audited as partner_key.rotate, as POST /admin/partners/keys/{key_id}/rotate)",
        refusals: { 400: "overlap_hours out of 0–24", 404: "no such key", 409: "the key is disabled (make a new key instead), or this form was already used" },
        responses: {
          200: {
            description:
              "text/html: the new secret, shown this once (private, no-store); a repeated post of the same form_id within 5 minutes answers the same page without rotating again",
          },
        },
        run: async ({ operator, params, body: b }) => {
          if (!KEY_ID.test(params.key_id)) throw refusal(404, "Nothing was changed: that is not a key id Herald knows.");
          const overlap = Number(b.overlap_hours);
          if (!/^\d{1,2}$/.test(b.overlap_hours) || overlap > MAX_ROTATION_OVERLAP_HOURS)
            throw refusal(400, `Nothing was changed: the old secret may keep working 0 to ${MAX_ROTATION_OVERLAP_HOURS} hours.`);
          // Check and take the form in one synchronous step (before any await): two posts of one form cannot both rotate.
          const seen = b.form_id ? forms.check(who(operator), b.form_id) : { kind: "new" as const };
          if (seen.kind === "replay" && seen.answer.keyId === params.key_id) return secretPage(operator, seen.answer, true);
          if (seen.kind !== "new")
            throw refusal(
              409,
              `Nothing was changed: this form was already used to rotate a key (${when(seen.kind === "replay" ? seen.answer.at : seen.at)}). Reload the page to rotate again.`,
            );
          if (b.form_id) forms.begin(who(operator), b.form_id);
          const rotated = await keys.rotate(params.key_id, overlap, operator.actor, operator.requestId).catch((err: unknown) => {
            if (b.form_id) forms.forget(who(operator), b.form_id);
            throw err;
          });
          const answer = {
            keyId: rotated.key_id,
            partner: rotated.partner,
            mode: rotated.mode,
            secret: rotated.secret,
            until: when(rotated.previous_secret_valid_until),
            at: when(rotated.updated_at)!,
          };
          if (b.form_id) forms.remember(who(operator), b.form_id, answer);
          return secretPage(operator, answer, false);
        },
      }),
    ],
  });
}

const keyId = compileHtml<{ id: string }>("console-key-id", `<code class="key-id"><%= it.id %></code>`);
const reason = compileHtml<{ text: string }>("console-key-reason", `<span class="reason"><%= it.text %></span>`);
