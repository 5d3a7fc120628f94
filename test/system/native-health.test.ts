import { afterEach, describe, expect, test } from "bun:test";
import { MAX_TARGET_CHARS } from "../../src/http/core";
import { installNativeRoutes } from "../../src/http/native-routes";
import { nativeHealthRoutes } from "../../src/system/health";
import { openTestApp, type TestApp } from "../support/app";

// `herald serve` answers GET/HEAD /healthz through a native Bun route in front of Elysia (src/system/health.ts).
// These tests listen on a real port, as serve does, and hold that door to the Elysia route's answers.

let h: TestApp | undefined;
let server: { stop(): unknown } | undefined;
afterEach(async () => {
  server?.stop();
  server = undefined;
  await h?.close();
  h = undefined;
});

async function listen(): Promise<{ h: TestApp; base: string }> {
  h = await openTestApp();
  installNativeRoutes(h.app, nativeHealthRoutes(h.ctx));
  h.app.listen({ port: 0, hostname: "127.0.0.1" });
  server = h.app.server!;
  return { h, base: `http://127.0.0.1:${h.app.server!.port}` };
}

/** What a client sees of an answer; the uptime is a number on both doors (its value moves with the clock). */
async function seen(res: Response) {
  const text = await res.text();
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  if (body && typeof body.uptime_seconds === "number") body.uptime_seconds = "number";
  return { status: res.status, contentType: res.headers.get("content-type"), requestId: res.headers.get("x-request-id"), body };
}

describe("the native /healthz route", () => {
  test("answers like the Elysia route: body, content type, the client's request id, include_meta", async () => {
    const { h, base } = await listen();
    const cases: Array<[string, Record<string, string>]> = [
      ["/healthz", { "x-request-id": "probe-request-0001" }],
      ["/healthz?include_meta=1", { "x-request-id": "probe-request-0002" }],
      ["/healthz?include_meta=0", { "x-request-id": "probe-request-0003" }],
    ];
    for (const [path, headers] of cases) {
      const native = await seen(await fetch(base + path, { headers }));
      const elysia = await seen(await h.request(path, { headers }));
      if (native.body?.meta) (native.body.meta as Record<string, unknown>).generated_at_utc = "time";
      if (elysia.body?.meta) (elysia.body.meta as Record<string, unknown>).generated_at_utc = "time";
      expect({ path, ...native }).toEqual({ path, ...elysia });
    }
    const fresh = await fetch(`${base}/healthz`);
    expect(fresh.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{24}$/);
    expect(await fresh.json()).toEqual({ success: true, status: "up", version: expect.any(String), uptime_seconds: expect.any(Number) });
  });

  test("HEAD answers 200 without a body; other methods reach Elysia's 405 envelope", async () => {
    const { base } = await listen();
    const head = await fetch(`${base}/healthz`, { method: "HEAD" });
    expect([head.status, await head.text(), head.headers.get("x-request-id") !== null]).toEqual([200, "", true]);
    const post = await fetch(`${base}/healthz`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect(((await post.json()) as { error: string }).error).toBe("method_not_allowed");
  });

  test("the size guards hold at this door too: a 20 KB query is the JSON 414, a Content-Length over the limit 413", async () => {
    const { h, base } = await listen();
    const long = `/healthz?q=${"x".repeat(MAX_TARGET_CHARS)}`;
    const native = await fetch(base + long, { headers: { "x-request-id": "probe-long-0001" } });
    const elysia = await h.request(long, { headers: { "x-request-id": "probe-long-0001" } });
    for (const res of [native, elysia]) {
      expect([res.status, res.headers.get("x-request-id")]).toEqual([414, "probe-long-0001"]);
      expect(await res.json()).toMatchObject({ success: false, error: "uri_too_long", request_id: "probe-long-0001" });
    }
    // A GET announcing a body over the limit (Bun reads no GET body; the header alone is refused, as in the core).
    const big = await h.request("/healthz", { headers: { "content-length": String(h.ctx.config.maxBodyBytes + 1) } });
    expect(big.status).toBe(413);
    const nativeBig = nativeHealthRoutes(h.ctx)["/healthz"].GET(
      new Request(`${base}/healthz`, { headers: { "content-length": String(h.ctx.config.maxBodyBytes + 1) } }),
      h.app.server!,
    );
    expect([nativeBig.status, ((await nativeBig.json()) as { error: string }).error]).toEqual([413, "payload_too_large"]);
    expect(await h.ctx.metrics.render()).toContain('herald_http_requests_total{method="GET",route="/healthz",status="414"} 1');
  });

  test("each probe counts in /metrics and writes no request_log row", async () => {
    const { h, base } = await listen();
    for (let i = 0; i < 3; i++) expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await fetch(`${base}/healthz`, { method: "HEAD" });
    const metrics = await h.ctx.metrics.render();
    expect(metrics).toContain('herald_http_requests_total{method="GET",route="/healthz",status="200"} 3');
    expect(metrics).toContain('herald_http_requests_total{method="HEAD",route="/healthz",status="200"} 1');
    await h.ctx.requestLog.flush();
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM request_log WHERE route = '/healthz'")).toEqual({ n: 0 });
  });
});
