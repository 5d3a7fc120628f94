import { afterEach, describe, expect, test } from "bun:test";
import { COMPONENT_IDS, COMPONENTS, componentViews } from "../../src/status/components";
import { CHECK_NAMES, overallOf } from "../../src/status/checks/engine";
import { INCIDENT_STATES } from "../../src/status/incidents/incidents";
import { ComponentIdSchema, IncidentStateSchema } from "../../src/status/model";
import { DEFAULT_POLICY } from "../../src/status/checks/policy";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { policyFile } from "./support";

// Components group the checks; checks with nothing to judge (no TOKEN_MINT) say configured: false, are left
// out of the overall, and make their component not_configured — in the JSON and (page tests) on the page.

let h: TestApp | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  while (cleanups.length) cleanups.pop()!();
});

const T0 = "2026-01-01T00:00:00.000Z";
const CHAIN = [
  "chain_rpc",
  "freshness_holder_cache",
  "freshness_holder_growth",
  "freshness_public_stats_cache",
  "freshness_token_distribution",
  "freshness_mint_authorities",
  "freshness_snapshot_jobs_rollup",
  "freshness_transaction_sync",
  "mint_authority",
  "audit_anomalies",
];

describe("the component map", () => {
  test("every check belongs to exactly one component, and every component's checks exist", () => {
    const owners = new Map<string, string[]>();
    for (const c of COMPONENTS) for (const check of c.checks) owners.set(check, [...(owners.get(check) ?? []), c.id]);
    for (const name of CHECK_NAMES) expect([name, owners.get(name)?.length]).toEqual([name, 1]);
    expect([...owners.keys()].sort()).toEqual([...CHECK_NAMES].sort());
  });

  test("the schemas' literal lists match the constants (they are written out for their types)", () => {
    const literals = (s: { anyOf: Array<{ const: string }> }) => s.anyOf.map((b) => b.const);
    expect(literals(ComponentIdSchema as never)).toEqual([...COMPONENT_IDS]);
    expect(literals(IncidentStateSchema as never)).toEqual([...INCIDENT_STATES]);
  });

  test("a component is the worst of its configured checks; all not configured → not_configured; a raised level still counts", () => {
    const ok = { status: "ok" as const, configured: true };
    const off = { status: "ok" as const, configured: false };
    const checks = Object.fromEntries(CHECK_NAMES.map((n) => [n, CHAIN.includes(n) ? off : ok]));
    const byId = (v: ReturnType<typeof componentViews>) => Object.fromEntries(v.map((c) => [c.id, c.status]));
    expect(byId(componentViews(checks))).toEqual({ api: "ok", webhooks: "ok", chain_data: "not_configured", jobs: "ok" });
    expect(
      byId(componentViews({ ...checks, request_errors: { status: "bad", configured: true }, reliability: { status: "warn", configured: true } })),
    ).toMatchObject({ api: "bad", jobs: "warn" });
    // freshness.not_configured: warn — the operator says this deployment must have a token.
    expect(byId(componentViews({ ...checks, chain_rpc: { status: "warn", configured: false } }))).toMatchObject({ chain_data: "warn" });
  });

  test("open operator incidents are reported on the components they name; automatic ones only listed", () => {
    const checks = Object.fromEntries(CHECK_NAMES.map((n) => [n, { status: "ok" as const, configured: true }]));
    const views = componentViews(checks, [
      { id: 7, source: "operator", components: ["api"], current_severity: "warn", severity: "bad" },
      { id: 6, source: "operator", components: ["api", "webhooks"], current_severity: "bad", severity: "bad" },
      { id: 5, source: "automatic", components: ["jobs"], current_severity: "bad", severity: "bad" },
    ]);
    const api = views.find((v) => v.id === "api")!;
    expect(api).toMatchObject({ status: "ok", open_incident_ids: [7, 6], reported_severity: "bad" });
    expect(views.find((v) => v.id === "jobs")).toMatchObject({ status: "ok", open_incident_ids: [5], reported_severity: null });
  });
});

describe("not configured in the status answer", () => {
  test("without TOKEN_MINT the chain checks say configured: false, status ok, words in the summary; the others configured: true", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const r = await h.json("/api/public/system-status");
    expect(r.status).toBe(200);
    for (const name of CHAIN) expect([name, r.body.checks[name].configured, r.body.checks[name].status]).toEqual([name, false, "ok"]);
    for (const name of CHECK_NAMES.filter((n) => !CHAIN.includes(n))) expect([name, r.body.checks[name].configured]).toEqual([name, true]);
    expect(r.body.checks.freshness_holder_cache.summary).toStartWith("not configured: ");
    expect(r.body.components.map((c: any) => [c.id, c.status])).toEqual([
      ["api", "ok"],
      ["webhooks", "ok"],
      ["chain_data", "not_configured"],
      ["jobs", "ok"],
    ]);
    expect(r.body.overall).toBe("ok");
  });

  test("overallOf leaves a not-configured ok check out, counts one the policy raised, counts configured ones", () => {
    const p = DEFAULT_POLICY;
    expect(overallOf({ a: { status: "ok", configured: false }, b: { status: "ok", configured: true } }, p)).toBe("ok");
    expect(overallOf({ a: { status: "warn", configured: false }, b: { status: "ok" } }, p)).toBe("warn");
    expect(overallOf({ a: { status: "ok", configured: false }, b: { status: "bad", configured: true } }, p)).toBe("bad");
  });

  test("with freshness.not_configured: warn the overall is warn and the component says warn", async () => {
    const f = policyFile("policy.yaml", "checks:\n  freshness:\n    not_configured: warn\n");
    cleanups.push(f.remove);
    h = await openTestApp({ clock: new FakeClock(T0), env: { STATUS_POLICY_PATH: f.path } });
    const r = await h.json("/api/public/system-status");
    expect(r.body.overall).toBe("warn");
    expect(r.body.checks.chain_rpc).toMatchObject({ status: "warn", configured: false });
    expect(r.body.components.find((c: any) => c.id === "chain_data").status).toBe("warn");
  });
});
