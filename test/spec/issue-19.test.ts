// Issue 19 (messenger admin), re-verified from the served document: "Every route needs the admin token (403
// otherwise)"; "`days`/`preset` accept the same vocabulary everywhere" (docs/messenger-admin-analytics.md: days
// 1–366, the presets, both at once 400 naming both); "a missing header is 428", "a revision that is not an integer
// → 400", "Unknown mission key … → 404".
import { afterAll, beforeAll, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { messengerEnv } from "../messenger/support";
import { createAdminToken } from "../support/partner";
import { undeclaredQuery } from "./declared-params";

let h: TestApp;
let admin: Record<string, string>;
type Op = { parameters?: Array<{ name: string; in: string }> };
let doc: { paths: Record<string, Record<string, Op>> };
beforeAll(async () => {
  h = await openTestApp({ env: messengerEnv() });
  admin = { authorization: `Bearer ${await createAdminToken(h)}` };
  doc = (await h.json("/api/openapi.json")).body as typeof doc;
});
afterAll(() => h?.close());

const adminOps = () =>
  Object.entries(doc.paths)
    .filter(([path]) => path.startsWith("/api/messenger/admin/"))
    .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

test("every /api/messenger/admin operation is 403 without the admin token and with a wrong one", async () => {
  const ops = adminOps();
  expect(ops.length).toBeGreaterThanOrEqual(28);
  const wrong: string[] = [];
  for (const { path, method } of ops) {
    const target = path.replace(/\{[^}]+\}/g, "1");
    const body = method === "get" ? undefined : "{}";
    for (const headers of [{}, { authorization: "Bearer hat_wrong" }] as Array<Record<string, string>>) {
      const r = await h.request(target, {
        method: method.toUpperCase(),
        headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
        body,
      });
      await r.arrayBuffer();
      if (r.status !== 403) wrong.push(`${method.toUpperCase()} ${path}: ${r.status}`);
    }
  }
  expect(wrong).toEqual([]);
});

test("every reporting route that takes days takes the one vocabulary: 1–366 or a preset, never both", async () => {
  const reports = adminOps().filter(
    ({ path, method, op }) => method === "get" && !path.includes("{") && op.parameters?.some((p) => p.in === "query" && p.name === "days"),
  );
  expect(reports.length).toBeGreaterThanOrEqual(6);
  const wrong: string[] = [];
  for (const { path, op } of reports) {
    const hasPreset = op.parameters!.some((p) => p.in === "query" && p.name === "preset");
    const ask = async (q: string) => {
      const r = await h.request(`${path}?${q}`, { headers: admin });
      const text = await r.text();
      return { status: r.status, text };
    };
    for (const q of ["days=1", "days=366", ...(hasPreset ? ["preset=this_month", "preset=last_90d"] : [])]) {
      const r = await ask(q);
      if (r.status !== 200) wrong.push(`${path}?${q}: ${r.status} ${r.text.slice(0, 120)}`);
    }
    for (const [q, names] of [
      ["days=0", ["days"]],
      ["days=367", ["days"]],
      ...(hasPreset
        ? [
            ["preset=fortnight", ["preset"]],
            ["days=7&preset=last_7d", ["days", "preset"]],
          ]
        : []),
    ] as Array<[string, string[]]>) {
      const r = await ask(q);
      if (r.status !== 400 || !r.text.includes("invalid_query") || !names.every((n) => r.text.includes(n)))
        wrong.push(`${path}?${q}: ${r.status} ${r.text.slice(0, 160)}`);
    }
  }
  expect(wrong).toEqual([]);
});

test("mission PATCH: no X-Expected-Revision is 428, a non-integer one 400, an unknown key 404", async () => {
  const patch = (key: string, headers: Record<string, string>) =>
    h.json(`/api/messenger/admin/missions/${key}`, jsonInit("PATCH", { title: "x" }, { ...admin, ...headers }));
  expect((await patch("no_such_mission", {})).status).toBe(428);
  const bad = await patch("no_such_mission", { "x-expected-revision": "abc" });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.body).toLowerCase()).toContain("x-expected-revision");
  expect((await patch("no_such_mission", { "x-expected-revision": "1" })).status).toBe(404);
});

// The spec's "Admin messenger operations" bullets: every parameter they list is declared on its route.
test("every parameter the spec lists for the messenger admin routes is declared on them", () => {
  const A = "/api/messenger/admin";
  const SPEC_PARAMS: Array<[path: string, params: string[]]> = [
    [`${A}/games/promos`, ["include_disabled"]],
    [`${A}/games/catalog-preview`, ["telegram_user_id", "linked_user_id", "admin_view"]],
    [`${A}/games/overview`, ["days", "preset", "games"]],
    [`${A}/games/overview/export`, ["format", "days", "preset", "games"]],
    [`${A}/games/recon-grid`, ["days", "preset"]],
    [`${A}/games/spin-wheel`, ["days", "preset"]],
    [`${A}/games/rollout-checklist`, ["days", "preset", "games"]],
    [`${A}/games/user-profiles`, ["limit"]],
    [`${A}/missions/comparison`, ["days"]],
    [`${A}/missions/{mission_key}/analytics`, ["days"]],
    [`${A}/bot/preview`, ["hours", "live"]],
    [`${A}/bot/bootstrap-readiness`, ["live"]],
  ];
  expect(undeclaredQuery(doc, SPEC_PARAMS)).toEqual([]);
});
