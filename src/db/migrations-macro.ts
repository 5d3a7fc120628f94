// A Bun macro: runs at bundle time (also under `bun run` and `bun test`), so the compiled binary carries the
// migration SQL and needs no drizzle/ folder beside it.
import { readMigrationFiles } from "drizzle-orm/migrator";
import { join } from "node:path";

export function embeddedMigrations() {
  return readMigrationFiles({ migrationsFolder: join(import.meta.dir, "..", "..", "drizzle") });
}
