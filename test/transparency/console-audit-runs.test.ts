import { afterEach, describe, expect, test } from "bun:test";
import { csrfOf, exportLinksOf, formPost, pageAs, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";
import { type AuditWorld, plantedRun, plantedWorld } from "./support";

// The console's audit-runs page over a real audit: the planted chain fixture (a Solana JSON-RPC server on
// 127.0.0.1), two chain rounds and one audit run. The run is listed with its verdict, its anomalies shown for
// triage; a triage set by the form is what triage.json publishes and is audited; CSRF is required.

const PAGE = "/admin/console/audit-runs";
let w: AuditWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("GET /admin/console/audit-runs", () => {
  test("the run and its anomalies; a triage from the form is published and audited", async () => {
    w = plantedWorld();
    await plantedRun(w);
    const h = w.h;
    const cookie = await signedInCookie(h, createAdminToken(h, "auditor"));
    const { status, html } = await pageAs(h, PAGE, cookie);
    expect(status).toBe(200);
    expect(html).toMatch(/id="run-1"/);
    const sigs = [...html.matchAll(/<tr id="sig-([1-9A-HJ-NP-Za-km-z]+)">/g)].map((m) => m[1]!);
    expect(sigs.length).toBeGreaterThan(0);
    for (const link of exportLinksOf(html)) expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
    const csrf = csrfOf(html);
    const sig = sigs[0]!;
    const fields = { status: "investigating", owner: "treasury <team>", eta_utc: "2026-02-01T00:00:00Z", note: "", run: "1" };
    expect((await formPost(h, `${PAGE}/triage/${sig}`, cookie, fields)).status).toBe(403);
    const done = await formPost(h, `${PAGE}/triage/${sig}`, cookie, { ...fields, csrf_token: csrf });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`${PAGE}?run=1&done=${sig}`);
    const after = await pageAs(h, done.headers.get("location")!, cookie);
    expect(after.html).toContain(`Triage of ${sig} saved.`);
    const triage = await h.json("/transparency/audit-anomalies/triage.json");
    expect(triage.body.rows).toContainEqual(expect.objectContaining({ signature: sig, status: "investigating", owner: "treasury <team>" }));
    expect(h.ctx.db.sqlite.query("SELECT count(*) AS n FROM admin_audit WHERE target = ?").get(sig)).toEqual({ n: 1 });
    // Refusals re-render the page: an unknown status, a signature no run flagged.
    expect((await formPost(h, `${PAGE}/triage/${sig}`, cookie, { ...fields, status: "done", csrf_token: csrf })).status).toBe(400);
    expect((await formPost(h, `${PAGE}/triage/1111111111111111111111111111111111`, cookie, { ...fields, csrf_token: csrf })).status).toBe(404);
    expect((await h.request(`${PAGE}?run=99`, { headers: { cookie } })).status).toBe(404);
  }, 60_000);
});
