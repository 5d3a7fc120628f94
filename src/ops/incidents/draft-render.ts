import type { Draft, SectionId } from "./draft";
import { SECTION_TITLES } from "./draft";

// The draft as Markdown (CommonMark + GFM tables) and as text of at most 80 columns, both walking `draft.sections`
// with the JSON's values. People's text is escaped in Markdown: it renders as typed, never as markup or raw HTML.

type Lines = string[];
type Section = (d: Draft) => Lines;

export const pct = (share: number) => `${(share * 100).toFixed(1)}%`;

/**
 * Backslash-escapes the punctuation that could start inline markup (CommonMark §2.4) and folds line breaks.
 * `_` inside a word never opens emphasis (SQLITE_BUSY, req_…), so only a `_` at a word's edge is escaped: the
 * raw Markdown stays readable for the operator who edits it. `#` and `!` are harmless mid-line, and a line of
 * the draft never starts with people's text.
 */
export function mdEscape(s: string): string {
  return s.replace(/\r?\n|\r/g, " ").replace(/[\\`*[\]<>|&~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, (c) => `\\${c}`);
}

/** A GFM table, or the `empty` sentence in italics when there are no rows. */
const mdTable = (head: string[], rows: string[][], empty: string): Lines =>
  rows.length
    ? [`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`, ...rows.map((r) => `| ${r.map((c) => (c === "" ? " " : c)).join(" | ")} |`)]
    : [`_${empty}_`];

const impactRows = (d: Draft): Array<[string, string]> => [
  ["Severity", d.impact.severity ? `${d.impact.severity_label} (${d.impact.severity})` : d.impact.severity_label],
  ["Status", d.impact.status ? `${d.impact.status}${d.impact.state ? ` (state: ${d.impact.state})` : ""}` : "no incident selected"],
  ["Components", d.impact.components.length ? d.impact.components.join(", ") : "none named"],
  ["Checks", d.impact.checks.length ? d.impact.checks.join(", ") : "none"],
  ["Started", d.impact.started_at ?? "-"],
  ["Ended", d.impact.ended_at ?? (d.impact.status === "open" ? "still open" : "-")],
  ["Duration", d.impact.duration_minutes === null ? "-" : `${d.impact.duration_minutes} minutes`],
];

export const topErrorsLine = (t: NonNullable<Draft["top_errors"]>) =>
  `${t.error_requests} failed requests (${t.server_errors} server errors) among ${t.rows_read} requests read from ${t.window.since} to ${t.window.until} (at most ${t.rows_limit} rows, newest first; ${t.truncated ? "truncated: the window held more" : "the whole window"}).`;

export const preflightLine = (p: NonNullable<Draft["preflight"]>) => `${p.note} (day_offset ${p.day_offset})`;

/** One differing guard field, as both forms print it. */
const preflightChange = (c: NonNullable<Draft["preflight"]>["changes"][number]) =>
  `${c.section}.${c.field}: ${c.change}${c.change === "changed" ? ` (${c.before ?? "none"} -> ${c.after ?? "none"})` : c.change === "added" ? ` (${c.after ?? "none"})` : ` (was ${c.before ?? "none"})`}`;

const md: Record<SectionId, Section> = {
  summary: (d) => [mdEscape(d.summary)],
  impact: (d) => impactRows(d).map(([k, v]) => `- **${k}:** ${mdEscape(v)}`),
  timeline: (d) =>
    mdTable(
      ["Time (UTC)", "Event"],
      d.timeline.map((e) => [e.at, mdEscape(e.text)]),
      "No events in the timeline.",
    ),
  incidents: (d) =>
    mdTable(
      ["Index", "Id", "Source", "Severity", "Status", "Started", "Title"],
      d.incidents.map((i, n) => [String(n), String(i.id), i.source, i.severity, i.status, i.started_at, mdEscape(i.title)]),
      "No status incident in the window.",
    ),
  top_errors: (d) => {
    const t = d.top_errors!;
    return [
      mdEscape(topErrorsLine(t)),
      "",
      "### Error codes",
      "",
      ...mdTable(
        ["Code", "Status", "Count", "Share"],
        t.codes.map((c) => [mdEscape(c.error_code), String(c.status), String(c.count), pct(c.share)]),
        "No failed requests.",
      ),
      "",
      "### Routes",
      "",
      ...mdTable(
        ["Method", "Route", "Count", "5xx", "Share"],
        t.routes.map((r) => [r.method, mdEscape(r.route), String(r.count), String(r.server_errors), pct(r.share)]),
        "No failed requests.",
      ),
    ];
  },
  job_failures: (d) =>
    mdTable(
      ["Job", "Run", "Started", "Error"],
      d.job_failures!.map((f) => [mdEscape(f.job), String(f.run_id), f.started_at, mdEscape(f.error ?? "no message")]),
      "No failed job runs in the window.",
    ),
  preflight: (d) => [
    mdEscape(preflightLine(d.preflight!)),
    ...(d.preflight!.changes.length ? ["", ...d.preflight!.changes.map((c) => `- ${mdEscape(preflightChange(c))}`)] : []),
  ],
  next_steps: (d) => [`> **${mdEscape(d.next_steps.text)}**`],
};

export function draftMarkdown(d: Draft): string {
  const out: Lines = [
    `# ${mdEscape(d.title)}`,
    "",
    `_${mdEscape(`Draft generated at ${d.generated_at} for the window ${d.window.since} to ${d.window.until} (template ${d.template}). Edit before publishing.`)}_`,
  ];
  for (const id of d.sections) out.push("", `## ${SECTION_TITLES[id]}`, "", ...md[id](d));
  return `${out.join("\n")}\n`;
}

// ---- plain text, 80 columns ----

export const TEXT_WIDTH = 80;

/** Greedy word wrap; a word longer than the width is cut. `indent` prefixes continuation lines. */
export function wrap(text: string, width: number, first = "", indent = first.replace(/./g, " ")): Lines {
  const words = text.split(/\s+/).filter(Boolean);
  const lines: Lines = [];
  let line = first;
  let fresh = true;
  const room = () => width - line.length;
  for (let w of words) {
    if (!fresh && w.length + 1 > room()) {
      lines.push(line);
      line = indent;
      fresh = true;
    }
    while ((fresh ? 0 : 1) + w.length > room()) {
      const cut = room() - (fresh ? 0 : 1);
      line += (fresh ? "" : " ") + w.slice(0, cut);
      w = w.slice(cut);
      lines.push(line);
      line = indent;
      fresh = true;
    }
    line += (fresh ? "" : " ") + w;
    fresh = false;
  }
  lines.push(line);
  return lines.map((l) => l.trimEnd());
}

const heading = (s: string): Lines => [s.toUpperCase(), "-".repeat(s.length)];
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);

const txt: Record<SectionId, Section> = {
  summary: (d) => wrap(d.summary, TEXT_WIDTH),
  impact: (d) => impactRows(d).flatMap(([k, v]) => wrap(v, TEXT_WIDTH, pad(`${k}:`, 12))),
  timeline: (d) => (d.timeline.length ? d.timeline.flatMap((e) => wrap(e.text, TEXT_WIDTH, `${e.at}  `)) : ["No events in the timeline."]),
  incidents: (d) =>
    d.incidents.length
      ? d.incidents.flatMap((i, n) => wrap(`#${i.id} ${i.source} ${i.severity} ${i.status} started ${i.started_at}: ${i.title}`, TEXT_WIDTH, `[${n}] `))
      : ["No status incident in the window."],
  top_errors: (d) => {
    const t = d.top_errors!;
    return [
      ...wrap(topErrorsLine(t), TEXT_WIDTH),
      "",
      "Error codes",
      ...(t.codes.length
        ? [
            `${lpad("count", 7)}  ${lpad("share", 6)}  status  code`,
            ...t.codes.flatMap((c) => wrap(c.error_code, TEXT_WIDTH, `${lpad(String(c.count), 7)}  ${lpad(pct(c.share), 6)}  ${pad(String(c.status), 6)}  `)),
          ]
        : ["No failed requests."]),
      "",
      "Routes",
      ...(t.routes.length
        ? [
            `${lpad("count", 7)}  ${lpad("5xx", 5)}  ${lpad("share", 6)}  route`,
            ...t.routes.flatMap((r) =>
              wrap(`${r.method} ${r.route}`, TEXT_WIDTH, `${lpad(String(r.count), 7)}  ${lpad(String(r.server_errors), 5)}  ${lpad(pct(r.share), 6)}  `),
            ),
          ]
        : ["No failed requests."]),
    ];
  },
  job_failures: (d) =>
    d.job_failures!.length
      ? d.job_failures!.flatMap((f) => wrap(`${f.job} (run ${f.run_id}): ${f.error ?? "no message"}`, TEXT_WIDTH, `${f.started_at}  `))
      : ["No failed job runs in the window."],
  preflight: (d) => [...wrap(preflightLine(d.preflight!), TEXT_WIDTH), ...d.preflight!.changes.flatMap((c) => wrap(preflightChange(c), TEXT_WIDTH, "- "))],
  next_steps: (d) => wrap(d.next_steps.text, TEXT_WIDTH, "[!] "),
};

export function draftText(d: Draft): string {
  const out: Lines = [
    ...wrap(d.title, TEXT_WIDTH),
    "=".repeat(Math.min(TEXT_WIDTH, d.title.length)),
    ...wrap(
      `Draft generated at ${d.generated_at} for the window ${d.window.since} to ${d.window.until} (template ${d.template}). Edit before publishing.`,
      TEXT_WIDTH,
    ),
  ];
  for (const id of d.sections) out.push("", ...heading(SECTION_TITLES[id]), ...txt[id](d));
  return `${out.join("\n")}\n`;
}
