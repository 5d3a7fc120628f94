import type { Guards } from "../auth/guards";
import type { ConfigRow } from "../config";
import type { AppContext } from "../context";
import { compileHtml, joinHtml } from "../http/formats/html";
import { consoleRoute } from "./kit";

// GET /admin/ops/config: the effective configuration as `herald config` prints it (src/config/index.ts describeConfig:
// secrets are "****" before they reach this file, so no template can print one), grouped by what the variables
// govern, with the ones set to something other than their default highlighted. A page about the configuration, a
// shared room below the console, so the console's own (src/console/routes.ts composes it).

/** Groups in page order; the first pattern a name matches wins; the rest fall into "Other". */
const GROUPS: ReadonlyArray<readonly [string, RegExp]> = [
  [
    "Server and HTTP",
    /^(NODE_ENV|PORT|HOST|PUBLIC_BASE_URL|HERALD_DB_PATH|LOG_LEVEL|TRUST_PROXY|MAX_BODY_BYTES|REQUEST_BODY_[A-Z_]+|SHUTDOWN_DRAIN_DELAY_MS|SHUTDOWN_GRACE_MS|METRICS_PUBLIC)$/,
  ],
  ["Operators and security", /^(HERALD_MASTER_KEY|ADMIN_|IDEMPOTENCY_|SIGNATURE_|SANDBOX_|BOOTSTRAP_)/],
  ["Rate limits", /^(RATE_LIMIT_|PARTNER_SANDBOX_RATE_LIMIT)/],
  ["Jobs, request log and backups", /^(JOBS_|REQUEST_LOG_|BACKUP_)/],
  ["Webhooks", /^WEBHOOK_/],
  ["Salutes and wallets", /^(SALUTES_|WALLET_)/],
  ["Solana chain", /^(SOLANA_|CHAIN_|TOKEN_|TREASURY_|RESERVE_|LP_|EXPECTED_)/],
  ["Status page", /^STATUS_/],
  ["Audio-share links", /^AUDIO_SHARE_/],
  ["Messenger", /^MESSENGER_/],
];

const groupHtml = compileHtml<{ id: string; title: string; changed: number; rows: ConfigRow[] }>(
  "config-group",
  `<section class="group" id="<%= it.id %>"><h2><%= it.title %> <span class="badge"><%= it.rows.length %> variables<% if (it.changed) { %>, <%= it.changed %> changed<% } %></span></h2>
<table class="vars"><colgroup><col class="name"><col class="value"><col class="source"><col></colgroup>
<thead><tr><th>Variable</th><th>Value</th><th>Source</th><th>Meaning</th></tr></thead><tbody>
<% for (const r of it.rows) { %><tr id="var-<%= r.name %>"<% if (r.differs) { %> class="changed"<% } %>><td><code><% r.name.split(/(?<=_)/).forEach((part, i) => { %><% if (i) { %><wbr><% } %><%= part %><% }) %></code></td><td><% if (r.value === "") { %><span class="muted">(unset)</span><% } else { %><code><%= r.value %></code><% } %><% if (r.secret) { %> <span class="badge">secret</span><% } %></td><td><% if (r.differs) { %><span class="badge changed">changed</span><% } else { %><span class="badge"><%= r.source %></span><% } %></td><td class="doc"><%= r.doc %></td></tr>
<% } %></tbody></table></section>`,
);

const configBodyHtml = compileHtml<{ total: number; changed: number; env: string; groups: ReturnType<typeof joinHtml> }>(
  "config-page",
  `<p class="lead">The effective configuration of this process (<%= it.env %>): <%= it.total %> variables, <strong id="changed-count"><%= it.changed %></strong> set to something other than their default. Secret values are never shown.</p>
<p class="legend"><span><span class="badge changed">changed</span> set in the environment to a non-default value</span><span><span class="badge">env</span> set, equal to the default</span><span><span class="badge">default</span> not set</span></p>
<%= it.groups %>`,
);

const slug = (title: string) => `group-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;

/** The page body for a configuration description. */
function configBody(rows: ReadonlyArray<ConfigRow>, nodeEnv: string) {
  const grouped = Map.groupBy(rows, (r) => GROUPS.find(([, re]) => re.test(r.name))?.[0] ?? "Other");
  const groups = [...GROUPS.map(([title]) => title), "Other"].flatMap((title) => {
    const list = grouped.get(title);
    return list ? [groupHtml({ id: slug(title), title, changed: list.filter((r) => r.differs).length, rows: list })] : [];
  });
  return configBodyHtml({ total: rows.length, changed: rows.filter((r) => r.differs).length, env: `NODE_ENV=${nodeEnv}`, groups: joinHtml(groups) });
}

/** GET /admin/ops/config. */
export function configPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: "/admin/ops/config",
    title: "Configuration",
    summary: "Effective configuration (HTML page; secrets masked, changed variables highlighted)",
    load: () => ctx.config,
    view: (config) => configBody(config.described, config.nodeEnv),
  });
}
