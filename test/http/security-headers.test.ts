import { afterEach, describe, expect, test } from "bun:test";
import { nativeRedirectRoutes } from "../../src/audio-share/redirect";
import { installNativeRoutes } from "../../src/http/native-routes";
import { nativeHealthRoutes } from "../../src/system/health";
import { openTestApp, type TestApp } from "../support/app";
import { BROWSER_ACCEPT } from "../support/console";
import { createAdminToken } from "../support/partner";

// Security headers (docs/http-conventions.md, "Security headers"), over real HTTP on 127.0.0.1 as `herald serve`
// listens (the native /healthz and short-link routes in front of Elysia): a crawl of one URL of every kind of answer —
// JSON, CSV, text, Markdown, SVG, PNG, a redirect, refusals of every kind, 304s, and every kind of HTML page — each
// must carry `X-Content-Type-Options: nosniff`; every HTML page also its Content-Security-Policy, `X-Frame-Options:
// DENY` and a Referrer-Policy, with no page allowed a script from elsewhere. In production every one of them also
// carries Strict-Transport-Security, and outside production none does.

let h: TestApp | undefined;
afterEach(async () => {
  h?.app.server?.stop(true);
  await h?.close();
  h = undefined;
});

const PRODUCTION = { NODE_ENV: "production", HERALD_MASTER_KEY: "ef".repeat(32), PUBLIC_BASE_URL: "https://herald.example.com" };

async function serve(env: Record<string, string> = {}): Promise<{ base: string; auth: Record<string, string> }> {
  h = await openTestApp({ env });
  installNativeRoutes(h.app, { ...nativeRedirectRoutes(h.ctx), ...nativeHealthRoutes(h.ctx) });
  h.app.listen({ hostname: "127.0.0.1", port: 0 });
  return { base: `http://127.0.0.1:${h.app.server!.port}`, auth: { authorization: `Bearer ${await createAdminToken(h)}` } };
}

interface Probe {
  what: string;
  path: string;
  init?: RequestInit;
  status: number;
  type: string | null;
}

const html = (what: string, path: string, status = 200, headers: Record<string, string> = {}): Probe => ({
  what,
  path,
  init: { headers: { accept: BROWSER_ACCEPT, ...headers } },
  status,
  type: "text/html",
});

/** Every HTML page's CSP: nothing by default, no framing, no <base>, and scripts only from Herald itself. */
function expectPageHeaders(what: string, res: Response) {
  const csp = res.headers.get("content-security-policy") ?? "";
  const directives = new Map(csp.split(/;\s*/).map((d) => [d.split(" ")[0]!, d.split(" ").slice(1)] as const));
  expect({ what, default: directives.get("default-src") }).toEqual({ what, default: ["'none'"] });
  expect({ what, frames: directives.get("frame-ancestors"), base: directives.get("base-uri") }).toEqual({ what, frames: ["'none'"], base: ["'none'"] });
  // No source names another origin, and no inline script runs unless named by its hash.
  for (const [name, sources] of directives) {
    for (const s of sources)
      expect({ what, name, source: s }).toEqual({
        what,
        name,
        source: expect.stringMatching(/^('self'|'none'|'unsafe-inline'|'sha256-[A-Za-z0-9+/=]+'|data:|blob:)$/),
      });
  }
  expect({ what, inlineScripts: (directives.get("script-src") ?? []).includes("'unsafe-inline'") }).toEqual({ what, inlineScripts: false });
  expect({ what, frame: res.headers.get("x-frame-options"), referrer: res.headers.get("referrer-policy") }).toEqual({
    what,
    frame: "DENY",
    referrer: expect.stringMatching(/^(same-origin|no-referrer)$/),
  });
}

/** One URL of every kind of answer, on the server at `base`. */
async function everyKind(base: string, auth: Record<string, string>): Promise<Probe[]> {
  const docs = await fetch(`${base}/api/docs`);
  const openapi = await fetch(`${base}/api/openapi.json`);
  const tooBig = { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(h!.ctx.config.maxBodyBytes + 1) };
  return [
    // JSON and other documents, through the native door and through Elysia.
    { what: "native /healthz", path: "/healthz", status: 200, type: "application/json" },
    { what: "JSON", path: "/api/public/system-status", status: 200, type: "application/json" },
    { what: "JSON with include_meta", path: "/developers/deprecations.json?include_meta=1", status: 200, type: "application/json" },
    { what: "CSV", path: "/transparency/wallet-concentration.csv", status: 200, type: "text/csv" },
    { what: "Markdown", path: "/developers/deprecations-playbook.md", status: 200, type: "text/markdown" },
    { what: "RSS", path: "/status/feed.rss", status: 200, type: "application/rss+xml" },
    { what: "YAML", path: "/api/openapi.yaml", status: 200, type: null },
    { what: "metrics text", path: "/metrics", init: { headers: auth }, status: 200, type: "text/plain" },
    { what: "SVG", path: "/status/badge/overall.svg", status: 200, type: "image/svg+xml" },
    { what: "PNG", path: "/admin/ops/403-digest/probe-trend.png", init: { headers: auth }, status: 200, type: "image/png" },
    { what: "script bundle", path: "/api/docs/assets/swagger-ui-bundle.js", status: 200, type: "text/javascript" },
    // 304s: a page's and a document's validator sent back.
    { what: "304 of a page", path: "/api/docs", init: { headers: { "if-none-match": docs.headers.get("etag")! } }, status: 304, type: null },
    { what: "304 of a document", path: "/api/openapi.json", init: { headers: { "if-none-match": openapi.headers.get("etag")! } }, status: 304, type: null },
    // Refusals: before routing (413, 414), in routing (404, 405), validation (400), authentication (403), the native door's 404.
    { what: "404", path: "/no-such-route", status: 404, type: "application/json" },
    { what: "405", path: "/healthz", init: { method: "DELETE" }, status: 405, type: "application/json" },
    { what: "400", path: "/status/badge/overall.svg?window=9y", status: 400, type: "application/json" },
    { what: "403", path: "/admin/backups", status: 403, type: "application/json" },
    { what: "413", path: "/api/canary/echo", init: tooBig, status: 413, type: "application/json" },
    { what: "414", path: `/api/public/system-status?x=${"a".repeat(9000)}`, status: 414, type: "application/json" },
    { what: "native short link 404 (JSON)", path: "/s/audio/aaaaaaaaaaaaaaaa", status: 404, type: "application/json" },
    { what: "303 to sign-in", path: "/admin/ops/config", init: { headers: { accept: BROWSER_ACCEPT }, redirect: "manual" }, status: 303, type: null },
    // Every kind of HTML page.
    html("front door", "/"),
    html("status page", "/status"),
    html("API reference", "/api/docs"),
    html("Swagger UI", "/api/docs/swagger"),
    html("sign-in form", "/admin/sign-in"),
    html("console page", "/admin/ops/config", 200, auth),
    html("console page with the bearer token", "/admin/console/partners", 200, auth),
    html("donation claim page", `/claim/dc_${"a".repeat(32)}`, 404),
    html("short link error page (native)", "/s/audio/aaaaaaaaaaaaaaaa", 404),
  ];
}

describe("security headers", () => {
  test("every kind of answer carries X-Content-Type-Options: nosniff; every HTML page its CSP, X-Frame-Options and Referrer-Policy", async () => {
    const { base, auth } = await serve();
    const missing: string[] = [];
    for (const p of await everyKind(base, auth)) {
      const res = await fetch(base + p.path, { redirect: "manual", ...p.init });
      await res.arrayBuffer();
      expect({ what: p.what, status: res.status }).toEqual({ what: p.what, status: p.status });
      if (p.type) expect({ what: p.what, type: res.headers.get("content-type") }).toEqual({ what: p.what, type: expect.stringContaining(p.type) });
      if (res.headers.get("x-content-type-options") !== "nosniff") missing.push(p.what);
      if (res.headers.get("content-type")?.startsWith("text/html")) expectPageHeaders(p.what, res);
      // Outside production, no HSTS (http://localhost must keep working).
      expect({ what: p.what, hsts: res.headers.get("strict-transport-security") }).toEqual({ what: p.what, hsts: null });
    }
    expect(missing).toEqual([]);
  });

  test("in production every kind of answer carries Strict-Transport-Security: max-age=31536000, the native routes' too", async () => {
    const { base, auth } = await serve(PRODUCTION);
    const probes = await everyKind(base, auth);
    for (const p of probes) {
      const res = await fetch(base + p.path, { redirect: "manual", ...p.init });
      await res.arrayBuffer();
      expect({ what: p.what, status: res.status, hsts: res.headers.get("strict-transport-security") }).toEqual({
        what: p.what,
        status: p.status,
        hsts: "max-age=31536000",
      });
    }
    // A short link that is followed (the native redirect's hot path), and the players' mini-app.
    const link = await fetch(`${base}/api/public/audio-share-links?track_url=/t/1&use_short=1`);
    expect([link.status, link.headers.get("strict-transport-security")]).toEqual([200, "max-age=31536000"]);
    const code = ((await link.json()) as { short_code: string }).short_code;
    const followed = await fetch(`${base}/s/audio/${code}`, { redirect: "manual" });
    expect([followed.status, followed.headers.get("strict-transport-security")]).toEqual([302, "max-age=31536000"]);
    const app = await fetch(`${base}/app`);
    expect([app.status, app.headers.get("strict-transport-security")]).toEqual([200, "max-age=31536000"]);
  });

  test("the console, the public pages and a claim page are held to the same strict policy; the API reference allows only its own scripts", async () => {
    const { base, auth } = await serve();
    const csp = async (path: string, headers: Record<string, string> = {}) =>
      (await fetch(base + path, { headers: { accept: BROWSER_ACCEPT, ...headers } })).headers.get("content-security-policy");
    const strict = "default-src 'none'; style-src 'unsafe-inline'";
    const tail = "frame-ancestors 'none'; base-uri 'none'";
    expect(await csp("/admin/ops/config", auth)).toBe(`${strict}; img-src 'self'; form-action 'self'; ${tail}`);
    expect(await csp("/admin/sign-in")).toBe(`${strict}; img-src 'self'; form-action 'self'; ${tail}`);
    expect(await csp("/status")).toBe(`${strict}; img-src 'self'; form-action 'none'; ${tail}`);
    expect(await csp(`/claim/dc_${"a".repeat(32)}`)).toBe(`${strict}; form-action 'none'; ${tail}`);
    expect(await csp("/s/audio/aaaaaaaaaaaaaaaa")).toBe(`${strict}; form-action 'none'; ${tail}`);
    for (const page of ["/api/docs", "/api/docs/swagger"]) {
      const policy = (await csp(page))!;
      expect(policy).toMatch(/^default-src 'none'; script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')+; /);
      expect(policy).toContain("connect-src 'self'");
      expect(policy).toEndWith(`form-action 'none'; ${tail}`);
    }
    // The pages whose URL is a secret send no referrer at all; the others only to Herald itself.
    const referrer = async (path: string) => (await fetch(base + path, { headers: { accept: BROWSER_ACCEPT } })).headers.get("referrer-policy");
    expect(await referrer(`/claim/dc_${"a".repeat(32)}`)).toBe("no-referrer");
    expect(await referrer("/s/audio/aaaaaaaaaaaaaaaa")).toBe("no-referrer");
    expect(await referrer("/status")).toBe("same-origin");
    expect(await referrer("/api/docs")).toBe("same-origin");
  });

  test("the players' mini-app: its own script and Telegram's, calls to Herald, framed only by Telegram's web client", async () => {
    const { base } = await serve();
    const page = await fetch(`${base}/app`);
    const html = await page.text();
    expect(page.headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self' https://telegram.org; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors https://web.telegram.org; base-uri 'none'",
    );
    // X-Frame-Options cannot name a site that may frame the page: the CSP's frame-ancestors decides alone.
    expect(page.headers.get("x-frame-options")).toBeNull();
    expect([page.headers.get("referrer-policy"), page.headers.get("x-content-type-options")]).toEqual(["no-referrer", "nosniff"]);
    // No inline script: the one script is Herald's file, named by its hash, cached for a year; the page revalidates.
    expect(html).not.toMatch(/<script>/);
    const src = /<script src="(\/app\/assets\/app-[0-9a-f]{16}\.js)" defer><\/script>/.exec(html)![1]!;
    const script = await fetch(base + src);
    expect([script.status, script.headers.get("content-type"), script.headers.get("cache-control")]).toEqual([
      200,
      "text/javascript; charset=utf-8",
      "public, max-age=31536000, immutable",
    ]);
    expect((await script.text()).length).toBeGreaterThan(1000);
    expect(page.headers.get("cache-control")).toBe("no-cache");
    const again = await fetch(`${base}/app`, { headers: { "if-none-match": page.headers.get("etag")! } });
    expect(again.status).toBe(304);
    const other = await fetch(`${base}/app/assets/app-0000000000000000.js`);
    expect([other.status, ((await other.json()) as { error: string }).error]).toEqual([404, "not_found"]);
  });
});
