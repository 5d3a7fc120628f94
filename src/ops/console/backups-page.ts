import { Elysia, t } from "elysia";
import { backTo, consolePage, csrfField, formAction, formDoc, type Notice, NO_NOTICE, notice, pageDoc, wantsHtml, when } from "../../auth/console-kit";
import type { Guards } from "../../auth/guards";
import type { OperatorRequest } from "../../auth/session-plugin";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { compileHtml } from "../../http/html";
import { intQuery } from "../../http/params";
import { runBackup } from "../backups/backup";
import { listBackups } from "../backups/list";

// GET /admin/console/backups: the on-demand backups (name, size, when, integrity, sha256), each downloadable
// with the session, the keep policy and the newest backup's age, and a "Take a backup now" form that runs the
// same verb as POST /admin/backup/run (a consistent VACUUM INTO copy, checked and hashed; audited). Litestream's
// continuous replica is the other backup, configured outside Herald (docs/operations.md).

const PATH = "/admin/console/backups";
const PAGE_SIZE = 25;

const PageQuery = t.Object({
  offset: intQuery({ minimum: 0, maximum: 100_000, defaultValue: 0, description: "backups to skip (pagination)" }),
  done: t.Optional(t.String({ maxLength: 80, description: "set by the form's redirect: the new backup's name" })),
  pruned: t.Optional(t.String({ maxLength: 4, description: "set by the form's redirect: how many old backups were deleted" })),
});
const RunForm = t.Object({ ...csrfField }, { additionalProperties: false });

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function age(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days`;
}

interface PageData {
  generatedAt: string;
  total: number;
  keep: number;
  newest: string | null;
  rows: Array<{ name: string; href: string; size: string; created: string; integrity: string; badge: string; sha256: string }>;
  next: number | null;
  prev: number | null;
  litestream: string;
  csrf: string | null;
  notice: ReturnType<typeof notice>;
}

const body = compileHtml<PageData>(
  "console-backups",
  `<h1>Backups</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. On-demand copies of the database, each checked (integrity_check) and hashed; the newest <%= it.keep %> are kept (BACKUP_KEEP).</p>
<%= it.notice %>
<section id="overview" class="summary <%= it.newest === null ? "attention" : "ready" %>"><p id="backup-age"><% if (it.newest === null) { %>No backup yet.<% } else { %>The newest backup is <%= it.newest %> old; <%= it.total %> kept.<% } %></p><p class="muted"><%= it.litestream %></p></section>
<form method="post" action="${PATH}/run" id="run-form"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><button type="submit" class="primary" id="run">Take a backup now</button></form>
<section id="list"><h2>Backups</h2>
<% if (it.rows.length === 0) { %><p class="muted" id="backups-none">None.</p><% } else { %><table class="data" id="backup-rows"><thead><tr><th>Backup</th><th>Size</th><th>Made</th><th>Integrity</th><th>SHA-256</th></tr></thead><tbody>
<% for (const b of it.rows) { %><tr><td data-label="Backup"><a href="<%= b.href %>" download><%= b.name %></a></td><td data-label="Size"><%= b.size %></td><td data-label="Made"><%= b.created %></td><td data-label="Integrity"><span class="badge <%= b.badge %>"><%= b.integrity %></span></td><td data-label="SHA-256"><code><%= b.sha256 %></code></td></tr>
<% } %></tbody></table>
<p class="muted"><% if (it.prev !== null) { %><a id="newer" href="${PATH}?offset=<%= it.prev %>">Newer</a> <% } %><% if (it.next !== null) { %><a id="older" href="${PATH}?offset=<%= it.next %>">Older</a><% } %></p><% } %></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><li><a href="/admin/backups">Backups (JSON)</a></li><li><a href="/admin/ops/readiness">Readiness (the backup check)</a></li></ul></section>`,
);

async function render(ctx: AppContext, operator: OperatorRequest, offset: number, n: Notice, status = 200): Promise<Response> {
  const page = await listBackups(ctx, { limit: PAGE_SIZE, offset });
  const newest = offset === 0 ? page.items[0] : (await listBackups(ctx, { limit: 1, offset: 0 })).items[0];
  const now = ctx.clock.now().getTime();
  return consolePage(
    operator,
    "Backups",
    PATH,
    body({
      generatedAt: when(ctx.clock.now().toISOString())!,
      total: page.total,
      keep: ctx.config.backupKeep,
      newest: newest ? age(Math.max(0, now - Date.parse(newest.created_at))) : null,
      rows: page.items.map((b) => ({
        name: b.name,
        href: `/admin/backups/${encodeURIComponent(b.name)}`,
        size: size(b.size_bytes),
        created: when(b.created_at)!,
        integrity: b.integrity,
        badge: b.integrity === "ok" ? "ok" : "bad",
        sha256: b.sha256,
      })),
      next: offset + page.items.length < page.total ? offset + page.items.length : null,
      prev: offset > 0 ? Math.max(0, offset - PAGE_SIZE) : null,
      litestream: "Litestream, when configured, replicates the database continuously besides these copies (docs/operations.md, Backups and restore).",
      csrf: operator.csrfToken,
      notice: notice(n),
    }),
    status,
  );
}

const doneOf = (name: string | undefined, pruned: string | undefined): string | null =>
  name && /^herald-[0-9TZ:.-]+\.db$/.test(name)
    ? `Backup ${name} made and checked.${pruned && /^[1-9]\d{0,3}$/.test(pruned) ? ` ${pruned} older deleted (BACKUP_KEEP).` : ""}`
    : null;

export function backupsPageRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:console-backups" })
    .use(guards.operator.plugin)
    .get(PATH, ({ operator, query }) => render(ctx, operator, query.offset ?? 0, { ...NO_NOTICE, done: doneOf(query.done, query.pruned) }), {
      operator: "page",
      query: PageQuery,
      detail: pageDoc("Backups (HTML page): the on-demand backups with their downloads, age and integrity, and a form to take one now", PATH),
    })
    .post(
      `${PATH}/run`,
      ({ operator, request }) =>
        formAction(
          request,
          async () => {
            try {
              const { backup, pruned } = await runBackup(ctx, { actor: operator.actor, requestId: operator.requestId });
              return backTo(PATH, { done: backup.name, pruned: String(pruned.length) });
            } catch (err) {
              // The disk refused the copy (full, read-only): the page says so; the log gets the cause it points to.
              if (!(err instanceof AppError) || err.status !== 503 || !wantsHtml(request)) throw err;
              ctx.log.warn("backup failed", { request_id: operator.requestId, error_code: err.code, internal: err.internal });
              return render(ctx, operator, 0, { done: null, error: `No backup was made: ${err.message}` }, 503);
            }
          },
          (status, error) => render(ctx, operator, 0, { done: null, error }, status),
        ),
      {
        operator: "form",
        body: RunForm,
        detail: formDoc("Take a backup now from the backups page (audited, as POST /admin/backup/run)", "csrf_token", {
          409: "a backup cannot be taken now (an in-memory database, or one with the same name)",
          503: "the copy could not be written (disk full or read-only); the server log has the cause",
        }),
      },
    );
}
