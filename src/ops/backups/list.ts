import { lstatSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { refuseBackupsOnPostgres } from "./engine";

// The on-demand backups in `<db dir>/backups` and their sidecar manifests. Only files named like the ones runBackup
// writes are backups; anything else in the folder (notes, a temp file, a symlink) is neither listed, served nor pruned.

/** What runBackup writes: `herald-2026-01-01T00-00-00-000Z.db`. No dot, slash or percent sign can pass it. */
export const BACKUP_NAME_PATTERN = "^herald-[0-9TZ-]+\\.db$";
const BACKUP_NAME = new RegExp(BACKUP_NAME_PATTERN);
const STAMPED_NAME = /^herald-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z\.db$/;

export type BackupIntegrity = "ok" | "unknown";

/** `<name>.json` beside each backup: the integrity it had when made ("unknown" for a file found without one). */
export interface BackupManifest {
  sha256: string;
  size_bytes: number;
  created_at: string;
  integrity: BackupIntegrity;
}

export interface BackupEntry extends BackupManifest {
  name: string;
  path: string;
}

/** A backup file found in the folder, before its manifest is read or made. */
export type BackupFile = Omit<BackupEntry, "sha256" | "integrity">;

export const backupsDir = (ctx: Pick<AppContext, "config">) => join(dirname(ctx.config.dbPath), "backups");
export const manifestPathOf = (backupPath: string) => `${backupPath}.json`;
export const isBackupName = (name: string) => BACKUP_NAME.test(name);
export const backupNameAt = (at: Date) => `herald-${at.toISOString().replace(/[:.]/g, "-")}.db`;

/** sha256 of a file, read as a stream: memory stays flat whatever the size of the database. */
export async function sha256OfFile(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  return hasher.digest("hex");
}

/** Written to a temp name and renamed: a reader sees the old manifest or the new, never half of one. */
export function writeManifest(backupPath: string, m: BackupManifest): void {
  const target = manifestPathOf(backupPath);
  const temp = `${target}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(m, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, target);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** The manifest if it exists, parses and still describes a file of this size; null otherwise (then re-made). */
export function readManifest(backupPath: string, sizeBytes: number): BackupManifest | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(manifestPathOf(backupPath), "utf8"));
  } catch {
    return null;
  }
  const m = raw as Partial<BackupManifest> | null;
  if (
    !m ||
    typeof m.sha256 !== "string" ||
    !/^[0-9a-f]{64}$/.test(m.sha256) ||
    m.size_bytes !== sizeBytes ||
    typeof m.created_at !== "string" ||
    (m.integrity !== "ok" && m.integrity !== "unknown")
  ) {
    return null;
  }
  return { sha256: m.sha256, size_bytes: m.size_bytes, created_at: m.created_at, integrity: m.integrity };
}

/** When a backup was made: its manifest says so, else its name, else (a renamed copy) the file's mtime. */
function createdAtOf(path: string, name: string, st: Stats): string {
  const recorded = readManifest(path, st.size)?.created_at;
  if (recorded) return recorded;
  const m = STAMPED_NAME.exec(name);
  const fromName = m ? new Date(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`) : null;
  return fromName && !Number.isNaN(fromName.getTime()) ? fromName.toISOString() : st.mtime.toISOString();
}

/**
 * The backup file `name` in `dir`, or null. lstat, not stat: a symlink is never a backup, so a link planted in the
 * folder (pointing at the live database, /etc/shadow …) is neither served nor followed when pruning.
 */
export function backupFileOrNull(dir: string, name: string): BackupFile | null {
  if (!isBackupName(name)) return null;
  const path = join(dir, name);
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return null;
  }
  if (!st.isFile()) return null;
  return { name, path, size_bytes: st.size, created_at: createdAtOf(path, name, st) };
}

/** Every backup in the folder, newest first (ties: by name, which embeds the time). */
export function listBackupFiles(dir: string): BackupFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return []; // no backup taken yet
    throw err;
  }
  const files = names.map((n) => backupFileOrNull(dir, n)).filter((f): f is BackupFile => f !== null);
  return files.sort((a, b) => (a.created_at === b.created_at ? b.name.localeCompare(a.name) : b.created_at < a.created_at ? -1 : 1));
}

/**
 * The file's manifest, or — for a file copied in by hand or made before manifests existed — its sha256 computed
 * once, streaming, and cached in a new manifest with integrity "unknown" (nobody checked it; restore will).
 */
export async function describeBackup(file: BackupFile): Promise<BackupEntry> {
  const recorded = readManifest(file.path, file.size_bytes);
  if (recorded) return { name: file.name, path: file.path, ...recorded };
  const m: BackupManifest = { sha256: await sha256OfFile(file.path), size_bytes: file.size_bytes, created_at: file.created_at, integrity: "unknown" };
  try {
    writeManifest(file.path, m);
  } catch {
    // A read-only folder still lists; the hash is computed again next time.
  }
  return { name: file.name, path: file.path, ...m };
}

/** One page of the backups, newest first. Only the page's files are hashed when they lack a manifest. 409 on PostgreSQL. */
export async function listBackups(ctx: AppContext, page: { limit: number; offset: number }) {
  refuseBackupsOnPostgres(ctx.store.dialect);
  const files = listBackupFiles(backupsDir(ctx));
  const slice = files.slice(page.offset, page.offset + page.limit);
  const items: BackupEntry[] = [];
  for (const f of slice) items.push(await describeBackup(f));
  return { items, total: files.length };
}

/**
 * The backup to download. The name was already held to BACKUP_NAME_PATTERN by the route's schema (so `..`,
 * `%2e%2e`, slashes and absolute paths are a 400 before this runs); checked again here because this is the
 * function that turns it into a path.
 */
export async function backupOrThrow(ctx: AppContext, name: string): Promise<BackupEntry> {
  refuseBackupsOnPostgres(ctx.store.dialect);
  if (!isBackupName(name)) {
    const problem = "must be a backup name such as herald-2026-01-01T00-00-00-000Z.db, as listed by GET /admin/backups";
    throw new AppError("invalid_query", `path.name ${problem}`, { details: [{ field: "path.name", problem }] });
  }
  const file = backupFileOrNull(backupsDir(ctx), name);
  // A symlink or other non-file under a backup name is answered exactly like a missing one.
  if (!file) throw new AppError("not_found", `No backup named ${name} in the backups folder; GET /admin/backups lists them`);
  return describeBackup(file);
}
