import { closeSync, copyFileSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { systemClock } from "../clock";
import type { Config } from "../config";
import { judgeKey, recordedKey } from "../auth/master-key-check";
import { decodeMasterKey, SecretBox } from "../auth/secret-box";
import { ownBackupsApply, POSTGRES_BACKUP_HINT } from "../ops/backups/engine";
import { type ExclusiveFile, holdExclusively, integrityOf, openSqliteFile } from "../db/sqlite-file";
import { manifestPathOf, sha256OfFile } from "../ops/backups/list";
import { flagString, UsageError, type ParsedArgs } from "./args";
import { emit } from "./output";

export const RESTORE_HELP = `Usage: herald restore FILE [--sha256 HEX] [--master-key-file PATH] [--json]

Replaces the database (HERALD_DB_PATH) with the backup FILE, e.g. one downloaded from GET /admin/backups/{name}.

  1. Checks FILE: a SQLite file, PRAGMA integrity_check ok, a Herald database; and its sha256, against
     --sha256 HEX and/or the manifest FILE.json beside it (written by herald backup), when there is one.
  2. Refuses while anything holds the current database (a running herald serve, Litestream, another herald
     command): stop the server first.
  3. Says which master key FILE needs (its fingerprint) and checks the key herald serve would use against it:
     the key in --master-key-file PATH when given, else HERALD_MASTER_KEY, else the development key file
     master.key beside the database. A key that cannot open FILE's secrets is refused. With no key at all,
     restore goes ahead and prints the fingerprint the server must be started with.
  4. Moves the current database (and its -wal/-shm files) aside to <db>.replaced-<UTC time>, and puts a copy
     of FILE in its place (copied to a temp file in the same folder, then renamed: never half a file).

On PostgreSQL (DATABASE_URL) restore refuses (exit 2): restore with the database's own tools (pg_restore, or
pg_basebackup's point-in-time recovery; docs/postgres.md).

Exit codes: 0 restored, 1 refused (nothing was changed), 2 bad usage or PostgreSQL. The server applies newer migrations when
it next starts. The restored database needs the HERALD_MASTER_KEY it was made with: move the key with the
database (docs/operations.md, "Restore: the database and its master key").`;

/** A refusal with its reason; nothing has been changed when one is thrown. */
class RestoreRefused extends Error {
  constructor(
    readonly code: "backup_invalid" | "checksum_mismatch" | "database_in_use" | "restore_failed" | "master_key_mismatch",
    message: string,
  ) {
    super(message);
  }
}

function withFd<T>(path: string, use: (fd: number) => T): T {
  const fd = openSync(path, "r");
  try {
    return use(fd);
  } finally {
    closeSync(fd);
  }
}

const sqliteHeaderOk = (path: string): boolean =>
  withFd(path, (fd) => {
    const buf = Buffer.alloc(16);
    return readSync(fd, buf, 0, 16, 0) === 16 && buf.toString("latin1") === "SQLite format 3\0";
  });

/** The sha256 values FILE must have: --sha256 and the manifest beside it, each with where it came from. */
function expectedHashes(file: string, flag: string | undefined): Array<{ from: string; sha256: string }> {
  const out: Array<{ from: string; sha256: string }> = [];
  if (flag !== undefined) out.push({ from: "--sha256", sha256: flag.toLowerCase() });
  const manifest = manifestPathOf(file);
  if (existsSync(manifest)) {
    let sha: unknown;
    try {
      sha = (JSON.parse(readFileSync(manifest, "utf8")) as { sha256?: unknown }).sha256;
    } catch {
      sha = undefined;
    }
    if (typeof sha !== "string" || !/^[0-9a-f]{64}$/.test(sha)) {
      throw new RestoreRefused("backup_invalid", `the manifest ${manifest} has no readable sha256; fix or remove it (and pass --sha256 HEX instead)`);
    }
    out.push({ from: `manifest ${basename(manifest)}`, sha256: sha });
  }
  return out;
}

async function checkSource(file: string, dbPath: string, shaFlag: string | undefined) {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(file);
  } catch {
    throw new RestoreRefused("backup_invalid", `${file} does not exist`);
  }
  if (!st.isFile()) throw new RestoreRefused("backup_invalid", `${file} is not a regular file`);
  if ([dbPath, `${dbPath}-wal`, `${dbPath}-shm`].map((p) => resolve(p)).includes(file)) {
    throw new RestoreRefused("backup_invalid", `${file} is the current database itself; restore a backup of it instead`);
  }
  if (!sqliteHeaderOk(file)) throw new RestoreRefused("backup_invalid", `${file} is not a SQLite database (it does not start with "SQLite format 3")`);
  const expected = expectedHashes(file, shaFlag);
  const sha256 = await sha256OfFile(file);
  for (const e of expected) {
    if (e.sha256 !== sha256) {
      throw new RestoreRefused(
        "checksum_mismatch",
        `${file} has sha256 ${sha256}, but ${e.from} says ${e.sha256}: the file is not the backup it claims to be (damaged or altered in transit)`,
      );
    }
  }
  return { sha256, size_bytes: st.size, checkedAgainst: expected.map((e) => e.from) };
}

/** Takes the current database for ourselves (holdExclusively: no server can start on it while we swap it), or refuses. */
function lockCurrentOrRefuse(dbPath: string): ExclusiveFile | null {
  if (!existsSync(dbPath)) return null;
  try {
    return holdExclusively(dbPath);
  } catch (err) {
    const message = (err as Error).message;
    if (/locked|busy/i.test(message)) {
      throw new RestoreRefused(
        "database_in_use",
        `the database ${dbPath} is in use by another process (a running herald serve, Litestream, or another herald command); stop it, then run restore again`,
      );
    }
    throw new RestoreRefused(
      "restore_failed",
      `the current database ${dbPath} cannot be opened to lock it (${message}); stop everything that uses it, move it and its -wal/-shm files aside by hand, then run restore again`,
    );
  }
}

/** fsync of a file or a folder (the rename of a file is durable once its folder is synced). */
const fsyncPath = (path: string): void => withFd(path, fsyncSync);

/** Copies FILE next to the database, checks the copy, then swaps it in; returns what was moved aside. */
async function swapIn(file: string, dbPath: string, sha256: string, now: Date, key: KeyToCheck | null) {
  const dir = dirname(dbPath);
  mkdirSync(dir, { recursive: true });
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  const temp = join(dir, `.${basename(dbPath)}.restore-${stamp}.tmp`);
  const lock = lockCurrentOrRefuse(dbPath);
  const moved: Array<{ from: string; to: string }> = [];
  let masterKey: MasterKeyReport | null = null;
  try {
    copyFileSync(file, temp);
    fsyncPath(temp);
    // The copy is what goes in place: it must be the file that was hashed (not one changed since).
    if ((await sha256OfFile(temp)) !== sha256) throw new RestoreRefused("checksum_mismatch", `${file} changed while it was being restored; try again`);
    const problems = checkCopy(temp);
    if (problems) throw new RestoreRefused("backup_invalid", `${file} fails PRAGMA integrity_check (${problems}); it is damaged — use another backup`);
    masterKey = masterKeyOf(temp, file, key);
    const folded = lock?.foldWal() === true;
    for (const suffix of ["", "-wal", "-shm", "-journal"]) {
      const from = `${dbPath}${suffix}`;
      if (!existsSync(from)) continue;
      if (folded && (suffix === "-shm" || (suffix === "-wal" && statSync(from).size === 0))) {
        rmSync(from);
        continue;
      }
      const to = `${dbPath}.replaced-${stamp}${suffix}`;
      renameSync(from, to);
      moved.push({ from, to });
    }
  } catch (err) {
    rmSync(temp, { force: true });
    for (const m of moved.reverse()) renameSync(m.to, m.from); // put back what was moved before the failure
    lock?.release();
    throw err;
  }
  // The old file is out of the way: release it before the new one appears, so that closing can touch only the
  // old file. link() never replaces an existing file: a database that appeared meanwhile is not overwritten.
  lock?.release();
  try {
    linkSync(temp, dbPath);
  } catch (err) {
    rmSync(temp, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST")
      throw new RestoreRefused(
        "database_in_use",
        `a new ${dbPath} appeared while restoring (did a server start?); the old one is at ${moved[0]?.to ?? "(none)"}`,
      );
    throw new RestoreRefused("restore_failed", `could not put the copy in place at ${dbPath}: ${(err as Error).message}`);
  }
  rmSync(temp, { force: true });
  fsyncPath(dir);
  return { moved, masterKey: masterKey! };
}

/** integrity_check of the copy (null when ok), and that it is Herald's; its -wal/-shm, if SQLite made any, removed. */
function checkCopy(path: string): string | null {
  try {
    const integrity = integrityOf(path);
    if (integrity !== "ok") return integrity;
    const db = openSqliteFile(path);
    try {
      const herald = db.get("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'");
      return herald ? null : "it is a SQLite database but not Herald's: it has no __drizzle_migrations table";
    } finally {
      db.close();
    }
  } catch (err) {
    return `SQLite cannot read it: ${(err as Error).message}`;
  } finally {
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
  }
}

/** The key to check FILE against, and where it came from (as the output names it). */
function keyToCheck(config: Config, dbPath: string, keyFile: string | undefined) {
  const devFile = join(dirname(dbPath), "master.key");
  const [text, source] =
    keyFile !== undefined
      ? [readKeyFile(keyFile), `--master-key-file ${keyFile}`]
      : config.masterKey
        ? [config.masterKey, "HERALD_MASTER_KEY"]
        : existsSync(devFile)
          ? [readKeyFile(devFile), `the development key ${devFile}`]
          : [null, ""];
  if (text === null) return null;
  try {
    return { box: new SecretBox(decodeMasterKey(text)), source };
  } catch {
    throw new UsageError(`${source} does not hold a master key (32 bytes, as 64 hex characters or base64)`);
  }
}

type KeyToCheck = NonNullable<ReturnType<typeof keyToCheck>>;

function readKeyFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read the master key file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

interface MasterKeyReport {
  /** The fingerprint FILE records, or null when it records none (a backup from before key checks). */
  required_fingerprint: string | null;
  /** What the key was checked against: the recorded check value, the stored secrets, or nothing (no key given, or nothing to check). */
  checked: "check_value" | "secrets" | "nothing";
  /** Where the checked key came from, and its fingerprint; null when no key was available. */
  checked_key: { source: string; fingerprint: string } | null;
  summary: string;
}

/** Which key the copy needs, and whether `key` is it; refuses (nothing changed yet) when it is not. */
function masterKeyOf(temp: string, file: string, key: KeyToCheck | null): MasterKeyReport {
  const db = openSqliteFile(temp);
  try {
    const required = recordedKey(db)?.fingerprint ?? null;
    const needs = required
      ? `this backup needs the master key with fingerprint ${required}`
      : "this backup records no master key fingerprint (made before key checks)";
    if (!key) return { required_fingerprint: required, checked: "nothing", checked_key: null, summary: `${needs}; no key here to check it against` };
    const verdict = judgeKey(db, key.box);
    const checkedKey = { source: key.source, fingerprint: key.box.fingerprint };
    if (!verdict.opens) {
      throw new RestoreRefused(
        "master_key_mismatch",
        `${file}: ${needs}, but ${key.source} has fingerprint ${key.box.fingerprint} and cannot open its secrets; a server started on it would answer every partner call with 503 master_key_mismatch. Set HERALD_MASTER_KEY (or pass --master-key-file) to the key the backup was made with, then run restore again`,
      );
    }
    const how = verdict.by === "check_value" ? "matches" : verdict.by === "secrets" ? "opens its stored secrets" : "has nothing to open (no secrets stored)";
    return {
      required_fingerprint: required,
      checked: verdict.by === "empty" ? "nothing" : verdict.by,
      checked_key: checkedKey,
      summary: `${needs}; ${key.source} (fingerprint ${key.box.fingerprint}) ${how}`,
    };
  } finally {
    db.close();
    rmSync(`${temp}-wal`, { force: true });
    rmSync(`${temp}-shm`, { force: true });
  }
}

export async function restoreCommand(config: Config, args: ParsedArgs, json: boolean): Promise<number> {
  // A SQLite file cannot be restored into PostgreSQL: said before anything is read or moved.
  if (!ownBackupsApply(config.database.engine)) throw new UsageError(`restore: DATABASE_URL points at PostgreSQL. ${POSTGRES_BACKUP_HINT}`);
  if (args.positionals.length !== 1) throw new UsageError(`restore takes one FILE (got ${args.positionals.length}); see herald restore --help`);
  const shaFlag = flagString(args, "sha256");
  if (shaFlag !== undefined && !/^[0-9a-fA-F]{64}$/.test(shaFlag)) throw new UsageError("--sha256 takes the 64 hex characters of a sha256");
  if (config.dbPath === ":memory:") throw new UsageError("HERALD_DB_PATH is :memory:; there is no file to restore into");
  const file = resolve(args.positionals[0]!);
  const dbPath = resolve(config.dbPath);
  const key = keyToCheck(config, dbPath, flagString(args, "master-key-file"));
  try {
    const source = await checkSource(file, dbPath, shaFlag);
    const { moved, masterKey } = await swapIn(file, dbPath, source.sha256, systemClock.now(), key);
    const warnings: string[] = [];
    // --master-key-file checks a key before it is set; say so when the server would still start with another.
    const serveKey = flagString(args, "master-key-file") !== undefined ? keyToCheck(config, dbPath, undefined) : null;
    if (key && serveKey && serveKey.box.fingerprint !== key.box.fingerprint) {
      warnings.push(
        `${serveKey.source} here has fingerprint ${serveKey.box.fingerprint}, not ${key.box.fingerprint}: start herald serve with the key from ${key.source}`,
      );
    }
    if (!key) {
      warnings.push(
        `HERALD_MASTER_KEY is not set and ${join(dirname(dbPath), "master.key")} does not exist: partner and webhook secrets in the restored database stay unreadable until herald runs with the key they were made with${masterKey.required_fingerprint ? ` (fingerprint ${masterKey.required_fingerprint})` : ""}`,
      );
    }
    const result = {
      success: true,
      restored: {
        from: file,
        to: dbPath,
        size_bytes: source.size_bytes,
        sha256: source.sha256,
        integrity: "ok",
        sha256_checked_against: source.checkedAgainst,
      },
      master_key: masterKey,
      replaced: moved,
      warnings,
    };
    emit(json, result, () =>
      [
        `checked ${file}: SQLite, integrity_check ok, sha256 ${source.sha256} (${source.checkedAgainst.length ? `matches ${source.checkedAgainst.join(" and ")}` : "not compared: no manifest beside it and no --sha256"})`,
        `master key: ${masterKey.summary}`,
        ...(moved.length ? moved.map((m) => `moved aside: ${m.from} -> ${m.to}`) : [`no current database at ${dbPath}; nothing moved aside`]),
        `restored: ${file} -> ${dbPath}`,
        ...warnings.map((w) => `warning: ${w}`),
        "start herald serve; it applies any newer migrations when it starts",
      ].join("\n"),
    );
    return 0;
  } catch (err) {
    if (!(err instanceof RestoreRefused)) throw err;
    if (json) emit(true, { success: false, error: err.code, message: err.message }, () => "");
    process.stderr.write(`herald: restore refused: ${err.message}\n`);
    return 1;
  }
}
