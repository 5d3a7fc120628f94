import ipaddr from "ipaddr.js";
import { commaList } from "../config/parse";

/** A parsed allow-list entry: a single address is a /32 (IPv4) or /128 (IPv6) range. */
type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses "203.0.113.7, 2001:db8::/32, 10.0.0.0/8"; returns the bad entries instead of guessing. */
export function parseAllowList(list: string): { ranges: Range[]; canonical: string[]; invalid: string[] } {
  const ranges: Range[] = [];
  const canonical: string[] = [];
  const invalid: string[] = [];
  for (const raw of commaList(list)) {
    try {
      const range = raw.includes("/")
        ? ipaddr.parseCIDR(raw)
        : (() => {
            const a = ipaddr.parse(raw);
            return [a, a.kind() === "ipv4" ? 32 : 128] as Range;
          })();
      ranges.push(range);
      canonical.push(`${range[0].toString()}/${range[1]}`);
    } catch {
      invalid.push(raw);
    }
  }
  return { ranges, canonical, invalid };
}

/**
 * True when `ip` falls in any range. IPv4-mapped IPv6 (::ffff:203.0.113.7, how dual-stack sockets report IPv4
 * clients) is compared as IPv4, so an IPv4 allow-list works behind either socket kind.
 */
export function ipAllowed(ip: string, ranges: Range[]): boolean {
  if (ranges.length === 0) return true;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return false;
  }
  for (const [net, bits] of ranges) {
    if (addr.kind() === net.kind() && addr.match([net, bits] as never)) return true;
  }
  return false;
}
