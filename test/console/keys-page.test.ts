import { afterEach, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/log";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import {
  BROWSER_ACCEPT,
  badgesOf,
  csrfOf,
  currentNavOf,
  doneLineOf,
  elementById,
  errorLineOf,
  exportLinksOf,
  formOf,
  formPost,
  hrefOf,
  pageAs,
  signedInCookie,
  tableOf,
  textById,
  textOf,
} from "../support/console";
import { createAdminToken, createKey, signedInit, type TestKey } from "../support/partner";
import { operator } from "../status/support";

// The console's partners page over real keys: listed by partner (never a secret), filtered and paged; a rotation
// from the form shows the new secret once on a no-store page (never in a URL or the log), both secrets sign during
// the overlap, and a double post of one form rotates once; a disable needs a reason and the confirmation box, then
// the key is refused and cannot be rotated; forms refuse a missing or wrong CSRF token and change nothing.
// Effects are checked through the JSON API and the audit rows (the same verbs and actions as the JSON routes).

const PAGE = "/admin/console/partners";
const NOW = "2026-04-01T12:00:00.000Z";
let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const signedStatus = async (key: TestKey) => (await h.request("/api/partner/capabilities", signedInit(h, key, "GET", "/api/partner/capabilities"))).status;
const auditOf = async (keyId: string) =>
  (await h.ctx.store.all<{ actor: string; action: string }>("SELECT actor, action FROM admin_audit WHERE target = ? ORDER BY id", [keyId])).map(
    (a) => `${a.action} by ${a.actor.replace(/#\d+$/, "")}`,
  );
/** The partners listed, in order (each section's heading). */
const partnersOf = (html: string) => [...html.matchAll(/<section class="partner" id="[^"]*"><h2>([\s\S]*?)<\/h2>/g)].map((m) => textOf(m[1]!));
/** A key's row in its partner's table. */
const keyRowOf = (html: string, partnerSection: string, keyId: string) => tableOf(html, partnerSection).find((r) => r.id === `key-${keyId}`)!;
const keysJson = async (token: string, query = "") =>
  (await operator(h, token).get(`/admin/partners/keys${query}`)).body.keys as Array<{ key_id: string; status: string; disabled_reason: string | null }>;

describe("GET /admin/console/partners", () => {
  test("303 without credentials; the bearer token opens it (no CSRF field) and rotates with it", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const acme = await createKey(h, { partner: "Acme" });
    const anon = await h.request(`${PAGE}?mode=live`, { headers: { accept: BROWSER_ACCEPT } });
    expect((await h.request(`${PAGE}?mode=live`)).status).toBe(403); // a script: the JSON envelope, not a form
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toBe(`/admin/sign-in?next=${encodeURIComponent(`${PAGE}?mode=live`)}`);
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const rotate = (headers: Record<string, string>) => h.request(`${PAGE}/keys/${acme.keyId}/rotate`, { method: "POST", headers, body: "overlap_hours=1" });
    expect((await rotate({ ...form, accept: BROWSER_ACCEPT })).status).toBe(303);
    expect((await rotate(form)).status).toBe(403);
    const token = await createAdminToken(h, "script");
    const bearer = { authorization: `Bearer ${token}` };
    const page = await h.request(PAGE, { headers: bearer });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(tableOf(html, "partner-acme").map((r) => r.cells.Key)).toEqual([acme.keyId]);
    expect(html).not.toContain('name="csrf_token"');
    const rotated = await h.request(`${PAGE}/keys/${acme.keyId}/rotate`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/x-www-form-urlencoded" },
      body: "overlap_hours=0",
    });
    expect(rotated.status).toBe(200);
    expect(await rotated.text()).toContain("The old secret stopped working now.");
    expect(await signedStatus(acme)).toBe(401);
    expect(await auditOf(acme.keyId)).toEqual(["partner_key.create by cli:test", "partner_key.rotate by admin:script"]);
  });

  test("lists by partner with state, scopes, use; escapes a planted reason; filters with bounds; export links open with the session", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const token = await createAdminToken(h, "ops");
    const acme = await createKey(h, { partner: "Acme Corp.", scopes: ["read"] });
    const globex = await createKey(h, { partner: "Globex", mode: "sandbox" });
    const old = await createKey(h, { partner: "Globex" });
    expect((await operator(h, token).post(`/admin/partners/keys/${old.keyId}/disable`, { reason: "<script>alert(1)</script> leaked" })).status).toBe(200);
    h.clock.advance(60_000);
    expect(await signedStatus(acme)).toBe(200);
    const cookie = await signedInCookie(h, token);

    const page = await pageAs(h, PAGE, cookie);
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("private, no-store");
    expect(currentNavOf(page.html)).toBe(PAGE);
    expect(hrefOf(page.html, "Partners & keys")).toBe(PAGE);
    expect(page.html).toContain("As of 2026-04-01 12:01:00 UTC; all times UTC.");
    expect(partnersOf(page.html)).toEqual(["Acme Corp.", "Globex"]);
    expect(textById(page.html, "partner-acme-corp-")).toStartWith("Acme Corp. 1 key, 1 active ");
    expect(textById(page.html, "partner-globex")).toStartWith("Globex 2 keys, 1 active ");
    expect(textById(page.html, "key-count")).toBe("3 keys (2 active).");
    const acmeRow = keyRowOf(page.html, "partner-acme-corp-", acme.keyId);
    expect(acmeRow.cells).toMatchObject({
      Mode: "live",
      State: "active",
      Scopes: "read",
      Created: "2026-04-01 12:00:00 UTC",
      "Last used": "2026-04-01 12:01:00 UTC",
    });
    expect(badgesOf(acmeRow.html)).toEqual([{ kind: "ok", text: "active" }]);
    // On a phone each cell is labelled with its column.
    expect([...acmeRow.html.matchAll(/data-label="([^"]*)"/g)].map((m) => m[1])).toEqual(Object.keys(acmeRow.cells));
    expect(keyRowOf(page.html, "partner-globex", old.keyId).cells.State).toBe("disabled <script>alert(1)</script> leaked");
    expect(page.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; leaked");
    expect(page.html).not.toContain("<script");
    for (const k of [acme, globex, old]) expect(page.html).not.toContain(k.secret);
    // A disabled key has no forms.
    expect(page.html).not.toContain(`/keys/${old.keyId}/rotate`);
    expect(formOf(page.html, `${PAGE}/keys/${globex.keyId}/rotate`)).toMatchObject({ overlap_hours: "24" });
    expect([...(elementById(page.html, "partner-names") ?? "").matchAll(/<option value="([^"]*)">/g)].map((m) => m[1])).toEqual(["Acme Corp.", "Globex"]);

    expect(textById((await pageAs(h, `${PAGE}?mode=sandbox`, cookie)).html, "key-count")).toBe("1 key (1 active).");
    expect(textById((await pageAs(h, `${PAGE}?status=disabled`, cookie)).html, "key-count")).toBe("1 key (0 active).");
    const globexOnly = await pageAs(h, `${PAGE}?partner=Globex&mode=&status=active`, cookie);
    expect(textById(globexOnly.html, "key-count")).toBe("1 key (1 active).");
    expect(formOf(globexOnly.html, PAGE)).toMatchObject({ partner: "Globex", mode: "", status: "active" });
    expect(partnersOf(globexOnly.html)).toEqual(["Globex"]);
    expect(textById((await pageAs(h, `${PAGE}?partner=Nobody`, cookie)).html, "keys-none")).toBe("None.");

    const bad = await pageAs(h, `${PAGE}?mode=prod&partner=%3Cb%3E`, cookie);
    expect(bad.status).toBe(400);
    expect(errorLineOf(bad.html)).toBe(
      "That filter was not applied: a partner name is 1–64 letters, digits, spaces, dots, dashes or underscores; mode is sandbox or live.",
    );
    expect(bad.html).not.toContain("<b>");
    expect(textById(bad.html, "key-count")).toStartWith("3 keys");
    expect((await h.request(`${PAGE}?partner=${"x".repeat(65)}`, { headers: { cookie } })).status).toBe(400);
    expect((await h.request(`${PAGE}?offset=-1`, { headers: { cookie } })).status).toBe(400);

    for (const link of exportLinksOf(page.html))
      expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
  });

  test("rotate: CSRF refused and nothing changed; the secret once on a no-store page, never in the log; a double post rotates once", async () => {
    const lines: string[] = [];
    h = await openTestApp({ clock: new FakeClock(NOW), log: createLogger("debug", (l) => lines.push(l)) });
    const token = await createAdminToken(h, "ops");
    const acme = await createKey(h, { partner: "Acme Corp." });
    const cookie = await signedInCookie(h, token);
    const first = await pageAs(h, PAGE, cookie);
    const csrf = csrfOf(first.html);
    const formId = formOf(first.html, `${PAGE}/keys/${acme.keyId}/rotate`)!.form_id!;
    expect(formId).toMatch(/^[0-9a-f]{32}$/);

    expect((await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1", form_id: formId })).status).toBe(403);
    expect((await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1", form_id: formId, csrf_token: "nope" })).status).toBe(403);
    expect(await auditOf(acme.keyId)).toEqual(["partner_key.create by cli:test"]);
    expect(await signedStatus(acme)).toBe(200);

    for (const hours of ["25", "-1", "x"]) {
      const refused = await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: hours, csrf_token: csrf });
      expect(refused.status).toBe(400);
      expect(errorLineOf(await refused.text())).toStartWith("Nothing was changed: the old secret may keep working 0 to 24 hours.");
    }

    const rotated = await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1", form_id: formId, csrf_token: csrf });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("cache-control")).toBe("private, no-store");
    expect(rotated.headers.get("location")).toBeNull();
    const html = await rotated.text();
    const secret = textById(html, "secret");
    expect(secret).toStartWith("hsk_live_");
    expect(html).toContain("Copy it now: it is shown this once.");
    expect(html).toContain("The old secret keeps working until 2026-04-01 13:00:00 UTC");
    expect(html).not.toContain('id="replayed"');
    expect(await signedStatus({ ...acme, secret })).toBe(200);
    expect(await signedStatus(acme)).toBe(200);

    // The same form posted again (a double click): the same secret, no second rotation.
    const twice = await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1", form_id: formId, csrf_token: csrf });
    expect(twice.status).toBe(200);
    const html2 = await twice.text();
    expect(textById(html2, "secret")).toBe(secret);
    expect(textById(html2, "replayed")).toStartWith("This form was sent twice");
    expect(await auditOf(acme.keyId)).toEqual(["partner_key.create by cli:test", "partner_key.rotate by admin:ops"]);
    h.clock.advance(10 * 60_000);
    const stale = await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1", form_id: formId, csrf_token: csrf });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain("this form was already used to rotate a key (2026-04-01 12:00:00 UTC). Reload the page to rotate again.");
    expect(await signedStatus(acme)).toBe(200);
    h.clock.advance(60 * 60_000);
    expect(await signedStatus(acme)).toBe(401);

    const later = await pageAs(h, PAGE, cookie);
    expect(later.html).not.toContain(secret);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes(secret) || l.includes(secret.slice(9)))).toEqual([]);
  });

  test("disable: box and reason required; then refused for requests and for rotation; unknown keys 404; audited as from the API", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const token = await createAdminToken(h, "ops");
    const acme = await createKey(h, { partner: "Acme Corp." });
    const cookie = await signedInCookie(h, token);
    const csrf = csrfOf((await pageAs(h, PAGE, cookie)).html);
    const disable = (fields: Record<string, string>, keyId = acme.keyId) => formPost(h, `${PAGE}/keys/${keyId}/disable`, cookie, fields);

    expect((await disable({ reason: "leaked", confirm: "yes" })).status).toBe(403);
    expect((await disable({ reason: "leaked", confirm: "yes", csrf_token: "nope" })).status).toBe(403);
    const noBox = await disable({ reason: "leaked", csrf_token: csrf });
    expect(noBox.status).toBe(400);
    expect(errorLineOf(await noBox.text())).toStartWith("Nothing was changed: tick the box");
    const noReason = await disable({ reason: "   ", confirm: "yes", csrf_token: csrf });
    expect(noReason.status).toBe(400);
    expect(await noReason.text()).toContain("say why the key is disabled");
    expect((await keysJson(token, "?status=disabled")).length).toBe(0);
    expect(await signedStatus(acme)).toBe(200);

    const off = await disable({ reason: "leaked in a log", confirm: "yes", csrf_token: csrf });
    expect(off.status).toBe(303);
    expect(off.headers.get("location")).toBe(`${PAGE}?done=disabled&key=${acme.keyId}`);
    const after = await pageAs(h, off.headers.get("location")!, cookie);
    expect(doneLineOf(after.html)).toBe(`Key ${acme.keyId} disabled: requests with it are refused from now on.`);
    const disabled = keyRowOf(after.html, "partner-acme-corp-", acme.keyId);
    expect(disabled.cells.State).toBe("disabled leaked in a log");
    expect(badgesOf(disabled.html)).toEqual([{ kind: "bad", text: "disabled" }]);
    expect(await keysJson(token, "?status=disabled")).toEqual([expect.objectContaining({ key_id: acme.keyId, disabled_reason: "leaked in a log" })]);
    expect(await signedStatus(acme)).toBe(403);

    const rotate = await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1", csrf_token: csrf });
    expect(rotate.status).toBe(409);
    expect(errorLineOf(await rotate.text())).toStartWith(`Nothing was changed: Key ${acme.keyId} is disabled; create a new key instead of rotating it`);
    const script = await formPost(h, `${PAGE}/keys/${acme.keyId}/rotate`, cookie, { overlap_hours: "1", csrf_token: csrf }, null);
    expect(script.status).toBe(409);
    expect(((await script.json()) as { error: string }).error).toBe("conflict");
    for (const id of ["hk_live_nope", "not-a-key"]) {
      const missing = await disable({ reason: "x", confirm: "yes", csrf_token: csrf }, id);
      expect(missing.status).toBe(404);
      expect(errorLineOf(await missing.text())).not.toBeNull();
    }
    expect(await auditOf(acme.keyId)).toEqual(["partner_key.create by cli:test", "partner_key.disable by admin:ops"]);
  });

  test("more keys than a page: 50 a page, sorted by partner, the filter kept in the page links", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    const token = await createAdminToken(h, "ops");
    for (let i = 0; i < 53; i++) await createKey(h, { partner: i % 2 ? "Beta" : "Alpha", mode: "sandbox" });
    await createKey(h, { partner: "Alpha" });
    const cookie = await signedInCookie(h, token);
    const first = await pageAs(h, `${PAGE}?mode=sandbox`, cookie);
    expect(textById(first.html, "key-count")).toBe("53 keys (53 active); showing 1–50.");
    expect(first.html.match(/<tr id="key-/g)).toHaveLength(50);
    expect(partnersOf(first.html)).toEqual(["Alpha", "Beta"]);
    expect(hrefOf(first.html, "Next →")).toBe(`${PAGE}?mode=sandbox&offset=50`);
    const second = await pageAs(h, `${PAGE}?mode=sandbox&offset=50`, cookie);
    expect(textById(second.html, "key-count")).toBe("53 keys (53 active); showing 51–53.");
    expect(second.html.match(/<tr id="key-/g)).toHaveLength(3);
    expect(hrefOf(second.html, "← Previous")).toBe(`${PAGE}?mode=sandbox`);
    expect(second.html).not.toContain('id="key-pages-older"');
  });
});
