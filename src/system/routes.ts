import { Elysia, t } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { AppError, ProbeUnavailable } from "../http/errors/errors";
import { includeMetaQuery, ok } from "../http/envelope";
import { refusal, refuses } from "../http/routes/declare";
import { HEALTH_ROUTE, health } from "./health";
import { homeRoutes } from "./home";
import { SystemModel } from "./model";
import { errorCatalog, readiness } from "./service";
import { METRICS_CONTENT_TYPE } from "../http/metrics";
import { slicePage } from "../http/pagination";

/**
 * The probes declare include_meta and take any other parameter without refusing it: a load balancer or an uptime
 * service may add its own, and a probe that answered 400 would take a healthy instance out of rotation.
 */
const PROBE_QUERY = t.Object(includeMetaQuery, { additionalProperties: true });

/** The error catalog's query and answer, at both its addresses. */
const catalogAnswer = { query: SystemModel.includeMeta, response: { 200: SystemModel.errorsByCode } };

export function systemRoutes(ctx: AppContext, guards: Guards) {
  ctx.metrics.gauge("herald_db_size_bytes", "Database size on disk: the SQLite file plus its WAL, or pg_database_size.", () => ctx.store.sizeBytes());
  ctx.metrics.gauge("herald_request_log_pending", "Request-log rows buffered, not yet written.", () => ctx.requestLog.pending);
  // With the probes: the front door (/) and the console's short address (/admin), src/system/home.ts.
  return new Elysia({ name: "herald:system" })
    .use(guards.admin.plugin)
    .use(homeRoutes(ctx))
    .get(HEALTH_ROUTE, () => health(ctx), {
      query: PROBE_QUERY,
      response: SystemModel.health,
      detail: { tags: ["system"], summary: "Liveness: the process answers" },
    })
    .get(
      "/readyz",
      async () => {
        const r = await readiness(ctx);
        if (r.ready) return ok(r);
        const failed = Object.entries(r.checks).filter(([, c]) => !c.ok);
        throw new ProbeUnavailable(`Not ready: ${failed.map(([name, c]) => `${name} (${c.detail})`).join("; ")}`, r);
      },
      {
        query: PROBE_QUERY,
        response: { 200: SystemModel.ready, 503: SystemModel.notReady },
        detail: {
          tags: ["system"],
          summary: "Readiness: database answers and takes writes, migrations current, jobs running, not shutting down; names the engine",
        },
      },
    )
    .get(
      "/metrics",
      async ({ request }) => {
        // Closed by default: metrics reveal traffic shape. METRICS_PUBLIC=1 opens them (e.g. behind a private network).
        if (!ctx.config.metricsPublic) await guards.admin.authenticate(request);
        return new Response(await ctx.metrics.render(), { headers: { "content-type": METRICS_CONTENT_TYPE } });
      },
      {
        detail: {
          tags: ["system"],
          summary: "Prometheus metrics (admin token unless METRICS_PUBLIC=1)",
          security: [{ AdminBearer: [] }],
          responses: {
            200: { description: "Prometheus text exposition format 0.0.4", content: { "text/plain": { schema: { type: "string" } } } },
            403: refusal("forbidden: no valid admin token (JSON envelope)"),
          },
        },
      },
    )
    .get(
      "/admin/jobs",
      async ({ query }) => {
        const { items, total, count, query: echo, pagination } = slicePage(await ctx.jobs.list(), query);
        return ok({ count, total, query: echo, pagination, jobs: items });
      },
      {
        admin: true,
        query: SystemModel.jobsQuery,
        response: { 200: SystemModel.jobs },
        detail: { summary: "Jobs, their schedule and last run, in the order the server registers them, paged by limit and offset" },
      },
    )
    .post(
      "/admin/jobs/:name/run",
      async ({ params }) => {
        if (!ctx.jobs.has(params.name)) throw new AppError("not_found", `No job named ${params.name}; see GET /admin/jobs`);
        return ok({ run: await ctx.jobs.runNow(params.name) });
      },
      {
        admin: true,
        params: t.Object({ name: t.String({ maxLength: 64 }) }),
        response: { 200: SystemModel.jobRun, ...refuses(404) },
        detail: { summary: "Run a job now (recorded in job_runs)" },
      },
    )
    .get("/api/partner/errors.json", () => ok(errorCatalog()), {
      ...catalogAnswer,
      detail: {
        tags: ["partner"],
        summary: "Error catalog: every error code, its status and retry class, as a list (entries) and keyed by code (by_code)",
        description:
          "Public, though the spec lists it among the signed partner operations: the catalog holds no secret and no partner's data, and a " +
          "client needs it before it can sign (to read the errors of its first signed call) — docs/partner-auth.md, 'The error catalog'. A signed request is answered the same.",
        security: [],
      },
    })
    .get("/developers/api-errors.json", () => ok(errorCatalog()), { ...catalogAnswer, detail: { tags: ["public"], summary: "Error catalog keyed by code" } });
}
