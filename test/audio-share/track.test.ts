import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { TRACK_AUTH_VALUES } from "../../src/audio-share/catalogs";
import { API, audioApp, expectChecksum, jsonPost, shortLink } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const event = (over: Record<string, unknown> = {}) => ({ event_type: "copy", destination_url: "/tracks/42", client_event_id: "evt-0001-aaaa", ...over });
const track = (body: unknown, bearer?: string) => h.json(`${API}/track`, jsonPost(body, bearer ? { authorization: `Bearer ${bearer}` } : {}));
const rows = async () =>
  (await h.ctx.store.all(
    "SELECT client_event_id, event_type, destination_url, link_id, channel, token_id, created_at FROM audio_share_track_events ORDER BY id",
  )) as any[];

async function issueToken(name = "web-player"): Promise<{ token: string; id: number }> {
  const admin = await createAdminToken(h);
  const r = await h.json("/admin/audio-share/track-tokens", jsonPost({ name }, { authorization: `Bearer ${admin}` }));
  expect(r.status).toBe(201);
  return { token: r.body.token, id: r.body.track_token.id };
}

describe("POST /track: dedupe on client_event_id", () => {
  test("first event is recorded; a repeat inside the window is in_window_duplicate and writes nothing", async () => {
    h = await audioApp();
    const res = await h.request(`${API}/track`, jsonPost(event({ channel: "x" })));
    const first = await expectChecksum(res);
    expect(first).toEqual({
      success: true,
      recorded: true,
      duplicate: false,
      replay_reason: null,
      event_id: 1,
      recorded_at: "2026-01-01T00:00:00.000Z",
      event_type: "copy",
      client_event_id: "evt-0001-aaaa",
      authenticated: false,
    });
    expect(res.headers.get("x-audio-share-track-auth")).toBe("optional");
    h.clock.advanceSeconds(3599);
    const again = await track(event({ event_type: "share" }));
    expect(again.body).toMatchObject({
      recorded: false,
      duplicate: true,
      replay_reason: "in_window_duplicate",
      event_id: 1,
      recorded_at: "2026-01-01T00:00:00.000Z",
    });
    expect(await rows()).toEqual([
      {
        client_event_id: "evt-0001-aaaa",
        event_type: "copy",
        destination_url: "http://localhost:3000/tracks/42",
        link_id: null,
        channel: "x",
        token_id: null,
        created_at: "2026-01-01T00:00:00.000Z",
      },
    ]);
  });

  test("outside the window the same id is a new event", async () => {
    h = await audioApp({ AUDIO_SHARE_TRACK_DEDUPE_SECONDS: "60" });
    await track(event());
    h.clock.advanceSeconds(60);
    const later = await track(event());
    expect(later.body).toMatchObject({ recorded: true, duplicate: false, replay_reason: null, event_id: 2 });
    h.clock.advanceSeconds(30);
    expect((await track(event())).body).toMatchObject({ duplicate: true, event_id: 2 });
    expect(await rows()).toHaveLength(2);
  });

  test("different ids are different events", async () => {
    h = await audioApp();
    await track(event());
    expect((await track(event({ client_event_id: "evt-0002-bbbb" }))).body.recorded).toBe(true);
    expect(await rows()).toHaveLength(2);
    // Any visible ASCII id of 1–128 characters: short ones and ones with other punctuation too.
    for (const id of ["e1", "evt#3/{x}", "x".repeat(128)]) expect((await track(event({ client_event_id: id }))).body).toMatchObject({ recorded: true });
    expect(await rows()).toHaveLength(5);
  });

  test("a short URL of this service (or short_code) attributes the event to its link, shown in stats", async () => {
    h = await audioApp();
    const link = await shortLink(h);
    await track(event({ destination_url: link.short_url }));
    await track(event({ client_event_id: "evt-0003-cccc", event_type: "share", short_code: link.short_code, destination_url: "/tracks/42" }));
    expect((await rows()).map((r) => r.link_id)).toEqual([1, 1]);
    const stats = await h.json(`${API}/stats?code=${link.short_code}`);
    expect(stats.body.track_events).toEqual({ count: 2, by_type: { copy: 1, share: 1 } });
    expect((await track(event({ client_event_id: "evt-0004-dddd", short_code: "aaaaaaaaaaaaaaaa" }))).body.error).toBe("short_link_not_found");
  });

  test.each([
    [{ event_type: "like" }, "invalid_payload", "event_type"],
    [{ client_event_id: "has space" }, "invalid_payload", "client_event_id"],
    [{ client_event_id: "has spaces in it" }, "invalid_payload", "client_event_id"],
    [{ destination_url: 42 }, "invalid_payload", "destination_url"],
    [{ referrer: "x" }, "invalid_payload", "referrer"],
    [{ destination_url: "https://evil.test/" }, "destination_host_denied", null],
    [{ destination_url: "" }, "destination_invalid", null],
    [{ channel: "myspace" }, "channel_unknown", null],
  ])("bad event %j → %s", async (over, code, field) => {
    h = await audioApp();
    const r = await track(event(over));
    expect([r.status, r.body.error]).toEqual([400, code]);
    if (field) expect(r.body.details.map((d: any) => d.field)).toContain(field);
    expect(await rows()).toEqual([]);
  });

  test("a missing body is refused", async () => {
    h = await audioApp();
    expect((await h.json(`${API}/track`, { method: "POST" })).body.error).toBe("invalid_payload");
  });
});

describe("track bearer auth (AUDIO_SHARE_TRACK_AUTH)", () => {
  type Mode = "off" | "optional" | "required";
  type Bearer = "none" | "valid" | "unknown" | "revoked" | "malformed";
  const HEADER = "x-audio-share-track-auth";

  /** A fresh app in `mode` with one live and one revoked token; returns the Authorization value per bearer case. */
  async function modeApp(mode: Mode): Promise<Record<Bearer, string | null>> {
    h = await audioApp({ AUDIO_SHARE_TRACK_AUTH: mode });
    const live = await issueToken("web-player");
    const gone = await issueToken("old-player");
    const admin = await createAdminToken(h, "revoker");
    expect((await h.json(`/admin/audio-share/track-tokens/${gone.id}/revoke`, { method: "POST", headers: { authorization: `Bearer ${admin}` } })).status).toBe(
      200,
    );
    return {
      none: null,
      // The scheme in lower case: it is case-insensitive (RFC 9110), as for every bearer Herald reads.
      valid: `bearer ${live.token}`,
      unknown: "Bearer ast_not-a-token-000000000000",
      revoked: `Bearer ${gone.token}`,
      malformed: "Basic dXNlcjpwdw==",
    };
  }
  const send = (body: unknown, authorization: string | null) => h.json(`${API}/track`, jsonPost(body, authorization ? { authorization } : {}));

  // mode × bearer → [status, error code or null, header, authenticated]. The header takes only the spec's four
  // values, and no value is shared between an accepted and a refused request: in optional mode a bearer sent is
  // judged as in required mode.
  const MATRIX: Array<[Mode, Bearer, number, string | null, string, boolean | null]> = [
    ["off", "none", 200, null, "optional", false],
    ["off", "valid", 200, null, "optional", false],
    ["off", "unknown", 200, null, "optional", false],
    ["off", "revoked", 200, null, "optional", false],
    ["off", "malformed", 200, null, "optional", false],
    ["optional", "none", 200, null, "optional", false],
    ["optional", "valid", 200, null, "required_valid_bearer", true],
    ["optional", "unknown", 401, "track_auth_invalid", "required_invalid_bearer", null],
    ["optional", "revoked", 401, "track_auth_invalid", "required_invalid_bearer", null],
    ["optional", "malformed", 401, "track_auth_invalid", "required_invalid_bearer", null],
    ["required", "none", 401, "track_auth_required", "required_missing_bearer", null],
    ["required", "valid", 200, null, "required_valid_bearer", true],
    ["required", "unknown", 401, "track_auth_invalid", "required_invalid_bearer", null],
    ["required", "revoked", 401, "track_auth_invalid", "required_invalid_bearer", null],
    ["required", "malformed", 401, "track_auth_invalid", "required_invalid_bearer", null],
  ];

  test.each(MATRIX)("mode %s, bearer %s → %d %p, X-Audio-Share-Track-Auth: %s", async (mode, bearer, status, error, header, authenticated) => {
    const auth = await modeApp(mode);
    const r = await send(event(), auth[bearer]);
    expect([r.status, r.body.error ?? null, r.headers.get(HEADER)]).toEqual([status, error, header]);
    if (status === 200) {
      expect(r.body.authenticated).toBe(authenticated!);
      // Only a valid bearer in a mode that checks it attributes the event to its token.
      expect((await rows()).map((row) => row.token_id !== null)).toEqual([authenticated!]);
    } else {
      expect(await rows()).toEqual([]);
    }
  });

  test("the documented values are exactly the values the matrix produces", () => {
    expect(new Set(MATRIX.map((m) => m[4]))).toEqual(new Set(Object.keys(TRACK_AUTH_VALUES)));
  });

  // Once auth has accepted the request, every later answer still carries what auth found: a validation 400, an
  // unknown channel, an unknown short code and a replayed event.
  test.each([
    ["off", "none", "optional"],
    ["off", "valid", "optional"],
    ["optional", "none", "optional"],
    ["optional", "valid", "required_valid_bearer"],
    ["required", "valid", "required_valid_bearer"],
  ] as Array<[Mode, Bearer, string]>)("mode %s, bearer %s: refusals after auth say %s too", async (mode, bearer, header) => {
    const auth = await modeApp(mode);
    const cases: Array<[unknown, number, string]> = [
      [event({ event_type: "like" }), 400, "invalid_payload"],
      ["{not json", 400, "invalid_payload"],
      [event({ channel: "myspace" }), 400, "channel_unknown"],
      [event({ destination_url: "https://evil.test/" }), 400, "destination_host_denied"],
      [event({ short_code: "aaaaaaaaaaaaaaaa" }), 404, "short_link_not_found"],
    ];
    for (const [body, status, code] of cases) {
      const r = await send(body, auth[bearer]);
      expect([r.status, r.body.error, r.headers.get(HEADER)]).toEqual([status, code, header]);
    }
    const first = await send(event(), auth[bearer]);
    const replay = await send(event(), auth[bearer]);
    expect([first.status, first.headers.get(HEADER)]).toEqual([200, header]);
    expect([replay.body.replay_reason, replay.headers.get(HEADER)]).toEqual(["in_window_duplicate", header]);
  });

  test("required: authentication comes before the body, a revoked token stops working, last use is recorded", async () => {
    h = await audioApp({ AUDIO_SHARE_TRACK_AUTH: "required" });
    const { token, id } = await issueToken();
    // An unauthenticated caller learns nothing about its payload.
    const nonsense = await track({ nonsense: true });
    expect([nonsense.status, nonsense.body.error, nonsense.headers.get(HEADER)]).toEqual([401, "track_auth_required", "required_missing_bearer"]);
    const valid = await track(event(), token);
    expect([valid.status, valid.headers.get(HEADER), valid.body.authenticated]).toEqual([200, "required_valid_bearer", true]);
    const admin = await createAdminToken(h, "second-operator");
    const revoked = await h.json(`/admin/audio-share/track-tokens/${id}/revoke`, { method: "POST", headers: { authorization: `Bearer ${admin}` } });
    expect(revoked.body).toMatchObject({ already_revoked: false, track_token: { id, revoked_at: "2026-01-01T00:00:00.000Z" } });
    const after = await track(event({ client_event_id: "evt-0009-zzzz" }), token);
    expect([after.status, after.body.error, after.headers.get(HEADER)]).toEqual([401, "track_auth_invalid", "required_invalid_bearer"]);
    expect(await rows()).toHaveLength(1);
    expect(await h.ctx.store.get("SELECT last_used_at FROM audio_share_track_tokens WHERE id = ?", [id])).toEqual({
      last_used_at: "2026-01-01T00:00:00.000Z",
    });
  });
});

describe("track tokens (operators)", () => {
  test("issued once, stored only as a hash, listed without the token, revoked idempotently, each write audited", async () => {
    h = await audioApp();
    const admin = await createAdminToken(h);
    const auth = { authorization: `Bearer ${admin}` };
    const created = await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "web player" }, auth));
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^ast_[A-Za-z0-9_-]{43}$/);
    expect(created.body.track_token).toEqual({
      id: 1,
      name: "web player",
      created_at: "2026-01-01T00:00:00.000Z",
      created_by: "admin:test-operator#1",
      last_used_at: null,
      revoked_at: null,
    });
    const stored = JSON.stringify(await h.ctx.store.all("SELECT * FROM audio_share_track_tokens"));
    expect(stored).not.toContain(created.body.token);
    const list = await h.json("/admin/audio-share/track-tokens", { headers: auth });
    expect(list.body).toMatchObject({ count: 1, track_tokens: [{ id: 1, name: "web player" }] });
    expect(JSON.stringify(list.body)).not.toContain(created.body.token);
    const r1 = await h.json("/admin/audio-share/track-tokens/1/revoke", { method: "POST", headers: auth });
    const r2 = await h.json("/admin/audio-share/track-tokens/1/revoke", { method: "POST", headers: auth });
    expect([r1.body.already_revoked, r2.body.already_revoked]).toEqual([false, true]);
    const actions = ((await h.ctx.store.all("SELECT action, target FROM admin_audit WHERE action LIKE 'audio_share_track_token.%' ORDER BY id")) as any[]).map(
      (a) => `${a.action} ${a.target}`,
    );
    expect(actions).toEqual(["audio_share_track_token.create 1", "audio_share_track_token.revoke 1"]);
  });

  test("operators only; bad names and ids are refused", async () => {
    h = await audioApp();
    expect((await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "x" }))).status).toBe(403);
    expect((await h.json("/admin/audio-share/track-tokens")).status).toBe(403);
    expect((await h.json("/admin/audio-share/track-tokens/1/revoke", { method: "POST" })).status).toBe(403);
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    expect((await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "" }, auth))).body.error).toBe("invalid_payload");
    expect((await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "<script>" }, auth))).body.error).toBe("invalid_payload");
    expect((await h.json("/admin/audio-share/track-tokens", jsonPost({ name: "ok", scopes: [] }, auth))).body.error).toBe("invalid_payload");
    expect((await h.json("/admin/audio-share/track-tokens/99/revoke", { method: "POST", headers: auth })).body.error).toBe("not_found");
    expect((await h.json("/admin/audio-share/track-tokens/abc/revoke", { method: "POST", headers: auth })).status).toBe(400);
  });
});
