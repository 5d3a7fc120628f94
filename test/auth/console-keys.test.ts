import { afterEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { csrfOf, exportLinksOf, formPost, pageAs, signedInCookie } from "../support/console";
import { createAdminToken, createKey, signedInit } from "../support/partner";

// The console's partners page over real keys: listed by partner (never a secret), a rotation from the form shows
// the new secret once on a no-store page and both secrets sign during the overlap; a disable needs a reason and
// the confirmation box, then the key is refused; forms refuse a missing or wrong CSRF token. Audited like the API.

const PAGE = "/admin/console/partners";
let h: TestApp;
afterEach(() => h?.close());

const status = async (key: { keyId: string; secret: string; mode: "live" | "sandbox" }) =>
  (await h.request("/api/partner/capabilities", signedInit(h, key, "GET", "/api/partner/capabilities"))).status;

describe("GET /admin/console/partners", () => {
  test("rotate shows the secret once (no-store), both secrets work in the overlap; disable needs reason and confirmation", async () => {
    h = createTestApp({ clock: new FakeClock("2026-04-01T12:00:00.000Z") });
    const token = createAdminToken(h, "ops");
    const acme = createKey(h, { partner: "Acme Corp." });
    createKey(h, { partner: "Globex", mode: "sandbox" });
    const cookie = await signedInCookie(h, token);
    const first = await pageAs(h, PAGE, cookie);
    expect(first.status).toBe(200);
    expect(first.html).toContain("<h2>Acme Corp.</h2>");
    expect(first.html).toContain(`<code>${acme.keyId}</code>`);
    expect(first.html).not.toContain(acme.secret);
    expect(first.html).toMatch(/id="key-count">2 keys/);
    expect((await pageAs(h, `${PAGE}?mode=sandbox`, cookie)).html).toMatch(/id="key-count">1 key\./);
    for (const link of exportLinksOf(first.html))
      expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
    const csrf = csrfOf(first.html);

    expect((await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1" })).status).toBe(403);
    const rotated = await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1", csrf_token: csrf });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("cache-control")).toBe("private, no-store");
    const html = await rotated.text();
    const secret = /<textarea id="secret"[^>]*>([^<]+)<\/textarea>/.exec(html)![1]!;
    expect(secret).toStartWith("hsk_live_");
    expect(html).toContain("shown this once");
    expect(await status({ ...acme, secret })).toBe(200);
    expect(await status(acme)).toBe(200);
    h.clock.advance(2 * 3_600_000);
    expect(await status(acme)).toBe(401);
    expect((await pageAs(h, PAGE, cookie)).html).not.toContain(secret);

    // Disable: the box and a reason are required; then the key is refused; a disabled key cannot be rotated (409 page).
    const noBox = await formPost(h, `${PAGE}/keys/${acme.keyId}/disable`, cookie, { reason: "leaked", csrf_token: csrf });
    expect(noBox.status).toBe(400);
    expect(await noBox.text()).toContain('id="form-error"');
    const off = await formPost(h, `${PAGE}/keys/${acme.keyId}/disable`, cookie, { reason: "leaked in a log", confirm: "yes", csrf_token: csrf });
    expect(off.status).toBe(303);
    expect(off.headers.get("location")).toBe(`${PAGE}?done=disabled&key=${acme.keyId}`);
    expect(await status({ ...acme, secret })).not.toBe(200);
    expect((await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1", csrf_token: csrf })).status).toBe(409);
    expect((await formPost(h, `${PAGE}/keys/hk_live_nope/rotate`, cookie, { overlap_hours: "1", csrf_token: csrf })).status).toBe(404);
    const audit = h.ctx.db.sqlite.query("SELECT action FROM admin_audit WHERE target = ? ORDER BY id").all(acme.keyId) as Array<{ action: string }>;
    expect(audit.map((a) => a.action)).toEqual(["partner_key.create", "partner_key.rotate", "partner_key.disable"]);
  });
});
