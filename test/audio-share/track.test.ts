import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { API, audioApp, expectChecksum, jsonPost, shortLink } from "./support";

let h: TestApp;
afterEach(() => h?.close());

const event = (over: Record<string, unknown> = {}) => ({ event_type: "copy", destination_url: "/tracks/42", client_event_id: "evt-0001-aaaa", ...over });
const track = (body: unknown, bearer?: string) => h.json(`${API}/track`, jsonPost(body, bearer ? { authorization: `Bearer ${bearer}` } : {}));
const rows = () => h.ctx.db.sqlite.query("SELECT client_event_id, event_type, destination_url, link_id, channel, token_id, created_at FROM audio_share_track_events ORDER BY id").all() as any[];

async function issueToken(name = "web-player"): Promise<{ token: string; id: number }> {
  const admin = createAdminToken(h);
  const r = await h.json("/admin/audio-share/track-tokens", jsonPost({ name }, { authorization: `Bearer ${admin}` }));
  expect(r.status).toBe(201);
  return { token: r.body.token, id: r.body.track_token.id };
}

describe("POST /track: dedupe on client_event_id", () => {
  test("first event is recorded; a repeat inside the window is in_window_duplicate and writes nothing", async () => {
    h = audioApp();
    const res = await h.request(`${API}/track`, jsonPost(event({ channel: "x" })));
    const first = await expectChecksum(res);
    expect(first).toEqual({ success: true, recorded: true, duplicate: false, replay_reason: null, event_id: 1, recorded_at: "2026-01-01T00:00:00.000Z", event_type: "copy", client_event_id: "evt-0001-aaaa", authenticated: false });
    expect(res.headers.get("x-audio-share-track-auth")).toBe("optional");
    h.clock.advanceSeconds(3599);
    const again = await track(event({ event_type: "share" }));
    expect(again.body).toMatchObject({ recorded: false, duplicate: true, replay_reason: "in_window_duplicate", event_id: 1, recorded_at: "2026-01-01T00:00:00.000Z" });
    expect(rows()).toEqual([{ client_event_id: "evt-0001-aaaa", event_type: "copy", destination_url: "http://localhost:3000/tracks/42", link_id: null, channel: "x", token_id: null, created_at: "2026-01-01T00:00:00.000Z" }]);
  });

  test("outside the window the same id is a new event", async () => {
    h = audioApp({ AUDIO_SHARE_TRACK_DEDUPE_SECONDS: "60" });
    await track(event());
    h.clock.advanceSeconds(60);
    const later = await track(event());
    expect(later.body).toMatchObject({ recorded: true, duplicate: false, replay_reason: null, event_id: 2 });
    h.clock.advanceSeconds(30);
    expect((await track(event())).body).toMatchObject({ duplicate: true, event_id: 2 });
    expect(rows()).toHaveLength(2);
  });

  test("different ids are different events", async () => {
    h = audioApp();
    await track(event());
    expect((await track(event({ client_event_id: "evt-0002-bbbb" }))).body.recorded).toBe(true);
    expect(rows()).toHaveLength(2);
  });

  test("a short URL of this service (or short_code) attributes the event to its link, shown in stats", async () => {
    h = audioApp();
    const link = await shortLink(h);
    await track(event({ destination_url: link.short_url }));
    await track(event({ client_event_id: "evt-0003-cccc", event_type: "share", short_code: link.short_code, destination_url: "/tracks/42" }));
    expect(rows().map((r) => r.link_id)).toEqual([1, 1]);
    const stats = await h.json(`${API}/stats?code=${link.short_code}`);
    expect(stats.body.track_events).toEqual({ count: 2, by_type: { copy: 1, share: 1 } });
    expect((await track(event({ client_event_id: "evt-0004-dddd", short_code: "aaaaaaaaaaaaaaaa" }))).body.error).toBe("short_link_not_found");
  });

  test.each([
    [{ event_type: "like" }, "invalid_payload", "event_type"],
    [{ client_event_id: "short" }, "invalid_payload", "client_event_id"],
    [{ client_event_id: "has spaces in it" }, "invalid_payload", "client_event_id"],
    [{ destination_url: 42 }, "invalid_payload", "destination_url"],
    [{ referrer: "x" }, "invalid_payload", "referrer"],
    [{ destination_url: "https://evil.test/" }, "destination_host_denied", null],
    [{ destination_url: "" }, "destination_invalid", null],
    [{ channel: "myspace" }, "channel_unknown", null],
  ])("bad event %j → %s", async (over, code, field) => {
    h = audioApp();
    const r = await track(event(over));
    expect([r.status, r.body.error]).toEqual([400, code]);
    if (field) expect(r.body.details.map((d: any) => d.field)).toContain(field);
    expect(rows()).toEqual([]);
  });

  test("a missing body is refused", async () => {
    h = audioApp();
    expect((await h.json(`${API}/track`, { method: "POST" })).body.error).toBe("invalid_payload");
  });
});

describe("track bearer auth (AUDIO_SHARE_TRACK_AUTH)", () => {
  test("off: no header, Authorization ignored", async () => {
    h = audioApp({ AUDIO_SHARE_TRACK_AUTH: "off" });
    const r = await track(event(), "garbage-token-value-000000");
    expect(r.status).toBe(200);
    expect(r.headers.get("x-audio-share-track-auth")).toBeNull();
    expect(r.body.authenticated).toBe(false);
  });

  test("optional: anonymous accepted, a valid bearer is attributed, an invalid one is 401", async () => {
    h = audioApp({ AUDIO_SHARE_TRACK_AUTH: "optional" });
    const { token, id } = await issueToken();
    const anon = await track(event());
    expect([anon.status, anon.headers.get("x-audio-share-track-auth")]).toEqual([200, "optional"]);
    const authed = await track(event({ client_event_id: "evt-0002-bbbb" }), token);
    expect([authed.status, authed.headers.get("x-audio-share-track-auth"), authed.body.authenticated]).toEqual([200, "optional", true]);
    expect(rows()[1].token_id).toBe(id);
    const bad = await track(event({ client_event_id: "evt-0003-cccc" }), "ast_not-a-token-000000000000");
    expect([bad.status, bad.body.error, bad.headers.get("x-audio-share-track-auth")]).toEqual([401, "track_auth_invalid", "optional"]);
    expect(rows()).toHaveLength(2);
  });

  test("required: missing, invalid, valid, and revoked bearers", async () => {
    h = audioApp({ AUDIO_SHARE_TRACK_AUTH: "required" });
    const { token, id } = await issueToken();
    const missing = await track(event());
    expect([missing.status, missing.body.error, missing.headers.get("x-audio-share-track-auth")]).toEqual([401, "track_auth_required", "required_missing_bearer"]);
    const invalid = await track(event(), "ast_not-a-token-000000000000");
    expect([invalid.status, invalid.body.error, invalid.headers.get("x-audio-share-track-auth")]).toEqual([401, "track_auth_invalid", "required_invalid_bearer"]);
    const malformed = await h.json(`${API}/track`, jsonPost(event(), { authorization: "Basic dXNlcjpwdw==" }));
    expect(malformed.headers.get("x-audio-share-track-auth")).toBe("required_invalid_bearer");
    const valid = await track(event(), token);
    expect([valid.status, valid.headers.get("x-audio-share-track-auth"), valid.body.authenticated]).toEqual([200, "required_valid_bearer", true]);
    // Authentication comes before the body: an unauthenticated caller learns nothing about its payload.
    expect((await track({ nonsense: true })).body.error).toBe("track_auth_required");
    const admin = createAdminToken(h, "second-operator");
    const revoked = await h.json(`/admin/audio-share/track-tokens/${id}/revoke`, { method: "POST", headers: { authorization: `Bearer ${admin}` } });
    expect(revoked.body).toMatchObject({ already_revoked: false, track_token: { id, revoked_at: "2026-01-01T00:00:00.000Z" } });
    expect((await track(event({ client_event_id: "evt-0009-zzzz" }), token)).body.error).toBe("track_auth_invalid");
    expect(rows()).toHaveLength(1);
    expect(h.ctx.db.sqlite.query("SELECT last_used_at FROM audio_share_track_tokens WHERE id = ?").get(id)).toEqual({ last_used_at: "2026-01-01T00:00:00.000Z" });
  });
});

describe("track tokens (operators)", () => {
  test("issued once, stored only as a hash, listed without the token, revoked idempotently, each write audited", async () => {
    h = audioApp();
    const admin = createAdminToken(h);
    const auth = { authorization: `Bearer ${admin}` };
    const created = await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "web player" }, auth));
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^ast_[A-Za-z0-9_-]{43}$/);
    expect(created.body.track_token).toEqual({ id: 1, name: "web player", created_at: "2026-01-01T00:00:00.000Z", created_by: "admin:test-operator#1", last_used_at: null, revoked_at: null });
    const stored = JSON.stringify(h.ctx.db.sqlite.query("SELECT * FROM audio_share_track_tokens").all());
    expect(stored).not.toContain(created.body.token);
    const list = await h.json("/admin/audio-share/track-tokens", { headers: auth });
    expect(list.body).toMatchObject({ count: 1, track_tokens: [{ id: 1, name: "web player" }] });
    expect(JSON.stringify(list.body)).not.toContain(created.body.token);
    const r1 = await h.json("/admin/audio-share/track-tokens/1/revoke", { method: "POST", headers: auth });
    const r2 = await h.json("/admin/audio-share/track-tokens/1/revoke", { method: "POST", headers: auth });
    expect([r1.body.already_revoked, r2.body.already_revoked]).toEqual([false, true]);
    const actions = (h.ctx.db.sqlite.query("SELECT action, target FROM admin_audit WHERE action LIKE 'audio_share_track_token.%' ORDER BY id").all() as any[]).map((a) => `${a.action} ${a.target}`);
    expect(actions).toEqual(["audio_share_track_token.create 1", "audio_share_track_token.revoke 1"]);
  });

  test("operators only; bad names and ids are refused", async () => {
    h = audioApp();
    expect((await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "x" }))).status).toBe(403);
    expect((await h.json("/admin/audio-share/track-tokens")).status).toBe(403);
    expect((await h.json("/admin/audio-share/track-tokens/1/revoke", { method: "POST" })).status).toBe(403);
    const auth = { authorization: `Bearer ${createAdminToken(h)}` };
    expect((await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "" }, auth))).body.error).toBe("invalid_payload");
    expect((await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "<script>" }, auth))).body.error).toBe("invalid_payload");
    expect((await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "ok", scopes: [] }, auth))).body.error).toBe("invalid_payload");
    expect((await h.json("/admin/audio-share/track-tokens/99/revoke", { method: "POST", headers: auth })).body.error).toBe("not_found");
    expect((await h.json("/admin/audio-share/track-tokens/abc/revoke", { method: "POST", headers: auth })).status).toBe(400);
  });
});
