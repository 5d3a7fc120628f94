import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Actor } from "../../auth/actors";
import { recordAudit } from "../../auth/audit";
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { AppError } from "../../http/errors";
import { refuseBackupsOnPostgres } from "./engine";
import { integrityOf, sqliteSnapshotInto } from "../../db/sqlite-file";
import { backupNameAt, backupsDir, listBackupFiles, manifestPathOf, sha256OfFile, writeManifest, type BackupFile } from "./list";

export type PrunedBackup = Pick<BackupFile, "name" | "size_bytes" | "created_at">;

export interface BackupRunInput {
  actor: Actor;
  requestId?: string | null;
}

/**
 * On SQLite only (on PostgreSQL: 409 backup_not_on_postgres, src/ops/backups/engine.ts). A consistent snapshot
 * with `VACUUM INTO` (a transactionally consistent copy, readers and writers carry on), into `<db dir>/backups/herald-<time>.db`, then checked with integrity_check, hashed (streamed) and described
 * by a `<name>.json` manifest. Then the oldest backups beyond BACKUP_KEEP are deleted, each one audited.
 * Litestream's replica is the continuous backup; this is the on-demand one an operator can copy off the box.
 */
export async function runBackup(ctx: AppContext, input: BackupRunInput) {
  refuseBackupsOnPostgres(ctx.store.dialect);
  if (ctx.config.dbPath === ":memory:") throw new AppError("conflict", "An in-memory database cannot be backed up");
  const at = ctx.clock.now();
  const dir = backupsDir(ctx);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = backupNameAt(at);
  const file = join(dir, name);
  if (existsSync(file)) throw new AppError("conflict", `A backup named ${name} already exists (two runs in the same millisecond); run it again`);
  try {
    sqliteSnapshotInto(ctx.config.dbPath, file);
  } catch (err) {
    throw new AppError("service_unavailable", "The backup could not be written; see the server log", { internal: (err as Error).message });
  }
  const integrity = integrityOf(file);
  if (integrity !== "ok") {
    // A copy that fails its check is no backup: it is removed so that nobody lists, downloads or restores it.
    rmSync(file, { force: true });
    throw new AppError("server_error", "The backup failed its integrity check and was removed; see the server log", { internal: integrity });
  }
  const backup = {
    name,
    path: file,
    size_bytes: statSync(file).size,
    sha256: await sha256OfFile(file),
    created_at: at.toISOString(),
    integrity: "ok" as const,
  };
  // The manifest is written only now, after the check passed: its integrity "ok" is a statement about this file.
  writeManifest(file, { sha256: backup.sha256, size_bytes: backup.size_bytes, created_at: backup.created_at, integrity: "ok" });
  await recordAudit(ctx.store, {
    at: backup.created_at,
    actor: input.actor,
    action: "backup.run",
    target: file,
    details: { sha256: backup.sha256, size_bytes: backup.size_bytes },
    requestId: input.requestId ?? null,
  });
  // pruned: older backups deleted because more than BACKUP_KEEP existed after this one.
  return { backup, pruned: await pruneBackups(ctx, input, name) };
}

/**
 * Keeps the newest BACKUP_KEEP backups (the one just made always among them) and deletes the rest with their
 * manifests. Each deletion and its audit row share a transaction: the audit row is written first and the file
 * removed inside the same transaction body (rmSync is synchronous: the body awaits nothing but the store), so a
 * file that cannot be removed rolls its audit row back (and is tried again after the next run), and no file
 * disappears without its row.
 */
async function pruneBackups(ctx: AppContext, input: BackupRunInput, keepName: string): Promise<PrunedBackup[]> {
  const others = listBackupFiles(backupsDir(ctx)).filter((f) => f.name !== keepName);
  const doomed = others.slice(Math.max(0, ctx.config.backupKeep - 1));
  const pruned: PrunedBackup[] = [];
  const at = ctx.clock.now().toISOString();
  for (const f of doomed) {
    try {
      await ctx.store.tx((t) => deleteAudited(t, ctx, input, f, at));
      pruned.push({ name: f.name, size_bytes: f.size_bytes, created_at: f.created_at });
    } catch (err) {
      ctx.log.warn("could not prune an old backup", { name: f.name, error: (err as Error).message });
    }
  }
  return pruned;
}

async function deleteAudited(t: Queryable, ctx: AppContext, input: BackupRunInput, f: BackupFile, at: string): Promise<void> {
  await recordAudit(t, {
    at,
    actor: input.actor,
    action: "backup.pruned",
    target: f.path,
    details: { name: f.name, size_bytes: f.size_bytes, created_at: f.created_at, keep: ctx.config.backupKeep },
    requestId: input.requestId ?? null,
  });
  rmSync(f.path);
  rmSync(manifestPathOf(f.path), { force: true });
}
