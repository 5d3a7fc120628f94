// The messenger console page's overview chart: plays, players and credits per UTC day as three bar panels (small
// multiples, each with its own scale: the three are different units), drawn on the server as inline SVG. No
// JavaScript and no image request (the page's CSP allows neither from elsewhere). For people who cannot see it,
// the SVG is role="img" with a <title> and a <desc> that states the totals and peaks, each bar carries its own
// <title> (the number on hover), and the page prints the same numbers in a table below it.
import { compileHtml, type SafeHtml } from "../../http/formats/html";
import { counted as count } from "../count-words";
import type { DayPoint } from "./console-page-data";

const WIDTH = 560;
const LEFT = 54;
const RIGHT = 8;
const PANEL_TOP = 26;
const PLOT_HEIGHT = 78;
const PANEL_HEIGHT = PANEL_TOP + PLOT_HEIGHT + 22;
const AXIS_HEIGHT = 22;

type Metric = "plays" | "players" | "credits";
const PANELS: ReadonlyArray<{ metric: Metric; label: string; name: string; colour: string; amount: (n: number) => string }> = [
  { metric: "plays", label: "Plays per day", name: "Plays", colour: "#0969da", amount: (n) => count(n, "play", "plays") },
  { metric: "players", label: "Players per day", name: "Players", colour: "#1a7f37", amount: (n) => count(n, "player", "players") },
  {
    metric: "credits",
    label: "Credits paid per day (points value)",
    name: "Credits (points value)",
    colour: "#9a6700",
    amount: (n) => count(n, "point credited", "points credited"),
  },
];

const chartSvg = compileHtml<ReturnType<typeof chartData>>(
  "messenger-console-chart",
  `<svg id="overview-chart" class="chart" role="img" aria-labelledby="chart-title chart-desc" viewBox="0 0 <%= it.width %> <%= it.height %>" xmlns="http://www.w3.org/2000/svg" font-family="system-ui,sans-serif" font-size="12">
<title id="chart-title"><%= it.title %></title>
<desc id="chart-desc"><%= it.desc %></desc>
<% for (const p of it.panels) { %><g>
<text x="<%= it.left %>" y="<%= p.top + 16 %>" font-weight="600" fill="#1f2328"><%= p.label %></text>
<text x="<%= it.left - 6 %>" y="<%= p.maxY + 4 %>" text-anchor="end" fill="#59636e"><%= p.maxLabel %></text>
<text x="<%= it.left - 6 %>" y="<%= p.base %>" text-anchor="end" fill="#59636e">0</text>
<line x1="<%= it.left %>" y1="<%= p.maxY %>" x2="<%= it.width - it.right %>" y2="<%= p.maxY %>" stroke="#d1d9e0" stroke-dasharray="3 3"/>
<line x1="<%= it.left %>" y1="<%= p.base %>" x2="<%= it.width - it.right %>" y2="<%= p.base %>" stroke="#59636e"/>
<% for (const b of p.bars) { %><rect x="<%= b.x %>" y="<%= b.y %>" width="<%= b.w %>" height="<%= b.h %>" fill="<%= p.colour %>"><title><%= b.tip %></title></rect><% } %>
</g>
<% } %><text x="<%= it.left %>" y="<%= it.axisY %>" fill="#59636e"><%= it.firstDay %></text>
<text x="<%= it.width - it.right %>" y="<%= it.axisY %>" text-anchor="end" fill="#59636e"><%= it.lastDay %></text>
</svg>`,
);

const fixed = (n: number) => n.toFixed(2).replace(/\.?0+$/, "");
const num = (n: number) => n.toLocaleString("en-US");

/** The day with the most of `metric` (the first such day), for the description. */
function peakOf(series: readonly DayPoint[], metric: Metric): DayPoint | null {
  let best: DayPoint | null = null;
  for (const p of series) if (p[metric] > 0 && (best === null || p[metric] > best[metric])) best = p;
  return best;
}

function describe(series: readonly DayPoint[], from: string, to: string): string {
  const parts = PANELS.map(({ metric, name }) => {
    const peak = peakOf(series, metric);
    if (!peak) return `${name}: none on any day`;
    // Players per day do not add up to the window's players (one player plays on many days): no sum for them.
    const sum = metric === "players" ? "" : `${num(series.reduce((a, p) => a + p[metric], 0))} in all, `;
    return `${name}: ${sum}most on ${peak.day} (${num(peak[metric])})`;
  });
  return `Bars per UTC day from ${from} to ${to} (${series.length} days). ${parts.join("; ")}. The table "The numbers per day" below holds every value.`;
}

/** What the chart's template draws for a series of days (oldest first). */
function chartData(series: readonly DayPoint[], from: string, to: string) {
  const plotWidth = WIDTH - LEFT - RIGHT;
  const step = plotWidth / Math.max(series.length, 1);
  const barWidth = Math.max(step * 0.78, 0.8);
  const panels = PANELS.map(({ metric, label, colour, amount }, i) => {
    const top = i * PANEL_HEIGHT;
    const base = top + PANEL_TOP + PLOT_HEIGHT;
    const max = Math.max(0, ...series.map((p) => p[metric]));
    return {
      label,
      colour,
      top,
      base,
      maxY: base - PLOT_HEIGHT,
      maxLabel: max === 0 ? "–" : num(max),
      // A zero day draws no bar; a small one at least a hairline, so "some" never looks like "none".
      bars: series.flatMap((p, d) => {
        if (p[metric] === 0) return [];
        const h = Math.max((p[metric] / max) * PLOT_HEIGHT, 1);
        return [
          {
            x: fixed(LEFT + d * step + (step - barWidth) / 2),
            y: fixed(base - h),
            w: fixed(barWidth),
            h: fixed(h),
            tip: `${p.day}: ${amount(p[metric])}`,
          },
        ];
      }),
    };
  });
  const height = PANELS.length * PANEL_HEIGHT + AXIS_HEIGHT - 10;
  return {
    width: WIDTH,
    height,
    left: LEFT,
    right: RIGHT,
    title: `Plays, players and credits per day, ${from} to ${to}`,
    desc: describe(series, from, to),
    panels,
    firstDay: series[0]?.day ?? from,
    lastDay: series.at(-1)?.day ?? to,
    axisY: height - 4,
  };
}

export const overviewChart = (series: readonly DayPoint[], from: string, to: string): SafeHtml => chartSvg(chartData(series, from, to));
