// The `scale` benchmark's reading of the prober's samples (bench/scale.ts): per operation, the probes that overlapped
// it, the slowest answer, the largest gap between two answers around it, the stall, and the table the report prints.
import type { ProbeSamples } from "./scale-prober";

export const TARGET_STALL_MS = 50;

export interface Stall {
  probes: number;
  maxLatencyMs: number;
  maxGapMs: number;
  stallMs: number;
}

/** The probes whose request overlapped [a, b], and the gaps between consecutive answers around it. */
export function stallDuring(s: ProbeSamples, a: number, b: number): Stall {
  let probes = 0;
  let maxLatencyMs = 0;
  let maxGapMs = 0;
  let prevEnd: number | null = null;
  for (let i = 0; i < s.sentAt.length; i++) {
    const sent = s.sentAt[i]!;
    const end = sent + s.latencyMs[i]!;
    if (sent < b && end > a) {
      probes++;
      maxLatencyMs = Math.max(maxLatencyMs, s.latencyMs[i]!);
    }
    if (prevEnd !== null && end > a && prevEnd < b) maxGapMs = Math.max(maxGapMs, end - prevEnd);
    prevEnd = end;
  }
  return { probes, maxLatencyMs, maxGapMs, stallMs: Math.max(maxLatencyMs, maxGapMs - s.intervalMs) };
}

export interface Timed {
  label: string;
  ms: number;
  answer: string;
  from: number;
  to: number;
  /** Not timed against the target (the idle spell is the jobs' scheduled work, shown for reference). */
  reference?: boolean;
  /** What went wrong, if anything: a 4xx/5xx answer or no answer (an error of the run), or a job that failed (a note). */
  problem?: { error: boolean; text: string };
}

export const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
/** The per-operation table and the size's worst stall, beside the floor's (a bare server probed the same way). */
export function table(name: string, ops: Timed[], s: ProbeSamples, floorStallMs: number): string[] {
  const rows = ops.map((o) => ({ o, st: stallDuring(s, o.from, o.to) }));
  const head = ["operation", "time ms", "answer", "probes", "max /healthz ms", "max gap ms", "stall ms", `≤ ${TARGET_STALL_MS} ms`];
  const cells = rows.map(({ o, st }) => [
    o.label,
    fmt(o.ms),
    o.answer.length > 48 ? `${o.answer.slice(0, 47)}…` : o.answer,
    String(st.probes),
    fmt(st.maxLatencyMs),
    fmt(st.maxGapMs),
    fmt(st.stallMs),
    o.reference ? (st.stallMs <= TARGET_STALL_MS ? "(PASS)" : "(over)") : st.stallMs <= TARGET_STALL_MS ? "PASS" : "over",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => `   ${r.map((c, i) => (i === 0 || i === 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")}`;
  const judged = rows.filter(({ o }) => !o.reference);
  const worst = judged.reduce((w, r) => (r.st.stallMs > w.st.stallMs ? r : w), judged[0]!);
  const over = judged.filter((r) => r.st.stallMs > TARGET_STALL_MS).length;
  const all = [...s.latencyMs].sort((a, b) => a - b);
  const q = (p: number) => fmt(all[Math.min(all.length - 1, Math.max(0, Math.ceil(p * all.length) - 1))] ?? Number.NaN);
  return [
    line(head),
    line(widths.map((w) => "-".repeat(w))),
    ...cells.map(line),
    `   /healthz over the whole run: ${all.length.toLocaleString("en-US")} probes every ${s.intervalMs} ms, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms`,
    `   ${name}: worst stall ${fmt(worst.st.stallMs)} ms during ${worst.o.label}; ${over} of ${judged.length} operations over ${TARGET_STALL_MS} ms — ${over === 0 ? "PASS" : "over"} (the prober's floor stalled ${fmt(floorStallMs)} ms in this run: a stall near it is the machine, not herald)`,
  ];
}

/** One of the summaries' reads at one size: its first time (the operation above) and the median of its repeats. */
export interface ReadTime {
  label: string;
  firstMs: number;
  medianMs: number;
  limitMs: number;
}

/** The largest size's time over the smallest's that issue 72 allows (10M against 10k). */
export const READ_GROWTH_MAX = 1.5;

/**
 * Issue 72's reads across the sizes: per size the first time and the median of the repeats; judged on the medians,
 * the largest size's ≤ the read's limit and ≤ 1.5× the smallest size's (the issue states both for 10M against 10k).
 */
export function readsTable(sizes: Array<{ name: string; reads: ReadTime[] }>): string[] {
  if (sizes.length === 0 || sizes[0]!.reads.length === 0) return [];
  const first = sizes[0]!;
  const last = sizes[sizes.length - 1]!;
  const growth = sizes.length > 1 ? `${last.name} ÷ ${first.name}` : "growth";
  const head = ["read (request summaries)", ...sizes.map((s) => `${s.name} ms`), growth, "limit ms", "verdict"];
  const cells = first.reads.map((r) => {
    const at = (s: { reads: ReadTime[] }) => s.reads.find((x) => x.label === r.label);
    const small = at(first)!.medianMs;
    const big = at(last)?.medianMs ?? Number.NaN;
    const ratio = big / small;
    const ok = big <= r.limitMs && (sizes.length === 1 || ratio <= READ_GROWTH_MAX);
    return [
      r.label,
      ...sizes.map((s) => {
        const x = at(s);
        return x ? `${fmt(x.firstMs)} / ${fmt(x.medianMs)}` : "-";
      }),
      sizes.length > 1 ? `${ratio.toFixed(2)}×` : "-",
      String(r.limitMs),
      ok ? "PASS" : "over",
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (r: string[]) => `   ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")}`;
  return [
    `== issue 72's reads: time ms per size, the first request / the median of the repeats; judged on the medians: at ${last.name} ≤ the limit${sizes.length > 1 ? ` and ≤ ${READ_GROWTH_MAX}× ${first.name}` : ""} (the issue's targets: 10M against 10k)`,
    line(head),
    line(widths.map((w) => "-".repeat(w))),
    ...cells.map(line),
  ];
}
