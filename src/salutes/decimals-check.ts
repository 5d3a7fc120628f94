import { ConfigError } from "../config";
import type { Queryable } from "../db/port";
import type { SyncQueryable } from "../db/sqlite-file";

// Salutes amounts are stored as integers in minor units; how many decimals a unit has is SALUTES_DECIMALS. The
// database records the setting its amounts were written with (salutes_settings, written at the first start), and
// a start with another setting is refused: it would read every balance and ledger entry 10^n times too large or
// too small, silently. A database from before the record gets the current setting recorded.

const READ = "SELECT decimals FROM salutes_settings WHERE id = 1";
const RECORD = "INSERT INTO salutes_settings (id, decimals, recorded_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING";

function refusal(configured: number, recorded: number): ConfigError {
  return new ConfigError([
    `SALUTES_DECIMALS is ${configured}, but this database's salutes amounts were written with ${recorded} decimal place${recorded === 1 ? "" : "s"}: ` +
      `every balance would read ${10 ** Math.abs(configured - recorded)} times too ${configured > recorded ? "large" : "small"}. ` +
      `Set SALUTES_DECIMALS=${recorded} (the amounts cannot be rescaled by a setting).`,
  ]);
}

/** The check on a SQLite start (synchronous, like the rest of a SQLite start). */
export function checkSalutesDecimalsSync(db: SyncQueryable, configured: number, now: string): void {
  db.run(RECORD, [configured, now]);
  const recorded = Number((db.get(READ, []) as { decimals: number | bigint } | null)?.decimals ?? configured);
  if (recorded !== configured) throw refusal(configured, recorded);
}

/** The same check through the storage port (PostgreSQL). */
export async function checkSalutesDecimals(q: Queryable, configured: number, now: string): Promise<void> {
  await q.run(RECORD, [configured, now]);
  const recorded = Number((await q.get<{ decimals: number }>(READ))?.decimals ?? configured);
  if (recorded !== configured) throw refusal(configured, recorded);
}
