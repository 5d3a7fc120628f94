// Every global hook of the composed app carries a scope decision (src/http/hook-scope.ts): kept off the routes it
// does not serve (`scopedHook`), or declared for every route with its reason (`onEveryRoute`). A hook added to every
// route without that thought costs every request — the short-link redirect once lost a tenth of its speed so
// (issue 29) — so an undecided one fails here, and a planted one proves the check can fail.
import { afterEach, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { undecidedGlobalHooks } from "../../src/http/hook-scope";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

type Hooks = Record<string, Array<{ fn: { name: string } }> | undefined>;
const routeHooks = (app: TestApp["app"], method: string, path: string): Hooks =>
  ((app as unknown as { router: { history: Array<{ method: string; path: string; hooks: Hooks }> } }).router.history.find(
    (r) => r.method === method && r.path === path,
  )?.hooks ?? {}) as Hooks;
const names = (hooks: Hooks, event: string) => (hooks[event] ?? []).map((x) => x.fn.name);

describe("global hooks", () => {
  test("every global hook of the app has a scope decision", async () => {
    h = await openTestApp();
    expect(undecidedGlobalHooks((h.app as unknown as { event: Record<string, unknown> }).event)).toEqual([]);
  });

  test("a global hook added without a decision is reported by name", () => {
    const planted = new Elysia().onAfterHandle({ as: "global" }, function addedWithoutThought() {}).get("/x", () => "x");
    expect(undecidedGlobalHooks((planted as unknown as { event: Record<string, unknown> }).event)).toEqual(["afterHandle: addedWithoutThought"]);
  });

  test("the body hooks are off GET and HEAD routes (their handlers stay synchronous) and on every route that takes a body", async () => {
    h = await openTestApp();
    const healthz = routeHooks(h.app, "GET", "/healthz");
    expect(names(healthz, "parse")).toEqual([]);
    expect(names(healthz, "beforeHandle")).not.toContain("parseErrorReported");
    const credit = routeHooks(h.app, "POST", "/api/salutes/credit");
    expect(names(credit, "parse")).toContain("bodyParsed");
    expect(names(credit, "beforeHandle")).toContain("parseErrorReported");
    for (const hooks of [healthz, credit]) expect(names(hooks, "afterHandle")).toContain("includeMetaAdded");
    // A probe is counted when its answer is made (no request-log row); the rest are logged when theirs is, by the
    // first mapResponse hook, and no route pays for an after-response hook of the core (a setImmediate each).
    expect(names(healthz, "afterResponse")).toEqual([]);
    expect(names(healthz, "afterHandle")).toContain("probeCounted");
    expect(names(healthz, "mapResponse")).not.toContain("requestAnswered");
    expect(names(credit, "mapResponse")[0]).toBe("requestAnswered");
    expect(names(credit, "afterHandle")).not.toContain("probeCounted");
    const policy = routeHooks(h.app, "GET", "/api/public/system-status/policy");
    expect(names(policy, "mapResponse")).toEqual(["requestAnswered", "compressionMapped"]);
    expect(names(policy, "afterResponse")).toEqual([]);
  });

  test("probes are still counted in /metrics, answered or refused, and never logged", async () => {
    h = await openTestApp();
    const token = await createAdminToken(h);
    for (let i = 0; i < 3; i++) expect((await h.request("/healthz")).status).toBe(200);
    expect((await h.request("/metrics")).status).toBe(403);
    const metrics = await (await h.request("/metrics", { headers: { authorization: `Bearer ${token}` } })).text();
    expect(metrics).toContain('herald_http_requests_total{method="GET",route="/healthz",status="200"} 3');
    expect(metrics).toContain('herald_http_requests_total{method="GET",route="/metrics",status="403"} 1');
    await h.ctx.requestLog.flush();
    expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_log WHERE route IN ('/healthz', '/metrics')"))!.n).toBe(0);
  });

  test("a route that takes a body still refuses a malformed one; a GET's body is still never read", async () => {
    h = await openTestApp();
    const bad = await h.json("/api/canary/echo", jsonInit("POST", "{not json"));
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_payload"]);
    const get = await h.json("/healthz", { method: "GET", headers: { "content-type": "application/json" } });
    expect(get.status).toBe(200);
  });
});
