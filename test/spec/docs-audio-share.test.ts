// Docs audit: the examples and tables of docs/audio-share.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const B = "/api/public/audio-share-links";
const ENV = { AUDIO_SHARE_ALLOWED_HOSTS: "cdn.example.com", AUDIO_SHARE_DENIED_HOSTS: "evil.test" };

describe("docs/audio-share.md", () => {
  // docs/audio-share.md:89 — policy.json fields, expires_in bounds 60 … 2592000, default 604800
  test("policy.json answers the documented fields and expiry bounds", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(`${B}/policy.json`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, base_host: "localhost:3000", denied_hosts: ["evil.test"], max_url_length: 2048 });
    expect(r.body.allowed_hosts).toContain("cdn.example.com");
    expect(r.body.expires_in).toEqual({ min_seconds: 60, max_seconds: 2592000, default_seconds: 604800 });
    for (const k of ["schemes", "redirect_params", "rules"]) expect(Array.isArray(r.body[k])).toBe(true);
  });

  // docs/audio-share.md:80-84 — userinfo destination: 400 destination_host_denied, host evil.test, reason userinfo
  test("a userinfo destination is refused with reason userinfo", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(`${B}?track_url=https://cdn.example.com@evil.test/`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: "destination_host_denied", host: "evil.test", reason: "userinfo" });
    expect(r.body.details).toMatchObject({ field: "track_url", host: "evil.test", reason: "userinfo" });
  });

  // docs/audio-share.md:106-134 — the signed build example: fields, expires_at = now + 900 s, token form
  test("build with use_short, token_mode=signed and expires_in=900 answers the documented shape", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(
      `${B}?track_url=/tracks/42&title=Night%20Drive&text=Listen%20to%20Night%20Drive&channels=x,telegram,email,slack&use_short=1&token_mode=signed&expires_in=900`,
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, source: "track", title: "Night Drive", signed: true, warnings: [] });
    expect(r.body.channels).toEqual(["x", "telegram", "email", "slack"]);
    expect(Object.keys(r.body.share_urls)).toEqual(["x", "telegram", "email", "slack"]);
    expect(r.body.short_code).toMatch(/^[a-z2-7]{16}$/);
    expect(r.body.short_url).toBe(`http://localhost:3000/s/audio/${r.body.short_code}`);
    expect(r.body.share_urls.slack).toBe(r.body.short_url);
    expect(r.body.expires_at).toBe("2026-01-01T00:15:00.000Z");
    expect(r.body.token).toMatch(new RegExp(`^${r.body.short_code}\\.1767226500\\.[A-Za-z0-9_-]{43}$`));
    const x = r.body.shares.find((s: any) => s.channel === "x");
    expect(x).toMatchObject({ kind: "microblog", limit: 280, truncated: false });
    const slack = r.body.shares.find((s: any) => s.channel === "slack");
    expect(slack).toMatchObject({ kind: "workspace_chat", limit: 40000, message: `<${r.body.short_url}|Night Drive> Listen to Night Drive` });
  });

  // docs/audio-share.md:136-138 — without use_short: short_url, short_code, expires_at, token null, signed false
  test("without use_short the short fields are null and signed is false", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(`${B}?track_url=/tracks/42&channels=x`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ short_url: null, short_code: null, expires_at: null, token: null, signed: false });
  });

  // docs/audio-share.md:103 — expires_in without a short link is ignored with warning expires_in_ignored
  test("expires_in without a short link gives warning expires_in_ignored", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(`${B}?track_url=/tracks/42&expires_in=900`);
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body.warnings)).toContain("expires_in_ignored");
  });

  // docs/audio-share.md:102 — token_mode=signed implies use_short with warning signed_implies_short
  test("token_mode=signed alone implies a short link with warning signed_implies_short", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(`${B}?track_url=/tracks/42&token_mode=signed`);
    expect(r.status).toBe(200);
    expect(r.body.signed).toBe(true);
    expect(r.body.short_code).toMatch(/^[a-z2-7]{16}$/);
    expect(r.body.expires_at).toBe("2026-01-08T00:00:00.000Z");
    expect(JSON.stringify(r.body.warnings)).toContain("signed_implies_short");
  });

  // docs/audio-share.md:99 — prefer=file without file_url: warning prefer_file_without_file_url; both given: file_url_ignored
  test("prefer warnings", async () => {
    h = await openTestApp({ env: ENV });
    const a = await h.json(`${B}?track_url=/tracks/42&prefer=file`);
    expect(JSON.stringify(a.body.warnings)).toContain("prefer_file_without_file_url");
    const b = await h.json(`${B}?track_url=/tracks/42&file_url=/a.mp3`);
    expect(b.body.source).toBe("track");
    expect(JSON.stringify(b.body.warnings)).toContain("file_url_ignored");
  });

  // docs/audio-share.md:145-158 — the channel registry and its aliases
  test("channels.json lists the documented ids, kinds and limits; aliases resolve", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(`${B}/channels.json`);
    expect(r.status).toBe(200);
    const list: any[] = r.body.channels;
    const byId = Object.fromEntries(list.map((c) => [c.id, c]));
    for (const id of ["x", "bluesky", "telegram", "whatsapp", "email", "slack", "teams", "facebook", "linkedin", "reddit", "copy-link"])
      expect(byId[id]).toBeDefined();
    expect(byId.x.kind).toBe("microblog");
    expect(byId.email.kind).toBe("email");
    expect(byId.slack.kind).toBe("workspace_chat");
    for (const c of list) expect(Object.keys(c.capabilities).sort()).toEqual(["intent_url", "link_preview", "text", "title"]);
    const a = await h.json(`${B}?track_url=/tracks/42&channels=twitter,bsky,tg,wa,mail,workspace-chat,msteams,fb,copy_link`);
    expect(a.status).toBe(200);
  });

  // docs/audio-share.md:170-173 — validate answers 200 with valid:false for an open-redirect param
  test("validate reports an open-redirect parameter with reason open_redirect_param", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(`${B}/validate?track_url=${encodeURIComponent("https://cdn.example.com/a.mp3?next=https://evil.test/")}&channels=x`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, valid: false, destination_url: null, host: "evil.test" });
    expect(r.body.errors[0]).toMatchObject({ code: "destination_host_denied", reason: "open_redirect_param", param: "next" });
  });

  // docs/audio-share.md:183-193 — validate/batch example
  test("validate/batch answers the documented counts and per-item results", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(
      `${B}/validate/batch`,
      jsonInit("POST", {
        defaults: { channels: "x,telegram" },
        items: [{ track_url: "/tracks/1" }, { track_url: "https://cdn.example.com@evil.test/" }, { file_url: "https://cdn.example.com/2.mp3", prefer: "file" }],
      }),
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, count: 3, valid_count: 2, invalid_count: 1 });
    expect(r.body.results[0]).toMatchObject({ index: 0, valid: true, source: "track", channels: ["x", "telegram"] });
    expect(r.body.results[2]).toMatchObject({ index: 2, valid: true, destination_url: "https://cdn.example.com/2.mp3", source: "file" });
    const arr = await h.json(`${B}/validate/batch`, jsonInit("POST", { defaults: { channels: ["x", "telegram"] }, items: [{ track_url: "/tracks/1" }] }));
    expect(arr.status).toBe(200);
    const many = await h.json(`${B}/validate/batch`, jsonInit("POST", { items: Array.from({ length: 101 }, () => ({ track_url: "/t" })) }));
    expect(many.status).toBe(400);
    const unknown = await h.json(`${B}/validate/batch`, jsonInit("POST", { items: [{ track_url: "/t", bogus: 1 }] }));
    expect([unknown.status, unknown.body.error]).toEqual([400, "invalid_payload"]);
  });

  // docs/audio-share.md:200-205 — preview example
  test("preview answers card and shares", async () => {
    h = await openTestApp({ env: ENV });
    const r = await h.json(`${B}/preview?track_url=/tracks/42&title=Night%20Drive&text=Listen&channels=x,email`);
    expect(r.status).toBe(200);
    expect(r.body.card).toEqual({ url: "http://localhost:3000/tracks/42", host: "localhost", title: "Night Drive", description: "Listen" });
    expect(r.body.shares.map((s: any) => [s.channel, s.limit])).toEqual([
      ["x", 280],
      ["email", 1800],
    ]);
    expect(r.body.shares[1].message).toBe("Listen http://localhost:3000/tracks/42");
    expect(r.body.shares[1].length).toBe(r.body.shares[1].message.length);
  });

  // docs/audio-share.md:230-247, 264-290, 300-318 — redirect, expand (GET/POST), resolve with token, revoke
  test("redirect, expand, resolve and revoke answer as documented", async () => {
    h = await openTestApp({ env: ENV });
    const admin = await createAdminToken(h);
    const built = (await h.json(`${B}?track_url=/tracks/42&title=Night%20Drive&channels=x&use_short=1&token_mode=signed&expires_in=900`)).body;
    const code = built.short_code;
    const red = await h.request(`/s/audio/${code}`);
    expect(red.status).toBe(302);
    expect(red.headers.get("location")).toBe("http://localhost:3000/tracks/42");
    expect(red.headers.get("cache-control")).toBe("private, no-store");
    expect(red.headers.get("x-request-id")).toBeTruthy();
    const up = await h.request(`/s/audio/${code.toUpperCase()}`);
    expect(up.status).toBe(302);
    const g = await h.json(`${B}/expand?short_url=${encodeURIComponent(built.short_url)}`);
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({
      short_code: code,
      signed: true,
      signature_valid: true,
      state: "active",
      channel: "x",
      title: "Night Drive",
      revoked_at: null,
      source: "track",
    });
    const p = await h.json(`${B}/expand`, jsonInit("POST", { short_url: built.short_url }));
    expect(p.body.short_code).toBe(code);
    const bad = await h.json(`${B}/expand?short_url=${encodeURIComponent("https://other.example/s/audio/" + code)}`);
    expect([bad.status, bad.body.error]).toEqual([400, "short_url_invalid"]);
    const res = await h.json(`${B}/short/resolve`, jsonInit("POST", { code: built.token }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_verified: true, expires_in_seconds: 900, state: "active" });
    const edited = built.token.replace(".1767226500.", ".1767226560.");
    const e = await h.json(`${B}/short/resolve`, jsonInit("POST", { code: edited }));
    expect([e.status, e.body.error]).toEqual([403, "short_link_signature_invalid"]);
    const nf = await h.json(`${B}/short/resolve`, jsonInit("POST", { code: "aaaaaaaaaaaaaaaa" }));
    expect([nf.status, nf.body.error]).toEqual([404, "short_link_not_found"]);
    const rv = await h.json(
      "/admin/ops/audio-share-revocations/revoke",
      jsonInit("POST", { short_code: code, reason: "reported as spam" }, { authorization: `Bearer ${admin}` }),
    );
    expect(rv.status).toBe(200);
    expect(rv.body).toMatchObject({
      success: true,
      short_code: code,
      short_url: built.short_url,
      revoked: true,
      reason: "reported as spam",
      already_revoked: false,
    });
    const after = await h.json(`/s/audio/${code}`);
    expect([after.status, after.body.error]).toEqual([410, "short_link_revoked"]);
    expect(after.body.details.revoked_at).toBe(rv.body.revoked_at);
    const noAdmin = await h.json("/admin/ops/audio-share-revocations/revoke", jsonInit("POST", { short_code: code, reason: "x" }));
    expect(noAdmin.status).toBe(403);
  });

  // docs/audio-share.md:324-328 — QR codes: size 64…1024 default 256; Cache-Control public, max-age=300; unknown 404
  test("QR codes", async () => {
    h = await openTestApp({ env: ENV });
    const built = (await h.json(`${B}?track_url=/tracks/42&use_short=1`)).body;
    const svg = await h.request(`/s/audio/${built.short_code}/qr.svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get("cache-control")).toBe("public, max-age=300");
    const png = await h.request(`/s/audio/${built.short_code}/qr.png`);
    expect(png.status).toBe(200);
    const buf = new Uint8Array(await png.arrayBuffer());
    const width = new DataView(buf.buffer).getUint32(16);
    expect(width).toBe(256);
    expect((await h.request(`/s/audio/${built.short_code}/qr.png?size=63`)).status).toBe(400);
    expect((await h.request(`/s/audio/${built.short_code}/qr.png?size=1025`)).status).toBe(400);
    const p1024 = new Uint8Array(await (await h.request(`/s/audio/${built.short_code}/qr.png?size=1024`)).arrayBuffer());
    expect(new DataView(p1024.buffer).getUint32(16)).toBe(1024);
    expect((await h.request("/s/audio/aaaaaaaaaaaaaaaa/qr.svg")).status).toBe(404);
  });

  // docs/audio-share.md:343-360 — track answer fields; dedupe answer
  test("track answers and dedupe as documented", async () => {
    h = await openTestApp({ env: ENV });
    const built = (await h.json(`${B}?track_url=/tracks/42&use_short=1`)).body;
    const ev = { event_type: "copy", destination_url: built.short_url, client_event_id: "0b6f3c1e-7d2a-4b8e-9f10-2c3d4e5f6a7b", channel: "x" };
    const a = await h.json(`${B}/track`, jsonInit("POST", ev));
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      success: true,
      recorded: true,
      duplicate: false,
      replay_reason: null,
      event_type: "copy",
      client_event_id: ev.client_event_id,
      authenticated: false,
    });
    expect(a.headers.get("x-audio-share-checksum")).toMatch(/^[0-9a-f]{64}$/);
    const b = await h.json(`${B}/track`, jsonInit("POST", ev));
    expect(b.body).toMatchObject({
      recorded: false,
      duplicate: true,
      replay_reason: "in_window_duplicate",
      event_id: a.body.event_id,
      recorded_at: a.body.recorded_at,
    });
    h.clock.advanceSeconds(3601);
    const c = await h.json(`${B}/track`, jsonInit("POST", ev));
    expect(c.body.recorded).toBe(true);
    for (const t of ["share", "open", "click", "play", "download", "qr_scan"]) {
      const r = await h.json(`${B}/track`, jsonInit("POST", { event_type: t, destination_url: "/tracks/1", client_event_id: `e-${t}` }));
      expect(r.status).toBe(200);
    }
    const long = await h.json(`${B}/track`, jsonInit("POST", { event_type: "copy", destination_url: "/tracks/1", client_event_id: "x".repeat(129) }));
    expect(long.status).toBe(400);
    const ok128 = await h.json(`${B}/track`, jsonInit("POST", { event_type: "copy", destination_url: "/tracks/1", client_event_id: "y".repeat(128) }));
    expect(ok128.status).toBe(200);
  });

  // docs/audio-share.md:383-420 — track tokens: create, list (limit default 50, 1-200), revoke idempotent
  test("track tokens create, list and revoke", async () => {
    h = await openTestApp({ env: ENV });
    const admin = await createAdminToken(h);
    const auth = { authorization: `Bearer ${admin}` };
    const c = await h.json("/admin/audio-share/track-tokens", jsonInit("POST", { name: "web player" }, auth));
    expect(c.status).toBe(201);
    expect(c.body.token).toMatch(/^ast_/);
    const id = c.body.track_token.id as number;
    expect(typeof id).toBe("number");
    expect(c.body.track_token).toMatchObject({ name: "web player", last_used_at: null, revoked_at: null });
    const l = await h.json("/admin/audio-share/track-tokens", { headers: auth });
    expect(l.body).toMatchObject({
      success: true,
      count: 1,
      query: { limit: 50, offset: 0, cursor: null },
      pagination: { has_more: false, next_offset: null, next_cursor: null },
    });
    expect(l.body.track_tokens[0].token).toBeUndefined();
    expect((await h.json("/admin/audio-share/track-tokens?limit=201", { headers: auth })).status).toBe(400);
    expect((await h.json("/admin/audio-share/track-tokens?limit=0", { headers: auth })).status).toBe(400);
    const r1 = await h.json(`/admin/audio-share/track-tokens/${id}/revoke`, { method: "POST", headers: auth });
    expect(r1.status).toBe(200);
    expect(r1.body.already_revoked).toBe(false);
    expect(r1.body.track_token.revoked_at).toBe("2026-01-01T00:00:00.000Z");
    const r2 = await h.json(`/admin/audio-share/track-tokens/${id}/revoke`, { method: "POST", headers: auth });
    expect(r2.body.already_revoked).toBe(true);
  });

  // docs/audio-share.md:431-444 — stats: hours 1…720 default 48; totals and hourly fields
  test("stats answers window_hours 48 and documented totals", async () => {
    h = await openTestApp({ env: ENV });
    const built = (await h.json(`${B}?track_url=/tracks/42&use_short=1`)).body;
    await h.request(`/s/audio/${built.short_code}`, { headers: { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0" } });
    await h.request(`/s/audio/${built.short_code}`, { headers: { "user-agent": "curl/8.0" } });
    await h.request(`/s/audio/${built.short_code}`, { method: "HEAD", headers: { "user-agent": "Mozilla/5.0 Firefox/120.0" } });
    const s = await h.json(`${B}/stats?code=${built.short_code}`);
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ success: true, short_code: built.short_code, state: "active", window_hours: 48 });
    expect(s.body.totals).toEqual({ clicks: 1, unique_clicks: 1, bot_hits: 1, head_hits: 1 });
    expect(s.body.hourly[0].hour).toBe("2026-01-01T00:00:00Z");
    expect(s.body.track_events).toMatchObject({ count: 0 });
    expect((await h.json(`${B}/stats?code=${built.short_code}&hours=721`)).status).toBe(400);
    expect((await h.json(`${B}/stats?code=${built.short_code}&hours=720`)).status).toBe(200);
  });

  // docs/audio-share.md:468-482, 484-496 — catalogs: codes and statuses; warnings count 9; guidance limits
  test("errors.json, warnings.json and guidance.json", async () => {
    h = await openTestApp({ env: ENV });
    const e = (await h.json(`${B}/errors.json`)).body;
    const st: Record<string, number> = Object.fromEntries(e.errors.map((x: any) => [x.code, x.http_status]));
    expect(st).toMatchObject({
      destination_host_denied: 400,
      destination_invalid: 400,
      channel_unknown: 400,
      short_url_invalid: 400,
      short_link_signature_invalid: 403,
      short_link_not_found: 404,
      short_link_expired: 410,
      short_link_revoked: 410,
      track_auth_required: 401,
      track_auth_invalid: 401,
    });
    expect(e.count).toBe(e.errors.length);
    expect(e.by_code.destination_host_denied.http_status).toBe(400);
    const w = (await h.json(`${B}/warnings.json`)).body;
    expect(w.count).toBe(9);
    expect(w.warnings.map((x: any) => x.code).sort()).toEqual(
      [
        "insecure_scheme",
        "redirect_param_present",
        "embedded_url_param",
        "text_truncated",
        "text_not_supported",
        "signed_implies_short",
        "expires_in_ignored",
        "prefer_file_without_file_url",
        "file_url_ignored",
      ].sort(),
    );
    const g = (await h.json(`${B}/guidance.json`)).body;
    expect(g.discovery_order).toEqual([
      "/api/public/audio-share-links/channels.json",
      "/api/public/audio-share-links/policy.json",
      "/api/public/audio-share-links/errors.json",
      "/api/public/audio-share-links/warnings.json",
      "/api/public/audio-share-links/health",
    ]);
    expect(g.limits.expires_in).toEqual({ min_seconds: 60, max_seconds: 2592000, default_seconds: 604800 });
    expect(g.limits.batch_items_max).toBe(100);
    expect(Object.keys(g.track_auth.header_values).sort()).toEqual(["optional", "required_invalid_bearer", "required_missing_bearer", "required_valid_bearer"]);
  });

  // docs/audio-share.md:516-520 — health fields
  test("health answers the documented fields", async () => {
    h = await openTestApp({ env: ENV });
    await h.json(`${B}?track_url=/tracks/42&use_short=1`);
    const r = await h.json(`${B}/health`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      status: "ok",
      database: "ok",
      signing_key: "derived",
      track_auth: "optional",
      policy: { allowed_hosts: 2, denied_hosts: 1 },
      links: { total: 1, active: 1, total_capped: false, active_capped: false },
      pending_hit_buckets: 0,
    });
  });
});
