import { consoleRoute } from "../../console/kit";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { badge, choice, code, dataTable } from "../../console/frame";
import { compileHtml, joinHtml, type SafeHtml } from "../../http/formats/html";
import { queryEvents, targetHealth, type EventRow, type TargetHealth } from "./exports";
import { filterQuery, WINDOW_PRESETS } from "./exports-model";
import { LINK_EVENTS, SKIP_REASONS, STATUS_CODE_FAMILIES } from "./notify";
import { linkTargetHealth } from "./target-health";

// GET /admin/ops/link-inbox: the link inbox for a person — each chat target's delivery health, computed from the
// events, and the events themselves filtered by a GET form whose fields are the export's own parameters (so the
// export links repeat the page's query). A filter the export would refuse is the page with the export's message (400).

const PAGE_LIMIT = 200;
/** The filter form's selects before its text fields: label, query field, options. */
const SELECTS = [
  ["Event", "event", LINK_EVENTS],
  ["Outcome", "status_code_family", STATUS_CODE_FAMILIES],
  ["Skip", "skip_reason", SKIP_REASONS],
] as const;

interface PageData {
  refused: boolean;
  q: Record<string, string>;
  choices: SafeHtml;
  window: SafeHtml;
  targets: SafeHtml;
  events: SafeHtml;
  total: number;
  shown: number;
  exportQuery: string;
}

type Outcome = { [k in "skip_reason" | "status_code_family" | "status_code"]: string | number | null };
/** A link event's outcome as a badge: its status family and code, or why it was skipped (also on the alert pages). */
export const outcomeCell = (r: Outcome) =>
  badge(
    r.status_code_family === "2xx" ? "ok" : r.skip_reason ? "warn" : "bad",
    r.skip_reason ? `skipped: ${r.skip_reason}` : `${r.status_code_family ?? "?"}${r.status_code ? ` ${r.status_code}` : ""}`,
  );

const bodyHtml = compileHtml<PageData>(
  "link-inbox-page",
  `<style>form.filters { display:flex; flex-wrap:wrap; gap:8px 14px; align-items:flex-end; margin:0 0 12px; } form.filters label { font-size:13px; color:var(--muted); display:flex; flex-direction:column; max-width:100%; } form.filters input, form.filters select { font:inherit; padding:4px 6px; border:1px solid var(--line); border-radius:6px; max-width:100%; }</style>
<section id="targets"><h2>Targets</h2>
<%= it.targets %></section>

<section id="events"><h2>Events</h2>
<form method="get" action="/admin/ops/link-inbox" id="filters" class="filters">
<%= it.choices %>
<label>Issue <input name="issue_id" value="<%= it.q.issue_id ?? "" %>" size="16"></label>
<label>URL contains <input name="url_contains" value="<%= it.q.url_contains ?? "" %>" size="16"></label>
<label>From <input name="at_from" value="<%= it.q.at_from ?? "" %>" placeholder="2026-04-01T00:00:00Z" size="22"></label>
<label>To <input name="at_to" value="<%= it.q.at_to ?? "" %>" size="22"></label>
<%= it.window %>
<button type="submit" id="apply">Apply</button>
</form>
<% if (!it.refused) { %>
<p class="muted" id="events-count"><%= it.total %> matching; newest <%= it.shown %> shown. Export: <a id="export-json" href="/admin/ops/link-inbox/events/export.json?<%= it.exportQuery %>">JSON</a> · <a id="export-csv" href="/admin/ops/link-inbox/events/export.csv?<%= it.exportQuery %>">CSV</a></p>
<%= it.events %><% } %></section>`,
);

/** Every target seen in the events plus every configured one (a refused one may have none), each with its health and WHY. */
async function targetsWithReasons(ctx: AppContext) {
  const seen = await targetHealth(ctx);
  const configured = await linkTargetHealth(ctx);
  const rows: TargetHealth[] = [
    ...seen,
    ...configured
      .filter((c) => !seen.some((s) => s.target === c.target))
      .map((c) => ({ target: c.target, attempts: 0, ok: 0, failed: 0, skipped: 0, streak: 0, last_success: null, last_failure: null })),
  ];
  return rows.map((x) => {
    const c = configured.find((h) => h.target === x.target);
    const health = c?.policy_problem ? "refused" : c?.dead && x.streak > 0 ? "dead" : x.streak > 0 ? "failing" : x.ok > 0 ? "ok" : "no success";
    const badge = health === "ok" ? "ok" : health === "no success" ? "warn" : "bad";
    const reason = x.target === "" ? null : !c ? "not in LINK_INBOX_WEBHOOK_URLS any more" : (c.reason ?? (x.ok > 0 ? null : "no message sent to it yet"));
    return { ...x, health, badge, reason };
  });
}

export function linkInboxPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: "/admin/ops/link-inbox",
    title: "Link inbox",
    lead: "Operator notifications sent to the chat targets, and what became of each.",
    summary: "Link inbox (HTML page): chat targets' delivery health and the events, filtered by a GET form",
    query: filterQuery,
    async load(query, call) {
      // The form sends its empty fields too ("any"): an empty value is no filter; the first of a repeated one is shown.
      const given = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== "" && !(Array.isArray(v) && v.every((x) => x === ""))));
      const q: Record<string, string> = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, String(Array.isArray(v) ? v[0] : v)]));
      let events = { rows: [] as EventRow[], total: 0 };
      try {
        const r = await queryEvents(ctx, { ...given, limit: Math.min(query.limit ?? PAGE_LIMIT, PAGE_LIMIT) }, false);
        events = { rows: r.rows ?? [], total: r.total };
      } catch (e) {
        // A filter the export would refuse (a date without a zone, at_to before at_from, …): the page with the
        // export's own message, a 400; the person fixes the field instead of reading raw JSON.
        if (!(e instanceof AppError) || e.status !== 400) throw e;
        call.refuse(e);
      }
      return { q, ...events, targets: await targetsWithReasons(ctx) };
    },
    view: ({ q, rows, total, targets }, { refused }) =>
      bodyHtml({
        refused,
        q,
        choices: joinHtml(SELECTS.map(([label, name, options]) => choice({ label, name, options, value: q[name] ?? "", any: "any" }))),
        window: choice({ label: "Window", name: "window_preset", options: WINDOW_PRESETS, value: q.window_preset ?? "", any: "none" }),
        targets: dataTable({
          id: "target-rows",
          rows: targets,
          empty: "No target configured and no event recorded yet.",
          columns: {
            Target: (x) => code(x.target),
            Health: (x) => badge(x.badge, x.health),
            Why: { cell: (x) => x.reason, class: (x) => (x.badge === "bad" ? "err" : "muted") },
            Attempts: (x) => x.attempts,
            "2xx": (x) => x.ok,
            Failed: (x) => x.failed,
            Skipped: (x) => x.skipped,
            "Failing streak": (x) => x.streak,
            "Last success": (x) => x.last_success ?? "never",
            "Last failure": (x) => x.last_failure ?? "–",
          },
        }),
        events: dataTable({
          id: "event-rows",
          rows,
          columns: {
            At: (r) => r.at,
            Event: (r) => code(r.event ?? ""),
            Issue: (r) => r.issue_id,
            Target: (r) => r.target,
            Attempt: (r) => r.attempt,
            Outcome: outcomeCell,
            URL: (r) => code(r.url ?? ""),
            Error: { cell: (r) => r.error, class: "err" },
          },
        }),
        total,
        shown: rows.length,
        exportQuery: new URLSearchParams(Object.entries(q)).toString(),
      }),
  });
}
