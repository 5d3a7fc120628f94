import { renderUsagePng, type UsageChartData } from "../export-usage/chart";
import type { BaselineMode } from "./findings";
import { renderTrendPng, type TrendHour } from "./trend-png";

// The PNG charts' renderer thread (chart-renderer.ts sends it work; a chart takes 0.3–2.3 s). A job is the chart's
// input as plain data; the answer is the PNG's bytes, handed over without a copy.

/** A chart to draw: the digest's trend (src/ops/digest/trend-png.ts) or the export-usage bars (src/ops/export-usage/chart.ts). */
export type ChartJob =
  | { chart: "trend"; hours: TrendHour[]; mode: BaselineMode; w: number; h: number }
  | { chart: "usage"; report: UsageChartData; w: number; h: number };

export type RenderRequest = { id: number; job: ChartJob };
export type RenderAnswer = { id: number; png: ArrayBuffer } | { id: number; error: string };

/** The PNG of a job, drawn on this thread: what the worker runs, and what its answers are compared with. */
export function drawChart(job: ChartJob): Buffer {
  return job.chart === "trend" ? renderTrendPng(job.hours, job.mode, job.w, job.h) : renderUsagePng(job.report, job.w, job.h);
}

/**
 * The bytes as an ArrayBuffer of their own. A small Buffer lives in a slice of Node's shared pool, which must not be
 * transferred (that would take the pool from every other Buffer of this thread): such bytes are copied.
 */
function ownBuffer(png: Buffer): ArrayBuffer {
  const whole = png.byteOffset === 0 && png.byteLength === png.buffer.byteLength && png.buffer instanceof ArrayBuffer;
  return whole ? (png.buffer as ArrayBuffer) : new Uint8Array(png).buffer;
}

declare const self: Worker;

if (!Bun.isMainThread) {
  self.onmessage = (event: MessageEvent<RenderRequest>) => {
    const { id, job } = event.data;
    let answer: RenderAnswer;
    try {
      answer = { id, png: ownBuffer(drawChart(job)) };
    } catch (err) {
      answer = { id, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
    }
    self.postMessage(answer, "png" in answer ? [answer.png] : []);
  };
}
