import { escapeXml } from "../../http/formats/xml-escape";
import type { UsageReport } from "./service";
import { GLYPH_HEIGHT } from "../digest/trend-font";
import { GRID, INK, niceAxis, Raster, type Rgb, textWidth } from "../digest/trend-png";

// The export-usage charts: downloads per UTC day as stacked bars, one series per source (direct export,
// download token), drawn the same way as PNG (the digest's raster and pixel font) and as hand-written SVG.
// Both carry the series in the X-Usage-Legend header, as JSON: [{"key","label","color"}] in drawing order.

export const USAGE_CHART_BOUNDS = { w: { minimum: 320, maximum: 1600, default: 800 }, h: { minimum: 200, maximum: 900, default: 360 } } as const;

type UsageDay = UsageReport["series"][number];

interface Series {
  key: "export" | "token";
  label: string;
  color: Rgb;
  value: (d: UsageDay) => number;
}

const SERIES: readonly Series[] = [
  { key: "export", label: "direct downloads", color: [66, 133, 244], value: (d) => d.export_downloads },
  { key: "token", label: "download-token downloads", color: [244, 160, 0], value: (d) => d.token_downloads },
];

const hex = (c: Rgb) => `#${c.map((v) => v.toString(16).padStart(2, "0")).join("")}`;

/** What the PNG chart is drawn from: plain data, handed to the renderer thread (src/ops/digest/render-worker.ts). */
export type UsageChartData = Pick<UsageReport, "series" | "query" | "window">;

/** The series drawn for a report: both, or only the one its source filter kept. */
const seriesOf = (r: UsageChartData) => SERIES.filter((s) => r.query.source === "all" || r.query.source === s.key);

/** The X-Usage-Legend value: JSON, ASCII only, one entry per drawn series. */
export const usageLegend = (r: UsageReport) => JSON.stringify(seriesOf(r).map((s) => ({ key: s.key, label: s.label, color: hex(s.color) })));

function layout(r: UsageChartData, w: number, h: number, lineH: number, labelW: number) {
  const axis = niceAxis(Math.max(1, ...r.series.map((d) => d.downloads)));
  const left = 12 + labelW + 8;
  const right = w - 12;
  const top = 10 + lineH * 2 + 16;
  const bottom = h - (lineH * 3 + 24);
  const plotH = Math.max(10, bottom - top);
  const slot = (right - left) / Math.max(1, r.series.length);
  return { left, right, top, bottom, axis, slot, barW: Math.max(1, slot * 0.7), yOf: (v: number) => bottom - (v / axis.top) * plotH };
}

const title = (r: UsageChartData) => `Export downloads per day, last ${r.window.days} days (source ${r.query.source})`;
const labelEvery = (slot: number, labelW: number) => [1, 2, 3, 5, 7, 14, 30].find((k) => k * slot >= labelW) ?? Math.ceil(labelW / slot);

/** The chart as PNG, drawn on the calling thread; routes draw it in the renderer thread (src/ops/digest/chart-renderer.ts). */
export function renderUsagePng(r: UsageChartData, w: number, h: number): Buffer {
  const px = new Raster(w, h);
  const scale = w >= 640 && h >= 300 ? 2 : 1;
  const lineH = GLYPH_HEIGHT * scale;
  const L = layout(r, w, h, lineH, textWidth(String(niceAxis(Math.max(1, ...r.series.map((d) => d.downloads))).top), scale));
  px.text(12, 10, title(r), INK, scale);
  for (let v = 0; v <= L.axis.top; v += L.axis.step) {
    const y = Math.round(L.yOf(v));
    px.line(L.left, y, L.right, y, GRID);
    px.text(L.left - 6 - textWidth(String(v), scale), y - Math.floor(lineH / 2), String(v), INK, scale);
  }
  const series = seriesOf(r);
  r.series.forEach((d, i) => {
    const x = L.left + i * L.slot + (L.slot - L.barW) / 2;
    let base = 0;
    for (const s of series) {
      const v = s.value(d);
      if (v > 0) px.rect(x, L.yOf(base + v), L.barW, L.yOf(base) - L.yOf(base + v), s.color);
      base += v;
    }
  });
  px.line(L.left, L.top, L.left, L.bottom, INK);
  px.line(L.left, L.bottom, L.right, L.bottom, INK);
  const every = labelEvery(L.slot, textWidth("MM-DD", scale) + 10);
  r.series.forEach((d, i) => {
    if (i % every !== 0) return;
    const label = d.day.slice(5);
    const cx = L.left + (i + 0.5) * L.slot;
    px.text(Math.max(0, Math.min(L.right - textWidth(label, scale), cx - textWidth(label, scale) / 2)), L.bottom + 6, label, INK, scale);
  });
  let lx = L.left;
  const ly = h - lineH - 8;
  for (const s of series) {
    px.rect(lx, ly, lineH * 1.5, lineH, s.color);
    lx += lineH * 1.5 + 6;
    px.text(lx, ly, s.label, INK, scale);
    lx += textWidth(s.label, scale) + 18;
  }
  return px.png();
}

/** The same chart as SVG: every text node escaped (src/http/formats/xml-escape.ts), each bar titled with its numbers. */
export function renderUsageSvg(r: UsageReport, w: number, h: number): string {
  const font = 12;
  const L = layout(r, w, h, font, String(niceAxis(Math.max(1, ...r.series.map((d) => d.downloads))).top).length * 7);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="${escapeXml(title(r))}">`,
    `<rect x="0" y="0" width="${w}" height="${h}" fill="#ffffff"/>`,
    `<text x="12" y="${10 + font}" font-family="sans-serif" font-size="${font + 2}" fill="${hex(INK)}">${escapeXml(title(r))}</text>`,
  ];
  const n = (v: number) => Math.round(v * 10) / 10;
  for (let v = 0; v <= L.axis.top; v += L.axis.step) {
    const y = n(L.yOf(v));
    out.push(`<line x1="${L.left}" y1="${y}" x2="${L.right}" y2="${y}" stroke="${hex(GRID)}"/>`);
    out.push(`<text x="${L.left - 6}" y="${y + 4}" text-anchor="end" font-family="sans-serif" font-size="${font}">${v}</text>`);
  }
  const series = seriesOf(r);
  r.series.forEach((d, i) => {
    const x = n(L.left + i * L.slot + (L.slot - L.barW) / 2);
    let base = 0;
    for (const s of series) {
      const v = s.value(d);
      if (v > 0) {
        const y = n(L.yOf(base + v));
        out.push(
          `<rect x="${x}" y="${y}" width="${n(L.barW)}" height="${n(L.yOf(base) - L.yOf(base + v))}" fill="${hex(s.color)}" data-series="${s.key}" data-day="${d.day}"><title>${escapeXml(`${d.day} ${s.label}: ${v}`)}</title></rect>`,
        );
      }
      base += v;
    }
  });
  out.push(`<line x1="${L.left}" y1="${L.top}" x2="${L.left}" y2="${L.bottom}" stroke="${hex(INK)}"/>`);
  out.push(`<line x1="${L.left}" y1="${L.bottom}" x2="${L.right}" y2="${L.bottom}" stroke="${hex(INK)}"/>`);
  const every = labelEvery(L.slot, 48);
  r.series.forEach((d, i) => {
    if (i % every === 0)
      out.push(
        `<text x="${n(L.left + (i + 0.5) * L.slot)}" y="${L.bottom + font + 6}" text-anchor="middle" font-family="sans-serif" font-size="${font}">${d.day.slice(5)}</text>`,
      );
  });
  let lx = L.left;
  const ly = h - font - 8;
  for (const s of series) {
    out.push(`<rect x="${lx}" y="${ly}" width="${font * 1.5}" height="${font}" fill="${hex(s.color)}"/>`);
    lx += font * 1.5 + 6;
    out.push(`<text x="${lx}" y="${ly + font - 1}" font-family="sans-serif" font-size="${font}">${escapeXml(s.label)}</text>`);
    lx += s.label.length * 7 + 18;
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
