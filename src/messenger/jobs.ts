import type { AppContext } from "../context";
import { sendDueBotCalls } from "./bot/outbox";
import { foldLedger } from "./daily-stats";
import { pruneMessenger } from "./prune";

/** The messenger's jobs, registered by openContext (src/bootstrap.ts) like every domain's. */
export function registerMessengerJobs(ctx: AppContext): void {
  ctx.jobs.register({
    name: "messenger-stats-fold",
    pattern: "*/2 * * * * *",
    description: "Folds new game-ledger rows into the daily aggregates the operators' analytics read; records only runs that folded something",
    quietWhenIdle: true,
    run: async () => ({ idle: (await foldLedger(ctx)) === 0 }),
  });
  ctx.jobs.register({
    name: "messenger-bot-outbox",
    pattern: "* * * * * *",
    description: "Sends queued bot replies to the Bot API (retries with backoff, honours 429 retry_after); records only runs that sent something",
    quietWhenIdle: true,
    everyInstance: true, // outbox rows are leased one by one: every instance drains the queue
    run: async () => ({ idle: (await sendDueBotCalls(ctx)).idle }),
  });
  ctx.jobs.register({
    name: "messenger-prune",
    pattern: "0 23 4 * * *",
    description:
      "Deletes bot updates older than 7 days (Telegram redelivers for 24 h at most), sent or dead bot replies older than 30 days, hourly counters older than 90 days and expired wallet challenges",
    run: async () => {
      ctx.log.info("messenger rows pruned", await pruneMessenger(ctx));
    },
  });
}
