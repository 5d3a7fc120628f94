// The operator's games configuration as the player routes read it: audience groups, catalog campaigns and wheel
// campaigns, loaded in one go and kept per context (AppContext.state). The mini-app catalog is a benchmarked hot
// path, so a request costs no query for them. Invalidation across instances: every admin write bumps the
// games_config version in its own transaction (writeGamesConfig), and each instance re-reads that counter at most
// once a second (src/messenger/version-watch.ts) and reloads when it moved; a write in this process drops the copy
// at once, after the commit.
import type { Static } from "elysia";
import type { AdminRequest } from "../../auth/admin-plugin";
import { type AppContext, slot, stateOf } from "../../context";
import type { Queryable } from "../../db/port";
import {
  allAudienceGroups,
  type AudienceGroupRow,
  type CatalogCampaignRow,
  enabledCatalogCampaigns,
  enabledWheelCampaigns,
  type WheelCampaignRow,
} from "../store/config";
import { auditOperator } from "../../auth/audit";
import { bumpVersion } from "../store/versions";
import { type VersionWatch, versionWatch } from "../version-watch";
import { type AudienceRule, type CompiledRule, compileRule } from "./audience-rule";
import type { Segment } from "./model";

export type { AudienceGroupRow, CatalogCampaignRow, WheelCampaignRow };

/** A segment of a wheel campaign, an operator's or the built-in one, as the answers show it. */
export type StoredSegment = Static<typeof Segment>;

export interface GamesConfig {
  groups: Map<string, CompiledRule>;
  /** Enabled catalog campaigns, any window. */
  catalogCampaigns: CatalogCampaignRow[];
  /** Enabled wheel campaigns, any window, segments parsed. */
  wheelCampaigns: Array<Omit<WheelCampaignRow, "segments"> & { segments: StoredSegment[] }>;
}

interface ConfigCache {
  watch: VersionWatch;
  config: GamesConfig | null;
  loading: Promise<GamesConfig> | null;
  /** Moves when the copy is dropped: a load started before then never becomes the copy. */
  generation: number;
}

const CACHE = slot("messenger games config", (ctx): ConfigCache => ({ watch: versionWatch(ctx, "games_config"), config: null, loading: null, generation: 0 }));

function drop(c: ConfigCache): void {
  c.config = null;
  c.loading = null;
  c.generation++;
}

async function load(q: Queryable): Promise<GamesConfig> {
  const groups = new Map<string, CompiledRule>();
  for (const g of await allAudienceGroups(q)) groups.set(g.group_key, compileRule(JSON.parse(g.rule) as AudienceRule));
  const catalogCampaigns = await enabledCatalogCampaigns(q);
  const wheelCampaigns = (await enabledWheelCampaigns(q)).map((w) => ({ ...w, segments: JSON.parse(w.segments) as StoredSegment[] }));
  return { groups, catalogCampaigns, wheelCampaigns };
}

/**
 * The configuration, from memory while the games_config version has not moved. Read it BEFORE a transaction that
 * needs it (a transaction's body awaits only its own statements), and pass it in.
 */
export async function gamesConfig(ctx: AppContext): Promise<GamesConfig> {
  const c = stateOf(ctx, CACHE);
  // The version is read before the rows: a change committed in between shows as a move at the next check.
  if (await c.watch.moved()) drop(c);
  if (c.config) return c.config;
  if (!c.loading) {
    const generation = c.generation;
    c.loading = load(ctx.store).then(
      (fresh) => {
        if (c.generation === generation) {
          c.config = fresh;
          c.loading = null;
        }
        return fresh;
      },
      (err: unknown) => {
        if (c.generation === generation) c.loading = null;
        throw err;
      },
    );
  }
  return c.loading;
}

/**
 * One admin write of the configuration in its own transaction. First the version row's lock: configuration writes of
 * every instance run one at a time, so two overlapping campaigns saved at once cannot both pass the overlap check.
 * Then `write`, audited as `<action>.create` or `.update` with the row before and after as `view` shows it.
 */
export async function writeGamesConfig<R, V extends Record<string, unknown>>(
  ctx: AppContext,
  admin: AdminRequest,
  audit: { action: string; target: (row: R) => string; view: (row: R, nowIso: string) => V },
  write: (t: Queryable, nowIso: string) => Promise<{ before: R | null; row: R }>,
): Promise<{ view: V; created: boolean }> {
  const now = ctx.clock.now().toISOString();
  const result = await ctx.store.tx(async (t) => {
    await bumpVersion(t, "games_config", now);
    const { before, row } = await write(t, now);
    const after = audit.view(row, now);
    const action = `${audit.action}.${before ? "update" : "create"}`;
    await auditOperator(t, admin, now, action, audit.target(row), { before: before ? audit.view(before, now) : null, after });
    return { view: after, created: !before };
  });
  // After the commit: this process reloads on its next read.
  const c = stateOf(ctx, CACHE);
  drop(c);
  c.watch.reset();
  return result;
}

/** Half-open windows [starts_at, ends_at), null end = open-ended; ISO strings of one format compare as text. */
export const inWindow = (w: { starts_at: string; ends_at: string | null }, nowIso: string) =>
  w.starts_at <= nowIso && (w.ends_at === null || nowIso < w.ends_at);

export const windowsOverlap = (a: { starts_at: string; ends_at: string | null }, b: { starts_at: string; ends_at: string | null }) =>
  (a.ends_at === null || b.starts_at < a.ends_at) && (b.ends_at === null || a.starts_at < b.ends_at);
