import type { AppError } from "../http/errors/errors";
import { pageSecurityHeaders } from "../http/security-headers";

// The page a person's browser sees when a short link cannot be followed: the same status and code as the
// JSON answer, in words, with the request id to quote.

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const HEADLINES: Record<string, string> = {
  short_link_not_found: "This link does not exist",
  short_link_expired: "This link has expired",
  short_link_revoked: "This link was withdrawn",
  short_link_signature_invalid: "This link is no longer valid",
};

/** The short code is in the URL: the page sends no referrer; it has no forms, images or script. */
const PAGE_HEADERS = pageSecurityHeaders({ referrer: "no-referrer" });

/** True when the client would rather read a page than JSON (a browser's Accept lists text/html). */
export const prefersHtml = (accept: string | null) => accept?.includes("text/html");

export function errorPage(err: AppError, requestId: string): Response {
  const headline = HEADLINES[err.code] ?? "This link cannot be opened";
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(headline)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}code{color:#555}</style></head>
<body><h1>${escapeHtml(headline)}</h1>
<p>${escapeHtml(err.message)}.</p>
<p>Ask whoever shared it for a new link.</p>
<p><small>Error <code>${escapeHtml(err.code)}</code> · request <code>${escapeHtml(requestId)}</code></small></p>
</body></html>
`;
  return new Response(body, {
    status: err.status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...PAGE_HEADERS, "x-request-id": requestId, ...err.headers },
  });
}
