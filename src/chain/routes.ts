import { Elysia, type TSchema } from "elysia";
import { cached, conditionalGet } from "../http/openapi/contract";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { ContentDates, conditionalBytes, conditionalJson } from "../http/caching/conditional";
import { CSV_CONTENT_TYPE, csvDoc } from "../http/formats/csv";
import { exportPair } from "../http/exports/pair";
import { metaRequested, ok } from "../http/envelope";
import { partnerTag, publicTag, refuses } from "../http/routes/declare";
import { parsePage } from "../http/pagination";
import { csvResponse, listCsv, objectCsv } from "./csv";
import { ChainModel as M } from "./model";
import {
  holderCacheProof,
  holderGrowthProof,
  jobsRollupProof,
  mintAuthoritiesProof,
  publicStatsCacheProof,
  tokenDistributionProof,
  transactionSyncProof,
} from "./proofs";
import { latestTransactions, publicStats, tokenStatus, walletConcentration, walletInfo } from "./service";

const csvDetail = (summary: string) => ({ tags: ["public"], ...csvDoc(`${summary} (CSV, RFC 4180)`) });
// Transparency snapshots may be cached for a minute (spec: "cache at least 60 seconds").
const CACHE = "public, max-age=60";

/** A dated list with its trust context as CSV: one row per item, the header fields and the context on each. */
const trustedListCsv = <B extends { generated_at_utc: string; status: string; trust_context: { mint: unknown } }>(
  b: B,
  items: Array<Record<string, unknown>>,
  schema: { properties: { trust_context: TSchema } },
  itemSchema: TSchema,
) =>
  listCsv({ generated_at_utc: b.generated_at_utc, status: b.status, mint: b.trust_context.mint }, items, itemSchema, {
    name: "trust_context",
    value: b.trust_context,
    schema: schema.properties.trust_context,
  });

/** A public proof at /api/public/<name>.json and its CSV twin (one record unless `csv` says otherwise). */
const proofPair = <R extends Record<string, unknown>>(
  name: string,
  build: () => Promise<R>,
  schema: TSchema,
  [summary, csvSummary = summary]: [json: string, csv?: string],
  csv = (r: R) => objectCsv(r, schema),
) =>
  exportPair({
    paths: [`/api/public/${name}.json`, `/api/public/${name}.csv`],
    query: M.metaQuery,
    csvQuery: null,
    build,
    response: { 200: schema },
    csv: (r) => csvResponse(csv(r), `${name}.csv`),
    detail: { json: { ...publicTag(summary), ...cached(CACHE) }, csv: { ...csvDetail(csvSummary), ...cached(CACHE) } },
  });

/** A signed partner read (its key's mode or scope: 403) of the latest snapshots. */
const partnerRead = <R extends TSchema>(schema: R, summary: string) => ({
  partner: { scope: "read" as const },
  query: M.metaQuery,
  response: { 200: schema, ...refuses(403) },
  detail: partnerTag(summary),
});

export function chainRoutes(ctx: AppContext, guards: Guards) {
  const dates = new ContentDates();
  return new Elysia({ name: "herald:chain" })
    .use(guards.partner.plugin)
    .onAfterHandle(({ set, path }) => {
      if (!path.startsWith("/api/partner/")) set.headers["cache-control"] = CACHE;
    })
    .get(
      "/api/partner/token-status",
      async () => ok(await tokenStatus(ctx)),
      partnerRead(
        M.tokenStatus,
        "Supply, treasury, reserve, circulating and holders from the latest snapshots; 503 service_unavailable when not configured or no snapshot yet",
      ),
    )
    .get("/api/partner/wallet-info/:wallet_address", async ({ params }) => ok(await walletInfo(ctx, params.wallet_address)), {
      params: M.walletParams,
      ...partnerRead(M.walletInfo, "Live SOL, token and LP balances of a wallet (exact decimal strings); 400 for an invalid address"),
    })
    .get("/api/public-stats", async () => ok(await publicStats(ctx)), {
      query: M.metaQuery,
      response: { 200: M.publicStats },
      detail: {
        ...publicTag("Supply, circulating supply, holders and 24 h volume with the cache block; status not_configured without TOKEN_MINT"),
        ...cached(CACHE),
      },
    })
    .get("/api/transactions/latest", async ({ query }) => ok(await latestTransactions(ctx, parsePage({ limit: query.limit }).limit)), {
      query: M.latestQuery,
      response: { 200: M.latestTransactions },
      detail: { ...publicTag("Latest synced transactions of the mint and tracked wallets, newest first (limit 1–200, default 50)"), ...cached(CACHE) },
    })
    .use(proofPair("holder-cache-freshness", () => holderCacheProof(ctx), M.holderCache, ["Holder count snapshot freshness proof"]))
    .use(proofPair("holder-growth-freshness", () => holderGrowthProof(ctx), M.holderGrowth, ["Holder growth freshness proof"]))
    .use(
      proofPair("public-stats-cache-freshness", () => publicStatsCacheProof(ctx), M.publicStatsCache, [
        "Public-stats cache (token snapshot) freshness proof",
        "Public-stats cache freshness proof",
      ]),
    )
    .use(
      proofPair("token-distribution-freshness", () => tokenDistributionProof(ctx), M.tokenDistribution, [
        "Token distribution (top-1/5/10 concentration) freshness proof",
        "Token distribution freshness proof",
      ]),
    )
    .use(
      proofPair("token-mint-authorities", () => mintAuthoritiesProof(ctx), M.mintAuthorities, [
        "Mint and freeze authority proof against the configured expectation",
        "Mint and freeze authority proof",
      ]),
    )
    .use(
      proofPair(
        "token-snapshot-jobs-rollup",
        () => jobsRollupProof(ctx),
        M.jobsRollup,
        ["Every chain job's latest snapshot and last 24 h of runs", "Chain jobs rollup, one row per job"],
        (r) => trustedListCsv(r, r.jobs, M.jobsRollup, M.jobsRollup.properties.jobs.items),
      ),
    )
    .use(proofPair("transaction-sync-freshness", () => transactionSyncProof(ctx), M.transactionSync, ["Transaction sync freshness proof"]))
    .get(
      "/transparency/wallet-concentration.json",
      async ({ request, set }) => {
        const body = ok(dates.stamp("wallet-concentration", await walletConcentration(ctx)));
        // An include_meta answer carries its request id: nothing to revalidate, so the core serialises it as usual.
        if (metaRequested(request.url)) return body;
        // Typed as the body: Elysia types an async handler's answer as one promise of either, not a union of
        // promises; a Response is sent as it is (neither validated nor serialised) either way.
        return conditionalJson(request, body, { lastModified: body.generated_at_utc, cacheControl: CACHE, headers: set.headers }) as unknown as typeof body;
      },
      {
        query: M.metaQuery,
        response: { 200: M.walletConcentration },
        detail: {
          tags: ["public"],
          summary: "Top-1/5/10 concentration, latest and a daily trend; ETag, Last-Modified and 304 on If-None-Match / If-Modified-Since",
          ...conditionalGet("etag", "last-modified"),
        },
      },
    )
    .get(
      "/transparency/wallet-concentration.csv",
      async ({ request, set }) => {
        // Dated like the JSON (ContentDates), so both say the same generated_at_utc for the same data; validators
        // and 304 as the JSON's.
        const w = dates.stamp("wallet-concentration", await walletConcentration(ctx));
        const body = trustedListCsv(w, w.trend_points, M.walletConcentration, M.walletConcentration.properties.trend_points.items);
        return conditionalBytes(request, body, {
          lastModified: w.generated_at_utc,
          cacheControl: CACHE,
          contentType: CSV_CONTENT_TYPE,
          headers: set.headers,
          extra: { "content-disposition": 'inline; filename="wallet-concentration.csv"' },
        });
      },
      { detail: { ...csvDetail("Wallet concentration trend, one row per daily point"), ...conditionalGet("etag", "last-modified") } },
    );
}
