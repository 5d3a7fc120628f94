// What the messenger console page (/admin/console/messenger) shows, read through the same verbs as the JSON routes
// it links: gamesOverview (after foldLedger, as analytics-routes.ts does, so every committed play is counted), the
// catalog and wheel campaign lists, and the missions list. Only numbers and strings leave this file; the markup is
// console-page.ts and console-page-chart.ts.
import { when } from "../../console/frame";
import type { AppContext } from "../../context";
import { listMissions } from "../games/missions";
import { foldLedger } from "../daily-stats";
import { listCatalogCampaigns } from "../config/campaigns";
import { gamesOverview, OVERVIEW_DEFAULT_DAYS } from "./overview";
import { listWheelCampaigns } from "../config/wheel-campaigns";
import { freeSpinsText, missilesText, pointsText } from "../count-words";
import { qrSvg } from "../../http/formats/qr";

export const PAGE_PATH = "/admin/console/messenger";
/** The page's day range: a chart of more than a quarter is unreadable; the exports take up to 366 days. */
export const PAGE_MAX_DAYS = 90;
export const PAGE_DEFAULT_DAYS = OVERVIEW_DEFAULT_DAYS;
/** Rows read per list (the lists' own maximum page); the rest is in the JSON lists the page links. */
const LIST_LIMIT = 200;

const num = (n: number) => n.toLocaleString("en-US");

/** The form's hidden `days` (the page's range, kept on the way back): anything but a whole number 1…PAGE_MAX_DAYS is the default. */
export function pageDays(raw: string | undefined): number {
  const n = raw !== undefined && /^[0-9]{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  return n >= 1 && n <= PAGE_MAX_DAYS ? n : PAGE_DEFAULT_DAYS;
}

// What the page's markup reads: the types of what the functions below return.
export type ConsoleData = Awaited<ReturnType<typeof consoleData>>;
export type DayPoint = ConsoleData["series"][number];
export type CampaignRow = ConsoleData["campaigns"][number];
export type MissionLine = ConsoleData["missions"][number];

const rtp = (p: number | null) => (p === null ? "– (nothing spent)" : `${p} %`);

function rewardText(r: { free_spins: number; missiles: number; points: number }, salutes: string | null): string {
  const parts = [
    r.points ? pointsText(r.points) : "",
    r.free_spins ? freeSpinsText(r.free_spins) : "",
    r.missiles ? missilesText(r.missiles) : "",
    salutes ? `${salutes} ${Number(salutes) === 1 ? "salute" : "salutes"}` : "",
  ].filter(Boolean);
  return parts.join(", ") || "nothing";
}

const cooldownText = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`);
const minute = (iso: string) => `${iso.slice(0, 16).replace("T", " ")}`;
const windowText = (starts: string, ends: string | null) => `${minute(starts)} → ${ends === null ? "open-ended" : minute(ends)}`;

/** Enabled campaigns that are running now or will start later (ended ones are history: the JSON lists keep them). */
async function campaignRows(ctx: AppContext, nowIso: string) {
  const catalog = await listCatalogCampaigns(ctx, { include_disabled: false }, { limit: LIST_LIMIT });
  const wheels = await listWheelCampaigns(ctx, false, { limit: LIST_LIMIT });
  const live = (c: { active_now: boolean; starts_at: string }) => c.active_now || c.starts_at > nowIso;
  type Campaign = { title: string; audience_group: string; starts_at: string; ends_at: string | null; active_now: boolean };
  const row = (kind: string, key: string, game: string, c: Campaign) => ({
    kind,
    key,
    title: c.title,
    game,
    audience: c.audience_group,
    window: windowText(c.starts_at, c.ends_at),
    state: c.active_now ? ("active" as const) : ("scheduled" as const),
  });
  const rows = [
    ...catalog.campaigns.filter(live).map((c) => row("catalog", `#${c.id}`, c.game_key, c)),
    ...wheels.campaigns.filter(live).map((w) => row("wheel", w.campaign_key, "spin_wheel", w)),
  ];
  // Active first, then by start; scheduled ones in the order they will open.
  rows.sort((a, b) => (a.state === b.state ? (a.window < b.window ? -1 : 1) : a.state === "active" ? -1 : 1));
  const d = wheels.default_campaign;
  return {
    rows,
    cut: catalog.pagination.has_more || wheels.pagination.has_more,
    defaultWheel: `${d.title} (${d.campaign_key}, a free spin every ${cooldownText(d.cooldown_seconds)})`,
  };
}

async function missionLines(ctx: AppContext) {
  const list = await listMissions(ctx, { limit: LIST_LIMIT });
  return {
    total: list.total,
    lines: list.missions.map((m) => ({
      key: m.mission_key,
      title: m.title,
      eventType: m.event_type,
      source: m.progress_source === "server" ? "server" : "self-reported",
      serverCounted: m.progress_source === "server",
      target: num(m.target),
      reward: rewardText(m.reward, m.reward_salutes),
      caps: `${num(m.daily_cap)} a day, ${num(m.per_minute_cap)} a minute`,
      active: m.active,
      revision: m.revision,
      updated: minute(m.updated_at),
    })),
  };
}

export async function consoleData(ctx: AppContext, days: number) {
  const now = ctx.clock.now().toISOString();
  const url = ctx.config.messenger.miniAppUrl;
  await foldLedger(ctx);
  const o = await gamesOverview(ctx, { days });
  const t = o.total;
  const campaigns = await campaignRows(ctx, now);
  const missions = await missionLines(ctx);
  return {
    generatedAt: when(now)!,
    days: o.window.days,
    from: o.window.from,
    to: o.window.to,
    totals: [
      { id: "total-plays", label: "Plays", value: num(t.plays) },
      { id: "total-players", label: "Players (distinct)", value: num(t.players) },
      { id: "total-credits", label: "Credits paid (points value)", value: num(t.payout_points_value) },
      { id: "total-cost", label: "Cost to players (points value)", value: num(t.cost_points_value) },
      { id: "total-rtp", label: "Return to player", value: rtp(t.rtp_percent) },
      { id: "total-purchases", label: "Item purchases", value: `${num(t.purchases.entries)} (${pointsText(t.purchases.points_spent)} spent)` },
      { id: "total-grants", label: "Operator grants", value: `${num(t.manual_grants.entries)} (${missilesText(t.manual_grants.missiles)})` },
    ],
    games: o.games.map((g) => ({
      game: g.game_key,
      plays: num(g.plays),
      players: num(g.players),
      credits: num(g.payout_points_value),
      cost: num(g.cost_points_value),
      rtp: rtp(g.rtp_percent),
    })),
    series: t.series.map((p) => ({ day: p.day, plays: p.plays, players: p.players, credits: p.payout_points_value })),
    campaigns: campaigns.rows,
    campaignsCut: campaigns.cut,
    defaultWheel: campaigns.defaultWheel,
    missions: missions.lines,
    missionsTotal: missions.total,
    // The players' page as the bot links it, with its QR code as inline SVG for a poster or a second phone.
    miniApp: url ? { url, qrSvg: await qrSvg(url) } : null,
  };
}

/** Every GET route of the messenger admin, for the page's export list (all take the session cookie). */
export function exportLinks(days: number): Array<readonly [label: string, href: string]> {
  const g = "/api/messenger/admin/games";
  return [
    [`Overview as CSV (last ${days} days)`, `${g}/overview/export?format=csv&days=${days}`],
    [`Overview as JSON rows (last ${days} days)`, `${g}/overview/export?format=json&days=${days}`],
    [`Overview with per-game series, JSON (last ${days} days)`, `${g}/overview?days=${days}`],
    [`Spin wheel figures, JSON (last ${days} days)`, `${g}/spin-wheel?days=${days}`],
    [`Recon grid figures, JSON (last ${days} days)`, `${g}/recon-grid?days=${days}`],
    ["Rollout checklist, JSON (last 7 days)", `${g}/rollout-checklist`],
    ["Player profiles, JSON (first 50)", `${g}/user-profiles`],
    ["Catalog campaigns, disabled included, JSON", `${g}/catalog-campaigns?include_disabled=1&limit=200`],
    ["Wheel campaigns, disabled included, JSON", `${g}/wheel-campaigns?include_disabled=1&limit=200`],
    ["Audience groups, JSON", `${g}/audience-groups?limit=200`],
    ["Promo codes, disabled included, JSON", `${g}/promos?include_disabled=1&limit=200`],
    ["Catalog preview for a new player, JSON", `${g}/catalog-preview`],
    ["Missions, JSON", "/api/messenger/admin/missions?limit=200"],
    [`Missions compared, JSON (last ${days} days)`, `/api/messenger/admin/missions/comparison?days=${days}`],
    ["Bot readiness checks, JSON", "/api/messenger/admin/bot/bootstrap-readiness"],
    ["Bot commands and setMyCommands payload, JSON", "/api/messenger/admin/bot/command-helper"],
    ["Bot traffic, last 24 h, JSON", "/api/messenger/admin/bot/preview"],
  ];
}
