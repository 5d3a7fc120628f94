import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";

export interface BackupResult {
  path: string;
  size_bytes: number;
  sha256: string;
  created_at: string;
  integrity: "ok";
}

/**
 * A consistent snapshot with `VACUUM INTO` (a transactionally consistent copy, readers and writers carry on),
 * into `<db dir>/backups/herald-<time>.db`, then checked with integrity_check and hashed. Litestream's replica
 * is the continuous backup; this is the on-demand one an operator can copy off the box.
 */
export function runBackup(ctx: AppContext): BackupResult {
  if (ctx.db.path === ":memory:") throw new AppError("conflict", "An in-memory database cannot be backed up");
  const at = ctx.clock.now();
  const dir = join(dirname(ctx.db.path), "backups");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `herald-${at.toISOString().replace(/[:.]/g, "-")}.db`);
  try {
    ctx.db.sqlite.query("VACUUM INTO ?").run(file);
  } catch (err) {
    throw new AppError("service_unavailable", "The backup could not be written; see the server log", { internal: (err as Error).message });
  }
  const copy = new Database(file, { readonly: true });
  try {
    const row = copy.query("PRAGMA integrity_check").get() as { integrity_check: string };
    if (row.integrity_check !== "ok") throw new AppError("server_error", "The backup failed its integrity check");
  } finally {
    copy.close();
  }
  const bytes = readFileSync(file);
  return {
    path: file,
    size_bytes: statSync(file).size,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    created_at: at.toISOString(),
    integrity: "ok",
  };
}
