import { Elysia, t } from "elysia";
import { backTo, consolePage, csrfField, formAction, formDoc, refusal, type Notice, NO_NOTICE, notice, pageDoc, when } from "../../auth/console-kit";
import type { Guards } from "../../auth/guards";
import type { OperatorRequest } from "../../auth/session-plugin";
import type { AppContext } from "../../context";
import { compileHtml } from "../../http/html";
import { intPath } from "../../http/params";
import { createSilence, expireSilence, listSilences, MAX_SILENCE_DAYS } from "../alerts/silences";
import { type AlertView, firingAlerts, recentAlerts } from "../alerts/views";

// GET /admin/console/alerts: what fires now (each alert links to its own page), the recent state changes, and the
// silences — who, why, until when — with a form to add one and a button to end one. The forms call the same
// verbs as POST /admin/ops/alerts-monitor/silences… (audited in the same transaction).

const PATH = "/admin/console/alerts";
const BASE = "/admin/ops/alerts-monitor";
const HISTORY = 50;
const SILENCES = 50;

const PageQuery = t.Object({
  done: t.Optional(t.String({ maxLength: 16, description: "set by a form's redirect: silenced or ended" })),
  silence: t.Optional(t.String({ maxLength: 12, description: "set by a form's redirect: the silence's id" })),
  matcher: t.Optional(t.String({ maxLength: 200, description: "pre-fills the silence form (from a firing alert's Silence link)" })),
});

const SilenceForm = t.Object(
  {
    ...csrfField,
    matcher: t.String({ maxLength: 200, description: "an alert key <source>:<name>, or a pattern with *" }),
    reason: t.String({ maxLength: 500 }),
    hours: t.String({ maxLength: 4, description: `1 to ${MAX_SILENCE_DAYS * 24}` }),
  },
  { additionalProperties: false },
);
const EndForm = t.Object({ ...csrfField }, { additionalProperties: false });

type Row = { id: number; key: string; page: string; level: string; badge: string; since: string; summary: string; silenced: string | null };

interface PageData {
  generatedAt: string;
  firing: Row[];
  history: Array<Row & { change: string }>;
  silences: Array<{ id: number; matcher: string; reason: string; by: string; at: string; ends: string; state: string; badge: string; ended: string | null }>;
  prefill: string;
  maxHours: number;
  csrf: string | null;
  exports: Array<readonly [string, string]>;
  notice: ReturnType<typeof notice>;
}

const body = compileHtml<PageData>(
  "console-alerts",
  `<h1>Alerts</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. An alert fires while its latest evaluation is warn or fail; a silence holds its notices back, never the alert itself.</p>
<%= it.notice %>
<section id="firing" class="summary <%= it.firing.length ? "attention" : "ready" %>"><p><strong id="firing-count"><%= it.firing.length %></strong> <%= it.firing.length === 1 ? "alert fires" : "alerts fire" %> now.</p></section>
<% if (it.firing.length) { %><table class="data" id="firing-rows"><thead><tr><th>Alert</th><th>Level</th><th>Since</th><th>Summary</th><th>Silenced</th><th></th></tr></thead><tbody>
<% for (const a of it.firing) { %><tr><td data-label="Alert"><a href="<%= a.page %>"><code><%= a.key %></code></a></td><td data-label="Level"><span class="badge <%= a.badge %>"><%= a.level %></span></td><td data-label="Since"><%= a.since %></td><td data-label="Summary"><%= a.summary %></td><td data-label="Silenced"><%= a.silenced ?? "no" %></td><td data-label="Action"><% if (a.silenced === null) { %><a href="${PATH}?matcher=<%= encodeURIComponent(a.key) %>#silence-form">Silence…</a><% } %></td></tr>
<% } %></tbody></table><% } %>
<section id="history"><h2>Recent changes</h2>
<% if (it.history.length === 0) { %><p class="muted" id="history-none">No alert has been evaluated yet.</p><% } else { %><table class="data" id="history-rows"><thead><tr><th>Alert</th><th>Now</th><th>Last change</th><th>Summary</th></tr></thead><tbody>
<% for (const a of it.history) { %><tr><td data-label="Alert"><a href="<%= a.page %>"><code><%= a.key %></code></a></td><td data-label="Now"><span class="badge <%= a.badge %>"><%= a.level %></span></td><td data-label="Last change"><%= a.change %></td><td data-label="Summary"><%= a.summary %></td></tr>
<% } %></tbody></table><% } %></section>
<section id="silences"><h2>Silences</h2>
<% if (it.silences.length === 0) { %><p class="muted" id="silences-none">None.</p><% } else { %><table class="data" id="silence-rows"><thead><tr><th>Silence</th><th>State</th><th>Matches</th><th>Why</th><th>By</th><th>Until</th><th></th></tr></thead><tbody>
<% for (const s of it.silences) { %><tr id="silence-<%= s.id %>"><td data-label="Silence">#<%= s.id %></td><td data-label="State"><span class="badge <%= s.badge %>"><%= s.state %></span></td><td data-label="Matches"><code><%= s.matcher %></code></td><td data-label="Why"><%= s.reason %></td><td data-label="By"><%= s.by %> at <%= s.at %></td><td data-label="Until"><%= s.ended ?? s.ends %></td><td data-label="Action"><% if (s.state === "active") { %><form class="inline" method="post" action="${PATH}/silences/<%= s.id %>/end"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><button type="submit" id="end-<%= s.id %>">End now</button></form><% } %></td></tr>
<% } %></tbody></table><% } %>
<h3>Add a silence</h3>
<form method="post" action="${PATH}/silences" id="silence-form">
<% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %>
<p><label>Alert key or pattern <input name="matcher" maxlength="200" required value="<%= it.prefill %>" placeholder="digest:403_spike or webhooks:*"></label></p>
<p><label>Why <input name="reason" maxlength="500" required></label> <label>Hours <input type="number" name="hours" min="1" max="<%= it.maxHours %>" value="4" required></label></p>
<p><button type="submit" class="primary" id="silence">Silence</button></p></form></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

const BADGE: Record<string, string> = { ok: "ok", warn: "warn", fail: "bad" };
const DONE: Record<string, string> = { silenced: "added", ended: "ended now" };

const row = (a: AlertView): Row => ({
  id: a.id,
  key: a.key,
  page: a.page,
  level: a.level,
  badge: BADGE[a.level] ?? "",
  since: when(a.fired_at ?? a.since)!,
  summary: a.summary ?? "",
  silenced: a.silenced_by ? `#${a.silenced_by.id} by ${a.silenced_by.created_by} until ${when(a.silenced_by.ends_at)}: ${a.silenced_by.reason}` : null,
});

function render(ctx: AppContext, operator: OperatorRequest, n: Notice, prefill = "", status = 200): Response {
  const silences = listSilences(ctx, { limit: SILENCES, offset: 0, after: null, cursor: null });
  return consolePage(
    operator,
    "Alerts",
    PATH,
    body({
      generatedAt: when(ctx.clock.now().toISOString())!,
      firing: firingAlerts(ctx).map(row),
      history: recentAlerts(ctx, HISTORY).map((a) => ({
        ...row(a),
        change: a.level === "ok" ? (a.resolved_at ? `resolved ${when(a.resolved_at)}` : `ok since ${when(a.since)}`) : `${a.level} since ${when(a.since)}`,
      })),
      silences: silences.items.map((s) => ({
        id: s.id,
        matcher: s.matcher,
        reason: s.reason,
        by: s.created_by,
        at: when(s.created_at)!,
        ends: when(s.ends_at)!,
        state: s.state,
        badge: s.state === "active" ? "warn" : "",
        ended: s.expired_at ? `ended ${when(s.expired_at)} by ${s.expired_by ?? "?"}` : null,
      })),
      prefill,
      maxHours: MAX_SILENCE_DAYS * 24,
      csrf: operator.csrfToken,
      exports: [
        ["Firing now (JSON)", `${BASE}/firing.json`],
        ["Silences (JSON)", `${BASE}/silences`],
        ["Alert runs, last 7 days (JSON)", `${BASE}/export.json`],
        ["Alert runs, last 7 days (CSV)", `${BASE}/runs/export`],
        ["Alert runs with their files (ZIP)", `${BASE}/export.zip`],
        ["Export downloads per day (JSON)", `${BASE}/export-usage.json`],
        ["Link-inbox targets (JSON)", "/admin/ops/link-inbox/targets.json"],
      ],
      notice: notice(n),
    }),
    status,
  );
}

const doneOf = (done: string | undefined, id: string | undefined): string | null =>
  done && id && Object.hasOwn(DONE, done) && /^\d{1,12}$/.test(id) ? `Silence #${id} ${DONE[done]}.` : null;

export function alertsPageRoutes(ctx: AppContext, guards: Guards) {
  const refuseWith =
    (operator: OperatorRequest, prefill = "") =>
    (status: number, error: string) =>
      render(ctx, operator, { done: null, error }, prefill, status);
  return new Elysia({ name: "herald:console-alerts" })
    .use(guards.operator.plugin)
    .get(PATH, ({ operator, query }) => render(ctx, operator, { ...NO_NOTICE, done: doneOf(query.done, query.silence) }, query.matcher ?? ""), {
      operator: "page",
      query: PageQuery,
      detail: pageDoc("Alerts (HTML page): firing now with links to each alert, recent changes, silences with add/end forms, exports", PATH),
    })
    .post(
      `${PATH}/silences`,
      ({ operator, body, request }) =>
        formAction(
          request,
          () => {
            const hours = Number(body.hours);
            if (!Number.isInteger(hours) || hours < 1 || hours > MAX_SILENCE_DAYS * 24) {
              throw refusal(400, `Nothing was changed: Hours must be a whole number from 1 to ${MAX_SILENCE_DAYS * 24}.`);
            }
            if (body.reason.trim() === "") throw refusal(400, "Nothing was changed: say why (the reason is shown to everyone on call).");
            const silence = createSilence(ctx, operator, {
              matcher: body.matcher,
              reason: body.reason.trim(),
              ends_at: new Date(ctx.clock.now().getTime() + hours * 3_600_000).toISOString(),
            });
            return backTo(PATH, { done: "silenced", silence: String(silence.id) });
          },
          refuseWith(operator, body.matcher),
        ),
      {
        operator: "form",
        body: SilenceForm,
        detail: formDoc("Silence alerts from the alerts page (audited, as POST /admin/ops/alerts-monitor/silences)", "csrf_token, matcher, reason, hours", {
          400: "a bad matcher, no reason, hours out of range",
        }),
      },
    )
    .post(
      `${PATH}/silences/:silence_id/end`,
      ({ operator, params, request }) =>
        formAction(
          request,
          () => {
            const s = expireSilence(ctx, operator, params.silence_id);
            return backTo(PATH, { done: "ended", silence: String(s.id) });
          },
          refuseWith(operator),
        ),
      {
        operator: "form",
        params: t.Object({ silence_id: intPath() }),
        body: EndForm,
        detail: formDoc("End a silence now from the alerts page (audited, as …/silences/{id}/expire)", "csrf_token", {
          404: "no such silence",
          409: "it already ended",
        }),
      },
    );
}
