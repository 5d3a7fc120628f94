import type { Guards } from "../auth/guards";
import type { ConfigRow } from "../config";
import { varsOf } from "../config/var-spec";
import { CONFIG_SCHEMA } from "../config/vars";
import type { AppContext } from "../context";
import { compileHtml, joinHtml } from "../http/formats/html";
import { consoleRoute } from "./kit";

// GET /admin/ops/config: the effective configuration as `herald config` prints it (src/config/index.ts describeConfig:
// secrets are "****" before they reach this file, so no template can print one), grouped by what the variables
// govern, with the ones set to something other than their default highlighted. A page about the configuration, a
// shared room below the console, so the console's own (src/console/routes.ts composes it).

/**
 * The page's groups, in order, by the entries of CONFIG_SCHEMA they hold: a variable shows with its entry (a new
 * variable inside `webhooks` is a Webhooks one), and tsc refuses a new top-level entry until it is given a group here.
 */
const GROUPS = {
  "Server and HTTP": ["nodeEnv", "port", "host", "publicBaseUrl", "dbPath", "logLevel", "trustProxy", "maxBodyBytes", "requestBody", "metricsPublic"],
  Shutdown: ["shutdownDrainDelayMs", "shutdownGraceMs"],
  "PostgreSQL and instances": ["database", "instanceId"],
  "Operators and security": [
    "masterKey",
    "adminToken",
    "adminSessionTtlSeconds",
    "idempotencyRequired",
    "idempotencyTtlHours",
    "signatureSkewSeconds",
    "sandboxNonceRequired",
    "bootstrapCredentials",
  ],
  "Rate limits": ["rateLimits"],
  "Jobs, request log and backups": [
    "jobsEnabled",
    "jobsDisabled",
    "jobSchedules",
    "requestLogRetentionDays",
    "requestLogFlushMs",
    "backupKeep",
    "backupDeadlineMinutesPerGb",
  ],
  Webhooks: ["webhooks"],
  "Salutes and wallets": ["salutes", "walletReverifyDays"],
  "Solana chain": ["chain"],
  "Status page": ["status"],
  "Readiness and synthetic probes": ["readiness"],
  "Link inbox": ["linkInbox"],
  "Audio-share links": ["audioShare"],
  Messenger: ["messenger"],
} as const satisfies Record<string, ReadonlyArray<keyof typeof CONFIG_SCHEMA>>;
type Ungrouped = Exclude<keyof typeof CONFIG_SCHEMA, (typeof GROUPS)[keyof typeof GROUPS][number]>;
/** Every variable's group title, by name; its type fails to check, naming the entry, while an entry has no group. */
const GROUP_OF: Map<string, string> & ([Ungrouped] extends [never] ? unknown : { ungrouped: Ungrouped }) = new Map(
  Object.entries(GROUPS).flatMap(([title, entries]) => entries.flatMap((e) => varsOf({ [e]: CONFIG_SCHEMA[e] }).map((v) => [v.name, title] as const))),
);

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

export function configPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: "/admin/ops/config",
    title: "Configuration",
    summary: "Effective configuration (HTML page; secrets masked, changed variables highlighted)",
    load: () => ctx.config,
    view: ({ described: rows, nodeEnv }) => {
      const grouped = Map.groupBy(rows, (r) => GROUP_OF.get(r.name)!);
      const groups = Object.keys(GROUPS).flatMap((title) => {
        const list = grouped.get(title);
        return list ? [groupHtml({ id: slug(title), title, changed: list.filter((r) => r.differs).length, rows: list })] : [];
      });
      return configBodyHtml({ total: rows.length, changed: rows.filter((r) => r.differs).length, env: `NODE_ENV=${nodeEnv}`, groups: joinHtml(groups) });
    },
  });
}
