import { byteSize, type Notice, notice, when } from "../../auth/console-kit";
import type { AppContext } from "../../context";
import { compileHtml } from "../../http/html";
import { ownBackupsApply, POSTGRES_BACKUP_HINT } from "../backups/engine";
import { backupsDir, listBackups } from "../backups/list";
import { journalModeOf } from "../backups/store";

// What the console's backups page shows (src/ops/console/backups-page.ts holds its routes): the on-demand copies
// a page at a time, the newest one's age, the keep policy, and what Herald can and cannot know about Litestream.
// Litestream runs as Herald's parent process and reads LITESTREAM_REPLICA_URL itself; Herald's config never sees
// that variable, so the page says where it is set instead of guessing (the readiness overview knows no more).

export const BACKUPS_PATH = "/admin/console/backups";
export const BACKUPS_PAGE_SIZE = 25;

export function age(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "less than a minute";
  if (minutes < 60) return `${minutes} ${minutes === 1 ? "minute" : "minutes"}`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days`;
}

interface Row {
  name: string;
  href: string;
  size: string;
  bytes: number;
  created: string;
  integrity: string;
  badge: string;
  sha256: string;
}

interface PageData {
  generatedAt: string;
  attention: boolean;
  headline: string;
  keep: number;
  total: number;
  folder: string;
  newest: { name: string; age: string; created: string } | null;
  rows: Row[];
  range: string;
  newer: string | null;
  older: string | null;
  journalMode: string;
  who: string;
  csrf: string | null;
  notice: ReturnType<typeof notice>;
}

const STYLE = `<style>dl.facts { display:grid; grid-template-columns:max-content minmax(0,1fr); gap:4px 16px; margin:12px 0; } dl.facts dt { color:var(--muted); font-size:13px; } dl.facts dd { margin:0; overflow-wrap:anywhere; } nav.pages { display:flex; flex-wrap:wrap; gap:8px 16px; margin:8px 0; } pre.cmd { white-space:pre-wrap; overflow-wrap:anywhere; font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; background:var(--bg); border:1px solid var(--line); border-radius:6px; padding:8px 10px; }</style>`;

const body = compileHtml<PageData>(
  "console-backups",
  `${STYLE}<h1>Backups</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC.</p>
<%= it.notice %>
<section id="overview" class="summary <%= it.attention ? "attention" : "ready" %>"><p id="backup-age"><%= it.headline %></p></section>
<section id="policy"><h2>Keep policy</h2><dl class="facts">
<dt>Newest</dt><dd id="newest"><% if (it.newest) { %><code><%= it.newest.name %></code>, made <%= it.newest.created %> (<%= it.newest.age %> ago)<% } else { %>none yet<% } %></dd>
<dt>Kept</dt><dd><span id="backup-total"><%= it.total %></span> in the folder; <code>BACKUP_KEEP</code> = <strong id="backup-keep"><%= it.keep %></strong>: after each successful backup the oldest beyond this count are deleted (each deletion audited as <code>backup.pruned</code>).</dd>
<dt>Folder</dt><dd><code id="backup-folder"><%= it.folder %></code></dd></dl></section>
<section id="run-section"><h2>Take a backup now</h2>
<p class="muted">A consistent copy of the live database (<code>VACUUM INTO</code>; Herald keeps serving), checked with <code>PRAGMA integrity_check</code> and hashed, audited as <code>backup.run</code> by <%= it.who %> — the same as <code>POST /admin/backup/run</code>.</p>
<form method="post" action="${BACKUPS_PATH}/run" id="run-form"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><button type="submit" class="primary" id="run">Take a backup now</button></form></section>
<section id="list"><h2>On-demand backups</h2>
<% if (it.rows.length === 0) { %><p class="muted" id="backups-none">None.<% if (it.newer !== null) { %> <a id="newest-page" href="${BACKUPS_PATH}">Back to the newest</a>.<% } %></p><% } else { %><p class="muted" id="backup-range"><%= it.range %>, newest first. Each name downloads the file (it opens with your session).</p>
<table class="data" id="backup-rows"><thead><tr><th>Backup</th><th>Size</th><th>Made</th><th>Integrity</th><th>SHA-256</th></tr></thead><tbody>
<% for (const b of it.rows) { %><tr id="backup-<%= b.name %>"><td data-label="Backup"><a href="<%= b.href %>" download><%= b.name %></a></td><td data-label="Size"><span title="<%= b.bytes %> bytes"><%= b.size %></span></td><td data-label="Made"><%= b.created %></td><td data-label="Integrity"><span class="badge <%= b.badge %>"><%= b.integrity %></span></td><td data-label="SHA-256"><code class="sha"><%= b.sha256 %></code></td></tr>
<% } %></tbody></table>
<% if (it.newer !== null || it.older !== null) { %><nav class="pages" aria-label="Pages of backups"><% if (it.newer !== null) { %><a id="newer" href="<%= it.newer %>">← Newer</a><% } %><% if (it.older !== null) { %><a id="older" href="<%= it.older %>">Older →</a><% } %></nav><% } %><% } %></section>
<section id="replication"><h2>Continuous replica (Litestream)</h2>
<p>Besides these copies, Litestream streams every change to its replica within about a second. It runs as Herald's parent process (<code>litestream replicate -exec "herald serve"</code>) and reads the replica's address from <code>LITESTREAM_REPLICA_URL</code> (an <code>s3://bucket/prefix</code> or <code>file:///dir</code> URL, set where the container is deployed: <code>fly secrets</code>, <code>docker run -e</code>). Herald does not read that variable and cannot see Litestream, so neither the replica's address nor its lag is shown here; check them where Litestream runs.</p>
<dl class="facts"><dt>Journal mode</dt><dd id="journal-mode"><span class="badge <%= it.journalMode === "wal" ? "ok" : "warn" %>"><%= it.journalMode %></span> <%= it.journalMode === "wal" ? "what Litestream needs" : "Litestream needs WAL" %></dd>
<dt>Restore from it</dt><dd><pre class="cmd">litestream restore -o /data/restored.db "$LITESTREAM_REPLICA_URL"</pre></dd></dl>
<p class="muted">docs/operations.md, "Deployment and backups", has the setup, the drill and the restore steps.</p></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><li><a href="/admin/backups">Backups (JSON, GET /admin/backups)</a></li><li><a href="/admin/ops/readiness">Readiness (the backup check)</a></li></ul></section>`,
);

const postgresBody = compileHtml<{ generatedAt: string; database: string; hint: string; notice: ReturnType<typeof notice> }>(
  "console-backups-postgres",
  `<h1>Backups</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC.</p>
<%= it.notice %>
<section id="overview" class="summary ready"><p id="backups-not-applicable">This service runs on <strong id="database-engine"><%= it.database %></strong>. <%= it.hint %></p></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><li><a href="/admin/ops/readiness">Readiness</a></li></ul></section>`,
);

const pageHref = (offset: number) => (offset === 0 ? BACKUPS_PATH : `${BACKUPS_PATH}?offset=${offset}`);

/** The page's body for one page of backups (`offset` into the newest-first list). */
export async function backupsBody(ctx: AppContext, view: { offset: number; who: string; csrf: string | null; notice: Notice }) {
  const { offset } = view;
  const now0 = when(ctx.clock.now().toISOString())!;
  // PostgreSQL: nothing of Herald's to list or take; the page says where backups are instead (src/ops/backups/engine.ts).
  if (!ownBackupsApply(ctx.store.dialect))
    return postgresBody({ generatedAt: now0, database: await ctx.store.version(), hint: POSTGRES_BACKUP_HINT, notice: notice(view.notice) });
  const page = await listBackups(ctx, { limit: BACKUPS_PAGE_SIZE, offset });
  const newest = offset === 0 ? page.items[0] : (await listBackups(ctx, { limit: 1, offset: 0 })).items[0];
  const now = ctx.clock.now();
  const newestAge = newest ? age(Math.max(0, now.getTime() - Date.parse(newest.created_at))) : null;
  // The same rule as the readiness summary: no backup, or a newest one nobody checked, needs a look.
  const headline = !newest
    ? "No backup yet: take one below (or run herald backup on the server)."
    : newest.integrity !== "ok"
      ? `The newest backup, ${newest.name}, has integrity "${newest.integrity}" (found without its manifest; a restore checks it). Take a new one.`
      : `The newest backup is ${newestAge} old and passed its integrity check; ${page.total} kept (BACKUP_KEEP ${ctx.config.backupKeep}).`;
  const shown = page.items.length;
  return body({
    generatedAt: when(now.toISOString())!,
    attention: newest?.integrity !== "ok",
    headline,
    keep: ctx.config.backupKeep,
    total: page.total,
    folder: backupsDir(ctx),
    newest: newest ? { name: newest.name, age: newestAge!, created: when(newest.created_at)! } : null,
    rows: page.items.map((b) => ({
      name: b.name,
      href: `/admin/backups/${encodeURIComponent(b.name)}`,
      size: byteSize(b.size_bytes),
      bytes: b.size_bytes,
      created: when(b.created_at)!,
      integrity: b.integrity,
      badge: b.integrity === "ok" ? "ok" : "warn",
      sha256: b.sha256,
    })),
    range:
      shown === 0
        ? ""
        : offset === 0 && shown === page.total
          ? `${shown} ${shown === 1 ? "backup" : "backups"}`
          : `${offset + 1}–${offset + shown} of ${page.total}`,
    newer: offset > 0 ? pageHref(Math.max(0, Math.min(offset, page.total) - BACKUPS_PAGE_SIZE)) : null,
    older: offset + shown < page.total ? pageHref(offset + shown) : null,
    journalMode: await journalModeOf(ctx.store),
    who: view.who,
    csrf: view.csrf,
    notice: notice(view.notice),
  });
}
