import { PNG } from "pngjs";
import type { BaselineMode } from "./findings";
import { ADVANCE, GLYPH_HEIGHT, glyphColumns } from "./trend-font";

// The digest's trend chart as a PNG: 403s per hour (bars: counted, suppressed stacked on top, spike hours red)
// against the baseline (a line), with axis labels and a legend. Drawn on an RGBA raster in TypeScript and encoded
// by pngjs: no native module, so it works the same in `bun build --compile`.

export type Rgb = readonly [number, number, number];
export const INK: Rgb = [33, 37, 41];
export const GRID: Rgb = [226, 230, 234];
const BAR: Rgb = [66, 133, 244];
const SPIKE: Rgb = [219, 68, 55];
const SUPPRESSED: Rgb = [176, 180, 186];
const BASELINE: Rgb = [244, 160, 0];

export const TREND_DEFAULT_W = 960;
export const TREND_DEFAULT_H = 420;

/** An RGBA raster with rectangles, lines and pixel-font text (also drawn on by src/ops/export-usage/chart.ts). */
export class Raster {
  readonly data: Buffer;
  constructor(
    readonly w: number,
    readonly h: number,
  ) {
    this.data = Buffer.alloc(w * h * 4, 255);
  }

  rect(x: number, y: number, w: number, h: number, c: Rgb): void {
    const x0 = Math.max(0, Math.round(x));
    const y0 = Math.max(0, Math.round(y));
    const x1 = Math.min(this.w, Math.round(x + w));
    const y1 = Math.min(this.h, Math.round(y + h));
    for (let yy = y0; yy < y1; yy++) {
      for (let xx = x0; xx < x1; xx++) {
        const o = (yy * this.w + xx) * 4;
        this.data[o] = c[0];
        this.data[o + 1] = c[1];
        this.data[o + 2] = c[2];
        this.data[o + 3] = 255;
      }
    }
  }

  /** A line `thickness` pixels wide (square brush stepped along the longer axis). */
  line(x0: number, y0: number, x1: number, y1: number, c: Rgb, thickness = 1): void {
    const steps = Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0), 1);
    const half = (thickness - 1) / 2;
    for (let s = 0; s <= steps; s++) {
      const x = x0 + ((x1 - x0) * s) / steps;
      const y = y0 + ((y1 - y0) * s) / steps;
      this.rect(x - half, y - half, thickness, thickness, c);
    }
  }

  text(x: number, y: number, s: string, c: Rgb, scale: number): void {
    let cx = Math.round(x);
    for (const ch of s) {
      const cols = glyphColumns(ch);
      for (let col = 0; col < cols.length; col++) {
        for (let row = 0; row < GLYPH_HEIGHT; row++) if ((cols[col]! >> row) & 1) this.rect(cx + col * scale, y + row * scale, scale, scale, c);
      }
      cx += ADVANCE * scale;
    }
  }

  png(): Buffer {
    const png = new PNG({ width: this.w, height: this.h });
    this.data.copy(png.data);
    return PNG.sync.write(png);
  }
}

export const textWidth = (s: string, scale: number) => s.length * ADVANCE * scale - scale;

/** A "nice" axis maximum and step (1, 2 or 5 × 10^n) for about five gridlines. */
export function niceAxis(max: number): { top: number; step: number } {
  if (max <= 0) return { top: 5, step: 1 };
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  return { top: Math.max(step, Math.ceil(max / step) * step), step: Math.max(1, step) };
}

export interface TrendHour {
  hour: string;
  observed: number;
  suppressed: number;
  baseline: number;
  spike: boolean;
}

export function renderTrendPng(hours: TrendHour[], mode: BaselineMode, w = TREND_DEFAULT_W, h = TREND_DEFAULT_H): Buffer {
  const r = new Raster(w, h);
  const scale = w >= 640 && h >= 300 ? 2 : 1;
  const lineH = GLYPH_HEIGHT * scale;
  const first = hours[0]?.hour ?? "";
  const last = hours[hours.length - 1]?.hour ?? "";
  r.text(12, 10, `403s per hour vs baseline (${mode})`, INK, scale);
  r.text(12, 10 + lineH + 6, `${first}:00 to ${last}:59 UTC`, INK, scale);

  const { top, step } = niceAxis(Math.max(1, ...hours.map((x) => Math.max(x.observed + x.suppressed, x.baseline))));
  const yLabelW = textWidth(String(top), scale) + 8;
  const left = 12 + yLabelW;
  const right = w - 12;
  const plotTop = 10 + lineH * 3 + 30;
  // The legend flows into as many rows as the width needs (four entries do not fit one row at w=320).
  const legend: Array<{ c: Rgb; label: string; line: boolean; x: number; row: number }> = [];
  {
    let x = left;
    let row = 0;
    for (const [c, label, line] of [
      [BAR, "403s", false],
      [SPIKE, "spike hour", false],
      [SUPPRESSED, "suppressed", false],
      [BASELINE, "baseline", true],
    ] as const) {
      const width = (line ? 3 : 1.5) * lineH + 6 + textWidth(label, scale);
      if (x > left && x + width > right) {
        x = left;
        row += 1;
      }
      legend.push({ c, label, line, x, row });
      x += width + 18;
    }
  }
  const legendRows = legend[legend.length - 1]!.row + 1;
  const legendH = legendRows * (lineH + 6) + 6;
  const plotBottom = h - (lineH + 10) - legendH - lineH - 14;
  const plotH = Math.max(10, plotBottom - plotTop);
  const yOf = (v: number) => plotBottom - (v / top) * plotH;

  for (let v = 0; v <= top; v += step) {
    const y = Math.round(yOf(v));
    r.line(left, y, right, y, GRID);
    const label = String(v);
    r.text(left - 6 - textWidth(label, scale), y - Math.floor(lineH / 2), label, INK, scale);
  }
  r.text(left + 6, plotTop - lineH - 6, "403s per hour", INK, scale);

  const n = Math.max(1, hours.length);
  const slot = (right - left) / n;
  const barW = Math.max(1, slot * 0.7);
  hours.forEach((x, i) => {
    const bx = left + i * slot + (slot - barW) / 2;
    const yObs = yOf(x.observed);
    r.rect(bx, yObs, barW, plotBottom - yObs, x.spike ? SPIKE : BAR);
    if (x.suppressed > 0) {
      const ySup = yOf(x.observed + x.suppressed);
      r.rect(bx, ySup, barW, yObs - ySup, SUPPRESSED);
    }
  });
  for (let i = 1; i < hours.length; i++) {
    const x0 = left + (i - 0.5) * slot;
    r.line(x0, yOf(hours[i - 1]!.baseline), x0 + slot, yOf(hours[i]!.baseline), BASELINE, 3);
  }
  if (hours.length === 1) r.line(left, yOf(hours[0]!.baseline), right, yOf(hours[0]!.baseline), BASELINE, 3);
  r.line(left, plotTop, left, plotBottom, INK);
  r.line(left, plotBottom, right, plotBottom, INK);

  // Hour labels: as many as fit without touching, on whole-hour steps (1, 2, 3, 4, 6, 12, 24 …).
  const labelW = textWidth("MM-DDTHH", scale) + 12;
  const every = [1, 2, 3, 4, 6, 12, 24, 48, 72, 168].find((k) => k * slot >= labelW) ?? Math.ceil(labelW / slot);
  hours.forEach((x, i) => {
    if (i % every !== 0) return;
    const cx = left + (i + 0.5) * slot;
    r.line(cx, plotBottom, cx, plotBottom + 4, INK);
    const label = x.hour.slice(5, 13);
    r.text(Math.min(right - textWidth(label, scale), Math.max(0, cx - textWidth(label, scale) / 2)), plotBottom + 8, label, INK, scale);
  });
  const axisTitle = "hour (UTC)";
  r.text((left + right - textWidth(axisTitle, scale)) / 2, plotBottom + 8 + lineH + 6, axisTitle, INK, scale);

  for (const e of legend) {
    const ly = h - legendH + e.row * (lineH + 6);
    if (e.line) r.line(e.x, ly + lineH / 2, e.x + 3 * lineH, ly + lineH / 2, e.c, 3);
    else r.rect(e.x, ly, lineH * 1.5, lineH, e.c);
    r.text(e.x + (e.line ? 3 : 1.5) * lineH + 6, ly, e.label, INK, scale);
  }

  return r.png();
}
