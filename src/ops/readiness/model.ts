import { t } from "elysia";
import { Envelope, includeMetaQuery, ignoredMetaQuery } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { intQuery } from "../../http/params";
import { LAG_BAD_MS, LAG_SAMPLE_MS, LAG_WARN_MS, LAG_WINDOW_MS } from "../event-loop-lag";
import { ZERO_HISTORY_DEFAULT_DAYS, ZERO_HISTORY_DEFAULT_LIMIT, ZERO_HISTORY_MAX_DAYS, ZERO_HISTORY_MAX_LIMIT } from "./probes";
import { DEFAULT_NOISE_DAYS } from "./service";

const flag = (description: string) => t.Optional(t.Union([t.Literal("0"), t.Literal("1")], { description }));

// `days` is declared as an integer 7–30 (so every numeric check of the HTTP core applies) and then narrowed to
// 7, 14 or 30 by the service, which names query.days in its 400.
const noiseSpan = {
  days: intQuery({ minimum: 7, maximum: 30, values: [7, 14, 30], defaultValue: DEFAULT_NOISE_DAYS, description: "days of per-day points: 7, 14 or 30" }),
  windows: t.Optional(
    t.String({
      maxLength: 64,
      description: "comma list of window lengths in days, each 7, 14 or 30, distinct and not longer than days; default: those of 7,14,30 up to days",
    }),
  ),
};

const figures = {
  requests: t.Integer({ description: "requests in the span, from the hourly rollups" }),
  forbidden: t.Integer({ description: "403 answers in the span" }),
  noise_percent: t.Union([t.Number(), t.Null()], { description: "403s per 100 requests, 2 decimals; null without requests" }),
  forbidden_per_hour: t.Number({ description: "403s per elapsed hour of the span, 2 decimals" }),
  within_threshold: t.Boolean({
    description: "noise at most READINESS_403_NOISE_MAX_PERCENT (and, when set, READINESS_403_MAX_PER_HOUR), compared before rounding",
  }),
};

const NoiseWindowMeta = named(
  "ReadinessNoiseWindowMeta",
  t.Object({
    from: t.String({ format: "date-time", description: "start of the window's first UTC day" }),
    to: t.String({ format: "date-time", description: "generation time: the window ends now" }),
    from_hour: t.String({ description: "first rollup hour, YYYY-MM-DDTHH" }),
    to_hour: t.String({ description: "last rollup hour (the current one), YYYY-MM-DDTHH" }),
    hours_total: t.Integer({ description: "hours elapsed in the window, the current one included" }),
    hours_with_data: t.Integer({ description: "of those, hours with a rollup row (any traffic)" }),
  }),
);

const NoiseWindow = named(
  "ReadinessNoiseWindow",
  t.Object({
    window_days: t.Integer({ description: "7, 14 or 30: the last N UTC days, today included" }),
    ...figures,
    meta: t.Optional(NoiseWindowMeta),
  }),
);

const NoisePoint = named("ReadinessNoisePoint", t.Object({ date: t.String({ format: "date", description: "UTC day" }), ...figures }));

const NoiseThreshold = named(
  "ReadinessNoiseThreshold",
  t.Object({
    max_percent: t.Number({ description: "READINESS_403_NOISE_MAX_PERCENT" }),
    max_per_hour: t.Union([t.Integer(), t.Null()], { description: "READINESS_403_MAX_PER_HOUR; null when 0 (off)" }),
  }),
);

const lagMs = (what: string) => t.Union([t.Number(), t.Null()], { description: `${what} of the window's samples, ms to 0.1; null without samples` });

/** The readiness page's event-loop section (src/ops/event-loop-lag.ts): this process's lag over the last minute. */
const EventLoopLag = named(
  "ReadinessEventLoopLag",
  t.Object({
    state: t.Union([t.Literal("ok"), t.Literal("warn"), t.Literal("bad"), t.Literal("not_measured")], {
      description: "from the worst sample: bad from bad_ms, warn from warn_ms, else ok; not_measured without samples (a process that does not serve)",
    }),
    sampling: t.Boolean({ description: "this process samples its event loop (herald serve does; a CLI command does not)" }),
    interval_ms: t.Integer({ description: `how often the sampling timer is due (${LAG_SAMPLE_MS})` }),
    window_seconds: t.Integer({ description: `the span judged: the last ${LAG_WINDOW_MS / 1000} seconds` }),
    samples: t.Integer({ description: "samples taken in the window" }),
    max_ms: lagMs("worst lag"),
    p99_ms: lagMs("99th percentile"),
    p50_ms: lagMs("median"),
    warn_ms: t.Integer({ description: `worst lag from which the state is warn (${LAG_WARN_MS})` }),
    bad_ms: t.Integer({ description: `worst lag from which the state is bad (${LAG_BAD_MS})` }),
  }),
);

export const ReadinessModel = {
  noiseQuery: t.Object({
    ...noiseSpan,
    compact: flag("1: leave out the per-day points"),
    include_windows_meta: flag("1: each window carries meta (from, to, hours covered)"),
    ...includeMetaQuery,
  }),
  noise: Envelope({
    generated_at: t.String({ format: "date-time" }),
    days: t.Integer(),
    threshold: NoiseThreshold,
    within_threshold: t.Boolean({ description: "every window is within the threshold" }),
    windows: t.Array(NoiseWindow, { description: "shortest first" }),
    points: t.Optional(t.Array(NoisePoint, { description: "one per UTC day, oldest first, today last (absent with compact=1)" })),
    query: t.Object({ days: t.Integer(), windows: t.Array(t.Integer()), compact: t.Boolean(), include_windows_meta: t.Boolean() }),
  }),
  noiseCsvQuery: t.Object({
    ...ignoredMetaQuery,
    ...noiseSpan,
    mode: t.Optional(t.Union([t.Literal("summary"), t.Literal("points")], { description: "summary: one row per window; points (default): one row per day" })),
    include_points: flag("1 with mode=summary: the per-day rows follow the window rows"),
  }),
  eventLoopQuery: t.Object({ ...includeMetaQuery }),
  eventLoop: Envelope({
    generated_at: t.String({ format: "date-time" }),
    instance_id: t.String({ description: "the instance measured (HERALD_INSTANCE_ID): each process has its own event loop" }),
    event_loop: EventLoopLag,
  }),
  zeroHistoryQuery: t.Object({
    ...ignoredMetaQuery,
    limit: intQuery({ minimum: 1, maximum: ZERO_HISTORY_MAX_LIMIT, defaultValue: ZERO_HISTORY_DEFAULT_LIMIT, description: "rows, newest first" }),
    days: intQuery({ minimum: 1, maximum: ZERO_HISTORY_MAX_DAYS, defaultValue: ZERO_HISTORY_DEFAULT_DAYS, description: "how far back" }),
  }),
};
