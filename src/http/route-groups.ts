// The spec's unauthenticated groups share one per-IP limit (RATE_LIMIT_PUBLIC_API_PER_MIN). Partner groups are
// limited per key by the partner auth plugin, which knows the key.
const PUBLIC_PREFIXES = [
  "/api/public",
  "/api/transactions",
  "/api/canary",
  "/transparency/",
  "/developers/",
  "/trust.json",
  "/status.json",
  // The human status page, its RSS feed and badges (/status, /status/feed.rss, /status/badge/…).
  "/status",
  // The published API documents (the spec lists both YAML documents among the public operations; the JSON twin too).
  "/api/openapi.json",
  "/api/openapi.yaml",
  "/api/openapi-transparency.yaml",
  "/s/audio/",
  // A donation claim's recipient page (src/donations/claim-page.ts).
  "/claim/",
] as const;

export function publicRateGroup(pathname: string): "public" | null {
  for (const p of PUBLIC_PREFIXES) if (pathname.startsWith(p)) return "public";
  return null;
}
