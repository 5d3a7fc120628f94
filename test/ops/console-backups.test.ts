import { afterEach, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import {
  BROWSER_ACCEPT,
  csrfOf,
  currentNavOf,
  doneLineOf,
  errorLineOf,
  exportLinksOf,
  formPost,
  headingOf,
  hrefOf,
  pageAs,
  signedInCookie,
  tableOf,
  textById,
} from "../support/console";
import { createAdminToken } from "../support/partner";
import { operator } from "../status/support";
import { describeOn } from "../support/skipped";

// The console's backups page over real files: "Take a backup now" (a CSRF-checked form) makes a real VACUUM INTO
// copy through the same verb as POST /admin/backup/run (audited with the operator's actor); the list shows it
// with its integrity and sha256; its download opens with the session cookie and hashes to what the page says;
// refusals (a run in the same millisecond: 409, a folder the disk refuses: 503) come back as the page with the
// error for a browser and the JSON envelope for a script.

const PAGE = "/admin/console/backups";
const NOW = "2026-04-01T12:00:00.000Z";
let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const backupsJson = async (token: string) =>
  (await operator(h, token).get("/admin/backups?limit=200")).body as { total: number; backups: Array<{ name: string; sha256: string }> };

// The SQLite file's backups; on PostgreSQL the page says where backups are instead (test/ops/backups-postgres.test.ts).
describeOn("sqlite", "test/ops/console-backups.test.ts")("GET /admin/console/backups", () => {
  test("without credentials: 303 to the sign-in form; with a bearer token: the page, and its form works without a CSRF field", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const anon = await h.request(`${PAGE}?offset=0`, { headers: { accept: BROWSER_ACCEPT } });
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toBe(`/admin/sign-in?next=${encodeURIComponent(`${PAGE}?offset=0`)}`);
    expect((await h.request(`${PAGE}/run`, { method: "POST", headers: { accept: BROWSER_ACCEPT } })).status).toBe(303);
    expect((await h.request(`${PAGE}/run`, { method: "POST" })).status).toBe(403);

    const token = await createAdminToken(h, "bearer-ops");
    const page = await h.request(PAGE, { headers: { authorization: `Bearer ${token}` } });
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("private, no-store");
    const html = await page.text();
    expect(currentNavOf(html)).toBe(PAGE);
    expect(hrefOf(html, "Backups")).toBe(PAGE);
    expect(html).not.toContain('name="csrf_token"');
    const run = await h.request(`${PAGE}/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
      body: "",
    });
    expect(run.status).toBe(303);
    expect((await backupsJson(token)).total).toBe(1);
    expect((await h.request(`${PAGE}/run`, { method: "POST", headers: { authorization: "Bearer wrong" } })).status).toBe(403);
  });

  test("take one with the form: CSRF refused without or with a wrong token; then listed, downloaded with the session, sha256 matching, audited", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW), env: { BACKUP_KEEP: "2" } });
    const token = await createAdminToken(h, "ops");
    const cookie = await signedInCookie(h, token);
    const empty = await pageAs(h, PAGE, cookie);
    expect(empty.status).toBe(200);
    expect(headingOf(empty.html)).toBe("Backups");
    expect(empty.html).toContain("As of 2026-04-01 12:00:00 UTC; all times UTC.");
    expect(textById(empty.html, "list")).toBe("On-demand backups None.");
    expect(empty.html).toMatch(/class="summary attention"><p id="backup-age">No backup yet/);
    expect(textById(empty.html, "backup-keep")).toBe("2");
    expect(textById(empty.html, "backup-folder")).toBe(join(h.dir, "backups"));
    expect(textById(empty.html, "journal-mode")).toBe("wal what Litestream needs");
    expect(empty.html).toContain("LITESTREAM_REPLICA_URL");
    const csrf = csrfOf(empty.html);

    expect((await formPost(h, `${PAGE}/run`, cookie, {})).status).toBe(403);
    expect((await formPost(h, `${PAGE}/run`, cookie, { csrf_token: "wrong" })).status).toBe(403);
    expect((await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf, extra: "x" })).status).toBe(400);
    expect((await backupsJson(token)).total).toBe(0);

    const run = await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf });
    expect(run.status).toBe(303);
    const location = run.headers.get("location")!;
    expect(location).toBe(`${PAGE}?done=made&backup=herald-2026-04-01T12-00-00-000Z.db&pruned=0`);
    h.clock.advance(90 * 60_000);
    const { html } = await pageAs(h, location, cookie);
    expect(doneLineOf(html)).toBe("Backup herald-2026-04-01T12-00-00-000Z.db made and checked.");
    expect(html).toMatch(/class="summary ready"><p id="backup-age">The newest backup is 1 h 30 min old and passed its integrity check; 1 kept/);
    const [listed] = (await backupsJson(token)).backups;
    expect(tableOf(html, "backup-rows").map((r) => r.cells["SHA-256"])).toEqual([listed!.sha256]);
    const href = /<a href="(\/admin\/backups\/[^"]+)" download>/.exec(html)![1]!;
    expect(href).toBe(`/admin/backups/${listed!.name}`);

    const file = await h.request(href, { headers: { cookie } });
    expect(file.status).toBe(200);
    expect(file.headers.get("x-backup-sha256")).toBe(listed!.sha256);
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(listed!.sha256);
    expect(bytes.subarray(0, 15).toString()).toBe("SQLite format 3");
    expect((await h.request(href)).status).toBe(403);
    expect((await h.request(href, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);

    const audit = await h.ctx.store.all("SELECT actor, action FROM admin_audit WHERE action LIKE 'backup%'");
    expect(audit).toEqual([{ actor: expect.stringMatching(/^admin:ops#\d+$/), action: "backup.run" }]);

    // BACKUP_KEEP 2: the third run deletes the oldest, and the page says so.
    await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf });
    h.clock.advance(60_000);
    const third = await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf });
    expect(third.headers.get("location")).toEndWith("&pruned=1");
    expect((await pageAs(h, third.headers.get("location")!, cookie)).html).toContain("1 older backup deleted (BACKUP_KEEP).");
    expect((await backupsJson(token)).total).toBe(2);

    for (const link of exportLinksOf(html)) expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
  });

  test("a second run in the same millisecond: 409, the page with the error (the JSON envelope for a script); a refused folder: 503 page", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const token = await createAdminToken(h, "ops");
    const cookie = await signedInCookie(h, token);
    const csrf = csrfOf((await pageAs(h, PAGE, cookie)).html);
    expect((await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf })).status).toBe(303);

    const again = await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf });
    expect(again.status).toBe(409);
    expect(again.headers.get("content-type")).toContain("text/html");
    const html = await again.text();
    expect(errorLineOf(html)).toStartWith("No backup was made: A backup named herald-2026-04-01T12-00-00-000Z.db already exists");
    expect(tableOf(html, "backup-rows")).toHaveLength(1);
    const script = await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf }, null);
    expect(script.status).toBe(409);
    expect(((await script.json()) as { error: string }).error).toBe("conflict");
    expect((await backupsJson(token)).total).toBe(1);

    // The backups folder replaced by a place nobody can create files in (/proc): VACUUM INTO fails → 503 page.
    await h.close();
    h = await openTestApp({ clock: new FakeClock(NOW) });
    symlinkSync("/proc/self/fdinfo", join(h.dir, "backups"));
    const t2 = await createAdminToken(h, "ops");
    const c2 = await signedInCookie(h, t2);
    const refused = await formPost(h, `${PAGE}/run`, c2, { csrf_token: csrfOf((await pageAs(h, PAGE, c2)).html) });
    expect(refused.status).toBe(503);
    expect(errorLineOf(await refused.text())).toBe("No backup was made: The backup could not be written; see the server log");
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM admin_audit WHERE action LIKE 'backup%'")).toEqual({ n: 0 });
  });

  test("pages of 25, newest first; a copy without its manifest is 'unknown' and puts the summary on attention; the query is never echoed", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW), env: { BACKUP_KEEP: "50" } });
    const token = await createAdminToken(h, "ops");
    const made = await operator(h, token).post("/admin/backup/run", {});
    expect(made.status).toBe(200);
    const dir = join(h.dir, "backups");
    mkdirSync(dir, { recursive: true });
    // 25 older copies and one newer, all placed by hand (no manifest): 27 in all.
    for (let i = 1; i <= 25; i++) copyFileSync(made.body.backup.path, join(dir, `herald-2026-03-${String(i).padStart(2, "0")}T00-00-00-000Z.db`));
    copyFileSync(made.body.backup.path, join(dir, "herald-2026-04-01T12-30-00-000Z.db"));
    h.clock.advance(60 * 60_000);
    const cookie = await signedInCookie(h, token);

    const first = await pageAs(h, `${PAGE}?done=%3Cscript%3Ealert(1)%3C%2Fscript%3E`, cookie);
    expect(first.status).toBe(200);
    expect(first.html).not.toContain("<script");
    expect(doneLineOf(first.html)).toBeNull();
    expect(first.html).toMatch(
      /class="summary attention"><p id="backup-age">The newest backup, herald-2026-04-01T12-30-00-000Z\.db, has integrity &quot;unknown&quot;/,
    );
    expect(textById(first.html, "backup-range")).toStartWith("1–25 of 27, newest first.");
    expect(tableOf(first.html, "backup-rows")).toHaveLength(25);
    expect(tableOf(first.html, "backup-rows")[0]!.cells.Integrity).toBe("unknown");
    expect(hrefOf(first.html, "Older →")).toBe(`${PAGE}?offset=25`);
    expect(hrefOf(first.html, "← Newer")).toBeNull();

    const second = await pageAs(h, `${PAGE}?offset=25`, cookie);
    expect(textById(second.html, "backup-range")).toStartWith("26–27 of 27, newest first.");
    expect(tableOf(second.html, "backup-rows").at(-1)!.cells.Backup).toBe("herald-2026-03-01T00-00-00-000Z.db");
    expect(hrefOf(second.html, "← Newer")).toBe(PAGE);
    expect(hrefOf(second.html, "Older →")).toBeNull();

    const past = await pageAs(h, `${PAGE}?offset=500`, cookie);
    expect(textById(past.html, "list")).toBe("On-demand backups None on this page. ← Newer");
    expect((await h.request(`${PAGE}?offset=-1`, { headers: { cookie } })).status).toBe(400);
    expect((await h.request(`${PAGE}?offset=100001`, { headers: { cookie } })).status).toBe(400);
  });
});
