import { t } from "elysia";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { intQuery } from "../../http/params";
import { buildDraft, DRAFT_LIMITS, type DraftQuery } from "./draft";
import { draftMarkdown } from "./draft-render";
import { formInstantMs, lenientValues } from "./window";

// The incidents page's draft form: draft.md's parameters read leniently, as a GET form sends them (empty = default,
// datetime-local = UTC), and handed to the same buildDraft, so the text area and the download are the same text. A
// value out of bounds, or a draft the window cannot make, is an error line on the page (4xx).

/** The draft lists the window's incidents up to its default limit; index picks among them. */
const MAX_INDEX = DRAFT_LIMITS.limit.fallback - 1;

const CHOICES = {
  severity: ["all", "warn", "bad"],
  context: ["brief", "none", "full"],
  template: ["v1", "minimal"],
  source: ["all", "status", "errors", "jobs"],
} as const;
type Choice = keyof typeof CHOICES;

const str = (maxLength: number, description: string) => t.Optional(t.String({ maxLength, description }));

/** The draft fields of the page's query (the page adds its own offset). */
export const draftQueryFields = {
  hours: intQuery({
    minimum: 1,
    maximum: DRAFT_LIMITS.hours.max,
    description: `the draft's window: the last N hours, 1 to ${DRAFT_LIMITS.hours.max} (default ${DRAFT_LIMITS.hours.fallback})`,
  }),
  since: str(40, "window start (UTC; 2026-04-01T10:00 or an ISO 8601 instant); overrides hours"),
  until: str(40, "window end (UTC), after since; default now"),
  index: intQuery({ minimum: 0, maximum: MAX_INDEX, description: `which incident of the window, 0 = the newest, to ${MAX_INDEX}` }),
  severity: str(8, "all, warn or bad"),
  context: str(8, "the timeline around the incident: brief, none or full"),
  template: str(8, "v1 or minimal"),
  source: str(8, "what the draft reads: all, status, errors or jobs"),
};

export type RawDraftQuery = Partial<Record<keyof typeof draftQueryFields, string>>;

export async function incidentDraft(ctx: AppContext, raw: RawDraftQuery) {
  const problems: string[] = [];
  const read = lenientValues(problems);
  const time = (name: "since" | "until", label: string) => {
    const v = raw[name]?.trim() ?? "";
    if (v === "") return null;
    const ms = formInstantMs(v);
    if (!Number.isNaN(ms)) return new Date(ms).toISOString();
    problems.push(`${label} must be a date and time in UTC, such as 2026-04-01T10:00`);
    return null;
  };
  const choice = <K extends Choice>(name: K, label: string) => read.oneOf<(typeof CHOICES)[K][number]>(raw[name], CHOICES[name], label);

  const q = {
    hours: read.int(raw.hours, 1, DRAFT_LIMITS.hours.max, DRAFT_LIMITS.hours.fallback, "Last hours"),
    since: time("since", "Since"),
    until: time("until", "Until"),
    index: read.int(raw.index, 0, MAX_INDEX, 0, "Incident"),
    severity: choice("severity", "Severity"),
    context: choice("context", "Timeline"),
    template: choice("template", "Template"),
    source: choice("source", "Reads"),
  };
  const form = {
    hours: String(q.hours),
    since: q.since?.slice(0, 16) ?? "",
    until: q.until?.slice(0, 16) ?? "",
    index: String(q.index),
    severity: q.severity,
    context: q.context,
    template: q.template,
    source: q.source,
    maxHours: DRAFT_LIMITS.hours.max,
    maxIndex: MAX_INDEX,
    choices: { severity: [...CHOICES.severity], context: [...CHOICES.context], template: [...CHOICES.template], source: [...CHOICES.source] },
  };
  // The draft.md query of these parameters: defaults left out, hours and index always.
  const params = new URLSearchParams({ hours: String(q.hours), index: String(q.index) });
  if (q.since !== null) params.set("since", q.since);
  if (q.until !== null) params.set("until", q.until);
  for (const name of Object.keys(CHOICES) as Choice[]) if (q[name] !== CHOICES[name][0]) params.set(name, q[name]);
  const query = params.toString();

  if (problems.length) return { form, query, markdown: null, error: `No draft: ${problems.join("; ")}.`, status: 400 };
  const draftQuery: DraftQuery = { ...q, since: q.since ?? undefined, until: q.until ?? undefined };
  try {
    return { form, query, markdown: draftMarkdown(await buildDraft(ctx, draftQuery)), error: null, status: 200 };
  } catch (err) {
    // The window refused (until not after since, a span past the bound) or no incident at that index.
    if (err instanceof AppError && err.status < 500) {
      const why = err.message.replace(/^Invalid request parameters: query\./, "");
      return { form, query, markdown: null, error: `No draft: ${why}.`, status: err.status };
    }
    throw err;
  }
}

export type DraftFormView = Awaited<ReturnType<typeof incidentDraft>>["form"];
