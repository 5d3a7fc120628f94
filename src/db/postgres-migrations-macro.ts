// A Bun macro: runs at bundle time (also under `bun run` and `bun test`), so the compiled binary carries the
// PostgreSQL migrations (drizzle/postgres/NNNN_*.sql) as it carries the SQLite ones.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export function embeddedPostgresMigrations(): Array<{ name: string; statements: string[] }> {
  const dir = join(import.meta.dir, "..", "..", "drizzle", "postgres");
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => ({
      name: f.replace(/\.sql$/, ""),
      statements: readFileSync(join(dir, f), "utf8")
        .split("--> statement-breakpoint")
        .map((s) => s.trim())
        .filter((s) => s.replace(/--[^\n]*\n?/g, "").trim() !== ""),
    }));
}
