import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

export const MAX_TARGET_URL_LENGTH = 2048;

export interface TargetPolicy {
  allowPrivateTargets: boolean;
  requireHttps: boolean;
}

/**
 * Only globally routable unicast addresses are public. Everything else — loopback, RFC 1918, link-local
 * (which holds cloud metadata at 169.254.169.254), CGNAT, unique-local IPv6, multicast, reserved — could reach
 * something inside the operator's network, so a partner may not aim deliveries at it.
 */
export function isPublicAddress(ip: string): boolean {
  try {
    const addr = ipaddr.process(ip);
    return addr.range() === "unicast";
  } catch {
    return false;
  }
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
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(host)) {
    if (!policy.allowPrivateTargets && !isPublicAddress(host)) return `points at a non-public address (${host})`;
  } else if (!policy.allowPrivateTargets && (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".internal") || !host.includes("."))) {
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
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, "");
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
