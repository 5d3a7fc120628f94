import { Elysia } from "elysia";
import { sendsHeaders } from "../../http/openapi/contract";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { refusal, refuses } from "../../http/routes/declare";
import { DEFAULT_LIMIT, listAnswer, totalPage } from "../../http/pagination";
import { startBackup } from "./backup";
import { refuseBackupsOnPostgres } from "./engine";
import { backupOrThrow, listBackups, type BackupEntry } from "./list";
import { OpsModel } from "./model";
import { BACKUP_STATUS_PATH, backupStatus } from "./runs";
import { ok } from "../../http/envelope";

/** The download's headers: the hash three ways, for curl users, RFC 3230 clients and RFC 9530 clients. */
function downloadHeaders(b: BackupEntry): Record<string, string> {
  const b64 = Buffer.from(b.sha256, "hex").toString("base64");
  return {
    "content-type": "application/vnd.sqlite3",
    "content-length": String(b.size_bytes),
    "content-disposition": `attachment; filename="${b.name}"`,
    "x-backup-sha256": b.sha256,
    "x-backup-integrity": b.integrity,
    digest: `sha-256=${b64}`,
    "repr-digest": `sha-256=:${b64}:`,
  };
}

export function backupsRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:ops-backups" })
    .use(guards.admin.plugin)
    .use(guards.operator.plugin)
    .post(
      "/admin/backup/run",
      async ({ admin, query, set, request, server }) => {
        // Waiting costs the service nothing: the work is in the backup's worker, this request only awaits it. Bun
        // closes a connection idle for 10 s (its default idleTimeout), which a large backup's silent wait would
        // be: this request may wait as long as the backup takes (server is null under app.handle, in tests). Lifted
        // before the worker starts, so a slow start on a loaded machine is inside the lifted wait too.
        if (query.wait !== false) (ctx.server ?? server)?.timeout(request, 0);
        const started = startBackup(ctx, { actor: admin.actor, requestId: admin.requestId });
        if (query.wait === false) {
          // The outcome is logged and kept for GET /admin/backup/status by the verb; nobody here waits for it.
          started.done.catch(() => {});
          set.status = 202;
          return ok({ backup_id: started.id, status_url: BACKUP_STATUS_PATH });
        }
        const { backup, pruned } = await started.done;
        return ok({ backup, pruned });
      },
      {
        admin: true,
        query: OpsModel.runQuery,
        response: { 200: OpsModel.run, 202: OpsModel.runAccepted, ...refuses(409) },
        detail: {
          summary:
            "Consistent snapshot (VACUUM INTO, in a worker: the service keeps answering) with its path, size and sha256; prunes beyond BACKUP_KEEP. wait=false: 202 at once, follow GET /admin/backup/status. 409 backup_in_progress while one runs; on PostgreSQL 409 backup_not_on_postgres (use pg_dump / pg_basebackup)",
        },
      },
    )
    .get(
      BACKUP_STATUS_PATH,
      () => {
        refuseBackupsOnPostgres(ctx.store.dialect);
        return ok(backupStatus(ctx));
      },
      {
        // Also the operator session (a GET), as the list: the console's backups page shows the same.
        operator: "api",
        query: OpsModel.statusQuery,
        response: { 200: OpsModel.status, ...refuses(409) },
        detail: {
          summary:
            "The backup running on this instance (phase, percent of the phase) and the last one that ended since it started. On PostgreSQL 409 backup_not_on_postgres",
        },
      },
    )
    .get(
      "/admin/backups",
      async ({ query }) => {
        const limit = query.limit ?? DEFAULT_LIMIT;
        const offset = query.offset ?? 0;
        const page = await listBackups(ctx, { limit, offset });
        // `size` as the list names it; `size_bytes` as the manifest and the run answer do.
        const items = page.items.map(({ path: _path, ...b }) => ({ ...b, size: b.size_bytes }));
        const between = { total: page.total, keep: ctx.config.backupKeep };
        return ok(listAnswer("backups", { items, ...totalPage(items, page.total, limit, offset) }, {}, between));
      },
      {
        // Also the operator session (a GET): the readiness page links here.
        operator: "api",
        query: OpsModel.listQuery,
        response: { 200: OpsModel.list, ...refuses(409) },
        detail: { summary: "The on-demand backups, newest first: name, size, sha256, created_at, integrity. On PostgreSQL 409 backup_not_on_postgres" },
      },
    )
    .get(
      "/admin/backups/:name",
      async ({ params }) => {
        const b = await backupOrThrow(ctx, params.name);
        // Bun.file streams from disk (sendfile where it can): memory stays flat for any size of database.
        return new Response(Bun.file(b.path), { headers: downloadHeaders(b) });
      },
      {
        // Also the operator session (a GET): the console's backups page links each download.
        operator: "api",
        params: OpsModel.nameParams,
        detail: {
          summary: "Download one backup (streamed), with X-Backup-SHA256, Digest and Repr-Digest",
          ...sendsHeaders({
            "X-Backup-SHA256": "SHA-256 (hex) of the file",
            Digest: "sha-256=<base64> (RFC 3230)",
            "Repr-Digest": "sha-256=:<base64>: (RFC 9530)",
            "X-Backup-Integrity": "Whether the file's hash was checked against its manifest (verified, unknown …)",
          }),
          responses: {
            200: {
              description: "The SQLite file, as Content-Disposition: attachment",
              content: { "application/vnd.sqlite3": { schema: { type: "string" as const, format: "binary" } } },
            },
            400: refusal("invalid_query: the name is not a backup name (no paths)"),
            403: refusal("forbidden: no admin token or operator session"),
            404: refusal("not_found: no such backup"),
            409: refusal("backup_not_on_postgres: the service runs on PostgreSQL, whose own backups apply (pg_dump, pg_basebackup)"),
          },
        },
      },
    );
}
