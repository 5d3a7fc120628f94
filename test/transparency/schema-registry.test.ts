import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { parse } from "csv-parse/sync";
import { createAdminToken } from "../support/partner";
import { jsonInit } from "../support/app";
import { P, plantedRun, plantedWorld, type AuditWorld } from "./support";

// schema-registry.json, checked by an outside validator (ajv, draft 2020-12, strict) against real answers of
// every transparency route: with data, without a run, and with options that change the shape.

let w: AuditWorld;
let registry: any;
let ajv: Ajv2020;

beforeAll(async () => {
  w = await plantedWorld(undefined, { env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
  await plantedRun(w);
  const token = await createAdminToken(w.h);
  const auth = { authorization: `Bearer ${token}` };
  const sig = w.rpc.plan!.cases[0]!.signature!;
  await w.h.request(`/admin/transparency/triage/${sig}`, jsonInit("PUT", { status: "investigating", owner: "treasury-ops", eta_utc: "2026-01-05" }, auth));
  await w.h.request("/admin/transparency/thresholds", jsonInit("PATCH", { large_transfer_amount: "500000", reason: "quarterly review" }, auth));
  await w.h.request(
    "/admin/transparency/declared-movements",
    jsonInit("POST", { direction: "inflow", amount: "10", window_start_utc: "2026-01-01", window_end_utc: "2026-01-31", reason: "grant" }, auth),
  );
  registry = (await w.h.json(`${P}/schema-registry.json`)).body;
  ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
});
afterAll(async () => {
  await w.close();
});

const entry = (path: string) => {
  const e = registry.schemas.find((s: any) => s.path === path);
  if (!e) throw new Error(`no registry entry for ${path}`);
  return e;
};

function expectValid(path: string, value: unknown) {
  const validate = ajv.compile(entry(path).schema);
  const ok = validate(value);
  if (!ok) throw new Error(`${path}: ${ajv.errorsText(validate.errors)}`);
}

describe("schema-registry.json", () => {
  test("versioned, draft 2020-12, one entry per transparency answer, each schema compiles strictly", () => {
    expect(registry).toMatchObject({ success: true, registry_version: "1.0.0", dialect: "https://json-schema.org/draft/2020-12/schema" });
    expect(registry.count).toBe(registry.schemas.length);
    for (const e of registry.schemas) {
      expect(e.schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(e.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(() => ajv.compile(e.schema)).not.toThrow();
    }
    const paths = registry.schemas.map((e: any) => e.path);
    for (const file of [
      "summary.json",
      "runs.json",
      "trend.json",
      "alerts.json",
      "alerts.csv",
      "diff/compare.json",
      "diff/compare.csv",
      "diff/export.json",
      "diff/export",
      "export",
      "export.json",
      "glossary.json",
      "threshold-history.json",
      "triage.json",
      "declared-movements.json",
    ]) {
      expect(paths).toContain(`${P}/${file}`);
    }
    expect(paths).toContain("/transparency/trust-dashboard.json");
  });

  test("real JSON answers validate, in their variants", async () => {
    const variants: Array<[string, string]> = [
      ["summary.json", ""],
      ["summary.json", "?include_top_anomalies=0&include_meta=1"],
      ["summary.json", "?run=1"],
      ["runs.json", "?limit=1"],
      ["trend.json", "?include_status_counts=1&metric=rows"],
      ["trend.json", "?severity=critical&types=large_transfer&min_abs_delta=1"],
      ["alerts.json", "?include_recommendations=1"],
      ["diff/compare.json", ""],
      ["diff/compare.json", "?include_rows=0"],
      ["diff/export.json", ""],
      ["export.json", ""],
      ["export.json", "?from=2026-01-01"],
      ["glossary.json", ""],
      ["threshold-history.json", ""],
      ["triage.json", ""],
      ["triage.json", "?status=resolved"],
      ["declared-movements.json", ""],
    ];
    for (const [file, q] of variants) {
      const r = await w.h.json(`${P}/${file}${q}`);
      expect([file, q, r.status]).toEqual([file, q, 200]);
      expectValid(`${P}/${file}`, r.body);
    }
    expectValid("/transparency/trust-dashboard.json", (await w.h.json("/transparency/trust-dashboard.json")).body);
    expectValid("/transparency/wallet-concentration.json", (await w.h.json("/transparency/wallet-concentration.json")).body);
    expectValid("(every error answer)", (await w.h.json(`${P}/summary.json?run=nope`)).body);
  });

  test("CSV answers validate as the records csv-parse reads, with the registry's column order", async () => {
    for (const file of ["alerts.csv", "diff/compare.csv", "diff/export", "export"]) {
      const text = await (await w.h.request(`${P}/${file}`)).text();
      const header = parse(text, { to: 1 })[0];
      expect([file, header]).toEqual([file, entry(`${P}/${file}`).columns]);
      expectValid(`${P}/${file}`, parse(text, { columns: true }));
    }
    // wallet-concentration.csv without a holders snapshot: no rows, the registry's header all the same.
    const text = await (await w.h.request("/transparency/wallet-concentration.csv")).text();
    expect(parse(text, { to: 1 })[0]).toEqual(entry("/transparency/wallet-concentration.csv").columns);
    expectValid("/transparency/wallet-concentration.csv", parse(text, { columns: true }));
  });

  test("a registry without any run validates too (fresh deployment)", async () => {
    const fresh = await plantedWorld([], { seed: "fresh" });
    try {
      const started = fresh.h.clock.now().toISOString();
      for (const file of ["summary.json", "runs.json", "trend.json", "alerts.json", "diff/compare.json", "diff/export.json", "export.json"]) {
        const r = await fresh.h.json(`${P}/${file}`);
        expect([file, r.status]).toEqual([file, 200]);
        expectValid(`${P}/${file}`, r.body);
        // No audit data yet: the time it began is the first answer's time (recorded once), never 1970.
        expect([file, r.body.generated_at_utc, r.headers.get("last-modified")]).toEqual([file, started, new Date(started).toUTCString()]);
      }
    } finally {
      await fresh.close();
    }
  });
});
