// The operator's games configuration as the player routes read it: audience groups, catalog campaigns and wheel
// campaigns, loaded in one go and kept per process. The mini-app catalog is a benchmarked hot path, so a request
// costs no query for them: the snapshot is dropped by every admin write in this process (after its commit), and
// is at most CONFIG_TTL_MS old when another process wrote (several instances over one database).
import type { Database } from "bun:sqlite";
import { type AudienceRule, type CompiledRule, compileRule } from "./audience-rule";

export const CONFIG_TTL_MS = 5_000;

export interface AudienceGroupRow {
  group_key: string;
  title: string;
  rule: string;
  created_by: string;
  created_at: string;
}

export interface CatalogCampaignRow {
  id: number;
  game_key: string;
  audience_group: string;
  title: string;
  starts_at: string;
  ends_at: string | null;
  enabled: number;
  created_by: string;
  created_at: string;
}

export interface WheelCampaignRow {
  campaign_key: string;
  title: string;
  audience_group: string;
  starts_at: string;
  ends_at: string | null;
  cooldown_seconds: number;
  segments: string;
  enabled: number;
  created_by: string;
  created_at: string;
}

/** A segment of an operator wheel campaign (the same shape as the built-in one's). */
export interface StoredSegment {
  label: string;
  weight: number;
  reward: { free_spins: number; missiles: number; points: number };
}

export interface GamesConfig {
  loadedAtMs: number;
  groups: Map<string, CompiledRule>;
  /** Enabled catalog campaigns, any window. */
  catalogCampaigns: CatalogCampaignRow[];
  /** Enabled wheel campaigns, any window, segments parsed. */
  wheelCampaigns: Array<Omit<WheelCampaignRow, "segments"> & { segments: StoredSegment[] }>;
}

// Keyed by the connection: each test app (and each database) has its own snapshot.
const snapshots = new WeakMap<Database, GamesConfig>();

function load(db: Database, loadedAtMs: number): GamesConfig {
  const groups = new Map<string, CompiledRule>();
  for (const g of db.query<AudienceGroupRow, []>("SELECT * FROM messenger_audience_groups").all()) {
    groups.set(g.group_key, compileRule(JSON.parse(g.rule) as AudienceRule));
  }
  const catalogCampaigns = db.query<CatalogCampaignRow, []>("SELECT * FROM messenger_catalog_campaigns WHERE enabled = 1 ORDER BY starts_at, id").all();
  const wheelCampaigns = db
    .query<WheelCampaignRow, []>("SELECT * FROM messenger_wheel_campaigns WHERE enabled = 1 ORDER BY starts_at DESC, campaign_key")
    .all()
    .map((w) => ({ ...w, segments: JSON.parse(w.segments) as StoredSegment[] }));
  return { loadedAtMs, groups, catalogCampaigns, wheelCampaigns };
}

/** The configuration as of `nowIso` (the caller's ctx.clock reading): the cached snapshot while it is younger than CONFIG_TTL_MS. */
export function gamesConfig(db: Database, nowIso: string): GamesConfig {
  const now = Date.parse(nowIso);
  const cached = snapshots.get(db);
  // A clock that went back (a test's, or an operator's) reloads rather than trusting a snapshot from the future.
  if (cached && now >= cached.loadedAtMs && now - cached.loadedAtMs < CONFIG_TTL_MS) return cached;
  const fresh = load(db, now);
  snapshots.set(db, fresh);
  return fresh;
}

/** Call after an admin write commits. */
export function invalidateGamesConfig(db: Database): void {
  snapshots.delete(db);
}

/** Half-open windows [starts_at, ends_at), null end = open-ended; ISO strings of one format compare as text. */
export const inWindow = (w: { starts_at: string; ends_at: string | null }, nowIso: string) =>
  w.starts_at <= nowIso && (w.ends_at === null || nowIso < w.ends_at);

export const windowsOverlap = (a: { starts_at: string; ends_at: string | null }, b: { starts_at: string; ends_at: string | null }) =>
  (a.ends_at === null || b.starts_at < a.ends_at) && (b.ends_at === null || a.starts_at < b.ends_at);
