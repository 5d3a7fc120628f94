import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { compileHtml } from "../http/html";
import { backTo, consolePage, csrfField, formAction, formDoc, refusal, type Notice, NO_NOTICE, notice, pageDoc, when } from "./console-kit";
import type { Guards } from "./guards";
import type { PartnerKeyView } from "./keys";
import type { OperatorRequest } from "./session-plugin";

// GET /admin/console/partners: the partners and their API keys (never a secret), filtered by a GET form, with a
// form per key to disable it (a reason and a confirmation box) and to rotate its secret. A rotation answers with
// the new secret on its own page, once: 200, private, no-store, never in a URL or the log — the same verbs and
// audit as POST /admin/partners/keys/{key_id}/disable|rotate.

const PATH = "/admin/console/partners";
const KEY_ID = /^hk_[A-Za-z0-9_-]{1,64}$/;

const PageQuery = t.Object({
  partner: t.Optional(t.String({ maxLength: 64, description: "one partner's keys" })),
  mode: t.Optional(t.Union([t.Literal(""), t.Literal("sandbox"), t.Literal("live")], { description: "sandbox or live keys only" })),
  status: t.Optional(t.Union([t.Literal(""), t.Literal("active"), t.Literal("disabled")], { description: "active or disabled keys only" })),
  done: t.Optional(t.String({ maxLength: 16, description: "set by the disable form's redirect" })),
  key: t.Optional(t.String({ maxLength: 80, description: "set by the disable form's redirect: the key's id" })),
});
const DisableForm = t.Object(
  { ...csrfField, reason: t.String({ maxLength: 500 }), confirm: t.Optional(t.String({ maxLength: 3, description: "yes: the confirmation box" })) },
  { additionalProperties: false },
);
const RotateForm = t.Object(
  { ...csrfField, overlap_hours: t.String({ maxLength: 2, description: "0 to 24: how long the old secret keeps working" }) },
  { additionalProperties: false },
);

interface PageData {
  generatedAt: string;
  filter: { partner: string; mode: string; status: string };
  partners: Array<{ name: string; keys: Array<PartnerKeyView & { badge: string; created: string; lastUsed: string; overlap: string | null }> }>;
  total: number;
  csrf: string | null;
  notice: ReturnType<typeof notice>;
}

const body = compileHtml<PageData>(
  "console-partners",
  `<style>details.act { display:inline-block; margin:2px 6px 2px 0; } details.act form { margin:6px 0; } details.act input[type=text] { max-width:100%; }</style>
<h1>Partners &amp; keys</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. Every partner API key, never its secret. Disabling and rotating are audited.</p>
<%= it.notice %>
<form method="get" action="${PATH}" id="filters" class="filters"><label>Partner <input name="partner" maxlength="64" value="<%= it.filter.partner %>"></label>
<label>Mode <select name="mode"><option value="">any</option><% for (const m of ["sandbox", "live"]) { %><option<%= it.filter.mode === m ? " selected" : "" %>><%= m %></option><% } %></select></label>
<label>State <select name="status"><option value="">any</option><% for (const s of ["active", "disabled"]) { %><option<%= it.filter.status === s ? " selected" : "" %>><%= s %></option><% } %></select></label> <button type="submit" id="apply">Show</button></form>
<p class="muted" id="key-count"><%= it.total %> <%= it.total === 1 ? "key" : "keys" %>.</p>
<% for (const p of it.partners) { %><section class="partner" id="partner-<%= p.name %>"><h2><%= p.name %></h2>
<table class="data"><thead><tr><th>Key</th><th>Mode</th><th>State</th><th>Scopes</th><th>Created</th><th>Last used</th><th>Actions</th></tr></thead><tbody>
<% for (const k of p.keys) { %><tr id="key-<%= k.key_id %>"><td data-label="Key"><code><%= k.key_id %></code></td><td data-label="Mode"><%= k.mode %></td><td data-label="State"><span class="badge <%= k.badge %>"><%= k.status %></span><% if (k.disabled_reason) { %> <%= k.disabled_reason %><% } %><% if (k.overlap) { %> <span class="muted">old secret valid until <%= k.overlap %></span><% } %></td><td data-label="Scopes"><%= k.scopes.join(", ") %></td><td data-label="Created"><%= k.created %></td><td data-label="Last used"><%= k.lastUsed %></td>
<td data-label="Actions"><% if (k.status === "active") { %><details class="act"><summary>Rotate</summary><form method="post" action="${PATH}/keys/<%= k.key_id %>/rotate"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><label>Old secret works for <input type="number" name="overlap_hours" min="0" max="24" value="24" required> hours</label> <button type="submit" id="rotate-<%= k.key_id %>">Rotate secret</button></form></details>
<details class="act"><summary>Disable</summary><form method="post" action="${PATH}/keys/<%= k.key_id %>/disable"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><label>Why <input type="text" name="reason" maxlength="500" required></label> <label><input type="checkbox" name="confirm" value="yes" required> requests with this key stop at once</label> <button type="submit" id="disable-<%= k.key_id %>">Disable key</button></form></details><% } else { %>–<% } %></td></tr>
<% } %></tbody></table></section><% } %>
<% if (it.partners.length === 0) { %><p class="muted" id="keys-none">No key matches. Keys are made with <code>herald keys create</code> or POST /admin/partners/keys.</p><% } %>
<section id="exports"><h2>Exports</h2><ul class="exports"><li><a href="/admin/partners/keys">Partner keys (JSON)</a></li><li><a href="/admin/sessions">Operator sessions (JSON)</a></li></ul></section>`,
);

const secretBody = compileHtml<{ keyId: string; partner: string; mode: string; secret: string; until: string | null }>(
  "console-partner-secret",
  `<h1>New secret for <code id="key-id"><%= it.keyId %></code></h1>
<section class="summary attention"><p><strong>Copy it now: it is shown this once.</strong> Herald keeps only its encrypted form and will never show it again.</p></section>
<p><label for="secret">Secret of <%= it.partner %> (<%= it.mode %>)</label></p>
<p><textarea id="secret" readonly rows="2" style="width:100%;font:14px ui-monospace,SFMono-Regular,Menlo,monospace;padding:8px;border:1px solid var(--line);border-radius:6px"><%= it.secret %></textarea></p>
<p class="muted"><% if (it.until) { %>The old secret keeps working until <%= it.until %>, so the partner can switch without downtime.<% } else { %>The old secret stopped working now.<% } %></p>
<p><a href="${PATH}" id="back">Back to partners &amp; keys</a></p>`,
);

function render(ctx: AppContext, keys: Guards["partner"]["keys"], operator: OperatorRequest, filter: PageData["filter"], n: Notice, status = 200): Response {
  const list = keys.list({
    partner: filter.partner || undefined,
    mode: (filter.mode || undefined) as "sandbox" | "live" | undefined,
    status: (filter.status || undefined) as "active" | "disabled" | undefined,
  });
  const byPartner = new Map<string, PageData["partners"][number]["keys"]>();
  for (const k of list) {
    const row = {
      ...k,
      badge: k.status === "active" ? "ok" : "bad",
      created: when(k.created_at)!,
      lastUsed: when(k.last_used_at) ?? "never",
      overlap: k.previous_secret_valid_until && k.previous_secret_valid_until > ctx.clock.now().toISOString() ? when(k.previous_secret_valid_until) : null,
    };
    byPartner.set(k.partner, [...(byPartner.get(k.partner) ?? []), row]);
  }
  return consolePage(
    operator,
    "Partners & keys",
    PATH,
    body({
      generatedAt: when(ctx.clock.now().toISOString())!,
      filter,
      partners: [...byPartner].map(([name, keys]) => ({ name, keys })),
      total: list.length,
      csrf: operator.csrfToken,
      notice: notice(n),
    }),
    status,
  );
}

export function keysPageRoutes(ctx: AppContext, guards: Guards) {
  const keys = guards.partner.keys;
  const none = { partner: "", mode: "", status: "" };
  const refuseWith = (operator: OperatorRequest) => (status: number, error: string) => render(ctx, keys, operator, none, { done: null, error }, status);
  return new Elysia({ name: "herald:console-partners" })
    .use(guards.operator.plugin)
    .get(
      PATH,
      ({ operator, query }) =>
        render(
          ctx,
          keys,
          operator,
          { partner: query.partner ?? "", mode: query.mode ?? "", status: query.status ?? "" },
          { ...NO_NOTICE, done: query.done === "disabled" && query.key && KEY_ID.test(query.key) ? `Key ${query.key} disabled.` : null },
        ),
      {
        operator: "page",
        query: PageQuery,
        detail: pageDoc("Partners and keys (HTML page): every partner key by partner with its state and scopes, forms to disable or rotate one", PATH),
      },
    )
    .post(
      `${PATH}/keys/:key_id/disable`,
      ({ operator, params, body, request }) =>
        formAction(
          request,
          () => {
            if (!KEY_ID.test(params.key_id)) throw refusal(404, "Nothing was changed: that is not a key id Herald knows.");
            if (body.confirm !== "yes") throw refusal(400, "Nothing was changed: tick the box to confirm that requests with this key stop at once.");
            if (body.reason.trim() === "") throw refusal(400, "Nothing was changed: say why the key is disabled (the reason is kept with the key).");
            keys.disable(params.key_id, body.reason.trim(), operator.actor, operator.requestId);
            return backTo(PATH, { done: "disabled", key: params.key_id });
          },
          refuseWith(operator),
        ),
      {
        operator: "form",
        params: t.Object({ key_id: t.String({ minLength: 1, maxLength: 80 }) }),
        body: DisableForm,
        detail: formDoc(
          "Disable a partner key from the partners page (audited, as POST /admin/partners/keys/{key_id}/disable)",
          "csrf_token, reason, confirm=yes",
          {
            400: "no reason, or the confirmation box not ticked",
            404: "no such key",
          },
        ),
      },
    )
    .post(
      `${PATH}/keys/:key_id/rotate`,
      ({ operator, params, body, request }) =>
        formAction(
          request,
          () => {
            if (!KEY_ID.test(params.key_id)) throw refusal(404, "Nothing was changed: that is not a key id Herald knows.");
            const overlap = Number(body.overlap_hours);
            if (!/^\d{1,2}$/.test(body.overlap_hours) || overlap > 24)
              throw refusal(400, "Nothing was changed: the old secret may keep working 0 to 24 hours.");
            const { secret, ...key } = keys.rotate(params.key_id, overlap, operator.actor, operator.requestId);
            const page = secretBody({ keyId: key.key_id, partner: key.partner, mode: key.mode, secret, until: when(key.previous_secret_valid_until) });
            return consolePage(operator, "New secret", PATH, page);
          },
          refuseWith(operator),
        ),
      {
        operator: "form",
        params: t.Object({ key_id: t.String({ minLength: 1, maxLength: 80 }) }),
        body: RotateForm,
        detail: {
          ...formDoc(
            "Rotate a partner key's secret from the partners page (audited, as POST /admin/partners/keys/{key_id}/rotate)",
            "csrf_token, overlap_hours",
            {
              400: "overlap_hours out of 0–24",
              404: "no such key",
              409: "the key is disabled: make a new key instead",
            },
          ),
          responses: {
            200: { description: "text/html: the new secret, shown this once (private, no-store)" },
            403: { description: "Missing or wrong CSRF token" },
            400: { description: "text/html: the page with the error (overlap_hours out of 0–24)" },
            404: { description: "text/html: the page with the error (no such key)" },
            409: { description: "text/html: the page with the error (the key is disabled)" },
          },
        },
      },
    );
}
