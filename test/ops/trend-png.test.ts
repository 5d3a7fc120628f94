import { describe, expect, test } from "bun:test";
import { PNG } from "pngjs";
import { renderTrendPng, type TrendHour } from "../../src/ops/digest/trend-png";

// The digest's trend chart at the sizes the route allows: every legend entry is drawn inside the image, whatever
// the width (at w=320 the four entries used to run off the right edge). Read back with pngjs.

const LEGEND_COLOURS = {
  bar: [66, 133, 244],
  spike: [219, 68, 55],
  suppressed: [176, 180, 186],
  baseline: [244, 160, 0],
} as const;

const hours: TrendHour[] = Array.from({ length: 24 }, (_, i) => ({
  hour: `2026-04-01T${String(i).padStart(2, "0")}`,
  observed: i === 20 ? 0 : 2,
  suppressed: 0,
  baseline: 1,
  spike: false,
}));

/** The rows of the image's bottom band (below the plot) that hold each legend colour, and whether any ink reaches the last column. */
function legendOf(buf: Buffer, band: number) {
  const png = PNG.sync.read(buf);
  const found: Record<string, boolean> = {};
  let inkAtEdge = false;
  for (let y = png.height - band; y < png.height; y++) {
    for (let x = 0; x < png.width; x++) {
      const o = (y * png.width + x) * 4;
      const rgb = [png.data[o], png.data[o + 1], png.data[o + 2]];
      for (const [name, c] of Object.entries(LEGEND_COLOURS)) if (rgb[0] === c[0] && rgb[1] === c[1] && rgb[2] === c[2]) found[name] = true;
      if (x === png.width - 1 && (rgb[0]! < 200 || rgb[1]! < 200)) inkAtEdge = true;
    }
  }
  return { found, inkAtEdge, png };
}

describe("trend chart legend", () => {
  for (const [w, h] of [
    [320, 200],
    [480, 240],
    [960, 420],
  ] as const) {
    test(`${w}×${h}: all four legend entries are drawn, none runs off the right edge`, () => {
      const { found, inkAtEdge, png } = legendOf(renderTrendPng(hours, "rolling_24h", w, h), w < 640 ? 40 : 30);
      expect(png.width).toBe(w);
      expect(png.height).toBe(h);
      expect(found).toEqual({ bar: true, spike: true, suppressed: true, baseline: true });
      expect(inkAtEdge).toBe(false);
    });
  }
});
