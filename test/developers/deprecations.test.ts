import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Elysia } from "elysia";
import Parser from "rss-parser";
import { buildGuards } from "../../src/auth/guards";
import { developerRoutes } from "../../src/developers/routes";
import { loadRegistry, parseRegistry, type Registry } from "../../src/developers/registry";
import { httpCore, RequestStates } from "../../src/http/core";
import { RouteIndex } from "../../src/http/routes/route-index";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";

// The developer portal over one deprecation registry: the shipped (empty) one through the real app, and a
// non-empty fixture through the same routes mounted on the real HTTP core.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const FIXTURE = readFileSync(join(import.meta.dir, "fixtures", "deprecations.yaml"), "utf8");
const NOW = "2026-04-24T12:00:00.000Z";
const BASE = "http://localhost:3000";

/** The developer routes over `registry`, on the real HTTP core (errors, validation, request ids). */
async function portal(registry: Registry) {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  const states = new RequestStates();
  const routes = new RouteIndex();
  const app = new Elysia({ normalize: false }).use(httpCore(h.ctx, states, routes)).use(developerRoutes(h.ctx, buildGuards(h.ctx, states), registry));
  routes.load(app.routes);
  const request = (path: string) => app.handle(new Request(`http://localhost${path}`));
  const json = async (path: string) => {
    const res = await request(path);
    return { status: res.status, body: (await res.json()) as any };
  };
  return { request, json };
}

describe("the registry file", () => {
  test("the shipped registry parses, validates, and schedules nothing (as the spec says)", () => {
    const reg = loadRegistry();
    expect(reg.deprecations).toEqual([]);
    expect(reg.policy.minimum_notice_days).toBeGreaterThanOrEqual(30);
    expect(reg.policy.reminder_days_before_sunset).toEqual([7, 1]);
  });

  test("the fixture parses and validates", () => {
    expect(parseRegistry(FIXTURE).deprecations.map((d) => d.id)).toEqual(["legacy-user-lookup", "wallet-info-v1", "future-change"]);
  });

  const broken = (mutate: (r: any) => void) => {
    const r = structuredClone(parseRegistry(FIXTURE)) as any;
    mutate(r);
    return JSON.stringify(r);
  };
  const INVALID: Array<[string, string, RegExp]> = [
    [
      "notice shorter than 30 days",
      broken((r) => (r.deprecations[0].sunset_at = "2026-03-30T00:00:00Z")),
      /legacy-user-lookup: sunset_at is less than 30 days after announced_at/,
    ],
    ["a policy below the spec's 30 days", broken((r) => (r.policy.minimum_notice_days = 29)), /minimum_notice_days/],
    ["duplicate id", broken((r) => (r.deprecations[1].id = "legacy-user-lookup")), /duplicate id/],
    ["deprecated before announced", broken((r) => (r.deprecations[0].deprecated_at = "2026-02-01T00:00:00Z")), /deprecated_at must lie between/],
    ["unknown field", broken((r) => (r.deprecations[0].sunset = "soon")), /invalid/],
    ["bad id", broken((r) => (r.deprecations[0].id = "Bad Id")), /\/deprecations\/0\/id/],
    ["no endpoints", broken((r) => (r.deprecations[0].endpoints = [])), /endpoints/],
    ["a date without time", broken((r) => (r.deprecations[0].sunset_at = "2026-05-01")), /sunset_at/],
    ["an unknown method", broken((r) => (r.deprecations[0].endpoints[0].method = "FETCH")), /method/],
  ];
  for (const [name, text, error] of INVALID) {
    test(`refused: ${name}`, () => {
      expect(() => parseRegistry(text)).toThrow(error);
    });
  }
});

describe("with the shipped (empty) registry", () => {
  test("deprecations.json, .rss, the playbook and migration status say nothing is scheduled", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const cal = await h.json("/developers/deprecations.json");
    expect(cal.status).toBe(200);
    expect(cal.body).toMatchObject({
      registry_version: 1,
      api_version: "v1",
      sunsets_scheduled: false,
      summary: "No endpoint sunsets are currently scheduled.",
      count: 0,
      deprecations: [],
    });
    expect(cal.headers.get("cache-control")).toBe("public, max-age=300");
    const feed = await new Parser().parseString(await (await h.request("/developers/deprecations.rss")).text());
    expect(feed.title).toBe("Herald API deprecations");
    expect(feed.items).toEqual([]);
    const md = await (await h.request("/developers/deprecations-playbook.md")).text();
    expect(md).toContain("No endpoint sunsets are currently scheduled.");
    expect((await h.json("/developers/migration-status.json")).body).toMatchObject({ id: null, count: 0, migrations: [] });
    expect((await h.json("/developers/migration-status.json?id=anything")).status).toBe(404);
    const sim = await h.json("/api/public/deprecations/header-simulator?endpoint=/api/partner/users");
    expect(sim.body).toMatchObject({ deprecated: false, headers: {}, id: null });
    // A bare call is an answer: nothing is scheduled.
    const bare = await h.json("/api/public/deprecations/header-simulator");
    expect([bare.status, bare.body.deprecated, bare.body.headers, bare.body.note]).toEqual([
      200,
      false,
      {},
      "No endpoint sunsets are currently scheduled, so no endpoint sends Deprecation, Sunset or deprecation Link headers. Give id or endpoint to check one.",
    ]);
  });
});

describe("with a non-empty registry (fixture)", () => {
  test("deprecations.json: announced entries only, soonest sunset first, phase, days, reminders and headers", async () => {
    const { json } = await portal(parseRegistry(FIXTURE));
    const r = await json("/developers/deprecations.json");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ registry_version: 3, sunsets_scheduled: true, count: 2 });
    expect(r.body.summary).toMatch(/^\d+ deprecations? with a scheduled sunset: /);
    const [wallet, lookup] = r.body.deprecations;
    expect(wallet).toMatchObject({ id: "wallet-info-v1", phase: "sunset", days_until_sunset: -68 }); // ⌈(Feb 15 − Apr 24 12:00) / 1 d⌉ = ⌈−68.5⌉
    expect(lookup).toEqual({
      id: "legacy-user-lookup",
      title: "GET /api/partner/user-lookup moves to /api/v2/partner/users/lookup",
      description: "The v2 lookup answers one shape for every kind of query.",
      endpoints: [{ method: "GET", path: "/api/partner/user-lookup" }],
      replacement: { method: "GET", path: "/api/v2/partner/users/lookup" },
      announced_at: "2026-03-01T00:00:00Z",
      deprecated_at: "2026-03-15T00:00:00Z",
      sunset_at: "2026-05-01T00:00:00Z",
      phase: "deprecated",
      days_until_sunset: 7, // ⌈6.5⌉
      reminders: [
        { days_before_sunset: 7, at: "2026-04-24T00:00:00.000Z", sent: true },
        { days_before_sunset: 1, at: "2026-04-30T00:00:00.000Z", sent: false },
      ],
      migration_guide: "/developers/deprecations-playbook.md",
      headers: {
        Deprecation: "@1773532800", // 2026-03-15T00:00:00Z
        Sunset: "Fri, 01 May 2026 00:00:00 GMT",
        Link: `<${BASE}/developers/deprecations.json#legacy-user-lookup>; rel="deprecation"; type="application/json", <${BASE}/developers/deprecations-playbook.md>; rel="sunset"`,
      },
    });
    expect(r.body.deprecations.map((d: any) => d.id)).not.toContain("future-change");
  });

  test("deprecations.rss is valid RSS 2.0 with one item per announced entry", async () => {
    const { request } = await portal(parseRegistry(FIXTURE));
    const res = await request("/developers/deprecations.rss");
    expect(res.headers.get("content-type")).toBe("application/rss+xml; charset=utf-8");
    const feed = await new Parser().parseString(await res.text());
    expect(feed.items.map((i) => i.guid)).toEqual(["herald-deprecation-wallet-info-v1", "herald-deprecation-legacy-user-lookup"]);
    expect(feed.items[0]!.title).toBe("Wallet info and verification v1 (sunset 2026-02-15)");
    expect(feed.items[0]!.content).toContain("<angle brackets> & ampersands");
    expect(new Date(feed.items[1]!.pubDate!).toISOString()).toBe("2026-03-01T00:00:00.000Z");
    expect(feed.items[1]!.link).toBe(`${BASE}/developers/deprecations.json#legacy-user-lookup`);
  });

  test("the playbook's Markdown and JSON agree", async () => {
    const { request, json } = await portal(parseRegistry(FIXTURE));
    const pb = (await json("/developers/deprecations-playbook.json")).body;
    const md = await (await request("/developers/deprecations-playbook.md")).text();
    expect(pb.steps.map((s: any) => s.title)).toEqual([
      "Confirm the new paths and auth",
      "Validate the signing format",
      "Test with a new key and idempotency headers",
      "Roll out with monitoring and a rollback plan",
    ]);
    for (const s of pb.steps) expect(md).toContain(`${s.step}. **${s.title}.**`);
    expect(pb.scheduled.map((s: any) => s.id)).toEqual(["wallet-info-v1", "legacy-user-lookup"]);
    for (const s of pb.scheduled) expect(md).toContain(`\`${s.id}\` (${s.phase}, sunset ${s.sunset_at})`);
    expect(pb.notice).toMatchObject({ minimum_notice_days: 30, webhook_schema_notice_days: [30, 14, 7, 1] });
    expect(md).toContain("notices 30, 14, 7, 1 days before");
  });

  test("migration-status.json: one entry by id, all without, unknown id 404, future ids hidden", async () => {
    const { json } = await portal(parseRegistry(FIXTURE));
    const one = await json("/developers/migration-status.json?id=legacy-user-lookup");
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      id: "legacy-user-lookup",
      count: 1,
      migrations: [{ id: "legacy-user-lookup", phase: "deprecated", days_until_sunset: 7, action_required: "migrate before sunset_at" }],
    });
    expect((await json("/developers/migration-status.json")).body.count).toBe(2);
    // A blank id (a form left empty) is no id: every published migration.
    expect((await json("/developers/migration-status.json?id=")).body).toMatchObject({ id: null, count: 2 });
    for (const id of ["nope", "future-change"]) {
      const r = await json(`/developers/migration-status.json?id=${id}`);
      expect(r.status).toBe(404);
      expect(r.body.error).toBe("not_found");
    }
    expect((await json(`/developers/migration-status.json?id=${"x".repeat(65)}`)).status).toBe(400);
  });

  test("header simulator: by id, by endpoint (templates match), both; refusals", async () => {
    const { json } = await portal(parseRegistry(FIXTURE));
    const byId = await json("/api/public/deprecations/header-simulator?id=legacy-user-lookup");
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ deprecated: true, id: "legacy-user-lookup", phase: "deprecated", note: null });
    expect(byId.body.headers.Deprecation).toBe("@1773532800");
    const byPath = await json(
      "/api/public/deprecations/header-simulator?endpoint=" + encodeURIComponent("GET /api/partner/wallet-info/9EVthMCQwN6pWeBjaniiQwLNYAgApKUiyn63mWGVUUZm"),
    );
    expect(byPath.body).toMatchObject({ deprecated: true, id: "wallet-info-v1", phase: "sunset" });
    expect(byPath.body.headers.Link).toContain('<https://docs.example.com/migrate/wallet-info>; rel="sunset"');
    const both = await json("/api/public/deprecations/header-simulator?id=wallet-info-v1&endpoint=" + encodeURIComponent("POST /api/partner/wallets/verify"));
    expect(both.body.deprecated).toBe(true);
    const wrongMethod = await json("/api/public/deprecations/header-simulator?endpoint=" + encodeURIComponent("DELETE /api/partner/wallets/verify"));
    expect(wrongMethod.body).toMatchObject({ deprecated: false, headers: {} });

    const mismatch = await json("/api/public/deprecations/header-simulator?id=legacy-user-lookup&endpoint=/api/partner/capabilities");
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.details).toEqual([{ field: "query.endpoint", problem: "is not one of the deprecation's endpoints" }]);
    // A bare call shows the deprecation whose sunset comes first, as deprecations.json lists it first.
    const soonest = (await json("/developers/deprecations.json")).body.deprecations[0];
    const bare = await json("/api/public/deprecations/header-simulator");
    expect(bare.status).toBe(200);
    expect(bare.body).toMatchObject({ deprecated: true, id: soonest.id, query: { id: null, endpoint: null } });
    expect(bare.body.headers).toEqual((await json(`/api/public/deprecations/header-simulator?id=${soonest.id}`)).body.headers);
    expect(bare.body.note).toContain(`these are the headers of ${soonest.id}`);
    expect((await json("/api/public/deprecations/header-simulator?endpoint=users")).status).toBe(400);
    expect((await json("/api/public/deprecations/header-simulator?id=unknown-id")).status).toBe(404);
    expect((await json("/api/public/deprecations/header-simulator?id=future-change")).status).toBe(404);
  });
});
