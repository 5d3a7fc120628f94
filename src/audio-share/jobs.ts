import type { AppContext } from "../context";
import { linkStore } from "./short-links";
import { prune } from "./store/links";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Expired links (and their stats) stay inspectable for this long, then answer 404 instead of 410. */
export const LINK_RETENTION_DAYS_AFTER_EXPIRY = 90;
export const TRACK_EVENT_RETENTION_DAYS = 90;

/** Deletes what the audio-share tables no longer need, in bounded batches; the row counts (and done: false if a bound stopped it). */
export async function pruneAudioShare(ctx: AppContext) {
  const now = ctx.clock.now().getTime();
  // Click dedupe is per UTC hour: the current and the previous hour are all that can still matter.
  const seenBefore = `${new Date(now - 2 * HOUR_MS).toISOString().slice(0, 13)}:00:00Z`;
  const linksBefore = new Date(now - LINK_RETENTION_DAYS_AFTER_EXPIRY * DAY_MS).toISOString();
  const eventsBefore = new Date(now - TRACK_EVENT_RETENTION_DAYS * DAY_MS).toISOString();
  const deleted = await prune(ctx.store, seenBefore, eventsBefore, linksBefore);
  if (deleted.links) linkStore(ctx).forgetAll();
  return deleted;
}

export function registerAudioShareJobs(ctx: AppContext): void {
  ctx.jobs.register({
    name: "audio-share-prune",
    pattern: "0 17 * * * *",
    description: "Deletes click-dedupe rows older than 2 h, track events after 90 days, and links (with their stats) 90 days after they expired",
    run: async () => {
      const deleted = await pruneAudioShare(ctx);
      ctx.log.info("audio-share pruned", deleted);
    },
  });
}
