// How an instance notices that a copy it keeps in memory went stale because of a write on ANOTHER instance: the
// writer bumps a counter in messenger_versions in the transaction of its change (src/messenger/store/versions.ts),
// and each instance re-reads that integer at most once per VERSION_POLL_MS — the way src/auth/keys.ts watches
// partner_keys_version. A write in this process resets the watch, so this process sees its own change at once.
import { epochMs } from "../clock";
import { type AppContext, slot, stateOf } from "../context";
import { type VersionName, versionOf } from "./store/versions";

/** At most this long after a change on another instance, this one still serves its copy. */
export const VERSION_POLL_MS = 1000;

export class VersionWatch {
  private version = -1;
  private checkedAtMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ctx: AppContext,
    private readonly name: VersionName,
  ) {}

  /**
   * Whether the copy must be dropped: the counter moved since the last read (or was never read). Reads it only
   * when VERSION_POLL_MS have passed by ctx.clock (a clock that went back reads at once). Call it BEFORE reading
   * the data the copy is made of: a change committed in between then shows as a move at the next check.
   */
  async moved(): Promise<boolean> {
    const now = epochMs(this.ctx.clock);
    if (now >= this.checkedAtMs && now - this.checkedAtMs < VERSION_POLL_MS) return false;
    // Marked checked before the read: requests arriving meanwhile keep the copy they have, not a read each.
    this.checkedAtMs = now;
    const v = await versionOf(this.ctx.store, this.name);
    if (v === this.version) return false;
    this.version = v;
    return true;
  }

  /** After a write through this process: the next check reads the counter again. */
  reset(): void {
    this.checkedAtMs = Number.NEGATIVE_INFINITY;
  }
}

const WATCHES = slot("messenger version watches", () => new Map<VersionName, VersionWatch>());

/**
 * The context's watch of one counter. Each counter has ONE reader of moved() — the cache it guards (games_config:
 * src/messenger/config/cache.ts; daily_players: src/messenger/admin/players-window.ts) — and any number of writers
 * of reset(): a write in this process (an admin change, a fold into a closed day) resets it after its commit.
 */
export function versionWatch(ctx: AppContext, name: VersionName): VersionWatch {
  const watches = stateOf(ctx, WATCHES);
  return watches.get(name) ?? watches.set(name, new VersionWatch(ctx, name)).get(name)!;
}
