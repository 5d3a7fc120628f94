// Docs audit: docs/developers-portal.md, docs/api-reference.md (front door, documents) and docs/getting-started.md
// against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { openTestApp, type TestApp } from "../support/app";
import { createKey } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/developers-portal.md", () => {
  // docs/developers-portal.md:7-21, 60-70 — every page answers HTML with its headers, strong ETag, 304; other slug 404
  test("pages, headers, validators and 404", async () => {
    h = await openTestApp();
    for (const p of [
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
    ]) {
      const r = await h.request(p);
      expect([p, r.status]).toEqual([p, 200]);
      expect(r.headers.get("content-type")).toContain("text/html");
      expect(r.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(r.headers.get("content-security-policy")).not.toContain("script-src");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
      expect(r.headers.get("referrer-policy")).toBe("same-origin");
      expect([p, r.headers.get("cache-control")]).toEqual([p, "public, no-cache"]);
      expect(r.headers.get("x-ratelimit-limit")).toBe("90");
      const bytes = new Uint8Array(await r.arrayBuffer());
      const etag = r.headers.get("etag");
      expect([p, etag?.startsWith('"')]).toEqual([p, true]);
      if (p !== "/developers/changelog") expect([p, etag]).toEqual([p, `"${createHash("sha256").update(bytes).digest("base64url")}"`]);
      const nm = await h.request(p, { headers: { "if-none-match": etag! } });
      expect([p, nm.status]).toEqual([p, 304]);
    }
    const nf = await h.json("/developers/nope");
    expect([nf.status, nf.body.error]).toEqual([404, "not_found"]);
  });

  // docs/developers-portal.md:23-35 — downloads: text/plain, attachment, other names 404
  test("downloads", async () => {
    h = await openTestApp();
    for (const f of ["herald_sign.py", "herald-sign.ts", "webhook-receiver.ts"]) {
      const r = await h.request(`/developers/downloads/${f}`);
      expect([f, r.status]).toEqual([f, 200]);
      expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(r.headers.get("content-disposition")).toContain("attachment");
      expect(r.headers.get("cache-control")).toBe("public, no-cache");
    }
    const py = await (await h.request("/developers/downloads/herald_sign.py")).text();
    expect(py).toBe(await Bun.file("docs/python/herald_sign.py").text());
    const nf = await h.json("/developers/downloads/README.md");
    expect([nf.status, nf.body.error]).toEqual([404, "not_found"]);
  });
});

describe("docs/api-reference.md", () => {
  // docs/api-reference.md:6-12, 40-57 — the documents; the front door answers JSON with Vary: Accept; /admin 303
  test("front door, documents and /admin redirect", async () => {
    h = await openTestApp();
    const j = await h.json("/");
    expect(j.status).toBe(200);
    expect(j.body.links.api_reference.href).toBe("/api/docs");
    expect(j.headers.get("vary")?.toLowerCase()).toContain("accept");
    const page = await h.request("/", { headers: { accept: "text/html" } });
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("vary")?.toLowerCase()).toContain("accept");
    expect((await h.json("/?include_meta=1")).body.meta).toBeDefined();
    for (const p of [
      "/api/openapi.json",
      "/api/openapi.yaml",
      "/api/openapi/partners.json",
      "/api/openapi/public.json",
      "/api/openapi/mini-app.json",
      "/api/openapi/operators.json",
      "/api/openapi-transparency.yaml",
      "/api/docs",
      "/api/docs/swagger",
    ]) {
      const r = await h.request(p);
      expect([p, r.status]).toEqual([p, 200]);
    }
    const y = await h.request("/api/openapi.yaml");
    const etag = y.headers.get("etag")!;
    expect((await h.request("/api/openapi.yaml", { headers: { "if-none-match": etag } })).status).toBe(304);
    for (const p of ["/admin", "/admin/"]) {
      const r = await h.request(p);
      expect([p, r.status, r.headers.get("location")]).toEqual([p, 303, "/admin/console"]);
    }
  });
});

describe("docs/getting-started.md", () => {
  // docs/getting-started.md:21-26 and the spec's quickstart order — verify-key preview
  test("quickstart verify-key", async () => {
    h = await openTestApp();
    const live = await createKey(h);
    const sbx = await createKey(h, { mode: "sandbox" });
    const l = await h.json(`/api/public/quickstart/verify-key?api_key=${live.keyId}`);
    expect(l.status).toBe(200);
    expect(JSON.stringify(l.body)).toContain("/api/partner/capabilities");
    const s = await h.json(`/api/public/quickstart/verify-key?api_key=${sbx.keyId}`);
    expect(JSON.stringify(s.body)).toContain("/api/partner/sandbox/verify");
    const u = await h.json("/api/public/quickstart/verify-key?api_key=hk_live_nope");
    expect(u.status).toBeLessThan(500);
  });
});
