import type { AppContext } from "../../context";
import { NotFoundError } from "../../http/errors/errors";
import { CHECK_NAMES } from "../checks/engine";
import { loadPolicy } from "../checks/policy";
import { uptimeFrom, uptimeSource, type UptimeCache } from "../uptime";
import { escapeXml } from "../../http/formats/xml-escape";

// Uptime badges in the shields.io "flat" style, as Gatus and Uptime Kuma offer: /status/badge/<check>.svg
// (or overall.svg) with ?window=24h|7d|30d|90d. An unknown check is a JSON 404 not_found like every other
// miss (an <img> shows it as broken, which is the truth); a bad window is a 400 from the query schema.

export const BADGE_WINDOWS = { "24h": 24, "7d": 24 * 7, "30d": 24 * 30, "90d": 24 * 90 } as const;
export type BadgeWindow = keyof typeof BADGE_WINDOWS;

/** Colour steps: uptime at or above each bound gets its colour (shields.io's palette). */
const STEPS: Array<[number, string]> = [
  [99.9, "#4c1"],
  [99, "#97ca00"],
  [95, "#dfb317"],
  [90, "#fe7d37"],
  [0, "#e05d44"],
];
const NO_DATA = "#9f9f9f";

// Verdana 11px averages about 6.5 px a character; shields measures exactly, this is close enough to look right.
const textWidth = (s: string) => Math.round(s.length * 6.5) + 10;

export function badgeSvg(label: string, message: string, color: string): string {
  const lw = textWidth(label);
  const mw = textWidth(message);
  const w = lw + mw;
  const l = escapeXml(label);
  const m = escapeXml(message);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${l}: ${m}">
<title>${l}: ${m}</title>
<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>
<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>
<g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${mw}" height="20" fill="${color}"/><rect width="${w}" height="20" fill="url(#s)"/></g>
<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">
<text x="${lw / 2}" y="14">${l}</text><text x="${lw + mw / 2}" y="14">${m}</text>
</g>
</svg>`;
}

export const colorFor = (uptimePct: number | null): string => (uptimePct === null ? NO_DATA : STEPS.find(([min]) => uptimePct >= min)![1]);

/** Formats like a status page: 100%, 99.95%, 97.1% — two decimals at most, trailing zeros dropped. */
export const formatPct = (pct: number): string => `${Number(pct.toFixed(2))}%`;

export function parseBadgeName(file: string): string {
  const name = file.replace(/\.svg$/, "");
  if (name !== "overall" && !CHECK_NAMES.includes(name)) throw new NotFoundError("status check", name);
  return name;
}

export async function uptimeBadge(ctx: AppContext, check: string, window: BadgeWindow, cache?: UptimeCache) {
  const hours = BADGE_WINDOWS[window];
  const exclude = loadPolicy(ctx).policy.exclude_maintenance_default;
  const r = uptimeFrom(await uptimeSource(ctx, hours, cache), hours, exclude);
  const totals = check === "overall" ? r.overall : r.checks[check]!;
  const message = totals.uptime_pct === null ? "no data" : formatPct(totals.uptime_pct);
  return { svg: badgeSvg(`${check === "overall" ? "uptime" : check} ${window}`, message, colorFor(totals.uptime_pct)), uptime_pct: totals.uptime_pct };
}
