import { afterEach, describe, expect, test } from "bun:test";
import { linkStore } from "../../src/audio-share/short-links";
import type { TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { anotherInstance, API, audioApp, BROWSER_UA, expectChecksum, jsonPost, q, shortLink } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const follow = (code: string, init: RequestInit = {}) =>
  h.request(`/s/audio/${code}`, { ...init, headers: { "user-agent": BROWSER_UA, ...(init.headers as Record<string, string>) } });
const resolve = (code: string) => h.json(`${API}/short/resolve`, jsonPost({ code }));
const revoke = (token: string | null, body: unknown) =>
  h.json("/admin/ops/audio-share-revocations/revoke", jsonPost(body, token ? { authorization: `Bearer ${token}` } : {}));

describe("GET /s/audio/{code}", () => {
  test("302 to the destination, never cached, with request id", async () => {
    h = await audioApp();
    const link = await shortLink(h, { track_url: "https://allowed.example/t/1?x=1" });
    const res = await follow(link.short_code);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://allowed.example/t/1?x=1");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("x-ratelimit-limit")).toBe("90");
    const upper = await follow(link.short_code.toUpperCase());
    expect(upper.status).toBe(302);
  });

  test("unknown code: JSON 404 for API clients, an HTML page for browsers; malformed codes never reach the database", async () => {
    h = await audioApp();
    const json = await h.json("/s/audio/aaaaaaaaaaaaaaaa");
    expect([json.status, json.body.error]).toEqual([404, "short_link_not_found"]);
    expect(json.body.request_id).toBe(json.headers.get("x-request-id")!);
    const page = await follow("aaaaaaaaaaaaaaaa", { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain("This link does not exist");
    expect(html).toContain(page.headers.get("x-request-id")!);
    for (const bad of ["short", "a".repeat(65), "%3Cscript%3E", "aaaaaaaaaaaaaaa1"]) {
      const r = await h.json(`/s/audio/${bad}`);
      expect([r.status, r.body.error]).toEqual([404, "short_link_not_found"]);
    }
  });

  test("expiry is checked against the clock: the last second redirects, the expiry instant is 410", async () => {
    h = await audioApp();
    const link = await shortLink(h, { token_mode: "signed", expires_in: 900 });
    h.clock.advanceSeconds(899);
    expect((await follow(link.short_code)).status).toBe(302);
    h.clock.advanceSeconds(1);
    const gone = await h.json(`/s/audio/${link.short_code}`);
    expect([gone.status, gone.body.error]).toEqual([410, "short_link_expired"]);
    expect(gone.body.details).toEqual({ expires_at: "2026-01-01T00:15:00.000Z" });
    const page = await follow(link.short_code, { headers: { accept: "text/html" } });
    expect(page.status).toBe(410);
    expect(await page.text()).toContain("This link has expired");
    expect((await resolve(link.short_code)).body.error).toBe("short_link_expired");
  });

  test("revoke, then redirect → 410 at once (the cache is cleared), audited; revoking again changes nothing", async () => {
    h = await audioApp();
    const admin = await createAdminToken(h);
    const link = await shortLink(h, { token_mode: "signed" });
    expect((await follow(link.short_code)).status).toBe(302); // warms the link cache
    const r = await revoke(admin, { short_code: link.short_code, reason: "reported as spam" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      short_code: link.short_code,
      short_url: link.short_url,
      revoked: true,
      revoked_at: "2026-01-01T00:00:00.000Z",
      reason: "reported as spam",
      already_revoked: false,
    });
    const gone = await h.json(`/s/audio/${link.short_code}`);
    expect([gone.status, gone.body.error]).toEqual([410, "short_link_revoked"]);
    expect((await resolve(link.short_code)).body.error).toBe("short_link_revoked");
    const audit = (await h.ctx.store.all(
      "SELECT actor, action, target, details, request_id FROM admin_audit WHERE action = 'audio_share_link.revoke'",
    )) as any[];
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: "admin:test-operator#1", target: link.short_code, request_id: r.headers.get("x-request-id") });
    expect(JSON.parse(audit[0].details)).toEqual({ reason: "reported as spam", destination_url: "http://localhost:3000/tracks/42" });
    h.clock.advanceSeconds(60);
    const again = await revoke(admin, { short_code: link.short_code, reason: "twice" });
    expect(again.body).toMatchObject({ already_revoked: true, revoked_at: "2026-01-01T00:00:00.000Z", reason: "reported as spam" });
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM admin_audit WHERE action = 'audio_share_link.revoke'")).toEqual({ n: 1 });
    const expand = await h.json(`${API}/expand?${q({ short_url: link.short_url })}`);
    expect(expand.body).toMatchObject({ state: "revoked", revoked_at: "2026-01-01T00:00:00.000Z" });
  });

  test("revoke: operators only, known codes only, reason required", async () => {
    h = await audioApp();
    const link = await shortLink(h);
    const none = await revoke(null, { short_code: link.short_code, reason: "x" });
    expect([none.status, none.body.error]).toEqual([403, "forbidden"]);
    const wrong = await revoke("not-a-real-admin-token-000000000", { short_code: link.short_code, reason: "x" });
    expect(wrong.status).toBe(403);
    const admin = await createAdminToken(h);
    expect((await revoke(admin, { short_code: "aaaaaaaaaaaaaaaa", reason: "x" })).body.error).toBe("short_link_not_found");
    expect((await revoke(admin, { short_code: link.short_code })).body).toMatchObject({ error: "invalid_payload", details: [{ field: "reason" }] });
    expect((await revoke(admin, { short_code: link.short_code, reason: "" })).body.error).toBe("invalid_payload");
    expect((await revoke(admin, { short_code: link.short_code, reason: "x", force: true })).body.error).toBe("invalid_payload");
    expect((await follow(link.short_code)).status).toBe(302);
  });
});

describe("expand", () => {
  test("GET and POST give the link's metadata, in any state", async () => {
    h = await audioApp();
    const link = await shortLink(h, { token_mode: "signed", expires_in: 900, channels: "telegram", title: "T" });
    const expected = {
      success: true,
      short_code: link.short_code,
      short_url: link.short_url,
      destination_url: "http://localhost:3000/tracks/42",
      source: "track",
      channel: "telegram",
      title: "T",
      signed: true,
      signature_valid: true,
      state: "active",
      created_at: "2026-01-01T00:00:00.000Z",
      expires_at: "2026-01-01T00:15:00.000Z",
      revoked_at: null,
    };
    const res = await h.request(`${API}/expand?${q({ short_url: link.short_url })}`);
    expect(await expectChecksum(res)).toEqual(expected);
    expect((await h.json(`${API}/expand`, jsonPost({ short_url: link.short_url }))).body).toEqual(expected);
    expect((await h.json(`${API}/expand`, jsonPost({ short_url: `/s/audio/${link.short_code}` }))).body).toEqual(expected);
    // Upper-cased (retyped from print), as the redirect reads it; and a loopback base reached by another loopback name.
    expect((await h.json(`${API}/expand`, jsonPost({ short_url: link.short_url.replace(link.short_code, link.short_code.toUpperCase()) }))).body).toEqual(
      expected,
    );
    expect((await h.json(`${API}/expand`, jsonPost({ short_url: link.short_url.replace("localhost", "127.0.0.1") }))).body).toEqual(expected);
    h.clock.advanceSeconds(901);
    expect((await h.json(`${API}/expand?${q({ short_url: link.short_url })}`)).body.state).toBe("expired");
  });

  test.each([
    ["https://evil.test/s/audio/aaaaaaaaaaaaaaaa", 400, "short_url_invalid"],
    ["http://localhost:3000/s/other/aaaaaaaaaaaaaaaa", 400, "short_url_invalid"],
    ["http://user@localhost:3000/s/audio/aaaaaaaaaaaaaaaa", 400, "short_url_invalid"],
    ["http://localhost:3000/s/audio/short", 400, "short_url_invalid"],
    ["http://127.0.0.1:3001/s/audio/aaaaaaaaaaaaaaaa", 400, "short_url_invalid"],
    ["https://127.0.0.1:3000/s/audio/aaaaaaaaaaaaaaaa", 400, "short_url_invalid"],
    ["http://127.0.0.1:3000/s/audio/aaaaaaaaaaaaaaaa", 404, "short_link_not_found"],
    ["http://localhost:3000/s/audio/aaaaaaaaaaaaaaaa", 404, "short_link_not_found"],
  ])("%s → %i %s", async (shortUrl, status, code) => {
    h = await audioApp();
    const r = await h.json(`${API}/expand?${q({ short_url: shortUrl })}`);
    expect([r.status, r.body.error]).toEqual([status, code]);
  });

  test("bad input: missing short_url, unknown body field", async () => {
    h = await audioApp();
    expect((await h.json(`${API}/expand`)).body.error).toBe("invalid_query");
    expect((await h.json(`${API}/expand`, jsonPost({}))).body.error).toBe("invalid_payload");
    expect((await h.json(`${API}/expand`, jsonPost({ short_url: "/s/audio/x", extra: 1 }))).body.error).toBe("invalid_payload");
  });
});

describe("POST /short/resolve: signature and expiry", () => {
  test("the bare code and the creator's token both resolve an active signed link", async () => {
    h = await audioApp();
    const link = await shortLink(h, { token_mode: "signed", expires_in: 900 });
    h.clock.advanceSeconds(100);
    const bare = await resolve(link.short_code);
    expect(bare.status).toBe(200);
    expect(bare.body).toMatchObject({
      state: "active",
      signed: true,
      signature_valid: true,
      token_verified: false,
      expires_in_seconds: 800,
      destination_url: "http://localhost:3000/tracks/42",
    });
    const token = await resolve(link.token!);
    expect(token.body).toMatchObject({ token_verified: true, short_code: link.short_code });
  });

  test("a tampered token is refused: edited expiry, edited signature, a token for an unsigned link", async () => {
    h = await audioApp();
    const link = await shortLink(h, { token_mode: "signed", expires_in: 900 });
    const [code, exp, sig] = link.token!.split(".");
    const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
    for (const forged of [`${code}.${Number(exp) + 86400}.${sig}`, `${code}.${exp}.${flip(sig!)}`, `${code}.${exp}.${sig!.slice(0, -1)}`]) {
      const r = await resolve(forged);
      expect([r.status, r.body.error]).toEqual([403, "short_link_signature_invalid"]);
    }
    const unsigned = await shortLink(h);
    expect((await resolve(`${unsigned.short_code}.${exp}.${sig}`)).body.error).toBe("short_link_signature_invalid");
    expect((await resolve(`${code}.soon.${sig}`)).body.error).toBe("invalid_payload");
    expect((await resolve("aaaaaaaaaaaaaaaa")).body.error).toBe("short_link_not_found");
  });

  test("a signed link whose stored row was altered never redirects (destination or expiry edited in the database)", async () => {
    h = await audioApp();
    const a = await shortLink(h, { token_mode: "signed", expires_in: 900 });
    const b = await shortLink(h, { token_mode: "signed", expires_in: 900 });
    await h.ctx.store.run("UPDATE audio_share_links SET destination_url = 'https://evil.test/' WHERE code = ?", [a.short_code]);
    await h.ctx.store.run("UPDATE audio_share_links SET expires_at = '2027-01-01T00:00:00.000Z' WHERE code = ?", [b.short_code]);
    for (const code of [a.short_code, b.short_code]) {
      linkStore(h.ctx).forget(code);
      const r = await h.json(`/s/audio/${code}`);
      expect([r.status, r.body.error]).toEqual([403, "short_link_signature_invalid"]);
      expect((await resolve(code)).body.error).toBe("short_link_signature_invalid");
      expect((await h.json(`${API}/expand?${q({ short_url: `/s/audio/${code}` })}`)).body.signature_valid).toBe(false);
    }
  });

  test("a new signing key invalidates every signed link (rotation = mass revocation), unsigned ones live on", async () => {
    h = await audioApp({ AUDIO_SHARE_SIGNING_KEY: "11".repeat(32) });
    const signed = await shortLink(h, { token_mode: "signed" });
    const plain = await shortLink(h);
    // The same database, opened by a process with another key.
    const h2 = await anotherInstance(h, { env: { AUDIO_SHARE_SIGNING_KEY: "22".repeat(32) } });
    try {
      expect((await h2.json(`/s/audio/${signed.short_code}`)).body.error).toBe("short_link_signature_invalid");
      expect((await h2.request(`/s/audio/${plain.short_code}`)).status).toBe(302);
    } finally {
      await h2.close();
    }
  });

  test("bad body: missing code, wrong type, unknown field", async () => {
    h = await audioApp();
    for (const body of [{}, { code: 7 }, { code: "x", extra: true }, { code: "" }]) {
      expect((await h.json(`${API}/short/resolve`, jsonPost(body))).body.error).toBe("invalid_payload");
    }
    // Not a code at all (docs: "400 invalid_payload (not a code or token)"), as against a well-formed unknown one (404).
    for (const code of ["not a code!", "abc", "a".repeat(17), "aaaaaaaaaaaaaaa1", "aaaaaaaaaaaaaaa1.1767226500.abc"]) {
      const res = await h.json(`${API}/short/resolve`, jsonPost({ code }));
      expect({ code, status: res.status, error: res.body.error, field: res.body.details?.[0]?.field }).toEqual({
        code,
        status: 400,
        error: "invalid_payload",
        field: "code",
      });
    }
    for (const code of ["aaaaaaaaaaaaaaaa", "AAAAAAAAAAAAAAAA", "aaaaaaaaaaaaaaaa.1767226500.abc"]) {
      expect({ code, status: (await h.json(`${API}/short/resolve`, jsonPost({ code }))).status }).toEqual({ code, status: 404 });
    }
  });
});
