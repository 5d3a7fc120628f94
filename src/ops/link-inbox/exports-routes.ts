import { createHash } from "node:crypto";
import { sendsHeaders } from "../../http/openapi/contract";
import { compressEither } from "../../http/compression";
import { Elysia, t } from "elysia";
import { actorLabel } from "../../auth/actors";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { csvHeaders } from "../../http/formats/csv";
import { type ErrorBody, requestedMeta, ok } from "../../http/envelope";
import { refusal } from "../../http/routes/declare";
import { queryProblem } from "../../http/errors/errors";
import { type EventFilterInput, eventsCsv, eventsJson, queryEvents, resolveFields, resolveFilters } from "./exports";
import { EXPORT_FLAGS, LinkExportsModel as M } from "./exports-model";
import { linkInboxPageRoutes } from "./link-page";
import { EVENTS_EXPORT, exportTelemetry, issueDownloadToken, recordTokenDownload, redeemDownloadTokenOrThrow } from "./tokens";

// The link-inbox event exports (docs/ops-link-inbox.md, below "exports"). Compression rule, so that nothing is
// ever compressed twice and X-Export-SHA256 always names the bytes on the wire:
// - compress=1: the handler gzips; the answer carries Content-Encoding: gzip and the core's Accept-Encoding
//   compression leaves any answer that already has a Content-Encoding alone.
// - checksum=1 (without compress=1): the answer is sent as it is, never re-encoded by Accept-Encoding (the
//   handler returns final bytes, which the core does not compress), so the header is the sha256 of the body read.
// - neither: an ordinary answer, compressed by the core when Accept-Encoding allows (docs/http-conventions.md).

const BASE = "/admin/ops/link-inbox/events";
const encoder = new TextEncoder();

type Query = typeof M.exportQuery.static;
type SetHeaders = { headers: Record<string, string | number> };

/** The filter part of a query: what a download token stores and replays. */
function filterParams(q: Query): EventFilterInput & { compress?: "1" } {
  const filters = Object.entries(q).filter(([k, v]) => v !== undefined && !(k in EXPORT_FLAGS) && k !== "include_meta");
  const out = Object.fromEntries(filters) as EventFilterInput;
  return q.compress === "1" ? { ...out, compress: "1" } : out;
}

/**
 * Final bytes with the flags applied (see the rule above), or null: let the core send (and maybe compress) it. A
 * large body's gzip runs on the thread pool, as the core's compression does (src/http/compression.ts).
 */
async function finalBody(text: string, flags: { compress: boolean; checksum: boolean }, set: SetHeaders): Promise<Uint8Array | null> {
  if (!flags.compress && !flags.checksum) return null;
  const bytes = flags.compress ? await compressEither(encoder.encode(text), "gzip") : encoder.encode(text);
  if (flags.compress) set.headers["content-encoding"] = "gzip";
  if (flags.checksum) set.headers["x-export-sha256"] = createHash("sha256").update(bytes).digest("hex");
  return bytes;
}

async function exportAnswer(ctx: AppContext, actor: string, q: Query, format: "json" | "csv", set: SetHeaders, request: Request) {
  if (q.download_token === "1") {
    if (q.count_only === "1") throw queryProblem("download_token", "cannot be combined with count_only=1");
    // Checked now, so a token never carries parameters the download would refuse.
    resolveFilters(q);
    resolveFields(q.fields);
    const params = filterParams(q);
    const issued = await issueDownloadToken(ctx, actor, EVENTS_EXPORT, params as Record<string, unknown>);
    return ok({
      download_token: issued.token,
      download_url: `${BASE}/export-download.csv?download_token=${issued.token}`,
      export: EVENTS_EXPORT,
      expires_at: issued.expiresAt,
      requested_by: actor,
      params: params as Record<string, unknown>,
    });
  }
  const r = await queryEvents(ctx, q, q.count_only === "1");
  const flags = { compress: q.compress === "1", checksum: q.checksum === "1" };
  if (format === "json") {
    const value = eventsJson(ctx, r, q.debug === "1");
    if (!flags.compress && !flags.checksum) return value; // the core adds include_meta's block
    const meta = requestedMeta(request, set.headers["x-request-id"], ctx.clock.now());
    const bytes = (await finalBody(JSON.stringify(meta ? { ...value, meta } : value), flags, set))!;
    set.headers["content-type"] = "application/json; charset=utf-8";
    return bytes;
  }
  Object.assign(set.headers, csvHeaders("herald-link-inbox-events.csv"));
  const timings = Object.entries(r.timingsMs).map(([k, v]) => `${k};dur=${v}`);
  if (q.debug === "1") set.headers["server-timing"] = timings.join(", ");
  const text = eventsCsv(r);
  return (await finalBody(text, flags, set)) ?? new Response(text, { headers: set.headers as Record<string, string> });
}

/** With checksum=1 an export says the SHA-256 of its bytes. */
const CHECKSUM = sendsHeaders({ "X-Export-SHA256": "SHA-256 (hex) of the body bytes, with checksum=1" });

const REFUSALS = { 400: refusal("invalid_query naming the parameter"), 403: refusal("forbidden: no admin token or operator session") };

/** The events CSV with debug=1 says how long its queries took. */
const CHECKSUM_AND_TIMING = sendsHeaders({
  "X-Export-SHA256": "SHA-256 (hex) of the body bytes, with checksum=1",
  "Server-Timing": "with debug=1: each query's time (name;dur=ms)",
});

const csvDoc = (summary: string, timing = false) => ({
  summary,
  ...(timing ? CHECKSUM_AND_TIMING : CHECKSUM),
  responses: {
    200: {
      description: "text/csv (RFC 4180, header row), as an attachment; download_token=1: the LinkInboxDownloadToken JSON",
      content: { "text/csv": { schema: { type: "string" as const } }, "application/json": { schema: M.tokenIssued as unknown as typeof ErrorBody } },
    },
    ...REFUSALS,
  },
});

/** The exports, the token download and the telemetry; bearer token or operator session (`operator: "api"`). */
export function linkExportsRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:ops-link-exports" })
    .use(guards.operator.plugin)
    .use(linkInboxPageRoutes(ctx, guards))
    .get(`${BASE}/export.json`, ({ query, operator, set, request }) => exportAnswer(ctx, actorLabel(operator.actor), query, "json", set, request), {
      operator: "api",
      query: M.exportQuery,
      // No `response` validator: with checksum=1 or compress=1 the handler returns the final bytes (see above).
      detail: {
        summary: "Link-inbox events (delivery attempts and skips), filtered, newest first; or their count, or a one-time download token",
        ...CHECKSUM,
        responses: {
          200: {
            description: "the export (gzip with compress=1), or with download_token=1 the token",
            content: { "application/json": { schema: t.Union([M.export, M.tokenIssued]) as unknown as typeof ErrorBody } },
          },
          ...REFUSALS,
        },
      },
    })
    .get(`${BASE}/export.csv`, ({ query, operator, set, request }) => exportAnswer(ctx, actorLabel(operator.actor), query, "csv", set, request), {
      operator: "api",
      query: M.exportQuery,
      detail: csvDoc("The link-inbox events export as CSV (the JSON's events[] with the same filters and fields)", true),
    })
    .get(
      `${BASE}/export-download.csv`,
      async ({ query, operator, set }) => {
        const actor = actorLabel(operator.actor);
        const { params } = await redeemDownloadTokenOrThrow(ctx, actor, query.download_token);
        const { compress, ...filters } = params as EventFilterInput & { compress?: string };
        const text = eventsCsv(await queryEvents(ctx, filters, false));
        Object.assign(set.headers, csvHeaders("herald-link-inbox-events.csv"));
        const bytes = (await finalBody(text, { compress: compress === "1", checksum: true }, set))!;
        await recordTokenDownload(ctx, actor, bytes.byteLength);
        return bytes;
      },
      {
        operator: "api",
        query: M.downloadQuery,
        detail: {
          ...csvDoc("Downloads the CSV a download token stands for: once, before it expires, by the operator it was issued to"),
          responses: {
            ...csvDoc("").responses,
            403: refusal("forbidden: no credentials, or the token belongs to another operator"),
            404: refusal("not_found: no such token"),
            410: refusal("download_token_used or download_token_expired"),
          },
        },
      },
    )
    .get(`${BASE}/export-telemetry.json`, ({ query }) => exportTelemetry(ctx, query.requested_by || null), {
      operator: "api",
      query: M.telemetryQuery,
      response: { 200: M.telemetry },
      detail: { summary: "How many link-inbox exports and download tokens were requested, used and expired, by whom, and their bytes" },
    });
}
