// Escaping for the server-rendered documents (HTML page, RSS, SVG). Every value that reaches markup goes
// through here: check summaries quote RPC errors and job errors, which are not ours to trust.

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export const escapeXml = (s: string): string => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** XML 1.0 forbids most control characters even escaped; an RSS parser would reject the feed. */
export const xmlText = (s: string): string => escapeXml(s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, ""));

/** RFC 822 date as RSS 2.0 wants it (toUTCString gives "Thu, 01 Jan 2026 00:00:00 GMT"). */
export const rfc822 = (iso: string | number | Date): string => new Date(iso).toUTCString();
