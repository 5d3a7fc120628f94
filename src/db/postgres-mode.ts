import { AppError } from "../http/errors";
import type { DbHandle } from "./client";

/**
 * The SQLite handle of a context that runs on PostgreSQL (DATABASE_URL): there is no SQLite file, so any code that
 * still reaches for one — a group not yet on the storage port — gets 503 not_available_on_postgres, never a crash
 * or a silent empty answer. The preview gate (src/db/engine-groups.ts) keeps those groups unmounted; this is the
 * backstop for a path it missed.
 */
export function sqliteAbsent(): DbHandle {
  const refuse = (): never => {
    throw new AppError("not_available_on_postgres", "This part of Herald does not run on PostgreSQL yet; docs/postgres.md lists what does", {
      internal: "a module reached for the SQLite handle while the service runs on PostgreSQL",
    });
  };
  return {
    get sqlite() {
      return refuse();
    },
    get db() {
      return refuse();
    },
    path: "(postgres)",
    close() {},
  };
}
