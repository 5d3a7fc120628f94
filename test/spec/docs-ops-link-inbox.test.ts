// Docs audit: docs/ops-link-inbox.md's event export options, download tokens and telemetry against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const E = "/admin/ops/link-inbox/events";

describe("docs/ops-link-inbox.md", () => {
  // docs/ops-link-inbox.md:256-300 — the export's shape, echo, count_only, checksum, compress, debug, at_to check
  test("events export options", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h, "alice")}` };
    const r = await h.json(`${E}/export.json?event=incident.opened,incident.resolved&status_code_family=5xx&fields=at,event,target,status_code&limit=2`, {
      headers: auth,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 0, count: 0, truncated: false, fields: ["at", "event", "target", "status_code"], events: [] });
    expect(r.body.query).toEqual({
      event: ["incident.opened", "incident.resolved"],
      event_prefix: null,
      at_from: null,
      at_to: null,
      status_code_family: ["5xx"],
      skip_reason: [],
      issue_id: null,
      url_contains: null,
      window_preset: null,
      limit: 2,
    });
    expect(r.body.window).toEqual({ preset: null, from: null, to: null, note: null });
    const rep = await h.json(`${E}/export.json?event=alert.fired&event=alert.resolved`, { headers: auth });
    expect(rep.body.query.event).toEqual(["alert.fired", "alert.resolved"]);
    expect((await h.json(`${E}/export.json`, { headers: auth })).body.query.limit).toBe(1000);
    const co = await h.json(`${E}/export.json?count_only=1`, { headers: auth });
    expect(co.body.events).toBeUndefined();
    expect(co.body).toMatchObject({ total: 0, count: 0 });
    const coCsv = await (await h.request(`${E}/export.csv?count_only=1`, { headers: auth })).text();
    expect(coCsv.split("\r\n")[0]).toBe("count");
    const ck = await h.request(`${E}/export.csv?skip_reason=cooldown&fields=id,event,issue_id&checksum=1`, { headers: auth });
    expect(ck.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const ckBody = new Uint8Array(await ck.arrayBuffer());
    expect(ck.headers.get("x-export-sha256")).toBe(createHash("sha256").update(ckBody).digest("hex"));
    expect(new TextDecoder().decode(ckBody).split("\r\n")[0]).toBe("id,event,issue_id");
    const gz = await h.request(`${E}/export.json?compress=1&checksum=1`, { headers: auth });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    const gzBytes = new Uint8Array(await gz.arrayBuffer());
    expect(gz.headers.get("x-export-sha256")).toBe(createHash("sha256").update(gzBytes).digest("hex"));
    expect(JSON.parse(gunzipSync(gzBytes).toString()).success).toBe(true);
    const dbg = await h.json(`${E}/export.json?debug=1`, { headers: auth });
    expect(JSON.stringify(dbg.body.debug.explanation)).toContain("no filter");
    expect(Object.keys(dbg.body.debug.timings_ms).sort()).toEqual(["count", "resolve", "rows"]);
    const dbgCsv = await h.request(`${E}/export.csv?debug=1`, { headers: auth });
    expect(dbgCsv.headers.get("server-timing")).toBeTruthy();
    const rev = await h.json(`${E}/export.json?at_from=2026-01-01T00:00:00Z&at_to=2026-01-01T00:00:00Z`, { headers: auth });
    expect([rev.status, rev.body.details?.[0]?.field]).toEqual([400, "query.at_to"]);
    const both = await h.json(`${E}/export.json?download_token=1&count_only=1`, { headers: auth });
    expect(both.status).toBe(400);
    const bad = await h.json(`${E}/export.json?fields=id,nope`, { headers: auth });
    expect([bad.status, bad.body.details?.[0]?.field]).toEqual([400, "query.fields"]);
    const wp = await h.json(`${E}/export.json?window_preset=last_outage`, { headers: auth });
    expect(wp.body.total).toBe(0);
    expect(typeof wp.body.window.note).toBe("string");
  });

  // docs/ops-link-inbox.md:333-372 — download tokens: once, 410 after use, 403 to another operator, 404 unknown, expiry
  test("download tokens", async () => {
    h = await openTestApp();
    const alice = { authorization: `Bearer ${await createAdminToken(h, "alice")}` };
    const bob = { authorization: `Bearer ${await createAdminToken(h, "bob")}` };
    const t = await h.json(`${E}/export.csv?event=incident.opened&fields=id,event&download_token=1`, { headers: alice });
    expect(t.status).toBe(200);
    expect(t.body.download_token).toMatch(/^hdt_[A-Za-z0-9_-]{43}$/);
    expect(t.body).toMatchObject({
      export: "/admin/ops/link-inbox/events/export.csv",
      expires_at: "2026-01-01T00:10:00.000Z",
      requested_by: "admin:alice#1",
      download_url: `/admin/ops/link-inbox/events/export-download.csv?download_token=${t.body.download_token}`,
    });
    expect(t.body.params).toMatchObject({ event: ["incident.opened"], fields: ["id", "event"] });
    const other = await h.json(t.body.download_url, { headers: bob });
    expect([other.status, other.body.error]).toEqual([403, "forbidden"]);
    const d = await h.request(t.body.download_url, { headers: alice });
    expect(d.status).toBe(200);
    const bytes = new Uint8Array(await d.arrayBuffer());
    expect(d.headers.get("x-export-sha256")).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(new TextDecoder().decode(bytes).split("\r\n")[0]).toBe("id,event");
    const again = await h.json(t.body.download_url, { headers: alice });
    expect([again.status, again.body.error]).toEqual([410, "download_token_used"]);
    const nf = await h.json(`${E}/export-download.csv?download_token=hdt_${"A".repeat(43)}`, { headers: alice });
    expect([nf.status, nf.body.error]).toEqual([404, "not_found"]);
    const t2 = await h.json(`${E}/export.json?download_token=1`, { headers: alice });
    h.clock.advanceSeconds(601);
    const exp = await h.json(t2.body.download_url, { headers: alice });
    expect([exp.status, exp.body.error]).toEqual([410, "download_token_expired"]);
    const tel = await h.json(`${E}/export-telemetry.json?requested_by=${encodeURIComponent("admin:alice#1")}`, { headers: alice });
    expect(tel.status).toBe(200);
    expect(tel.body.requested_by).toBe("admin:alice#1");
    expect(tel.body.download_tokens).toEqual({ requested: 2, used: 1, expired: 1, pending: 0 });
    expect(tel.body.exports.by_source.token.downloads).toBe(1);
  });

  // docs/ops-link-inbox.md:105-123, 200-216 — verification summary and resolved verification read-models
  test("verification summary and resolved verification", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const v = await h.json("/admin/ops/link-inbox/verification-summary.json?days=7", { headers: auth });
    expect(v.status).toBe(200);
    const rv = await h.request("/admin/ops/digest/resolved-verification.json?days=7", { headers: auth });
    expect(rv.status).toBe(200);
    expect(rv.headers.get("cache-control")).toBe("private, no-cache");
    const etag = rv.headers.get("etag")!;
    expect(etag.startsWith('"')).toBe(true);
    expect((await h.request("/admin/ops/digest/resolved-verification.json?days=7", { headers: { ...auth, "if-none-match": etag } })).status).toBe(304);
    const lm = rv.headers.get("last-modified")!;
    expect((await h.request("/admin/ops/digest/resolved-verification.json?days=7", { headers: { ...auth, "if-modified-since": lm } })).status).toBe(304);
    const targets = await h.json("/admin/ops/link-inbox/targets.json", { headers: auth });
    expect(targets.status).toBe(200);
  });
});
