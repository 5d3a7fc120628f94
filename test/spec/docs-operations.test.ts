// Docs audit: the backup, jobs, sign-in and sessions examples of docs/operations.md against the real app (SQLite).
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/operations.md", () => {
  // docs/operations.md:204-207, 290-347, 350-372 — backup run answer, status, list, download headers, name rules
  test("backup run, status, list and download", async () => {
    h = createTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const r = await h.json("/admin/backup/run", { method: "POST", headers: auth });
    expect(r.status).toBe(200);
    expect(r.body.backup).toMatchObject({ name: "herald-2026-01-01T00-00-00-000Z.db", created_at: "2026-01-01T00:00:00.000Z", integrity: "ok" });
    expect(r.body.backup.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.pruned).toEqual([]);
    const st = await h.json("/admin/backup/status", { headers: auth });
    expect(st.body.running).toBeNull();
    expect(st.body.last).toMatchObject({ outcome: "ok", name: r.body.backup.name, error: null });
    const l = await h.json("/admin/backups?limit=10", { headers: auth });
    expect(l.body).toMatchObject({
      count: 1,
      total: 1,
      keep: 7,
      query: { limit: 10, offset: 0 },
      pagination: { has_more: false, next_offset: null, next_cursor: null },
    });
    expect(l.body.backups[0]).toMatchObject({ name: r.body.backup.name, size_bytes: r.body.backup.size_bytes, sha256: r.body.backup.sha256, integrity: "ok" });
    expect((await h.json("/admin/backups", { headers: auth })).body.query.limit).toBe(50);
    expect((await h.json("/admin/backups?limit=201", { headers: auth })).status).toBe(400);
    const d = await h.request(`/admin/backups/${r.body.backup.name}`, { headers: auth });
    expect(d.status).toBe(200);
    expect(d.headers.get("content-type")).toBe("application/vnd.sqlite3");
    expect(d.headers.get("content-disposition")).toBe(`attachment; filename="${r.body.backup.name}"`);
    expect(d.headers.get("cache-control")).toBe("private, no-store");
    expect(d.headers.get("x-backup-integrity")).toBe("ok");
    const bytes = new Uint8Array(await d.arrayBuffer());
    const hex = createHash("sha256").update(bytes).digest("hex");
    expect(d.headers.get("x-backup-sha256")).toBe(hex);
    const b64 = createHash("sha256").update(bytes).digest("base64");
    expect(d.headers.get("digest")).toBe(`sha-256=${b64}`);
    expect(d.headers.get("repr-digest")).toBe(`sha-256=:${b64}:`);
    expect(Number(d.headers.get("content-length"))).toBe(bytes.length);
    const head = await h.request(`/admin/backups/${r.body.backup.name}`, { method: "HEAD", headers: auth });
    expect([head.status, head.headers.get("x-backup-sha256")]).toEqual([200, hex]);
    for (const bad of ["a%2Fb", "herald-x.db.json", `${r.body.backup.name}.json`]) {
      const b = await h.json(`/admin/backups/${bad}`, { headers: auth });
      expect([bad, b.status, b.body.error]).toEqual([bad, 400, "invalid_query"]);
    }
    const nf = await h.json("/admin/backups/herald-2020-01-01T00-00-00-000Z.db", { headers: auth });
    expect([nf.status, nf.body.error]).toEqual([404, "not_found"]);
  });

  // docs/operations.md:255-263 — wait=false answers 202 with backup_id and status_url
  test("backup run with wait=false answers 202", async () => {
    h = createTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const r = await h.json("/admin/backup/run?wait=false", { method: "POST", headers: auth });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ success: true, status_url: "/admin/backup/status" });
    expect(r.body.backup_id).toMatch(/^bkp_[0-9a-f]{16}$/);
    for (let i = 0; i < 200; i++) {
      const s = await h.json("/admin/backup/status", { headers: auth });
      if (s.body.running === null) break;
      await Bun.sleep(50);
    }
    expect((await h.json("/admin/backup/status", { headers: auth })).body.last.id).toBe(r.body.backup_id);
  });

  // docs/operations.md:461-470 — jobs list and run
  test("jobs list and run", async () => {
    h = createTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const l = await h.json("/admin/jobs", { headers: auth });
    expect(l.status).toBe(200);
    expect(l.body.query).toMatchObject({ limit: 50, offset: 0 });
    expect(typeof l.body.total).toBe("number");
    const r = await h.json("/admin/jobs/request-log-prune/run", { method: "POST", headers: auth });
    expect(r.status).toBe(200);
    expect(r.body.run).toMatchObject({ name: "request-log-prune", ok: true, error: null });
    expect(typeof r.body.run.run_id).toBe("number");
    const nf = await h.json("/admin/jobs/nope/run", { method: "POST", headers: auth });
    expect([nf.status, nf.body.error]).toEqual([404, "not_found"]);
  });

  // docs/operations.md:650-713 — sign-in form cookie, wrong token 401 JSON, missing CSRF 403; sign-out 303/403
  test("sign-in and sign-out", async () => {
    h = createTestApp();
    const token = await createAdminToken(h);
    const f = await h.request("/admin/sign-in?next=%2Fadmin%2Fops%2Fconfig");
    expect(f.status).toBe(200);
    expect(f.headers.get("cache-control")).toBe("private, no-store");
    const cookie = f.headers.get("set-cookie") ?? "";
    expect(cookie).toContain("herald_signin_csrf=");
    expect(cookie).toContain("Max-Age=1800");
    expect(cookie).toContain("Path=/admin/sign-in");
    const csrf = /herald_signin_csrf=([^;]+)/.exec(cookie)![1]!;
    const post = (body: string, c = `herald_signin_csrf=${csrf}`) =>
      h.request("/admin/sign-in", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie: c }, body });
    const wrong = await post(`token=hat_nope&csrf_token=${csrf}&next=%2Fadmin%2Fops%2Fconfig`);
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as any).error).toBe("unauthorized");
    const noCsrf = await post(`token=${token}&next=%2Fadmin%2Fops%2Fconfig`);
    expect(noCsrf.status).toBe(403);
    const ok = await post(`token=${encodeURIComponent(token)}&csrf_token=${csrf}&next=%2Fadmin%2Fops%2Fconfig`);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/admin/ops/config");
    const sc = ok.headers.getSetCookie().join("\n");
    expect(sc).toContain("herald_admin_session=");
    expect(sc).toContain("Max-Age=28800");
    const so = await h.request("/admin/sign-out", { method: "POST" });
    expect(so.status).toBe(403);
    const sob = await h.request("/admin/sign-out", { method: "POST", headers: { authorization: `Bearer ${token}` } });
    expect(sob.status).toBe(303);
  });

  // docs/operations.md:719-754 — sessions list defaults; revoke: bad handle 400, unknown 404
  test("sessions", async () => {
    h = createTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const l = await h.json("/admin/sessions", { headers: auth });
    expect(l.status).toBe(200);
    expect(l.body.query).toEqual({ limit: 50, offset: 0, cursor: null });
    const bad = await h.json("/admin/sessions/xyz/revoke", { method: "POST", headers: auth });
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_query"]);
    const nf = await h.json("/admin/sessions/0123456789abcdef/revoke", { method: "POST", headers: auth });
    expect([nf.status, nf.body.error]).toEqual([404, "not_found"]);
  });
});
