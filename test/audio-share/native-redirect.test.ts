import { afterEach, describe, expect, test } from "bun:test";
import { installNativeRedirects } from "../../src/audio-share/redirect";
import { MAX_TARGET_CHARS } from "../../src/http/core";
import type { TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { API, audioApp, BROWSER_UA, jsonPost, shortLink } from "./support";

// `herald serve` answers GET/HEAD /s/audio/{code} through a native Bun route in front of Elysia. These tests
// listen on a real port, exactly as serve does, and hold that door to the same answers as the Elysia route.

let h: TestApp;
let server: { stop(): unknown } | undefined;
afterEach(async () => {
  server?.stop();
  server = undefined;
  await h?.close();
});

function listen(): string {
  installNativeRedirects(h.app, h.ctx);
  h.app.listen({ port: 0, hostname: "127.0.0.1" });
  server = h.app.server!;
  return `http://127.0.0.1:${h.app.server!.port}`;
}

const get = (url: string, headers: Record<string, string> = {}, method = "GET") =>
  fetch(url, { method, redirect: "manual", headers: { "user-agent": BROWSER_UA, ...headers } });
const comparable = async (res: Response) => ({
  status: res.status,
  location: res.headers.get("location"),
  cacheControl: res.headers.get("cache-control"),
  contentType: res.headers.get("content-type")?.split(";")[0] ?? null,
  error: res.headers.get("content-type")?.includes("json") ? ((await res.json()) as { error: string }).error : null,
});

describe("the native redirect route", () => {
  test("answers like the Elysia route: 302, 404 JSON, 404 page, 410 after revoke", async () => {
    h = await audioApp();
    const base = listen();
    const link = await shortLink(h);
    const other = await shortLink(h);
    const cases: Array<[string, Record<string, string>]> = [
      [`/s/audio/${link.short_code}`, {}],
      ["/s/audio/aaaaaaaaaaaaaaaa", {}],
      ["/s/audio/aaaaaaaaaaaaaaaa", { accept: "text/html" }],
      ["/s/audio/not-a-code", {}],
    ];
    for (const [path, headers] of cases) {
      const native = await comparable(await get(base + path, headers));
      const elysia = await comparable(await h.request(path, { headers: { "user-agent": BROWSER_UA, ...headers } }));
      expect({ path, ...native }).toEqual({ path, ...elysia });
    }
    await h.json(
      "/admin/ops/audio-share-revocations/revoke",
      jsonPost({ short_code: other.short_code, reason: "test" }, { authorization: `Bearer ${await createAdminToken(h)}` }),
    );
    const gone = await get(`${base}/s/audio/${other.short_code}`);
    expect(gone.status).toBe(410);
    const body = (await gone.json()) as { error: string; request_id: string };
    expect(body.error).toBe("short_link_revoked");
    expect(body.request_id).toBe(gone.headers.get("x-request-id")!);
  });

  test("request id, hit counting and metrics work through the native route; no request_log row per click", async () => {
    h = await audioApp();
    const base = listen();
    const link = await shortLink(h);
    const res = await get(`${base}/s/audio/${link.short_code}`, { "x-request-id": "client-req-0001" });
    expect([res.status, res.headers.get("location"), res.headers.get("x-request-id")]).toEqual([302, "http://localhost:3000/tracks/42", "client-req-0001"]);
    const head = await get(`${base}/s/audio/${link.short_code}`, {}, "HEAD");
    expect(head.status).toBe(302);
    await get(`${base}/s/audio/${link.short_code}`, { "user-agent": "Slackbot-LinkExpanding 1.0" });
    const stats = await h.json(`${API}/stats?code=${link.short_code}`);
    expect(stats.body.totals).toEqual({ clicks: 1, unique_clicks: 1, bot_hits: 1, head_hits: 1 });
    // Clicks are counted in the link's stats and in /metrics, not one request_log row each (docs/audio-share.md).
    await h.ctx.requestLog.flush();
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM request_log WHERE route = '/s/audio/:code'")).toEqual({ n: 0 });
    expect(await h.ctx.metrics.render()).toContain('route="/s/audio/:code",status="302"');
  });

  test("the public per-IP rate limit applies on the native route too, with the standard headers", async () => {
    h = await audioApp({ RATE_LIMIT_PUBLIC_API_PER_MIN: "3" });
    const base = listen();
    const link = await shortLink(h); // 1 of 3
    const ok = await get(`${base}/s/audio/${link.short_code}`);
    expect([ok.status, ok.headers.get("x-ratelimit-limit"), ok.headers.get("x-ratelimit-remaining")]).toEqual([302, "3", "1"]);
    await get(`${base}/s/audio/${link.short_code}`);
    const limited = await get(`${base}/s/audio/${link.short_code}`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBeString();
    expect(((await limited.json()) as { error: string }).error).toBe("rate_limited");
  });

  test("the size guards hold at this door too: a request target over the limit is the JSON 414, not a redirect", async () => {
    h = await audioApp();
    const base = listen();
    const link = await shortLink(h);
    const res = await get(`${base}/s/audio/${link.short_code}?q=${"x".repeat(MAX_TARGET_CHARS)}`);
    expect([res.status, res.headers.get("location")]).toEqual([414, null]);
    expect(((await res.json()) as { error: string }).error).toBe("uri_too_long");
    const stats = await h.json(`${API}/stats?code=${link.short_code}`);
    expect(stats.body.totals.clicks).toBe(0);
  });

  test("QR codes and the API still go through Elysia on the same server", async () => {
    h = await audioApp();
    const base = listen();
    const link = await shortLink(h);
    expect((await fetch(`${base}/s/audio/${link.short_code}/qr.svg`)).headers.get("content-type")).toContain("svg");
    expect((await fetch(`${base}${API}/health`)).status).toBe(200);
  });
});
