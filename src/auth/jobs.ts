import type { AppContext } from "../context";
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
      const n = await nonces.pruneExpired();
      const i = await idempotency.pruneExpired();
      const s = await sessions.pruneExpired();
      ctx.log.info("auth records pruned", { nonces: n, idempotency_records: i, admin_sessions: s });
    },
  });
}
