import { lookup } from "node:dns/promises";
import { domainToASCII } from "node:url";
import ipaddr from "ipaddr.js";
import type { AppContext } from "../context";

export const MAX_TARGET_URL_LENGTH = 2048;

export interface TargetPolicy {
  allowPrivateTargets: boolean;
  requireHttps: boolean;
}

/** The configured policy: private targets only with WEBHOOK_ALLOW_PRIVATE_TARGETS, https only in production. */
export const targetPolicyOf = (config: AppContext["config"]): TargetPolicy => ({
  allowPrivateTargets: config.webhooks.allowPrivateTargets,
  requireHttps: config.isProduction,
});

/**
 * Only globally routable unicast addresses are public. Everything else — loopback, RFC 1918, link-local
 * (which holds cloud metadata at 169.254.169.254), CGNAT, unique-local IPv6, multicast, reserved — could reach
 * something inside the operator's network, so a partner may not aim deliveries at it.
 */
export function isPublicAddress(ip: string): boolean {
  try {
    const addr = ipaddr.process(ip);
    // ::a.b.c.d (the deprecated IPv4-compatible form, ::/96) is "unicast" to ipaddr.js, but a host may route it
    // to the IPv4 address inside: judge that address instead (::7f00:1 is 127.0.0.1).
    if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) {
      const [hi, lo] = (addr as ipaddr.IPv6).parts.slice(6) as [number, number];
      return hi !== 0 && isPublicAddress(`${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`);
    }
    return addr.range() === "unicast";
  } catch {
    return false;
  }
}

/**
 * The host a URL really names, in one canonical form, so the policy cannot be passed by spelling a local host
 * another way: brackets and zone dropped from IPv6, lower case, IDNA (Unicode → punycode, as WHATWG URL
 * already does), trailing dots removed (`localhost.` is the fully qualified `localhost`), and every numeric
 * IPv4 spelling (0x7f000001, 2130706433, 127.1, 0177.0.0.1) written as dotted decimal. WHATWG URL parsing does
 * most of this for http(s) URLs; this repeats it so the policy does not depend on where a host came from.
 */
export function normaliseHost(hostname: string): string {
  let host = hostname
    .trim()
    .replace(/^\[|\]$/g, "")
    .toLowerCase();
  if (host.includes(":")) return host.replace(/%.*$/, ""); // IPv6 (a zone id names an interface, not a host)
  host = host.replace(/\.+$/, "");
  const ascii = domainToASCII(host);
  if (ascii) host = ascii;
  // ipaddr.js reads the classful and hex/octal forms inet_aton accepts; WHATWG URL does the same for URLs.
  if (ipaddr.IPv4.isValid(host)) {
    try {
      return ipaddr.IPv4.parse(host).toString();
    } catch {
      return host;
    }
  }
  return host;
}

/** Names that resolve to the machine itself or to a private network by convention, whatever DNS says. */
function isLocalName(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost") || host.endsWith(".internal") || !host.includes(".");
}

/** Checks the URL itself (create time and before every send). Returns the problem, or null. */
export function checkTargetUrl(raw: string, policy: TargetPolicy): string | null {
  if (raw.length > MAX_TARGET_URL_LENGTH) return `must be at most ${MAX_TARGET_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL such as https://example.com/hooks/herald";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https (or http outside production)";
  if (policy.requireHttps && url.protocol !== "https:") return "must use https";
  if (url.username || url.password) return "must not contain credentials; authenticate deliveries with the webhook secret instead";
  if (url.hash) return "must not contain a #fragment";
  if (!url.hostname) return "must name a host";
  const host = normaliseHost(url.hostname);
  if (!host) return "must name a host";
  if (ipaddr.isValid(host)) {
    if (!policy.allowPrivateTargets && !isPublicAddress(host)) return `points at a non-public address (${host})`;
  } else if (!policy.allowPrivateTargets && isLocalName(host)) {
    return `points at a local host name (${host})`;
  }
  return null;
}

/**
 * Resolves the host at send time and checks EVERY address it resolves to, so a name that resolved to a public
 * address at create time cannot be re-pointed at an internal one later (DNS rebinding). A residual window
 * remains between this lookup and fetch's own; docs/webhooks.md says so.
 */
export async function checkResolvedTarget(raw: string, policy: TargetPolicy): Promise<string | null> {
  const problem = checkTargetUrl(raw, policy);
  if (problem || policy.allowPrivateTargets) return problem;
  const host = normaliseHost(new URL(raw).hostname);
  if (ipaddr.isValid(host)) return null;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch (err) {
    return `host ${host} did not resolve (${(err as NodeJS.ErrnoException).code ?? "error"})`;
  }
  const bad = addresses.filter((a) => !isPublicAddress(a.address));
  if (bad.length) return `host ${host} resolves to a non-public address (${bad.map((a) => a.address).join(", ")})`;
  return null;
}
