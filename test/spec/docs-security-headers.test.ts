// Docs audit: docs/http-conventions.md "Security headers" for the pages it names.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { openMessengerApp } from "../messenger/support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const html = { accept: "text/html" };

describe("docs/http-conventions.md — Security headers", () => {
  // docs/http-conventions.md:222-232
  test("short-link page, mini-app and API reference policies", async () => {
    h = await openMessengerApp();
    const b = (await h.json("/api/public/audio-share-links?track_url=/t&use_short=1&expires_in=60")).body;
    h.clock.advanceSeconds(61);
    const gone = await h.request(`/s/audio/${b.short_code}`, { headers: html });
    expect(gone.status).toBe(410);
    expect(gone.headers.get("content-type")).toContain("text/html");
    expect(gone.headers.get("referrer-policy")).toBe("no-referrer");
    expect(gone.headers.get("x-frame-options")).toBe("DENY");
    expect(gone.headers.get("content-security-policy")).toContain("default-src 'none'");
    const app = await h.request("/app", { headers: html });
    expect(app.status).toBe(200);
    const csp = app.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self' https://telegram.org");
    expect(csp).toContain("frame-ancestors https://web.telegram.org");
    expect(app.headers.get("x-frame-options")).toBeNull();
    expect(app.headers.get("referrer-policy")).toBe("no-referrer");
    const docs = await h.request("/api/docs", { headers: html });
    const dcsp = docs.headers.get("content-security-policy") ?? "";
    expect(dcsp).toContain("script-src 'self'");
    expect(dcsp).toContain("connect-src 'self'");
    expect(dcsp).toContain("frame-ancestors 'none'");
    const signIn = await h.request("/admin/sign-in", { headers: html });
    expect(signIn.headers.get("content-security-policy")).toContain("form-action 'self'");
    const status = await h.request("/status", { headers: html });
    expect(status.headers.get("content-security-policy")).toContain("img-src 'self'");
    expect(status.headers.get("content-security-policy")).toContain("form-action 'none'");
  });

  // docs/http-conventions.md:234-240 — HSTS on every answer in production
  test("Strict-Transport-Security in production", async () => {
    h = await openTestApp({ env: { NODE_ENV: "production", PUBLIC_BASE_URL: "https://herald.example", HERALD_MASTER_KEY: "a".repeat(64) } });
    for (const p of ["/healthz", "/api/public-stats", "/nope", "/status"]) {
      const r = await h.request(p);
      expect([p, r.headers.get("strict-transport-security")]).toEqual([p, "max-age=31536000"]);
    }
  });
});
