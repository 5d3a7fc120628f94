import type { AppContext } from "../context";
import { unfinished } from "../db/batched-delete";
import { IdempotencyStore } from "./idempotency";
import { NonceStore } from "./nonces";
import { AdminSessions } from "./sessions";

export function registerAuthJobs(ctx: AppContext): void {
  const nonces = new NonceStore(ctx);
  const idempotency = new IdempotencyStore(ctx);
  const sessions = new AdminSessions(ctx);
  ctx.jobs.register({
    name: "auth-prune",
    pattern: "0 */10 * * * *",
    description: "Deletes expired nonces, idempotency records and operator sessions",
    run: async () => {
      // Each bounded in time (src/db/batched-delete.ts): what a bound left goes at the next tick, ten minutes on.
      const n = await nonces.pruneExpired();
      const i = await idempotency.pruneExpired();
      const s = await sessions.pruneExpired();
      ctx.log.info("auth records pruned", { nonces: n.deleted, idempotency_records: i.deleted, admin_sessions: s.deleted, ...unfinished(n, i, s) });
    },
  });
}
