import type { AppContext } from "../context";
import { IdempotencyStore } from "./idempotency";
import { NonceStore } from "./nonces";

export function registerAuthJobs(ctx: AppContext): void {
  const nonces = new NonceStore(ctx);
  const idempotency = new IdempotencyStore(ctx);
  ctx.jobs.register({
    name: "auth-prune",
    pattern: "0 */10 * * * *",
    description: "Deletes expired nonces and idempotency records",
    run: () => {
      const n = nonces.pruneExpired();
      const i = idempotency.pruneExpired();
      ctx.log.info("auth records pruned", { nonces: n, idempotency_records: i });
    },
  });
}
