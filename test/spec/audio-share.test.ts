// Spec conformance: the audio-share-link API against the service interface.
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const B = "/api/public/audio-share-links";
const track = (body: unknown, headers: Record<string, string> = {}) => h.json(`${B}/track`, jsonInit("POST", body, headers));

describe("host policy", () => {
  test("destination_host_denied names the host and carries request_id (build, preview, track), and validate lists it", async () => {
    h = await openTestApp();
    for (const r of [
      await h.json(`${B}?track_url=https://evil.example/x`),
      await h.json(`${B}/preview?track_url=https://evil.example/x`),
      await track({ event_type: "copy", destination_url: "https://evil.example/x", client_event_id: "c-denied" }),
    ]) {
      expect([r.status, r.body.success, r.body.error]).toEqual([400, false, "destination_host_denied"]);
      expect(r.body.host).toBe("evil.example");
      expect(r.body.request_id).toBe(r.headers.get("x-request-id")!);
    }
    const v = (await h.json(`${B}/validate?track_url=https://evil.example/x`)).body;
    expect(v.valid).toBe(false);
    expect(v.errors[0]).toMatchObject({ code: "destination_host_denied", host: "evil.example" });
    expect(typeof v.request_id).toBe("string");
  });
});

describe("track", () => {
  test("a repeated client_event_id inside the window answers replay_reason=in_window_duplicate and records once", async () => {
    h = await openTestApp();
    const ev = { event_type: "copy", destination_url: "/tracks/1", client_event_id: "c-1" };
    const first = await track(ev);
    expect(first.body).toMatchObject({ success: true, recorded: true, replay_reason: null });
    const again = await track(ev);
    expect(again.body).toMatchObject({ success: true, recorded: false, replay_reason: "in_window_duplicate", event_id: first.body.event_id });
    expect(first.headers.get("x-audio-share-track-auth")).toBe("optional");
  });

  // "X-Audio-Share-Track-Auth reports one of: optional, required_missing_bearer, required_invalid_bearer,
  // required_valid_bearer" — in every mode, whatever bearer is sent.
  test("the header is one of the spec's four values in every mode and with every bearer", async () => {
    const FOUR = ["optional", "required_missing_bearer", "required_invalid_bearer", "required_valid_bearer"];
    for (const mode of ["off", "optional", "required"]) {
      h = await openTestApp({ env: { AUDIO_SHARE_TRACK_AUTH: mode } });
      const admin = await createAdminToken(h);
      const issued = await h.json("/admin/audio-share/track-tokens", jsonInit("POST", { name: "site" }, { authorization: `Bearer ${admin}` }));
      for (const [i, authorization] of [null, "Bearer nope", `Bearer ${issued.body.token}`].entries()) {
        const r = await track({ event_type: "copy", destination_url: "/tracks/1", client_event_id: `c-${mode}-${i}` }, authorization ? { authorization } : {});
        expect(FOUR).toContain(r.headers.get("x-audio-share-track-auth")!);
        // Off ignores Authorization; optional judges a bearer once sent, as required does.
        const judged = i === 0 ? (mode === "required" ? "required_missing_bearer" : "optional") : i === 1 ? "required_invalid_bearer" : "required_valid_bearer";
        expect(r.headers.get("x-audio-share-track-auth")).toBe(mode === "off" ? "optional" : judged);
      }
      await h.close();
    }
  });

  test("required track auth: required_missing_bearer, required_invalid_bearer, required_valid_bearer", async () => {
    h = await openTestApp({ env: { AUDIO_SHARE_TRACK_AUTH: "required" } });
    const admin = await createAdminToken(h);
    const issued = await h.json("/admin/audio-share/track-tokens", jsonInit("POST", { name: "site" }, { authorization: `Bearer ${admin}` }));
    const ev = { event_type: "copy", destination_url: "/tracks/1", client_event_id: "c-2" };
    const missing = await track(ev);
    expect([missing.status, missing.headers.get("x-audio-share-track-auth")]).toEqual([401, "required_missing_bearer"]);
    const invalid = await track(ev, { authorization: "Bearer nope" });
    expect([invalid.status, invalid.headers.get("x-audio-share-track-auth")]).toEqual([401, "required_invalid_bearer"]);
    const valid = await track(ev, { authorization: `Bearer ${issued.body.token}` });
    expect([valid.status, valid.headers.get("x-audio-share-track-auth")]).toEqual([200, "required_valid_bearer"]);
  });
});

describe("signed short links", () => {
  test("create (token_mode=signed, use_short=1, expires_in) → resolve → expand (GET and POST) → revoke", async () => {
    h = await openTestApp();
    const admin = await createAdminToken(h);
    const res = await h.request(`${B}?track_url=/tracks/abc&token_mode=signed&use_short=1&expires_in=900&channels=x,telegram,email,slack`);
    const text = await res.text();
    const link = JSON.parse(text);
    expect(res.headers.get("x-audio-share-checksum")).toBe(createHash("sha256").update(text).digest("hex"));
    expect(link.short_url).toBe(`http://localhost:3000/s/audio/${link.short_code}`);
    const resolved = (await h.json(`${B}/short/resolve`, jsonInit("POST", { code: link.short_code }))).body;
    expect(resolved).toMatchObject({ success: true, short_code: link.short_code, destination_url: "http://localhost:3000/tracks/abc" });
    const eg = (await h.json(`${B}/expand?short_url=${encodeURIComponent(link.short_url)}`)).body;
    const ep = (await h.json(`${B}/expand`, jsonInit("POST", { short_url: link.short_url }))).body;
    expect(eg).toEqual(ep);
    expect(eg.short_code).toBe(link.short_code);
    const revoke = await h.json(
      "/admin/ops/audio-share-revocations/revoke",
      jsonInit("POST", { short_code: link.short_code, reason: "audit" }, { authorization: `Bearer ${admin}` }),
    );
    expect(revoke.body).toMatchObject({ success: true, revoked: true });
    expect((await h.json(`${B}/short/resolve`, jsonInit("POST", { code: link.short_code }))).body.success).toBe(false);
    expect((await h.request(`/s/audio/${link.short_code}`)).status).toBe(410);
  });

  test("rate-limit headers on audio-share answers; catalogs and policy answer", async () => {
    h = await openTestApp();
    for (const p of ["/channels.json", "/errors.json", "/warnings.json", "/guidance.json", "/policy.json", "/health"]) {
      const r = await h.request(B + p);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBe("90");
      expect(r.headers.get("x-request-id")).toBeTruthy();
    }
  });
});
