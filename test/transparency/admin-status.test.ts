import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit } from "../support/app";
import { createAdminToken } from "../support/partner";
import { policyFile } from "../status/support";
import { P, plantedRun, plantedWorld, rows, type AuditWorld } from "./support";

// Operator routes (admin token, every change in admin_audit), the public views of what they change, the
// audit_anomalies status check under audit_anomalies_warn_degrades, and the trust dashboard's audit block.

let w: AuditWorld | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await w?.close();
  w = undefined;
  while (cleanups.length) cleanups.pop()!();
});

const audits = (w: AuditWorld) => rows(w.h, "SELECT action, target, actor, details FROM admin_audit WHERE action LIKE 'transparency.%' ORDER BY id");

describe("operator routes", () => {
  test("without the admin token every one is 403 and changes nothing", async () => {
    w = await plantedWorld(["untracked_outflow"]);
    await plantedRun(w);
    const sig = w.rpc.plan!.cases[0]!.signature!;
    for (const [method, path, body] of [
      ["GET", "/admin/transparency/declared-movements", undefined],
      [
        "POST",
        "/admin/transparency/declared-movements",
        { direction: "outflow", amount: "1", window_start_utc: "2026-01-01", window_end_utc: "2026-01-02", reason: "nope" },
      ],
      ["POST", "/admin/transparency/declared-movements/1/retract", { reason: "nope" }],
      ["PATCH", "/admin/transparency/thresholds", { large_transfer_amount: "1", reason: "nope" }],
      ["PUT", `/admin/transparency/triage/${sig}`, { status: "resolved", owner: "x" }],
    ] as const) {
      for (const auth of [{}, { authorization: "Bearer not-a-real-token-at-all" }] as Array<Record<string, string>>) {
        const r = await w.h.json(path, body ? jsonInit(method, body, auth) : ({ method, headers: auth } as RequestInit));
        expect([method, path, r.status, r.body.error]).toEqual([method, path, 403, "forbidden"]);
      }
    }
    expect(await audits(w)).toEqual([]);
    expect((await rows(w.h, "SELECT count(*) AS n FROM audit_threshold_history"))[0]!.n).toBe(0);
  });

  test("thresholds: validated, recorded with owner and reason, audited, served by threshold-history.json and used by the next run", async () => {
    w = await plantedWorld(["untracked_outflow"]);
    const auth = { authorization: `Bearer ${await createAdminToken(w.h, "alice")}` };
    await plantedRun(w);
    const bad = [
      [{ large_transfer_amount: "-1", reason: "negative" }, "large_transfer_amount"],
      [{ large_transfer_amount: "1.1234567", reason: "too precise" }, "large_transfer_amount"],
      [{ sigs_increase_threshold_pct: "10000.5", reason: "too high" }, "sigs_increase_threshold_pct"],
      [{ rows_increase_threshold_pct: "1.234", reason: "three decimals" }, "rows_increase_threshold_pct"],
      [{ severity_high_amount: "1", reason: "below medium" }, "severity_*_amount"],
      [{ reason: "nothing named" }, "body"],
    ] as const;
    for (const [body, field] of bad) {
      const r = await w.h.json("/admin/transparency/thresholds", jsonInit("PATCH", body, auth));
      expect([JSON.stringify(body), r.status, r.body.error, r.body.details[0].field]).toEqual([JSON.stringify(body), 400, "invalid_payload", field]);
    }
    expect((await w.h.json("/admin/transparency/thresholds", jsonInit("PATCH", { large_transfer_amount: "1", reason: "typo", lage: "x" }, auth))).status).toBe(
      400,
    );
    const ok = await w.h.json(
      "/admin/transparency/thresholds",
      jsonInit("PATCH", { large_transfer_amount: "10000", sigs_increase_threshold_pct: "12.5", reason: "Q1 review", owner: "treasury committee" }, auth),
    );
    expect(ok.status).toBe(200);
    expect(ok.body.changed).toEqual(["large_transfer_amount", "sigs_increase_threshold_pct"]);
    w.h.clock.advanceSeconds(60);
    await w.h.json("/admin/transparency/thresholds", jsonInit("PATCH", { large_transfer_amount: "10000", reason: "no change" }, auth)); // same value: no row
    const hist = (await w.h.json(`${P}/threshold-history.json`)).body;
    expect(hist.rows).toEqual(
      [
        {
          changed_at: "2026-01-01T00:07:00.000Z",
          parameter: "large_transfer_amount",
          previous_value: "1000000",
          new_value: "10000",
          owner: "treasury committee",
          reason: "Q1 review",
        },
        {
          changed_at: "2026-01-01T00:07:00.000Z",
          parameter: "sigs_increase_threshold_pct",
          previous_value: "50",
          new_value: "12.5",
          owner: "treasury committee",
          reason: "Q1 review",
        },
      ].reverse(),
    );
    expect(hist.current).toMatchObject({ large_transfer_amount: "10000", sigs_increase_threshold_pct: "12.5" });
    expect((await w.h.json(`${P}/threshold-history.json?limit=1`)).body).toMatchObject({
      count: 1,
      total: 2,
      query: { limit: 1, offset: 0, cursor: null },
      pagination: { has_more: true, next_offset: null, next_cursor: null },
    });
    expect((await w.h.json(`${P}/threshold-history.json?limit=2`)).body.pagination.has_more).toBe(false);
    expect((await w.h.json(`${P}/threshold-history.json?limit=501`)).status).toBe(400);
    const a = await audits(w);
    expect(a).toHaveLength(1);
    expect(a[0]).toMatchObject({ action: "transparency.thresholds.change", target: "large_transfer_amount,sigs_increase_threshold_pct" });
    expect(a[0]!.actor).toContain("alice");
    expect(JSON.parse(a[0]!.details)).toMatchObject({
      before: { large_transfer_amount: "1000000" },
      after: { large_transfer_amount: "10000" },
      reason: "Q1 review",
    });

    // The next run runs with them, and says so.
    const f = w.rpc.fixture;
    f.appendTransfer({ from: f.walletParty(f.treasury[0]!), to: f.holderParty(2), amount: 10_000_000_000n, applyToBalances: true });
    await w.h.ctx.jobs.runNow("transaction-sync");
    w.h.clock.advanceSeconds(60);
    await w.h.ctx.jobs.runNow("audit-anomalies");
    const s = (await w.h.json(`${P}/summary.json`)).body;
    expect(s.run.thresholds.large_transfer_amount).toBe("10000");
    expect(s.top_anomalies[0]).toMatchObject({ anomaly_types: ["untracked_outflow", "large_transfer"], max_abs_delta: "10000", severity: "medium" });
  });

  test("triage: only flagged signatures, validated, audited, listed by status; summary and exports show it", async () => {
    w = await plantedWorld(["untracked_outflow", "untracked_inflow"]);
    const auth = { authorization: `Bearer ${await createAdminToken(w.h)}` };
    await plantedRun(w);
    const [outflow, inflow] = w.rpc.plan!.cases.map((c) => c.signature!);
    const put = (sig: string, body: unknown) => w!.h.json(`/admin/transparency/triage/${sig}`, jsonInit("PUT", body, auth));
    expect(
      (await put(outflow!, { status: "investigating", owner: "ops-1", eta_utc: "2026-01-03T12:00:00Z", note: "asked the market maker" })).body.triage,
    ).toMatchObject({ status: "investigating", owner: "ops-1", eta_utc: "2026-01-03T12:00:00.000Z" });
    expect((await put(inflow!, { status: "false_positive", owner: "ops-2" })).status).toBe(200);
    expect((await put(outflow!, { status: "resolved", owner: "ops-1", eta_utc: null })).body.triage).toMatchObject({ status: "resolved", eta_utc: null });
    const clean = (await rows(w.h, "SELECT signature FROM audit_rows WHERE severity_rank = 0 AND kind = 'transaction' LIMIT 1"))[0]!.signature;
    expect((await put(clean, { status: "open", owner: "x" })).status).toBe(404);
    expect((await put(outflow!, { status: "closed", owner: "x" })).status).toBe(400);
    expect((await put(outflow!, { status: "open", owner: "x", eta_utc: "next week" })).status).toBe(400);
    expect((await w.h.json(`/admin/transparency/triage/${"a".repeat(129)}`, jsonInit("PUT", { status: "open", owner: "x" }, auth))).status).toBe(400);

    const all = (await w.h.json(`${P}/triage.json`)).body;
    expect(all.counts).toEqual({ open: 0, investigating: 0, resolved: 1, false_positive: 1 });
    expect((await w.h.json(`${P}/triage.json?status=resolved`)).body.rows.map((r: any) => [r.signature, r.status, r.owner])).toEqual([
      [outflow, "resolved", "ops-1"],
    ]);
    expect((await w.h.json(`${P}/triage.json?status=done`)).body).toMatchObject({ error: "invalid_query", details: [{ field: "query.status" }] });
    // The list echoes what it applied, as every list does; it pages by offset, so a cursor is refused by name.
    const resolved = (await w.h.json(`${P}/triage.json?status=resolved&limit=1`)).body;
    expect([resolved.query, resolved.pagination]).toEqual([
      { limit: 1, offset: 0, cursor: null, status: "resolved" },
      { has_more: false, next_offset: null, next_cursor: null },
    ]);
    const cursor = Buffer.from(JSON.stringify({ a: 1 })).toString("base64url");
    expect((await w.h.json(`${P}/triage.json?cursor=${cursor}`)).body).toMatchObject({ error: "invalid_query", details: [{ field: "query.cursor" }] });
    expect((await w.h.json(`${P}/summary.json`)).body.top_anomalies.map((a: any) => [a.signature, a.triage_status]).sort()).toEqual(
      [
        [inflow, "false_positive"],
        [outflow, "resolved"],
      ].sort(),
    );
    expect((await audits(w)).map((a) => [a.action, a.target])).toEqual([
      ["transparency.triage.set", outflow],
      ["transparency.triage.set", inflow],
      ["transparency.triage.set", outflow],
    ]);
  });

  test("declarations: validated; created, listed and retracted with audit rows", async () => {
    w = await plantedWorld(["untracked_outflow"]);
    const auth = { authorization: `Bearer ${await createAdminToken(w.h)}` };
    await plantedRun(w);
    const post = (body: Record<string, unknown>) =>
      w!.h.json(
        "/admin/transparency/declared-movements",
        jsonInit(
          "POST",
          { direction: "outflow", amount: "100", window_start_utc: "2026-01-01", window_end_utc: "2026-01-31", reason: "payroll", ...body },
          auth,
        ),
      );
    for (const [body, field] of [
      [{ amount: "1.0000001" }, "amount"],
      [{ amount: "0" }, "amount"],
      [{ amount: "-3" }, "amount"],
      [{ window_start_utc: "2026-02-01" }, "window_start_utc"],
      [{ window_end_utc: "soon" }, "window_end_utc"],
      [{ direction: "sideways" }, "direction"],
      [{ max_transactions: 0 }, "max_transactions"],
    ] as const) {
      const r = await post(body);
      expect([JSON.stringify(body), r.status, r.body.details?.[0]?.field]).toEqual([JSON.stringify(body), 400, field]);
    }
    const made = await post({ max_transactions: 3, counterparty: w.rpc.fixture.holderOwner(3) });
    expect(made.body.movement).toMatchObject({
      id: 1,
      window_end_utc: "2026-01-31T23:59:59.999Z",
      max_transactions: 3,
      counterparty: w.rpc.fixture.holderOwner(3),
    });
    expect((await w.h.json("/admin/transparency/declared-movements", { headers: auth })).body.count).toBe(1);
    expect((await w.h.json("/admin/transparency/declared-movements/9/retract", jsonInit("POST", { reason: "unknown one" }, auth))).status).toBe(404);
    expect((await w.h.json("/admin/transparency/declared-movements/1/retract", jsonInit("POST", { reason: "cancelled" }, auth))).body.movement.status).toBe(
      "retracted",
    );
    expect((await audits(w)).map((a) => a.action)).toEqual(["transparency.declaration.create", "transparency.declaration.retract"]);
  });
});

describe("the audit_anomalies status check and the trust dashboard", () => {
  test("warn when the latest complete run is warn or bad; counted in the overall only with audit_anomalies_warn_degrades", async () => {
    const quiet = "checks:\n  freshness: { missing: ok, stale: ok }\n";
    const off = policyFile("off.yaml", quiet);
    const on = policyFile("on.yaml", `audit_anomalies_warn_degrades: true\n${quiet}`);
    cleanups.push(off.remove, on.remove);
    for (const [policy, overall] of [
      [off, "ok"],
      [on, "warn"],
    ] as const) {
      w = await plantedWorld(["untracked_outflow", "large_transfer"], { env: { STATUS_POLICY_PATH: policy.path } });
      const before = (await w.h.json("/api/public/system-status")).body;
      expect(before.checks.audit_anomalies).toMatchObject({ status: "ok", configured: true, latest_run: null, summary: "no complete audit run yet" });
      await plantedRun(w);
      const s = (await w.h.json("/api/public/system-status")).body;
      expect(s.checks.audit_anomalies).toMatchObject({
        status: "warn",
        latest_run: 1,
        run_overall: "bad",
        signatures_with_anomalies: 2,
        warn_degrades: overall === "warn",
      });
      expect([policy.path.endsWith("on.yaml"), s.overall]).toEqual([overall === "warn", overall]);
      expect(s.components.find((c: any) => c.id === "chain_data").checks).toContain("audit_anomalies");
      const dash = (await w.h.json("/transparency/trust-dashboard.json")).body.audit_anomalies;
      expect(dash).toMatchObject({
        available: true,
        configured: true,
        latest_run: { run: 1, overall: "bad", signatures_with_anomalies: 2, max_abs_delta: "1250000" },
        links: { proof: `${P}/export.json?run=1` },
      });
      expect((await w.h.request(dash.links.proof)).status).toBe(200);
      await w.close();
      w = undefined;
    }
  });

  test("a clean latest run is ok; without TOKEN_MINT the check is not configured and the dashboard says so", async () => {
    w = await plantedWorld([]);
    await plantedRun(w);
    expect((await w.h.json("/api/public/system-status")).body.checks.audit_anomalies).toMatchObject({ status: "ok", run_overall: "ok" });
    await w.close();
    const { openTestApp } = await import("../support/app");
    const h = await openTestApp();
    try {
      expect((await h.json("/api/public/system-status")).body.checks.audit_anomalies).toMatchObject({
        status: "ok",
        configured: false,
        note: "not_configured",
      });
      expect((await h.json("/transparency/trust-dashboard.json")).body.audit_anomalies).toMatchObject({
        available: false,
        configured: false,
        latest_run: null,
      });
      expect((await h.ctx.jobs.runNow("audit-anomalies")).ok).toBe(true); // idle, not failing
    } finally {
      await h.close();
      w = undefined;
    }
  });
});
