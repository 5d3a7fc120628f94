import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { csrfOf, formPost, pageAs, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";

// The console's backups page: "Take a backup now" (CSRF form) makes a real VACUUM INTO copy through the same
// verb as POST /admin/backup/run (audited); the list shows it with its integrity and sha256; its download opens
// with the session cookie and hashes to what the page says.

const PAGE = "/admin/console/backups";
let h: TestApp;
afterEach(() => h?.close());

describe("GET /admin/console/backups", () => {
  test("take one with the form, see it listed, download it with the session and check its sha256", async () => {
    h = createTestApp({ clock: new FakeClock("2026-04-01T12:00:00.000Z") });
    const token = createAdminToken(h, "ops");
    const cookie = await signedInCookie(h, token);
    const empty = await pageAs(h, PAGE, cookie);
    expect(empty.status).toBe(200);
    expect(empty.html).toContain('id="backups-none"');
    expect(empty.html).toContain("No backup yet.");
    const csrf = csrfOf(empty.html);
    expect((await formPost(h, `${PAGE}/run`, cookie, {})).status).toBe(403);
    expect((await formPost(h, `${PAGE}/run`, cookie, { csrf_token: "wrong" })).status).toBe(403);

    const run = await formPost(h, `${PAGE}/run`, cookie, { csrf_token: csrf });
    expect(run.status).toBe(303);
    const location = run.headers.get("location")!;
    expect(location).toBe(`${PAGE}?done=herald-2026-04-01T12-00-00-000Z.db&pruned=0`);
    h.clock.advance(90 * 60_000);
    const { html } = await pageAs(h, location, cookie);
    expect(html).toContain("Backup herald-2026-04-01T12-00-00-000Z.db made and checked.");
    expect(html).toContain("The newest backup is 1 h 30 min old");
    const href = /<a href="(\/admin\/backups\/[^"]+)" download>/.exec(html)![1]!;
    const sha = /<code>([0-9a-f]{64})<\/code>/.exec(html)![1]!;
    const file = await h.request(href, { headers: { cookie } });
    expect(file.status).toBe(200);
    expect(
      createHash("sha256")
        .update(Buffer.from(await file.arrayBuffer()))
        .digest("hex"),
    ).toBe(sha);
    expect((await h.request(href)).status).toBe(403);
    expect(h.ctx.db.sqlite.query("SELECT count(*) AS n FROM admin_audit WHERE action LIKE 'backup%'").get()).toEqual({ n: 1 });
    expect((await h.request("/admin/backups", { headers: { cookie } })).status).toBe(200);
  });
});
