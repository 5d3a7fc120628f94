// Docs audit: docs/developers-portal.md against the real app — how the docs become pages (heading ids, links between
// docs, raw HTML), every link of every page resolving, the downloads' validators and the rate limit over all of it.
// (Pages' headers, 304s and the downloads' bytes: test/spec/docs-portal.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { openTestApp, type TestApp } from "../support/app";

const PAGES = [
  "/developers",
  "/developers/signing",
  "/developers/idempotency",
  "/developers/sandbox",
  "/developers/webhooks",
  "/developers/errors",
  "/developers/limits",
  "/developers/sdk",
  "/developers/users",
  "/developers/salutes",
  "/developers/status",
  "/developers/api-reference",
  "/developers/changelog",
];
let h: TestApp;
let addr = 0;
/** Each request from its own address, so the per-address limit never interferes (the last test checks it). */
const fetchOne = (path: string, headers: Record<string, string> = {}) =>
  h.request(path, { headers: { "x-forwarded-for": `10.9.${++addr >> 8}.${addr & 255}`, ...headers } });
const pages: Record<string, string> = {};
beforeAll(async () => {
  // TRUST_PROXY: the client address is X-Forwarded-For's (as behind the deployment's proxy), one per request here.
  h = await openTestApp({ env: { TRUST_PROXY: "1" } });
  for (const p of PAGES) pages[p] = await (await fetchOne(p)).text();
});
afterAll(async () => {
  await h?.close();
});
const ids = (html: string) => new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!));
const hrefs = (html: string) => [...new Set([...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!.replaceAll("&amp;", "&")))];

describe("docs/developers-portal.md", () => {
  // docs/developers-portal.md:45-50 — GitHub's heading ids; links between docs lead to the page that shows them
  test("heading ids and links between docs", () => {
    expect(ids(pages["/developers/errors"]!).has("9-error-answers")).toBe(true);
    expect(ids(pages["/developers/idempotency"]!)).toContain("8-idempotency");
    const signing = hrefs(pages["/developers/signing"]!);
    expect(signing).toContain("/developers/idempotency#8-idempotency");
    expect(signing).toContain("/developers/errors#9-error-answers");
    expect(signing).toContain("/developers/downloads/herald_sign.py");
    // docs/developers-portal.md:20 — every catalog code a partner route may answer, each at #<code>
    for (const code of ["rate_limited", "replay_detected", "idempotency_replay", "unauthorized", "forbidden", "db_unavailable", "server_error"])
      expect([code, ids(pages["/developers/errors"]!).has(code)]).toEqual([code, true]);
  });

  // docs/developers-portal.md:47-56 — no link to a file a browser cannot open here; raw HTML and comments not markup
  test("every link resolves; no raw HTML", async () => {
    const bad: string[] = [];
    const seen = new Set<string>();
    for (const p of PAGES) {
      for (const href of hrefs(pages[p]!)) {
        if (/^https?:/.test(href)) continue;
        const [path, frag] = href.split("#");
        if (!path) {
          if (!ids(pages[p]!).has(frag!)) bad.push(`${p}: ${href}`);
        } else if (!path.startsWith("/")) bad.push(`${p}: ${href} (relative)`);
        else if (frag && pages[path]) {
          if (!ids(pages[path]!).has(frag)) bad.push(`${p}: ${href}`);
        } else if (!seen.has(path)) {
          seen.add(path);
          const r = await fetchOne(path);
          await r.arrayBuffer();
          if (r.status !== 200) bad.push(`${p}: ${href} (${r.status})`);
        }
      }
      if (/<(script|iframe|img|form)\b/.test(pages[p]!)) bad.push(`${p}: raw HTML`);
    }
    expect(bad).toEqual([]);
    // docs/webhooks.md carries <!-- receiver:begin --> comments: dropped from the page
    expect(pages["/developers/webhooks"]).not.toContain("receiver:begin");
  });

  // docs/developers-portal.md:24-35, 64-67 — downloads: strong ETag of the bytes, 304; the SDK's other names 404
  test("downloads: ETag of the bytes and 304; SDK tarball names", async () => {
    for (const f of ["herald_sign.py", "herald-sign.ts", "webhook-receiver.ts"]) {
      const r = await fetchOne(`/developers/downloads/${f}`);
      const bytes = new Uint8Array(await r.arrayBuffer());
      const etag = r.headers.get("etag");
      expect([f, etag]).toEqual([f, `"${createHash("sha256").update(bytes).digest("base64url")}"`]);
      const nm = await fetchOne(`/developers/downloads/${f}`, { "if-none-match": etag! });
      expect([f, nm.status, nm.headers.get("cache-control"), (await nm.text()).length]).toEqual([f, 304, "public, no-cache", 0]);
    }
    const manifest = (await (await fetchOne("/developers/sdk-manifest.json")).json()) as any;
    const tgz = await fetchOne(manifest.download_path);
    expect(
      createHash("sha256")
        .update(new Uint8Array(await tgz.arrayBuffer()))
        .digest("hex"),
    ).toBe(manifest.sha256);
    const nf = (await (await fetchOne("/developers/sdk/nope.tgz")).json()) as any;
    expect(nf.error).toBe("not_found");
  });

  // docs/developers-portal.md:67-69 — pages, downloads and /api/docs share the public per-address limit
  test("the public per-address limit covers the portal and the reference", async () => {
    const me = { "x-forwarded-for": "10.200.0.1" };
    let status = 0;
    let n = 0;
    for (; n < 100 && status !== 429; n++) {
      const r = await h.request(n % 2 ? "/developers/downloads/herald_sign.py" : "/developers/signing", { headers: me });
      status = r.status;
      await r.arrayBuffer();
    }
    expect(status).toBe(429);
    expect(n).toBe(91);
    const docs = await h.request("/api/docs", { headers: me });
    expect([docs.status, docs.headers.get("retry-after") !== null]).toEqual([429, true]);
  });
});
