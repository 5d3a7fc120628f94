import ipaddr from "ipaddr.js";
import { warningOf, type Finding } from "./catalogs";

// The destination host policy. Every URL a share link, validation or track event names goes through
// `checkDestination`; the comparison is always on the parsed URL's host (WHATWG URL: lower case, IDN as
// punycode, numeric IPv4 forms normalised), never on the text the caller sent, so that `user@host`,
// `HOST.`, `#fragment`, backslashes and encodings cannot make one host look like another.

export const MAX_DESTINATION_LENGTH = 2048;
export const ALLOWED_SCHEMES = ["https:", "http:"] as const;

/**
 * Query parameters that commonly carry a post-login or post-click redirect. One pointing off-policy would turn
 * an allowed page into an open redirect to anywhere, so it is denied; one pointing on-policy is a warning.
 */
export const REDIRECT_PARAMS: readonly string[] = [
  "url",
  "redirect",
  "redirect_url",
  "redirect_uri",
  "redirecturl",
  "redirect_to",
  "next",
  "return",
  "return_to",
  "returnto",
  "returnurl",
  "return_url",
  "continue",
  "dest",
  "destination",
  "goto",
  "target",
  "to",
  "out",
  "r",
  "u",
  "link",
];

export type DenyReason =
  | "scheme_not_allowed"
  | "protocol_relative"
  | "userinfo"
  | "trailing_dot"
  | "ip_literal"
  | "denied_host"
  | "not_allowlisted"
  | "open_redirect_param";

export interface HostRule {
  /** As configured, for policy.json. */
  entry: string;
  /** ASCII (punycode) host name or IP literal; IPv6 in brackets, as URL.hostname gives it. */
  host: string;
  /** "" = the scheme's default port only; null = any port (deny rules). */
  port: string | null;
  /** `*.example.com`: subdomains of host, not host itself. */
  wildcard: boolean;
}

export interface HostPolicy {
  base: URL;
  baseRule: HostRule;
  allowed: readonly HostRule[];
  denied: readonly HostRule[];
}

export type PolicyIssue = Finding;

export type DestinationCheck =
  | { ok: true; url: URL; host: string; warnings: PolicyIssue[] }
  | { ok: false; error: PolicyIssue & { code: "destination_host_denied" | "destination_invalid" }; warnings: PolicyIssue[] };

function parseRule(entry: string, anyPort: boolean): HostRule {
  const raw = entry.trim();
  const wildcard = raw.startsWith("*.");
  const text = wildcard ? raw.slice(2) : raw;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
  } catch {
    throw new Error(`audio-share host list entry ${JSON.stringify(entry)} is not a host name`);
  }
  if (url.pathname !== "/" || url.search || url.hash || url.username || !url.hostname || url.hostname.endsWith(".")) {
    throw new Error(`audio-share host list entry ${JSON.stringify(entry)} must be a bare host such as example.com, *.example.com or example.com:8443`);
  }
  const explicitPort = /:\d+$/.test(text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").split("/")[0]!);
  return { entry: raw, host: url.hostname, port: anyPort && !explicitPort ? null : url.port, wildcard };
}

/** Builds the policy once per app; a malformed host list entry stops the start with a clear message. */
export function buildHostPolicy(publicBaseUrl: string, allowed: readonly string[], denied: readonly string[]): HostPolicy {
  const base = new URL(publicBaseUrl.endsWith("/") ? publicBaseUrl : `${publicBaseUrl}/`);
  return {
    base,
    baseRule: { entry: base.host, host: base.hostname, port: base.port, wildcard: false },
    allowed: allowed.map((e) => parseRule(e, false)),
    denied: denied.map((e) => parseRule(e, true)),
  };
}

const isIpLiteral = (hostname: string) => hostname.startsWith("[") || ipaddr.IPv4.isValidFourPartDecimal(hostname);

function ruleMatches(rule: HostRule, hostname: string, port: string): boolean {
  if (rule.port !== null && rule.port !== port) return false;
  // A wildcard never matches an IP literal, and matches only on a label boundary (evilexample.com ≠ *.example.com).
  if (rule.wildcard) return !isIpLiteral(hostname) && hostname.endsWith(`.${rule.host}`);
  return hostname === rule.host;
}

const deny = (reason: DenyReason, host: string | null, message: string, field: string, extra: { host?: string | null; param?: string } = {}) => ({
  ok: false as const,
  error: { code: "destination_host_denied" as const, message, field, host, reason, ...extra },
  warnings: [] as PolicyIssue[],
});

const invalid = (message: string, field: string) => ({
  ok: false as const,
  error: { code: "destination_invalid" as const, message, field, host: null, reason: "unparseable" },
  warnings: [] as PolicyIssue[],
});

/** The host a URL names, for an error message; null when it names none. */
function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname || null;
  } catch {
    return null;
  }
}

/** Parses one destination: an absolute http(s) URL, or a site-relative path resolved against PUBLIC_BASE_URL. */
function parseDestination(policy: HostPolicy, raw: string, field: string): { url: URL } | ReturnType<typeof deny> | ReturnType<typeof invalid> {
  const text = raw.trim();
  if (text === "") return invalid(`${field} is empty`, field);
  if (text.length > MAX_DESTINATION_LENGTH) return invalid(`${field} is longer than ${MAX_DESTINATION_LENGTH} characters`, field);
  // URL parsing silently drops tabs and newlines ("java\nscript:"): refuse them instead of guessing.
  if (/[\u0000-\u001f\u007f]/.test(text)) return invalid(`${field} contains control characters`, field);
  if (/^[/\\][/\\]/.test(text)) {
    // The host a protocol-relative or backslash form would reach.
    const host = hostOf(`https://${text.replace(/^[/\\]+/, "")}`);
    return deny(
      "protocol_relative",
      host,
      `Protocol-relative destinations (//host) are not accepted${host ? `; host "${host}" would be reached` : ""}. Use an absolute https URL or a path starting with a single /`,
      field,
    );
  }
  if (text.startsWith("/")) return { url: new URL(text, policy.base) };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1]?.toLowerCase();
  if (!scheme) return invalid(`${field} must be an absolute https URL or a site-relative path starting with /`, field);
  if (!ALLOWED_SCHEMES.includes(`${scheme}:` as (typeof ALLOWED_SCHEMES)[number])) {
    return deny(
      "scheme_not_allowed",
      hostOf(text) ?? `${scheme}:`,
      `Destination scheme "${scheme}:" is not allowed; share links point at https (or http) pages only`,
      field,
    );
  }
  try {
    return { url: new URL(text) };
  } catch {
    return invalid(`${field} is not a valid URL`, field);
  }
}

/** Checks the host of a parsed http(s) URL; null when allowed. */
function checkHost(policy: HostPolicy, url: URL, field: string): ReturnType<typeof deny> | null {
  const host = url.hostname;
  if (url.username || url.password) {
    return deny("userinfo", host, `Destinations with user info (user@host) are not accepted: they hide the real host "${host}" from readers`, field);
  }
  // "example.com." is the same DNS name as "example.com" but not the same string; refusing it outright keeps
  // every list comparison exact, and no person types a trailing dot into a share link.
  if (host.endsWith(".")) return deny("trailing_dot", host, `Destination host "${host}" ends with a dot; remove it`, field);
  const port = url.port;
  if (policy.denied.some((r) => ruleMatches(r, host, port))) {
    return deny("denied_host", host, `Destination host "${host}" is on the audio-share deny list`, field);
  }
  if (ruleMatches(policy.baseRule, host, port) || policy.allowed.some((r) => ruleMatches(r, host, port))) return null;
  if (isIpLiteral(host)) {
    return deny("ip_literal", host, `IP-address destinations ("${host}") are refused unless allow-listed; use the site's host name`, field);
  }
  const shown = url.port ? `${host}:${url.port}` : host;
  return deny(
    "not_allowlisted",
    shown,
    `Destination host "${shown}" is not allowed by the audio-share host policy; see /api/public/audio-share-links/policy.json`,
    field,
  );
}

/** Values of query (and fragment-query) parameters, decoded up to three times (double-encoding tricks). */
function paramsOf(url: URL): Array<[string, string]> {
  const out: Array<[string, string]> = [...url.searchParams];
  const hash = url.hash.slice(1);
  const q = hash.indexOf("?");
  const fragmentQuery = q >= 0 ? hash.slice(q + 1) : hash.includes("=") ? hash : "";
  if (fragmentQuery) out.push(...new URLSearchParams(fragmentQuery));
  return out.map(([k, v]) => {
    let value = v;
    for (let i = 0; i < 2 && /%[0-9a-f]{2}/i.test(value); i++) {
      try {
        value = decodeURIComponent(value);
      } catch {
        break;
      }
    }
    return [k, value.trim()];
  });
}

const looksLikeUrl = (v: string) => /^[a-z][a-z0-9+.-]*:/i.test(v) || /^[/\\][/\\]/.test(v);

/** Looks at parameters that carry another URL: an off-policy redirect target is denied, the rest warned about. */
function checkEmbeddedUrls(policy: HostPolicy, url: URL, field: string, depth: number): { denied: ReturnType<typeof deny> | null; warnings: PolicyIssue[] } {
  const warnings: PolicyIssue[] = [];
  for (const [name, value] of paramsOf(url)) {
    if (!looksLikeUrl(value)) continue;
    const redirectLike = REDIRECT_PARAMS.includes(name.toLowerCase());
    const inner = depth < 2 ? checkDestination(policy, value, field, depth + 1) : null;
    const innerOk = inner?.ok === true;
    if (redirectLike && !innerOk) {
      const host = inner && !inner.ok ? (inner.error.host ?? null) : null;
      return {
        denied: deny(
          "open_redirect_param",
          host,
          `Parameter "${name}" redirects to ${host ? `"${host}"` : "a destination"} outside the audio-share host policy`,
          field,
          { param: name },
        ),
        warnings,
      };
    }
    warnings.push(
      redirectLike
        ? warningOf("redirect_param_present", `Parameter "${name}" carries a redirect (to an allowed host); readers land on a second page`, {
            field,
            param: name,
          })
        : warningOf("embedded_url_param", `Parameter "${name}" carries a URL${innerOk ? "" : " outside the host policy"}; it is passed through unchanged`, {
            field,
            param: name,
          }),
    );
  }
  return { denied: null, warnings };
}

/** The whole policy for one destination: parse, scheme, host lists, embedded redirects. */
export function checkDestination(policy: HostPolicy, raw: string, field = "track_url", depth = 0): DestinationCheck {
  const parsed = parseDestination(policy, raw, field);
  if (!("url" in parsed)) return parsed;
  const { url } = parsed;
  const hostProblem = checkHost(policy, url, field);
  if (hostProblem) return hostProblem;
  const embedded = checkEmbeddedUrls(policy, url, field, depth);
  if (embedded.denied) return embedded.denied;
  const warnings = [...embedded.warnings];
  if (url.protocol === "http:" && policy.base.protocol === "https:") {
    warnings.push(warningOf("insecure_scheme", "The destination uses http; readers' browsers may warn or upgrade it. Prefer https", { field }));
  }
  return { ok: true, url, host: url.hostname, warnings };
}

/** What policy.json publishes. */
export function describePolicy(policy: HostPolicy) {
  return {
    base_url: policy.base.origin,
    base_host: policy.base.host,
    allowed_hosts: [policy.base.host, ...policy.allowed.map((r) => r.entry)],
    denied_hosts: policy.denied.map((r) => r.entry),
    schemes: ALLOWED_SCHEMES.map((s) => s.slice(0, -1)),
    max_url_length: MAX_DESTINATION_LENGTH,
    redirect_params: [...REDIRECT_PARAMS],
    rules: [
      "Hosts are compared on the parsed URL in ASCII (IDN as punycode), lower case; the deny list wins over everything.",
      "A site-relative path (/tracks/1) resolves against base_url; //host and /\\host forms are refused.",
      "Only https and http; javascript:, data:, file: and every other scheme are refused.",
      "User info (user@host) and a trailing dot on the host are refused.",
      "A port other than the scheme's default must be named in the allow-list entry (example.com:8443).",
      "IP literals are refused unless allow-listed exactly; *.example.com never matches an IP.",
      "A redirect-like parameter (redirect_params) whose URL fails this policy is refused; one that passes is a warning.",
    ],
  };
}
