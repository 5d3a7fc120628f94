import { consoleRoute, form } from "../../console/kit";
import type { Guards } from "../../auth/guards";
import { actorLabel } from "../../auth/actors";
import { badge, byteSize, code, dataTable, when } from "../../console/frame";
import type { AppContext } from "../../context";
import { compileHtml, type SafeHtml } from "../../http/formats/html";
import { intQuery } from "../../http/params";
import { runBackup } from "./backup";
import { ownBackupsApply, POSTGRES_BACKUP_HINT } from "./engine";
import { BACKUP_NAME_PATTERN, backupsDir, listBackups } from "./list";
import { backupStatus, type FinishedBackup, type RunningBackup } from "./runs";
import { journalModeOf } from "./store";

// GET /admin/console/backups: the on-demand backups (each downloadable with the session), the keep policy, the running
// backup's phase and this instance's last run (failures leave no file to list), Litestream, and a form running the
// same verb as POST /admin/backup/run. Litestream reads LITESTREAM_REPLICA_URL itself, as Herald's parent process;
// Herald never sees it, so the page says where it is set instead of guessing.

const PATH = "/admin/console/backups";
const PAGE_SIZE = 25;

function age(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "less than a minute";
  if (minutes < 60) return `${minutes} ${minutes === 1 ? "minute" : "minutes"}`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days`;
}

interface Shown {
  attention: boolean;
  headline: string;
  keep: number;
  total: number;
  folder: string;
  newest: { name: string; age: string; created: string } | null;
  range: string;
  table: SafeHtml;
  journalMode: string;
  who: string;
  csrf: SafeHtml;
  running: (RunningBackup & { phaseLabel: string; started: string }) | null;
  last: (FinishedBackup & { finished: string; seconds: string }) | null;
}

const PHASE_LABELS = {
  snapshot: "copying (VACUUM INTO)",
  integrity_check: "checking the copy (integrity_check)",
  checksum: "hashing the copy (sha256)",
} as const;

const body = compileHtml<Shown>(
  "console-backups",
  `<section id="overview" class="summary <%= it.attention ? "attention" : "ready" %>"><p id="backup-age"><%= it.headline %></p></section>
<section id="policy"><h2>Keep policy</h2><dl class="facts">
<dt>Newest</dt><dd id="newest"><% if (it.newest) { %><code><%= it.newest.name %></code>, made <%= it.newest.created %> (<%= it.newest.age %> ago)<% } else { %>none yet<% } %></dd>
<dt>Kept</dt><dd><span id="backup-total"><%= it.total %></span> in the folder; <code>BACKUP_KEEP</code> = <strong id="backup-keep"><%= it.keep %></strong>: after each successful backup the oldest beyond this count are deleted (each deletion audited as <code>backup.pruned</code>).</dd>
<dt>Folder</dt><dd><code id="backup-folder"><%= it.folder %></code></dd></dl></section>
<section id="run-section"><h2>Take a backup now</h2>
<p class="muted">A consistent copy of the live database (<code>VACUUM INTO</code>; Herald keeps serving), checked with <code>PRAGMA integrity_check</code> and hashed, audited as <code>backup.run</code> by <%= it.who %> — the same as <code>POST /admin/backup/run</code>.</p>
<% if (it.running) { %><p id="running-backup" class="summary attention">Backup <code id="running-id"><%= it.running.id %></code> is running since <%= it.running.started %>: <strong id="running-phase"><%= it.running.phaseLabel %></strong>, <span id="running-percent"><%= it.running.percent %> %</span> of this step. Reload the page to follow it; a second run is refused until it ends.</p><% } %>
<% if (it.last) { %><p id="last-run" class="muted">Last run on this instance: <code><%= it.last.id %></code> <% if (it.last.outcome === "ok") { %><span class="badge ok">made</span> <code><%= it.last.name %></code><% } else { %><span class="badge warn">failed</span> <span id="last-error"><%= it.last.error %></span><% } %>, ended <%= it.last.finished %> after <%= it.last.seconds %> s.</p><% } %>
<form method="post" action="${PATH}/run" id="run-form"><%= it.csrf %><button type="submit" class="primary" id="run">Take a backup now</button></form></section>
<section id="list"><h2>On-demand backups</h2>
<% if (it.range) { %><p class="muted" id="backup-range"><%= it.range %>, newest first. Each name downloads the file (it opens with your session).</p><% } %>
<%= it.table %></section>
<section id="replication"><h2>Continuous replica (Litestream)</h2>
<p>Besides these copies, Litestream streams every change to its replica within about a second. It runs as Herald's parent process (<code>litestream replicate -exec "herald serve"</code>) and reads the replica's address from <code>LITESTREAM_REPLICA_URL</code> (an <code>s3://bucket/prefix</code> or <code>file:///dir</code> URL, set where the container is deployed: <code>fly secrets</code>, <code>docker run -e</code>). Herald does not read that variable and cannot see Litestream, so neither the replica's address nor its lag is shown here; check them where Litestream runs.</p>
<dl class="facts"><dt>Journal mode</dt><dd id="journal-mode"><span class="badge <%= it.journalMode === "wal" ? "ok" : "warn" %>"><%= it.journalMode %></span> <%= it.journalMode === "wal" ? "what Litestream needs" : "Litestream needs WAL" %></dd>
<dt>Restore from it</dt><dd><pre class="block">litestream restore -o /data/restored.db "$LITESTREAM_REPLICA_URL"</pre></dd></dl>
<p class="muted">docs/operations.md, "Deployment and backups", has the setup, the drill and the restore steps.</p></section>`,
);

// PostgreSQL: nothing of Herald's to list or take; the page says where backups are instead (src/ops/backups/engine.ts).
const postgresBody = compileHtml<{ database: string }>(
  "console-backups-postgres",
  `<section id="overview" class="summary ready"><p id="backups-not-applicable">This service runs on <strong id="database-engine"><%= it.database %></strong>. ${POSTGRES_BACKUP_HINT}</p></section>`,
);

const pageHref = (offset: number) => (offset === 0 ? PATH : `${PATH}?offset=${offset}`);

/** One page of backups (`offset` into the newest-first list), the newest one and what the summary says of it. */
async function backupsOf(ctx: AppContext, offset: number) {
  const page = await listBackups(ctx, { limit: PAGE_SIZE, offset });
  const newest = offset === 0 ? page.items[0] : (await listBackups(ctx, { limit: 1, offset: 0 })).items[0];
  const newestAge = newest ? age(Math.max(0, ctx.clock.now().getTime() - Date.parse(newest.created_at))) : null;
  // The same rule as the readiness summary: no backup, or a newest one nobody checked, needs a look.
  const headline = !newest
    ? "No backup yet: take one below (or run herald backup on the server)."
    : newest.integrity !== "ok"
      ? `The newest backup, ${newest.name}, has integrity "${newest.integrity}" (found without its manifest; a restore checks it). Take a new one.`
      : `The newest backup is ${newestAge} old and passed its integrity check; ${page.total} kept (BACKUP_KEEP ${ctx.config.backupKeep}).`;
  return {
    page,
    offset,
    newest: newest ? { name: newest.name, age: newestAge!, created: when(newest.created_at)! } : null,
    headline,
    integrity: newest?.integrity,
  };
}

export function backupsPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: PATH,
    title: "Backups",
    summary:
      "Backups (HTML page): the on-demand backups with their downloads, sha256 and integrity, the newest one's age, BACKUP_KEEP, Litestream, and a form to take one now",
    query: {
      offset: intQuery({ minimum: 0, maximum: 100_000, defaultValue: 0, description: "backups to skip (pagination, newest first)" }),
      pruned: intQuery({ minimum: 0, maximum: 9999, description: "set by the form's redirect: how many old backups were deleted" }),
    },
    done: {
      field: "backup",
      pattern: new RegExp(BACKUP_NAME_PATTERN),
      says: {
        made: (name, q) => {
          const n = Number(q.pruned ?? 0);
          return `Backup ${name} made and checked.${n > 0 ? ` ${n} older ${n === 1 ? "backup" : "backups"} deleted (BACKUP_KEEP).` : ""}`;
        },
      },
    },
    load: async (q) =>
      ownBackupsApply(ctx.store.dialect)
        ? { ...(await backupsOf(ctx, q.offset ?? 0)), journalMode: await journalModeOf(ctx.store) }
        : { database: await ctx.store.version() },
    view: (d, { operator, csrf }) => {
      if (d.database !== undefined) return postgresBody({ database: d.database });
      const { page, offset } = d;
      const shown = page.items.length;
      return body({
        ...d,
        attention: d.integrity !== "ok",
        keep: ctx.config.backupKeep,
        total: page.total,
        folder: backupsDir(ctx),
        range:
          shown === 0
            ? ""
            : offset === 0 && shown === page.total
              ? `${shown} ${shown === 1 ? "backup" : "backups"}`
              : `${offset + 1}–${offset + shown} of ${page.total}`,
        table: dataTable({
          id: "backup-rows",
          rows: page.items,
          empty: offset > 0 ? "None on this page." : "None.",
          rowId: (b) => `backup-${b.name}`,
          columns: {
            Backup: (b) => downloadLink({ href: `/admin/backups/${encodeURIComponent(b.name)}`, name: b.name }),
            Size: (b) => byteSize(b.size_bytes),
            Made: (b) => when(b.created_at),
            Integrity: (b) => badge(b.integrity === "ok" ? "ok" : "warn", b.integrity),
            "SHA-256": (b) => code(b.sha256),
          },
          pages: { id: "backup-pages", offset, pageSize: PAGE_SIZE, hasMore: offset + shown < page.total, href: pageHref },
        }),
        who: actorLabel(operator.actor),
        csrf,
        ...runState(ctx),
      });
    },
    exports: (d) => ({
      links:
        d.database !== undefined
          ? [["Readiness", "/admin/ops/readiness"]]
          : [
              ["Backups (JSON, GET /admin/backups)", "/admin/backups"],
              ["Readiness (the backup check)", "/admin/ops/readiness"],
            ],
    }),
    forms: [
      form({
        path: "/run",
        summary: "Take a backup now from the backups page (audited as backup.run, as POST /admin/backup/run)",
        unchanged: "No backup was made",
        refusals: {
          409: "a backup cannot be taken now (one is running: backup_in_progress; an in-memory database, PostgreSQL, or a backup of the same name already made this millisecond)",
          500: "the copy failed its integrity check and was removed",
          503: "the copy could not be written (disk full or read-only); the server log has the cause",
        },
        run: async ({ operator, request }) => {
          // As POST /admin/backup/run: the form's answer may wait longer than Bun's 10 s idle timeout.
          ctx.server?.timeout(request, 0);
          const { backup, pruned } = await runBackup(ctx, { actor: operator.actor, requestId: operator.requestId });
          return { done: "made", backup: backup.name, pruned: String(pruned.length) };
        },
      }),
    ],
  });
}

/** The running backup and this instance's last run, as the page shows them. */
function runState(ctx: AppContext): Pick<Shown, "running" | "last"> {
  const { running, last } = backupStatus(ctx);
  return {
    running: running && { ...running, phaseLabel: PHASE_LABELS[running.phase], started: when(running.started_at)! },
    last: last && { ...last, finished: when(last.finished_at)!, seconds: (last.duration_ms / 1000).toFixed(1) },
  };
}

const downloadLink = compileHtml<{ href: string; name: string }>("console-backup-download", `<a href="<%= it.href %>" download><%= it.name %></a>`);
