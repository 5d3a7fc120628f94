import { t } from "elysia";
import { consoleRoute, form } from "../../console/kit";
import type { Guards } from "../../auth/guards";
import { badge, cells, code, dataTable, muted } from "../../console/frame";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { compileHtml, SafeHtml } from "../../http/formats/html";
import { intQuery } from "../../http/params";
import { overviewChart } from "./console-page-chart";
import {
  type CampaignRow,
  type ConsoleData,
  consoleData,
  exportLinks,
  type MissionLine,
  PAGE_DEFAULT_DAYS,
  PAGE_MAX_DAYS,
  PAGE_PATH,
  pageDays,
} from "./console-page-data";
import { setMissionActive } from "./missions-admin";

// GET /admin/console/messenger (docs/operations.md, "Messenger page"). Mounted BEFORE the bot-token hook
// (games-config-routes.ts), so without MESSENGER_BOT_TOKEN it says so in words instead of the JSON 503. Its one form
// calls the missions routes' own verb (setMissionActive: audited, revision-checked).

const MISSION_KEY = /^[a-z0-9_-]{1,64}$/;

const STYLE = `<style>
svg.chart { display:block; width:100%; max-width:760px; height:auto; margin:8px 0; }
/* The chart scales with the column: on a phone its text is drawn larger in its own units to stay readable. */
@media (max-width: 700px) { svg.chart text { font-size:18px; } }
form.range { display:flex; flex-wrap:wrap; gap:8px 12px; align-items:center; margin:12px 0; }
form.range input[type=number] { font:inherit; width:6em; padding:4px 8px; border:1px solid var(--line); border-radius:6px; }
dl.totals { display:grid; grid-template-columns:repeat(auto-fit, minmax(150px, 1fr)); gap:8px; margin:12px 0; }
dl.totals div { border:1px solid var(--line); border-radius:8px; padding:8px 12px; }
dl.totals dt { color:var(--muted); font-size:13px; } dl.totals dd { margin:0; font-size:18px; font-weight:600; overflow-wrap:anywhere; }
details summary { cursor:pointer; color:var(--accent); margin:8px 0; }
.mini-app { display:flex; flex-wrap:wrap; gap:12px 20px; align-items:flex-start; }
.mini-app svg { width:168px; height:168px; flex:none; }
.mini-app p { margin:0 0 8px; overflow-wrap:anywhere; }
table.data button { white-space:nowrap; padding:2px 10px; }
/* Short identifiers break only where they must: whole in the wide table, wrapped in the narrow one. */
@media (min-width: 701px) { table.data td.key, table.data td.key code { overflow-wrap:normal; } }
</style>`;

const toggleHtml = compileHtml<{ m: MissionLine; csrf: SafeHtml; days: number }>(
  "messenger-console-mission-toggle",
  `<form class="inline" method="post" action="/admin/console/messenger/missions/<%= it.m.key %>/state"><%= it.csrf %><input type="hidden" name="active" value="<%= it.m.active ? "0" : "1" %>"><input type="hidden" name="revision" value="<%= it.m.revision %>"><input type="hidden" name="days" value="<%= it.days %>"><button type="submit" id="toggle-<%= it.m.key %>" aria-label="<%= it.m.active ? "Deactivate" : "Activate" %> mission <%= it.m.key %>"><%= it.m.active ? "Deactivate" : "Activate" %></button></form>`,
);
// An inactive mission's badge has no colour of its own.
const INACTIVE = new SafeHtml(`<span class="badge">inactive</span>`);

const missionsHtml = compileHtml<{ table: SafeHtml; shown: number; total: number }>(
  "messenger-console-missions",
  `<section id="missions"><h2>Missions</h2>
<p class="muted">Progress source: <strong>server</strong> — the server counts the event itself; <strong>self-reported</strong> — the mini-app's word, under tighter caps. Caps: progress units a player may add per UTC day, and accepted events per mission per minute.</p>
<% if (it.shown === 0) { %><p class="muted" id="missions-none">None.</p><% } else { %><%= it.table %><% if (it.total > it.shown) { %><p class="muted" id="missions-more">Showing the first <%= it.shown %> of <%= it.total %>; the missions JSON below pages through the rest.</p><% } %><% } %></section>`,
);

const missionsTable = (rows: MissionLine[], csrf: SafeHtml, days: number) =>
  dataTable({
    id: "mission-rows",
    rows,
    rowId: (m) => `mission-${m.key}`,
    columns: {
      Mission: { cell: (m) => code(m.key), class: "key" },
      Title: (m) => m.title,
      Counts: { cell: (m) => code(m.eventType), class: "key" },
      "Progress source": (m) => badge(m.serverCounted ? "ok" : "warn", m.source),
      Target: (m) => m.target,
      Reward: (m) => m.reward,
      Caps: (m) => m.caps,
      State: (m) => (m.active ? badge("ok", "active") : INACTIVE),
      Revision: (m) => cells(m.revision, muted(`(${m.updated})`)),
      Change: (m) => toggleHtml({ m, csrf, days }),
    },
  });

const miniAppHtml = compileHtml<{ link: { url: string; qr: SafeHtml } | null }>(
  "messenger-console-mini-app",
  `<section id="mini-app"><h2>Mini-app</h2>
<% if (it.link) { %><div class="mini-app"><%= it.link.qr %><div><p>Players open <a id="mini-app-url" href="<%= it.link.url %>"><%= it.link.url %></a> from the button on the bot's <code>/start</code> and <code>/play</code> replies, or from the bot's menu button once it points there (<a href="/api/messenger/admin/bot/bootstrap-readiness?live=1">bot readiness, live</a>: <code>menu_button</code>).</p>
<p class="muted">The QR code opens the same address in a phone's browser. MESSENGER_MINI_APP_URL sets it (docs/messenger.md, "Pointing the bot at the mini-app").</p></div></div>
<% } else { %><p id="mini-app-unset">MESSENGER_MINI_APP_URL is unset: the bot's replies carry no button to the mini-app. Set it to the https address of the players' page and restart (docs/messenger.md, "Pointing the bot at the mini-app").</p><% } %></section>`,
);

const campaignsHtml = compileHtml<{ table: SafeHtml; shown: number; cut: boolean; defaultWheel: string }>(
  "messenger-console-campaigns",
  `<section id="campaigns"><h2>Campaigns</h2>
<p class="muted">Enabled catalog and wheel campaigns that are running now or are scheduled to start; ended and disabled ones are in the JSON lists below. A player outside every wheel campaign spins the built-in wheel: <span id="default-wheel"><%= it.defaultWheel %></span>.</p>
<% if (it.shown === 0) { %><p class="muted" id="campaigns-none">None.</p><% } else { %><%= it.table %><% } %><% if (it.cut) { %><p class="muted" id="campaigns-more">Only the latest 200 of each kind were read; the JSON lists below hold the rest.</p><% } %></section>`,
);

const campaignsTable = (rows: CampaignRow[]) =>
  dataTable({
    id: "campaign-rows",
    rows,
    columns: {
      Campaign: (c) => c.title,
      Kind: { cell: (c) => cells(c.kind, code(c.key)), class: "key" },
      Game: { cell: (c) => code(c.game), class: "key" },
      Audience: { cell: (c) => code(c.audience), class: "key" },
      Window: (c) => c.window,
      State: (c) => badge(c.state === "active" ? "ok" : "warn", c.state),
    },
  });

const bodyHtml = compileHtml<
  Omit<ConsoleData, "campaigns" | "missions" | "generatedAt" | "miniApp"> & {
    maxDays: number;
    chart: SafeHtml;
    campaigns: SafeHtml;
    missions: SafeHtml;
    miniApp: SafeHtml;
  }
>(
  "messenger-console-page",
  `${STYLE}<form class="range" method="get" action="/admin/console/messenger" id="range-form"><label for="days">Days</label><input type="number" id="days" name="days" min="1" max="<%= it.maxDays %>" step="1" required value="<%= it.days %>"><button type="submit" id="range-submit">Show</button><span class="muted">the last N UTC days, today included (1–<%= it.maxDays %>)</span></form>
<section id="overview"><h2>Overview, <%= it.from %> to <%= it.to %></h2>
<dl class="totals" id="totals"><% for (const t of it.totals) { %><div><dt><%= t.label %></dt><dd id="<%= t.id %>"><%= t.value %></dd></div><% } %></dl>
<%= it.chart %>
<p class="muted">Credits are what the plays paid out, in points (a free spin and a missile counted at their shop price); players are those with any game ledger entry that day. Counted from the daily aggregates, folded from the ledger just now.</p>
<details id="per-day"><summary>The numbers per day (<%= it.series.length %> days)</summary>
<table class="data" id="day-rows"><thead><tr><th>Day</th><th>Plays</th><th>Players</th><th>Credits (points value)</th></tr></thead><tbody>
<% for (const p of it.series) { %><tr><td data-label="Day"><%= p.day %></td><td data-label="Plays"><%= p.plays %></td><td data-label="Players"><%= p.players %></td><td data-label="Credits"><%= p.credits %></td></tr>
<% } %></tbody></table></details>
<h3>Per game</h3>
<table class="data" id="game-rows"><thead><tr><th>Game</th><th>Plays</th><th>Players</th><th>Credits (points value)</th><th>Cost (points value)</th><th>Return to player</th></tr></thead><tbody>
<% for (const g of it.games) { %><tr id="game-<%= g.game %>"><td data-label="Game"><code><%= g.game %></code></td><td data-label="Plays"><%= g.plays %></td><td data-label="Players"><%= g.players %></td><td data-label="Credits"><%= g.credits %></td><td data-label="Cost"><%= g.cost %></td><td data-label="Return to player"><%= g.rtp %></td></tr>
<% } %></tbody></table></section>
<%= it.campaigns %>
<%= it.missions %>
<%= it.miniApp %>`,
);

/** The page when MESSENGER_BOT_TOKEN is unset: it says so plainly rather than answering the JSON 503. */
const notConfiguredBody = compileHtml<Record<never, never>>(
  "messenger-console-not-configured",
  `<section id="not-configured" class="summary attention"><p><strong>The Telegram bot is not configured (MESSENGER_BOT_TOKEN is unset).</strong></p>
<ul><li>The mini-app and every messenger admin route, the exports included, answer <code>503 messenger_not_configured</code> until it is set.</li>
<li>Set <code>MESSENGER_BOT_TOKEN</code> (and <code>MESSENGER_WEBHOOK_SECRET</code>) as docs/messenger.md, "Configuration", describes, then restart Herald; the <a href="/admin/ops/config">configuration page</a> shows what this process read.</li></ul></section>`,
);

export function messengerConsolePageRoutes(ctx: AppContext, guards: Guards) {
  const configured = () => Boolean(ctx.config.messenger.botToken);
  return consoleRoute(ctx, guards, {
    path: PAGE_PATH,
    title: "Messenger",
    tags: ["messenger"],
    lead: "The Telegram mini-app's games, campaigns and missions.",
    summary:
      "Messenger (HTML page): plays, players and credits per day (inline SVG chart and table), totals per game, running and scheduled campaigns, missions, links to every messenger admin export; says so when the bot is not configured",
    query: {
      // Out of range or not a whole number is the house's 400 invalid_query naming the parameter (src/http/params.ts);
      // the page's own form cannot send one (its number field has the same bounds).
      days: intQuery({ minimum: 1, maximum: PAGE_MAX_DAYS, defaultValue: PAGE_DEFAULT_DAYS, description: "the last N UTC days, today included" }),
    },
    done: {
      field: "mission",
      pattern: MISSION_KEY,
      says: {
        activated: (m) => `Mission ${m} activated.`,
        deactivated: (m) => `Mission ${m} deactivated.`,
        unchanged: (m) => `Mission ${m} already in that state; nothing changed.`,
      },
    },
    load: async (q) => (configured() ? await consoleData(ctx, q.days ?? PAGE_DEFAULT_DAYS) : null),
    view: (d, { csrf }) =>
      d === null
        ? notConfiguredBody({})
        : bodyHtml({
            ...d,
            maxDays: PAGE_MAX_DAYS,
            chart: overviewChart(d.series, d.from, d.to),
            campaigns: campaignsHtml({ table: campaignsTable(d.campaigns), shown: d.campaigns.length, cut: d.campaignsCut, defaultWheel: d.defaultWheel }),
            missions: missionsHtml({ table: missionsTable(d.missions, csrf, d.days), shown: d.missions.length, total: d.missionsTotal }),
            // The QR code's SVG is the qrcode package's own output for a configured https URL: paths only, no text.
            miniApp: miniAppHtml({ link: d.miniApp && { url: d.miniApp.url, qr: new SafeHtml(d.miniApp.qrSvg) } }),
          }),
    exports: (d) => d && { links: exportLinks(d.days), note: "Every messenger admin read, with this session (or the admin bearer token)." },
    forms: [
      form({
        path: "/missions/:mission_key/state",
        params: { mission_key: t.String({ minLength: 1, maxLength: 64, description: "The mission's key" }) },
        body: {
          active: t.String({ maxLength: 1, description: "1 to activate, 0 to deactivate" }),
          revision: t.Optional(t.String({ maxLength: 20, description: "The revision the page showed; a newer one is 409 (as X-Expected-Revision)" })),
          days: t.Optional(t.String({ maxLength: 8, description: "The page's day range, kept on the way back" })),
        },
        summary: "Activate or deactivate a mission from the messenger page (form post; audited as the JSON activate/deactivate); 303 back to the page",
        refusals: {
          400: "a malformed field",
          404: "no such mission",
          409: "the mission changed since the page was read: revision_conflict",
          503: "the bot is not configured",
        },
        keep: (b) => ({ days: pageDays(b.days) }),
        run: async ({ operator, params, body: b }) => {
          if (!configured()) throw new AppError("messenger_not_configured", "the Telegram bot is not configured (MESSENGER_BOT_TOKEN is unset).");
          if (!MISSION_KEY.test(params.mission_key)) throw new AppError("invalid_payload", "that is not a mission key (1–64 of a-z 0-9 _ -).");
          if (b.active !== "1" && b.active !== "0")
            throw new AppError("invalid_payload", "the form's active field must be 1 or 0; reload the page and use its buttons.");
          const revision = b.revision === undefined || b.revision === "" ? null : b.revision;
          if (revision !== null && !/^[1-9][0-9]{0,15}$/.test(revision))
            throw new AppError("invalid_payload", "the form's revision must be a positive whole number; reload the page.");
          const active = b.active === "1";
          const result = await setMissionActive(
            ctx,
            { actor: operator.actor, requestId: operator.requestId },
            params.mission_key,
            active,
            revision === null ? null : Number(revision),
          );
          return { days: String(pageDays(b.days)), done: result.changed ? (active ? "activated" : "deactivated") : "unchanged", mission: params.mission_key };
        },
      }),
    ],
  });
}
