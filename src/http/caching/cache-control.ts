// Cache-Control of operator answers (docs/http-conventions.md, "Caching"). An operator answer is private to the
// operator who asked — preflight-guards.json carries secret fingerprints and is readable with the session cookie —
// so no shared cache may keep it and no browser may store it: `private, no-store`, set by the HTTP core on every
// operator request (isOperatorPath: success, error, redirect, page, export) before any route runs. A route overrides the
// default only with validators: an answer with an ETag or Last-Modified is `private, no-cache` (kept by the
// browser, revalidated on every use, which is what makes a 304 possible).

export const OPERATOR_NO_STORE = "private, no-store";
export const OPERATOR_REVALIDATE = "private, no-cache";

/**
 * An operator answer: /admin and everything under it (not /administrator), the messenger operators' routes under
 * /api/messenger/admin/ and /api/messenger/ops/, and /metrics (behind the admin token or METRICS_TOKEN).
 */
export const isOperatorPath = (pathname: string): boolean =>
  pathname.startsWith("/admin")
    ? pathname.length === 6 || pathname[6] === "/"
    : pathname.startsWith("/api/messenger/admin/") || pathname.startsWith("/api/messenger/ops/") || pathname === "/metrics";
