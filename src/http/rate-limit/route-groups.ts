// The spec's unauthenticated groups share one per-IP limit (RATE_LIMIT_PUBLIC_API_PER_MIN). Partner groups are
// limited per key by the partner auth plugin, which knows the key.
// Each is a whole path or the path segments under it: "/status" is /status and /status/…, never /statuses (a
// MESSENGER_MINI_APP_PATH=/statuses matched it, and the players' page fell under this limit).
const PUBLIC_PREFIXES = [
  "/api/public",
  "/api/public-stats",
  "/api/transactions",
  "/api/canary",
  "/transparency/",
  // The developer portal: its home page and everything under it.
  "/developers",
  // The API reference page (it reads the documents under /api/openapi/).
  "/api/docs",
  // The partner catalogs served without a key: the same error catalog as /developers/api-errors.json, and the
  // webhook event types.
  "/api/partner/errors.json",
  "/api/partner/webhooks/event-types",
  "/trust.json",
  "/status.json",
  // The human status page, its RSS feed and badges (/status, /status/feed.rss, /status/badge/…).
  "/status",
  // The published API documents (the spec lists both YAML documents among the public operations; the JSON twin too).
  "/api/openapi.json",
  "/api/openapi.yaml",
  "/api/openapi-transparency.yaml",
  // One audience's document each, what the API reference at /api/docs reads (/api/openapi/partners.json, …).
  "/api/openapi/",
  "/s/audio/",
  // A donation claim's recipient page (src/donations/claim-page.ts).
  "/claim/",
] as const;

export function publicRateGroup(pathname: string): "public" | null {
  for (const p of PUBLIC_PREFIXES) {
    if (!pathname.startsWith(p)) continue;
    if (pathname.length === p.length || p.endsWith("/") || pathname[p.length] === "/") return "public";
  }
  return null;
}
