// Wheel campaigns (GET/POST /api/messenger/admin/games/wheel-campaigns): the segment table, cooldown, audience
// and window of the wheel a player spins. The draw itself is unchanged (docs/messenger.md "Provably fair": the
// segment is picked by fairInt over the campaign's weights); a spin records its campaign_key, and a campaign's
// segments are frozen once a spin used them, so every past spin stays recomputable from the campaign it names.
import type { Static } from "elysia";
import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { parseKeyPage } from "../../http/pagination";
import { inAudience, reward, WHEEL_CAMPAIGN } from "../catalog";
import type { AudiencePlayer } from "./audience-rule";
import { requireAudienceGroup } from "./audiences";
import { campaignWindowOrThrow, refuseOverlap } from "./campaigns";
import { insertWheelCampaign, otherEnabledWheelCampaigns, updateWheelCampaign, wheelCampaignByKey, wheelCampaignsPage } from "../store/config";
import { campaignHasSpins } from "../store/fair";
import { type GamesConfig, inWindow, type StoredSegment, type WheelCampaignRow, writeGamesConfig } from "./cache";
import { adminListAnswer, badField, type PageInput, paged } from "./inputs";
import { type GamesConfigModel, MAX_SEGMENTS, MAX_TOTAL_WEIGHT, WheelCampaign } from "./model";
import { schemaView } from "../../http/schema-view";

type WheelCampaignInput = Static<typeof GamesConfigModel.wheelBody>;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** An exact fraction and its value rounded half-up to 6 decimals, as text (no float drift in the answer). */
function fraction(numerator: number, denominator: number) {
  const g = gcd(numerator, denominator) || 1;
  const [n, d] = [numerator / g, denominator / g];
  const scaled = (BigInt(n) * 2_000_000n + BigInt(d)) / (2n * BigInt(d));
  const s = scaled.toString().padStart(7, "0");
  return { numerator: n, denominator: d, decimal: `${s.slice(0, -6)}.${s.slice(-6)}` };
}

/** Expected reward of one spin, per reward kind: Σ weight·reward / Σ weight. */
export function expectedValue(segments: readonly StoredSegment[]) {
  const total = segments.reduce((a, s) => a + s.weight, 0);
  const per = (kind: keyof StoredSegment["reward"]) =>
    fraction(
      segments.reduce((a, s) => a + s.weight * s.reward[kind], 0),
      total,
    );
  return { total_weight: total, free_spins: per("free_spins"), missiles: per("missiles"), points: per("points") };
}

export interface ActiveWheel {
  campaign_key: string;
  title: string;
  cooldown_seconds: number;
  segments: StoredSegment[];
  source: "campaign" | "default";
}

const DEFAULT_WHEEL: ActiveWheel = {
  campaign_key: WHEEL_CAMPAIGN.campaign_key,
  title: WHEEL_CAMPAIGN.title,
  cooldown_seconds: WHEEL_CAMPAIGN.cooldown_seconds,
  segments: WHEEL_CAMPAIGN.segments.map((s) => ({ label: s.label, weight: s.weight, reward: { ...s.reward } })),
  source: "default",
};

/**
 * The wheel this player spins now: the enabled campaign for one of their audience groups whose window holds now
 * (the latest started, ties by key), else the built-in default. Read from the loaded configuration.
 */
export function activeWheel(config: GamesConfig, player: AudiencePlayer, nowIso: string): ActiveWheel {
  const c = config.wheelCampaigns.find((w) => inWindow(w, nowIso) && inAudience(player, w.audience_group, config));
  if (!c) return DEFAULT_WHEEL;
  return { campaign_key: c.campaign_key, title: c.title, cooldown_seconds: c.cooldown_seconds, segments: c.segments, source: "campaign" };
}

export const defaultWheelView = () => ({ ...DEFAULT_WHEEL, expected_value: expectedValue(DEFAULT_WHEEL.segments) });

const wheelView = (w: WheelCampaignRow, nowIso: string) => {
  const segments = JSON.parse(w.segments) as StoredSegment[];
  const enabled = w.enabled === 1;
  return schemaView(WheelCampaign, w, { segments, enabled, active_now: enabled && inWindow(w, nowIso), expected_value: expectedValue(segments) });
};

export async function listWheelCampaigns(ctx: AppContext, includeDisabled: boolean, input: PageInput) {
  const now = ctx.clock.now().toISOString();
  const page = parseKeyPage(input, ["text", "text"]);
  const [afterStart, afterKey] = (page.after ?? [null, null]) as [string | null, string | null];
  const rows = await wheelCampaignsPage(ctx.store, { includeDisabled, afterStart, afterKey, limit: page.limit + 1, offset: page.offset });
  const p = paged(
    rows.map((r) => wheelView(r, now)),
    page,
    (w) => [w.starts_at, w.campaign_key],
  );
  return { ...adminListAnswer("campaigns", p, { include_disabled: includeDisabled }), default_campaign: defaultWheelView() };
}

function checkSegments(segments: NonNullable<WheelCampaignInput["segments"]>): StoredSegment[] {
  if (segments.length === 0 || segments.length > MAX_SEGMENTS) throw badField("body.segments", `must hold 1 to ${MAX_SEGMENTS} segments`);
  segments.forEach((s, i) => {
    if (!Number.isInteger(s.weight) || s.weight < 1) throw badField(`body.segments.${i}.weight`, "must be a positive integer");
  });
  const total = segments.reduce((a, s) => a + s.weight, 0);
  if (total <= 0 || total > MAX_TOTAL_WEIGHT) throw badField("body.segments", `weights must sum to 1–${MAX_TOTAL_WEIGHT}; they sum to ${total}`);
  return segments.map((s) => ({
    label: s.label,
    weight: s.weight,
    reward: reward(s.reward),
  }));
}

export async function saveWheelCampaign(ctx: AppContext, admin: AdminRequest, input: WheelCampaignInput) {
  if (input.campaign_key === WHEEL_CAMPAIGN.campaign_key) throw badField("body.campaign_key", `${WHEEL_CAMPAIGN.campaign_key} is the built-in campaign`);
  const segments = input.segments === undefined ? undefined : checkSegments(input.segments);
  const audit = { action: "messenger.wheel_campaign", target: (w: WheelCampaignRow) => w.campaign_key, view: wheelView };
  const { view, created } = await writeGamesConfig(ctx, admin, audit, async (t, now) => {
    const before = await wheelCampaignByKey(t, input.campaign_key);
    if (before && !input.update)
      throw new AppError("conflict", `body.campaign_key: the wheel campaign ${input.campaign_key} exists; send update: true to change it`, {
        details: [{ field: "body.campaign_key", problem: "already exists" }],
      });
    if (!before && input.update)
      throw new AppError("campaign_not_found", `body.campaign_key: no wheel campaign ${JSON.stringify(input.campaign_key)}`, {
        details: [{ field: "body.campaign_key", problem: "no such campaign" }],
      });
    for (const field of ["title", "audience_group", "segments", "cooldown_seconds"] as const)
      if (!before && input[field] === undefined) throw badField(`body.${field}`, "is required when creating a wheel campaign");
    if (before && segments && JSON.stringify(segments) !== before.segments && (await campaignHasSpins(t, before.campaign_key)))
      throw new AppError("conflict", `body.segments: spins were recorded with ${before.campaign_key}, so its segments are fixed; create a new campaign_key`, {
        details: [{ field: "body.segments", problem: "fixed once a spin used the campaign (past spins must stay recomputable)" }],
      });
    const next = {
      title: input.title ?? before!.title,
      audience_group: input.audience_group ?? before!.audience_group,
      cooldown_seconds: input.cooldown_seconds ?? before!.cooldown_seconds,
      segments: segments ? JSON.stringify(segments) : before!.segments,
      ...campaignWindowOrThrow(input, before, now),
    };
    await requireAudienceGroup(t, next.audience_group, "body.audience_group");
    if (next.enabled === 1) {
      const others = await otherEnabledWheelCampaigns(t, next.audience_group, input.campaign_key);
      refuseOverlap(next, others, (o) => wheelView(o, now), "wheel campaign(s)");
    }
    const row = before
      ? await updateWheelCampaign(t, input.campaign_key, next)
      : await insertWheelCampaign(t, input.campaign_key, next, actorLabel(admin.actor), now);
    return { before, row };
  });
  return { campaign: view, created };
}
