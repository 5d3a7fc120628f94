import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { AdminTokens } from "../../src/auth/admin";
import { runBackup } from "../../src/ops/backups/backup";
import { PROBES } from "../../src/ops/readiness/probes";
import { readinessOverview } from "../../src/ops/readiness/overview";
import { openTestApp, type TestApp } from "../support/app";
import { testEngine } from "../support/engine";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { plantHour as plantRollupHour } from "./support";
import { BROWSER_ACCEPT, badgesOf, classOf, exportLinksOf, formOf, itemsOf, tableOf, textById, titleOf } from "../support/console";

// GET /admin/ops/readiness without a browser: who may see it, that planted values are escaped, and the
// ready/attention rule (docs/operations.md, "GET /admin/ops/readiness"). The browser test is
// readiness-page.browser.test.ts. Also: a revoked admin token loses the page, its bearer calls and its sessions.

const PAGE = "/admin/ops/readiness";
const NOW = "2026-04-01T12:00:00.000Z";
let h: TestApp;
let token: string;

beforeEach(async () => {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  token = await createAdminToken(h, "ops");
});
afterEach(async () => {
  await h.close();
});

/** Herald's own backups are the SQLite file's; on PostgreSQL the page says where backups are instead. */
const onSqlite = testEngine() === "sqlite";

const bearer = () => ({ headers: { authorization: `Bearer ${token}` } });

async function plantProbe(probe: string, at: string, fields: { status?: number | null; ok?: boolean; hadData?: boolean; error?: string | null } = {}) {
  await h.ctx.store.run("INSERT INTO ops_probe_runs (run_id, at, probe, url, status, latency_ms, had_data, ok, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
    "pr_0000000000000001",
    at,
    probe,
    `http://127.0.0.1:3000/${probe}`,
    fields.status ?? 200,
    7,
    fields.hadData === false ? 0 : 1,
    fields.ok === false ? 0 : 1,
    fields.error ?? null,
  ]);
}
/** The row with this id of the table in the section (or table) `within`. */
const rowOf = (html: string, within: string, id: string) => tableOf(html, within).find((r) => r.id === id)!;
const plantHour = (hour: string, requests: number, forbidden: number) => plantRollupHour(h.ctx.store, hour, requests, forbidden);

/** Everything healthy: every probe ok with data just now, quiet traffic, a checked backup (where Herald makes them). */
async function plantHealthy() {
  for (const p of PROBES) await plantProbe(p.name, NOW);
  await plantHour("2026-04-01T10", 1000, 10);
  if (onSqlite) await runBackup(h.ctx, { actor: { kind: "cli", user: "test" } });
}

async function signedInCookie(): Promise<string> {
  const form = await h.request("/admin/sign-in");
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await h.request("/admin/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: `herald_signin_csrf=${csrf}` },
    body: new URLSearchParams({ token, csrf_token: csrf, next: PAGE }).toString(),
  });
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe(PAGE);
  const line = await res.headers.getSetCookie().find((c) => c.startsWith("herald_admin_session="))!;
  return line.split(";")[0]!;
}

describe("GET /admin/ops/readiness", () => {
  test("unsigned → 303 to the sign-in page; a wrong bearer token → 403; the admin token → 200 HTML", async () => {
    const unsigned = await h.request(PAGE, { headers: { accept: BROWSER_ACCEPT } });
    expect(unsigned.status).toBe(303);
    expect(unsigned.headers.get("location")).toBe("/admin/sign-in?next=%2Fadmin%2Fops%2Freadiness");
    expect((await h.request(PAGE, { headers: { authorization: "Bearer hat_wrong-wrong-wrong-wrong" } })).status).toBe(403);

    const res = await h.request(PAGE, bearer());
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(titleOf(html)).toBe("Readiness · Herald");
    for (const id of ["summary", "event-loop", "probes", "noise", "jobs", "backups", "exports"]) expect(html).toContain(`id="${id}"`);
    expect(html).not.toContain(token);
    // Opened with a bearer token there is no session, so no sign-out form.
    expect(formOf(html, "/admin/sign-out")).toBeNull();
  });

  test("planted values are escaped: a probe error holding <script> is text, never markup", async () => {
    await plantProbe("system_status", NOW, { status: 502, ok: false, hadData: false, error: `HTTP 502 <script>alert("x")</script> & 'q'` });
    const html = await (await h.request(PAGE, bearer())).text();
    expect(html).not.toContain("<script>");
    expect(html).toContain("HTTP 502 &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;");
    // Shown twice: the probe's latest run and the list of the last 24 h.
    expect(html.split("&lt;script&gt;").length - 1).toBe(2);
    const probe = rowOf(html, "probe-latest", "probe-system_status");
    expect(probe.cells.State).toBe("failed");
    expect(badgesOf(probe.html)).toEqual([{ kind: "bad", text: "failed" }]);
  });

  test("ready when every check passes; each failing check is named in the attention list", async () => {
    await plantHealthy();
    const ready = await readinessOverview(h.ctx);
    expect(ready.summary).toEqual({ ready: true, reasons: [] });
    const html = await (await h.request(PAGE, bearer())).text();
    expect(textById(html, "summary-state")).toBe("Ready");
    expect(classOf(html, "summary")).toBe("summary ready");
    expect(rowOf(html, "noise", "noise-7").cells).toMatchObject({ Noise: "1 %", Verdict: "within" });
    if (onSqlite) expect(textById(html, "backup-keep")).toBe("7");
    else expect(html).toContain('id="backups-not-applicable"');

    // An empty answer is not a reason (expected without TOKEN_MINT).
    await plantProbe("public_stats", NOW, { hadData: false });
    expect((await readinessOverview(h.ctx)).summary.ready).toBe(true);

    await plantProbe("share_link_validate", NOW, { status: null, ok: false, hadData: false, error: "timed out after 5000 ms" });
    await plantHour("2026-04-01T11", 100, 90);
    h.ctx.jobs.register({
      name: "test-failing",
      pattern: "0 0 * * * *",
      description: "fails on purpose",
      run() {
        throw new Error("boom");
      },
    });
    await h.ctx.jobs.runNow("test-failing");
    const o = await readinessOverview(h.ctx);
    expect(o.summary.ready).toBe(false);
    expect(o.summary.reasons).toEqual([
      "probe latest run failed: share_link_validate",
      "403 noise over the threshold in the 7-day window (9.09 %)",
      "403 noise over the threshold in the 14-day window (9.09 %)",
      "403 noise over the threshold in the 30-day window (9.09 %)",
      "job latest run failed: test-failing",
    ]);
    expect(await o.jobs.find((j) => j.name === "test-failing")!.failures_24h).toBe(1);
    const html2 = await (await h.request(PAGE, bearer())).text();
    expect(textById(html2, "summary-state")).toBe("Attention");
    expect(classOf(html2, "summary")).toBe("summary attention");
    expect(itemsOf(html2, "summary-reasons")).toEqual(o.summary.reasons);
    const job = rowOf(html2, "jobs", "job-test-failing");
    expect(job.cells).toMatchObject({ Outcome: "failed", "Failures, 24 h": "1" });
    // The count of failures is marked as a warning.
    expect(job.html).toContain('<td data-label="Failures, 24 h" class="warn">1</td>');

    // A day later without new probe runs: every probe is stale.
    h.clock.advance(25 * 3600_000);
    const later = await readinessOverview(h.ctx);
    expect(later.summary.reasons[0]).toBe(`probe has not run in the last 24 h: ${PROBES.map((p) => p.name).join(", ")}`);
  });

  test("a fresh deployment needs attention: no probe ran and (on SQLite) no backup exists; the page names the engine", async () => {
    const o = await readinessOverview(h.ctx);
    const never = `probe never ran: ${PROBES.map((p) => p.name).join(", ")}`;
    // On PostgreSQL the database's own backups apply: Herald cannot see them, and says so instead of a reason.
    expect(o.summary.reasons).toEqual(onSqlite ? [never, "no backup in the backups folder"] : [never]);
    expect(o.database.engine).toBe(testEngine());
    expect(o.backups.applies).toBe(onSqlite);
    const html = await (await h.request(PAGE, bearer())).text();
    expect(textById(html, "database-engine")).toMatch(onSqlite ? /^SQLite \d/ : /^PostgreSQL \d/);
    if (onSqlite) expect(html).toContain('id="backups-none"');
    else expect(html).toMatch(/id="backups-not-applicable">.*pg_dump.*pg_basebackup/);
    expect(html).toContain('id="probe-problems-none"');
  });

  test("the export links open with the session cookie; without credentials they stay 403", async () => {
    const cookie = await signedInCookie();
    const html = await (await h.request(PAGE, { headers: { cookie } })).text();
    expect(formOf(html, "/admin/sign-out")).not.toBeNull();
    const links = exportLinksOf(html);
    // The backups list is linked where Herald makes backups (SQLite); on PostgreSQL it answers 409.
    expect(links).toHaveLength(onSqlite ? 6 : 5);
    for (const link of links) {
      expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
      expect({ link, status: (await h.request(link)).status }).toEqual({ link, status: 403 });
    }
  });
});

describe("revoking an admin token", () => {
  test("stops its bearer calls and ends its browser sessions at once, audited", async () => {
    const cookie = await signedInCookie();
    const id = (await h.ctx.store.get<{ id: number }>("SELECT id FROM admin_tokens WHERE name = 'ops'"))!.id;
    expect((await h.request(PAGE, { headers: { cookie } })).status).toBe(200);

    const tokens = new AdminTokens(h.ctx);
    const r = await tokens.revoke(id, { kind: "cli", user: "test" });
    expect(r).toMatchObject({ alreadyRevoked: false, sessionsEnded: 1, token: { id, name: "ops", revoked_at: NOW } });

    expect((await h.request(PAGE, bearer())).status).toBe(403);
    expect((await h.request("/admin/backups", bearer())).status).toBe(403);
    const page = await h.request(PAGE, { headers: { cookie, accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/admin/sign-in?next=%2Fadmin%2Fops%2Freadiness");
    expect(await h.ctx.store.all("SELECT revoked_at FROM admin_sessions")).toEqual([{ revoked_at: NOW }]);

    // Again: nothing changes and nothing more is audited.
    expect(await tokens.revoke(id, { kind: "cli", user: "test" })).toMatchObject({ alreadyRevoked: true, sessionsEnded: 0 });
    const audit = await h.ctx.store.all("SELECT actor, action, target, details FROM admin_audit WHERE action = 'admin_token.revoke'");
    expect(audit).toEqual([
      { actor: "cli:test", action: "admin_token.revoke", target: String(id), details: JSON.stringify({ name: "ops", sessions_ended: 1 }) },
    ]);
    expect(async () => await tokens.revoke(9999, { kind: "cli", user: "test" })).toThrow('Admin token "9999" was not found');
  });

  test("a revoked ADMIN_TOKEN from the environment stays revoked when the process starts again", async () => {
    const secret = "e".repeat(40);
    const first = await openTestApp({ env: { ADMIN_TOKEN: secret } });
    try {
      const auth = { headers: { authorization: `Bearer ${secret}` } };
      // What `herald serve` does on every start (prepareCredentials in src/auth/first-start.ts).
      await new AdminTokens(first.ctx).ensureBootstrap(secret);
      expect((await first.request(PAGE, auth)).status).toBe(200);
      const env = (await new AdminTokens(first.ctx).list()).find((t) => t.name === "env:ADMIN_TOKEN")!;
      await new AdminTokens(first.ctx).revoke(env.id, { kind: "cli", user: "test" });
      // The next start: it must neither fail on the unique hash nor bring the token back.
      await new AdminTokens(first.ctx).ensureBootstrap(secret);
      expect((await first.request(PAGE, auth)).status).toBe(403);
      expect((await new AdminTokens(first.ctx).list()).filter((t) => t.name === "env:ADMIN_TOKEN")).toHaveLength(1);
    } finally {
      await first.close();
    }
  });
});
