import { t } from "elysia";
import { Envelope, Unavailable } from "../http/envelope";
import { named } from "../http/openapi/names";
import { OffsetPageQuery, OffsetQueryEcho, PaginationSchema } from "../http/pagination";

const Check = t.Object({ ok: t.Boolean(), detail: t.String() });

const Readiness = {
  ready: t.Boolean(),
  database: t.Object({ engine: t.Union([t.Literal("sqlite"), t.Literal("postgres")], { description: "where this instance stores its data" }) }),
  checks: t.Record(t.String(), Check),
};

const CatalogEntry = named(
  "ErrorCatalogEntry",
  t.Object({
    error_code: t.String(),
    title: t.String(),
    category: t.String(),
    http_status: t.Integer(),
    retry_class: t.String(),
    retry_behavior: t.String(),
    retry_after_seconds: t.Integer(),
    available_in_modes: t.Array(t.String()),
    endpoint_groups: t.Array(t.String()),
    status_rationale: t.Union([t.String(), t.Null()], {
      description:
        "Why the code answers a status outside the spec's HTTP status guide (400, 401, 403, 409, 413, 429, 500, 503); null when the guide lists the status",
    }),
    recovery_links: t.Record(t.String(), t.String()),
  }),
);

export const SystemModel = {
  health: named("Health", Envelope({ status: t.Literal("up"), version: t.String(), uptime_seconds: t.Number() })),
  ready: named("Readiness", Envelope(Readiness)),
  notReady: named("NotReady", Unavailable(Readiness, "Not ready: the message names each failed check; `checks` says why")),
  errorsByCode: Envelope({ count: t.Integer(), entries: t.Array(CatalogEntry), by_code: t.Record(t.String(), CatalogEntry) }),
  jobsQuery: t.Object(OffsetPageQuery),
  jobs: Envelope({
    count: t.Integer(),
    total: t.Integer({ description: "jobs this server has" }),
    query: OffsetQueryEcho(),
    pagination: PaginationSchema,
    jobs: t.Array(
      t.Object({
        name: t.String(),
        pattern: t.String(),
        description: t.String(),
        enabled: t.Boolean(),
        scheduled: t.Boolean(),
        next_run_at: t.Union([t.String(), t.Null()]),
        last_run: t.Union([
          t.Object({
            started_at: t.String(),
            finished_at: t.Union([t.String(), t.Null()]),
            ok: t.Union([t.Boolean(), t.Null()]),
            error: t.Union([t.String(), t.Null()]),
            duration_ms: t.Union([t.Number(), t.Null()]),
            instance_id: t.Union([t.String(), t.Null()], { description: "the instance that ran it; null for runs recorded before instances were named" }),
          }),
          t.Null(),
        ]),
      }),
      { description: "in the order the server registers them" },
    ),
  }),
  jobRun: Envelope({
    run: t.Object({ name: t.String(), ok: t.Boolean(), error: t.Union([t.String(), t.Null()]), duration_ms: t.Number(), run_id: t.Integer() }),
  }),
  includeMeta: t.Object({ include_meta: t.Optional(t.String()) }),
};
