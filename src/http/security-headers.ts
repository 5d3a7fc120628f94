import { createHash } from "node:crypto";

// The security headers of Herald's answers (docs/http-conventions.md, "Security headers"). Every answer carries
// `X-Content-Type-Options: nosniff`, so a browser never sniffs a JSON error, a CSV export or an SVG badge into HTML or
// script. Every HTML page also carries `pageSecurityHeaders`: a CSP from `default-src 'none'` allowing only what that
// page uses, `frame-ancestors 'none'` with `X-Frame-Options: DENY` against clickjacking (only the mini-app may be
// framed, by Telegram's web client), `base-uri 'none'` and a Referrer-Policy.

export const CONTENT_TYPE_OPTIONS = "x-content-type-options";
export const NOSNIFF = "nosniff";

// In production every answer also carries HSTS for a year, without includeSubDomains (the domain's other hosts are not
// Herald's to decide). Production requires an https PUBLIC_BASE_URL, but TLS usually ends at a proxy Herald cannot
// see through, so the header goes on every answer; a browser ignores it over plain http (RFC 6797 §8.1). Never sent
// outside production: http://localhost must keep working.
export const STRICT_TRANSPORT = "strict-transport-security";
export const STRICT_TRANSPORT_SECURITY = "max-age=31536000";

/** What one kind of page may load or do beyond its own inline styles; everything else stays at `'none'`. */
export interface PagePolicy {
  /** Sources of scripts: the API reference's own bundle and its inline hashes; none on every other page. */
  readonly scripts?: readonly string[];
  /** Sources of styles; default `'unsafe-inline'` (the pages' inline <style>, no stylesheet from elsewhere). */
  readonly styles?: readonly string[];
  /** Sources of images: `'self'` where a page shows one of Herald's own (the status badge, the 403 trend chart). */
  readonly images?: readonly string[];
  readonly fonts?: readonly string[];
  /** What scripts may fetch (the API reference reads /api/openapi.json). */
  readonly connect?: readonly string[];
  /** `'self'` for pages whose forms post to Herald (the console); a page without forms posts nowhere. */
  readonly formAction?: "'self'";
  /**
   * `same-origin` (the console's default: Herald's own pages may see which page linked them, no other site may),
   * or `no-referrer` where the URL itself is a secret (a donation claim's code, a short link).
   */
  readonly referrer?: "same-origin" | "no-referrer";
  /**
   * Who may show the page in a frame: nobody (the default: clickjacking), or the named origins — the players'
   * mini-app, which Telegram's web clients show in a frame of theirs. With origins, no X-Frame-Options (it cannot
   * name one) and the CSP's frame-ancestors decides.
   */
  readonly framedBy?: readonly string[];
}

/** The CSP sources of a page's inline `<script>`s (one with a src is `'self'`'s): each its SHA-256, so no injected script runs. */
export const inlineScriptSources = (html: string): string[] =>
  [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`);

/** The Content-Security-Policy of a page under `policy`. */
export function contentSecurityPolicy(policy: PagePolicy): string {
  const directives: string[] = ["default-src 'none'"];
  const add = (name: string, sources: readonly string[] | undefined) => {
    if (sources?.length) directives.push(`${name} ${sources.join(" ")}`);
  };
  add("script-src", policy.scripts);
  add("style-src", policy.styles ?? ["'unsafe-inline'"]);
  add("img-src", policy.images);
  add("font-src", policy.fonts);
  add("connect-src", policy.connect);
  directives.push(`form-action ${policy.formAction ?? "'none'"}`, `frame-ancestors ${policy.framedBy?.join(" ") || "'none'"}`, "base-uri 'none'");
  return directives.join("; ");
}

/** The headers every HTML page sends; build once per kind of page (at module load), not per request. */
export function pageSecurityHeaders(policy: PagePolicy = {}): Readonly<Record<string, string>> {
  return Object.freeze({
    "content-security-policy": contentSecurityPolicy(policy),
    ...(policy.framedBy?.length ? {} : { "x-frame-options": "DENY" }),
    "referrer-policy": policy.referrer ?? "same-origin",
    [CONTENT_TYPE_OPTIONS]: NOSNIFF,
  });
}

/** Sets a page's security headers on its response (a page built by `htmlResponse`). */
export function withPageSecurity(res: Response, headers: Readonly<Record<string, string>>): Response {
  for (const k in headers) res.headers.set(k, headers[k]!);
  return res;
}
