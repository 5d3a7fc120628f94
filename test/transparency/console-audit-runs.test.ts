import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { PLANTED_AMOUNTS } from "../../src/chain/fixture-anomalies";
import { openTestApp, type TestApp } from "../support/app";
import {
  BROWSER_ACCEPT,
  badgesOf,
  csrfOf,
  currentNavOf,
  errorLineOf,
  exportLinksOf,
  formOf,
  formPost,
  hrefOf,
  pageAs,
  signedInCookie,
  tableOf,
  textById,
} from "../support/console";
import { createAdminToken } from "../support/partner";
import { type AuditWorld, chainRound, job, P, plantedRun, plantedWorld, rows } from "./support";

// The console's audit-runs page over real audits: the planted chain fixture (a Solana JSON-RPC server on
// 127.0.0.1), chain rounds and audit runs. The runs are listed newest first with their trigger, verdict and
// anomalies by severity; one run's anomalies with what was found and expected, their triage, and a triage form
// (what triage.json publishes, audited); "run audit now" runs the audit job; CSRF is required; every export
// answers with the session. And the low item: a token snapshot whose slot went backwards is an anomaly of its own.

const PAGE = "/admin/console/audit-runs";
let w: AuditWorld | undefined;
let plain: TestApp | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
  await plain?.close();
  plain = undefined;
});

/** The row with this id of the runs or the anomalies table: its cells by column, and its HTML. */
const rowOf = (html: string, id: string) => {
  const row = [...tableOf(html, "run-rows"), ...tableOf(html, "anomaly-rows")].find((r) => r.id === id);
  expect(row).toBeDefined();
  return row!;
};
const auditCount = async (h: TestApp, action: string) =>
  (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM admin_audit WHERE action = ?", [action]))!.n;

describe("GET /admin/console/audit-runs", () => {
  test("runs newest first with trigger and verdict; a run's anomalies in words; exports with the session; sign-in and bearer", async () => {
    w = await plantedWorld();
    await plantedRun(w);
    const h = w.h;
    // Run 1 as the scheduler would have started it (the registry's cron is not running in tests).
    await h.ctx.store.run("UPDATE job_runs SET trigger = 'schedule' WHERE id = (SELECT job_run_id FROM audit_runs WHERE id = 1)");
    await job(h, "audit-anomalies"); // run 2: nothing new, ok

    const anon = await h.request(`${PAGE}?run=1`, { headers: { accept: BROWSER_ACCEPT } });
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toBe(`/admin/sign-in?next=${encodeURIComponent(`${PAGE}?run=1`)}`);

    const token = await createAdminToken(h, "auditor");
    const cookie = await signedInCookie(h, token);
    const { status, html } = await pageAs(h, PAGE, cookie);
    expect(status).toBe(200);
    expect(currentNavOf(html)).toBe(PAGE);
    expect(html).toContain("all times UTC.");
    expect(textById(html, "run-audit")).toBe("Run audit now");
    expect(html).toContain("2 runs, newest first");
    expect(tableOf(html, "run-rows").map((r) => r.id)).toEqual(["run-2", "run-1"]);
    const run1 = rowOf(html, "run-1");
    expect(run1.cells).toMatchObject({
      Trigger: "scheduled",
      Verdict: "bad",
      "Anomalies by severity": "7: critical 2 high 1 medium 2 low 2",
      "Rows examined": "16 (13 transactions)",
    });
    expect(badgesOf(run1.html)).toContainEqual({ kind: "bad", text: "bad" });
    const run2 = rowOf(html, "run-2");
    expect(run2.cells).toMatchObject({ Trigger: "manual", Verdict: "ok", "Anomalies by severity": "none" });
    expect(badgesOf(run2.html)).toContainEqual({ kind: "ok", text: "ok" });
    // The default is the newest complete run (2: none); run 1 is one click away.
    expect(html).toContain("Anomalies of run #2");
    expect(textById(html, "anomaly-rows-none")).toBe("None.");
    expect(hrefOf(run1.html, "#1")).toBe(`${PAGE}?run=1#anomalies`);

    const one = (await pageAs(h, `${PAGE}?run=1`, cookie)).html;
    expect(one).toContain("Anomalies of run #1");
    expect(one).toContain("7 anomalous rows, most severe first.");
    expect(tableOf(one, "anomaly-rows").map((r) => r.id)).toHaveLength(7);
    const mismatch = rowOf(one, "sig-token-snapshot:2");
    expect(mismatch.cells).toMatchObject({
      Anomaly: "balance_mismatch",
      Subject: expect.stringContaining("token snapshot #2 against #1 (treasury+reserve"),
      Found: "balance changed by +4,321",
      Expected: expect.stringContaining("0, the synced transactions' sum (unexplained: +4,321)"),
      Severity: "high",
      Triage: expect.stringMatching(/^untriaged /),
    });
    expect(badgesOf(mismatch.html)).toEqual([{ kind: "bad", text: "high" }]);
    const authority = rowOf(one, "sig-mint-authority-snapshot:2");
    expect(authority.cells.Found).toContain("(changed: mint_authority)");
    expect(authority.cells.Expected).toContain("the published EXPECTED_MINT_AUTHORITY");
    const large = rowOf(one, `sig-${w.rpc.plan!.cases.find((c) => c.type === "large_transfer")!.signature}`);
    expect(large.cells.Anomaly).toBe("untracked_outflow large_transfer");
    expect(large.cells.Found).toContain("net change −1,250,000");
    expect(large.cells.Expected).toContain("a declared movement covering it (none matched); a net change below large_transfer_amount 1,000,000");
    expect(rowOf(one, "sig-sync-run:2").cells.Found).toContain("5 of 15 new signatures stored (more than CHAIN_TX_MAX_PER_RUN)");
    const table = /<table class="data" id="anomaly-rows">[\s\S]*?<\/table>/.exec(one)![0];
    expect((table.match(/<td(?![^>]*data-label)/g) ?? []).length).toBe(0);

    // Every export link answers with the session cookie (the operators' declared movements included).
    const links = exportLinksOf(one);
    expect(links).toContain(`${P}/export?run=1`);
    expect(links).toContain("/admin/transparency/declared-movements");
    for (const link of links) expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
    expect((await h.request("/admin/transparency/declared-movements")).status).toBe(403);

    // The bearer token opens it too; runs named as the public routes name them; unknown runs re-render with the reason.
    const bearer = await h.request(`${PAGE}?run=latest`, { headers: { authorization: `Bearer ${token}` } });
    expect(bearer.status).toBe(200);
    const bearerHtml = await bearer.text();
    expect(bearerHtml).toContain("Anomalies of run #2");
    expect(bearerHtml).not.toContain('name="csrf_token"');
    expect((await pageAs(h, `${PAGE}?run=previous`, cookie)).html).toContain("Anomalies of run #1");
    const missing = await pageAs(h, `${PAGE}?run=99`, cookie);
    expect(missing.status).toBe(404);
    expect(errorLineOf(missing.html)).toEndWith("names no audit run; showing the latest complete run.");
    const bad = await pageAs(h, `${PAGE}?run=%3Cscript%3E`, cookie);
    expect(bad.status).toBe(400);
    expect(bad.html).not.toContain("<script>");
    expect(bad.html).toContain("&lt;script&gt;");
  }, 60_000);

  test("runs 20 a page and a run's anomalies 50 a page, the view kept in every link", async () => {
    w = await plantedWorld();
    await plantedRun(w);
    const h = w.h;
    for (let i = 0; i < 20; i++) await job(h, "audit-anomalies"); // runs 2–21: nothing new
    const cookie = await signedInCookie(h, await createAdminToken(h));
    const first = (await pageAs(h, PAGE, cookie)).html;
    expect(first).toContain("21 runs, newest first");
    const firstRuns = tableOf(first, "run-rows").map((r) => r.id);
    expect([firstRuns.length, firstRuns[0], firstRuns.at(-1)]).toEqual([20, "run-21", "run-2"]);
    expect(hrefOf(first, "Older runs →")).toBe(`${PAGE}?runs_offset=20#runs`);
    const second = (await pageAs(h, `${PAGE}?runs_offset=20`, cookie)).html;
    expect(tableOf(second, "run-rows").map((r) => r.id)).toEqual(["run-1"]);
    expect(hrefOf(second, "← Newer runs")).toBe(`${PAGE}#runs`);
    // Run 1 picked from the second page: the runs stay on their page; its 7 anomalies fit one page.
    expect(hrefOf(rowOf(second, "run-1").html, "#1")).toBe(`${PAGE}?run=1&runs_offset=20#anomalies`);
    const one = (await pageAs(h, `${PAGE}?run=1&runs_offset=20`, cookie)).html;
    expect(tableOf(one, "run-rows").map((r) => r.id)).toEqual(["run-1"]);
    expect(one).toContain("Anomalies of run #1");
    expect(one).not.toContain('id="anomaly-pages"');
    expect(formOf(one, `${PAGE}/triage/token-snapshot%3A2`)).toMatchObject({ run: "1", runs_offset: "20" });
    const past = (await pageAs(h, `${PAGE}?run=1&offset=50`, cookie)).html;
    expect(textById(past, "anomaly-rows-none")).toBe("None on this page.");
    expect(hrefOf(past, "← More severe")).toBe(`${PAGE}?run=1#anomalies`);
    expect(textById((await pageAs(h, `${PAGE}?runs_offset=40`, cookie)).html, "run-rows-none")).toBe("None on this page.");
  }, 60_000);

  test("the triage form: CSRF required, refusals re-rendered, a triage published, escaped and audited", async () => {
    w = await plantedWorld();
    await plantedRun(w);
    const h = w.h;
    const cookie = await signedInCookie(h, await createAdminToken(h, "auditor"));
    const html = (await pageAs(h, `${PAGE}?run=1`, cookie)).html;
    const csrf = csrfOf(html);
    const sig = "token-snapshot:2";
    const url = `${PAGE}/triage/${encodeURIComponent(sig)}`;
    expect(formOf(html, url)).toMatchObject({ csrf_token: csrf, run: "1", status: "investigating" });
    const fields = {
      status: "investigating",
      owner: "treasury <team>",
      eta_utc: "2026-02-01T00:00:00Z",
      note: "<script>alert(1)</script> RPC node lag?",
      run: "1",
      runs_offset: "0",
      offset: "0",
    };

    expect((await formPost(h, url, cookie, fields)).status).toBe(403);
    expect((await formPost(h, url, cookie, { ...fields, csrf_token: "wrong" })).status).toBe(403);
    expect(await auditCount(h, "transparency.triage.set")).toBe(0);

    for (const [change, code, text] of [
      [{ status: "done" }, 400, "status must be one of open, investigating, resolved, false_positive"],
      [{ owner: "  " }, 400, "say who owns it"],
      [{ eta_utc: "next week" }, 400, "eta_utc must be a UTC date or date-time ending in Z"],
    ] as const) {
      const res = await formPost(h, url, cookie, { ...fields, ...change, csrf_token: csrf });
      expect(res.status).toBe(code);
      const page = await res.text();
      expect(page).toContain(text);
      expect(page).toContain("Anomalies of run #1");
    }
    const unknown = await formPost(h, `${PAGE}/triage/1111111111111111111111111111111111`, cookie, { ...fields, csrf_token: csrf });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("was not found");
    expect(await auditCount(h, "transparency.triage.set")).toBe(0);

    const done = await formPost(h, url, cookie, { ...fields, csrf_token: csrf });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`${PAGE}?run=1&done=triaged&ref=${encodeURIComponent(sig)}`);
    const after = (await pageAs(h, done.headers.get("location")!, cookie)).html;
    expect(after).toContain(`Triage of ${sig} saved; triage.json publishes it.`);
    expect(rowOf(after, `sig-${sig}`).cells.Triage).toMatch(
      /^investigating, owner treasury <team>, ETA 2026-02-01 00:00:00 UTC — <script>alert\(1\)<\/script> RPC node lag\? \(by admin:auditor#\d+, /,
    );
    expect(after).toContain("owner treasury &lt;team&gt;, ETA 2026-02-01 00:00:00 UTC — &lt;script&gt;alert(1)&lt;/script&gt; RPC node lag?");
    expect(after).not.toContain("<script>alert(1)");
    expect(formOf(after, url)).toMatchObject({ status: "investigating", owner: "treasury <team>", eta_utc: "2026-02-01T00:00:00Z" });
    // Published (the JSON API), and audited once by this operator.
    const triage = await h.json(`${P}/triage.json`);
    expect(triage.body.rows).toContainEqual(expect.objectContaining({ signature: sig, status: "investigating", owner: "treasury <team>" }));
    const audit = await h.ctx.store.all("SELECT actor, target FROM admin_audit WHERE action = 'transparency.triage.set'");
    expect(audit).toEqual([{ actor: expect.stringMatching(/^admin:auditor#\d+$/), target: sig }]);
  }, 60_000);

  test("run audit now: the audit job runs (manual), its run is shown and audited; refused without CSRF or a snapshot", async () => {
    w = await plantedWorld();
    const h = w.h;
    const cookie = await signedInCookie(h, await createAdminToken(h, "auditor"));
    const first = (await pageAs(h, PAGE, cookie)).html;
    expect(first).toContain("None. The audit runs after the first chain snapshot");
    const csrf = csrfOf(first);

    // No token snapshot yet: the job fails; the page says why (409), the attempt is audited, no run appears.
    const early = await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf });
    expect(early.status).toBe(409);
    expect(await early.text()).toContain("Nothing was audited: the run failed — no token snapshot of TOKEN_MINT yet");
    expect((await rows(h, "SELECT count(*) AS n FROM audit_runs"))[0]!.n).toBe(0);

    await chainRound(h);
    await chainRound(h);
    expect((await formPost(h, `${PAGE}/run`, cookie, {})).status).toBe(403);
    expect((await rows(h, "SELECT count(*) AS n FROM audit_runs"))[0]!.n).toBe(0);
    const done = await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`${PAGE}?run=1&done=ran&ref=1`);
    const after = (await pageAs(h, done.headers.get("location")!, cookie)).html;
    expect(after).toContain("Audit run #1 finished; its anomalies are below.");
    expect(rowOf(after, "run-1").cells.Trigger).toBe("manual");
    expect(after).toContain("7 anomalous rows");
    const audits = (await h.ctx.store.all("SELECT target, details FROM admin_audit WHERE action = 'transparency.audit.run_now' ORDER BY id")) as Array<{
      target: string | null;
      details: string;
    }>;
    expect(audits.map((a) => [a.target, JSON.parse(a.details).ok, JSON.parse(a.details).audit_run_id])).toEqual([
      [null, false, null],
      ["1", true, 1],
    ]);
  }, 60_000);

  test("without TOKEN_MINT: no runs, no run-now form; a posted run is refused (409)", async () => {
    plain = await openTestApp();
    const cookie = await signedInCookie(plain, await createAdminToken(plain));
    const page = await pageAs(plain, PAGE, cookie);
    expect(page.status).toBe(200);
    expect(textById(page.html, "run-disabled")).toStartWith("TOKEN_MINT is not set");
    expect(formOf(page.html, `${PAGE}/run`)).toBeNull();
    expect(textById(page.html, "run-rows-none")).toStartWith("None.");
    expect(textById(page.html, "anomaly-rows-none")).toBe("None: no complete run yet.");
    const csrf = csrfOf(page.html);
    const res = await formPost(plain, `${PAGE}/run`, cookie, { csrf_token: csrf });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("TOKEN_MINT is not set");
    for (const link of exportLinksOf(page.html))
      expect({ link, status: (await plain.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
  });
});

describe("a token snapshot whose slot went backwards (low item)", () => {
  test("a −4,321 change read from a lagging node is its own anomaly, on the page and in the published rules", async () => {
    w = await plantedWorld(["balance_mismatch"]);
    const h = w.h;
    await chainRound(h);
    await chainRound(h);
    // Snapshot 2 as if read from a node 5 slots behind snapshot 1, where the treasury shows 4,321 tokens fewer.
    const [p, s] = await rows(h, "SELECT slot, treasury_raw, reserve_raw FROM chain_token_snapshots WHERE id IN (1, 2) ORDER BY id");
    const lower = BigInt(p!.treasury_raw) + BigInt(p!.reserve_raw) - BigInt(s!.reserve_raw) - PLANTED_AMOUNTS.balance_mismatch;
    await h.ctx.store.run("UPDATE chain_token_snapshots SET slot = ?, treasury_raw = ? WHERE id = 2", [p!.slot - 5, lower.toString()]);
    await job(h, "audit-anomalies");

    expect(await rows(h, "SELECT signature, delta_raw, types, severity_rank FROM audit_rows WHERE severity_rank > 0")).toEqual([
      { signature: "token-snapshot:2", delta_raw: `-${PLANTED_AMOUNTS.balance_mismatch}`, types: "snapshot_slot_regression", severity_rank: 2 },
    ]);
    const cookie = await signedInCookie(h, await createAdminToken(h));
    const html = (await pageAs(h, PAGE, cookie)).html;
    expect(rowOf(html, "run-1").cells["Anomalies by severity"]).toBe("1: medium 1");
    const row = rowOf(html, "sig-token-snapshot:2");
    expect(row.cells).toMatchObject({
      Anomaly: "snapshot_slot_regression",
      Subject: expect.stringContaining("token snapshot #2 after #1"),
      Found: expect.stringContaining(`read at slot ${p!.slot - 5}, before the previous snapshot's slot ${p!.slot}; balance change −4,321 (treasury+reserve)`),
      Expected: expect.stringContaining(`a slot at or after ${p!.slot}`),
      Severity: "medium",
    });
    expect(badgesOf(row.html)).toEqual([{ kind: "warn", text: "medium" }]);
    // The published rules say so: glossary.json (the API) and docs/transparency.md.
    const glossary = (await h.json(`${P}/glossary.json`)).body.glossary as Array<{ type: string; rule: string }>;
    expect(glossary.find((g) => g.type === "snapshot_slot_regression")!.rule).toContain("S.slot < P.slot");
    const docs = readFileSync(resolve(import.meta.dir, "../../docs/transparency.md"), "utf8");
    expect(docs).toContain("| `snapshot_slot_regression` | consecutive token snapshots P, S with the same wallet set and S.slot < P.slot");
  }, 60_000);
});
