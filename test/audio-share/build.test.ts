import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { API, audioApp, build, expectChecksum, jsonPost, q } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const links = async () =>
  (await h.ctx.store.all("SELECT code, destination_url, source, channel, title, signed, signature, created_at, expires_at FROM audio_share_links")) as any[];

describe("GET (root): build", () => {
  test("plain share URLs per channel, no link written, checksum of the exact bytes", async () => {
    h = await audioApp();
    const res = await h.request(
      `${API}?${q({ track_url: "/tracks/42", title: "Night Drive", text: "Listen to Night Drive", channels: "x,telegram,email,slack,whatsapp,copy-link" })}`,
    );
    expect(res.status).toBe(200);
    const body = await expectChecksum(res);
    expect(body).toMatchObject({
      success: true,
      destination_url: "http://localhost:3000/tracks/42",
      source: "track",
      title: "Night Drive",
      short_url: null,
      short_code: null,
      signed: false,
      expires_at: null,
      token: null,
      warnings: [],
    });
    expect(body.channels).toEqual(["x", "telegram", "email", "slack", "whatsapp", "copy-link"]);
    const dest = encodeURIComponent("http://localhost:3000/tracks/42");
    expect(body.share_urls).toEqual({
      x: `https://x.com/intent/post?text=Listen%20to%20Night%20Drive&url=${dest}`,
      telegram: `https://t.me/share/url?url=${dest}&text=Listen%20to%20Night%20Drive`,
      email: `mailto:?subject=Night%20Drive&body=Listen%20to%20Night%20Drive%20${dest}`,
      slack: "http://localhost:3000/tracks/42",
      whatsapp: `https://wa.me/?text=Listen%20to%20Night%20Drive%20${dest}`,
      "copy-link": "http://localhost:3000/tracks/42",
    });
    expect(body.shares.find((s: any) => s.channel === "slack").message).toBe("<http://localhost:3000/tracks/42|Night Drive> Listen to Night Drive");
    expect(body.shares.find((s: any) => s.channel === "x")).toMatchObject({ length: 21 + 1 + 23, limit: 280, truncated: false });
    expect(await links()).toEqual([]);
    expect(res.headers.get("x-ratelimit-limit")).toBe("90");
  });

  test("aliases resolve, duplicates collapse, no channels = all of them", async () => {
    h = await audioApp();
    const r = await build(h, { track_url: "/t/1", channels: "twitter, microblog,tg,mail,workspace-chat,copy" });
    expect(r.body.channels).toEqual(["x", "telegram", "email", "slack", "copy-link"]);
    const all = await build(h, { track_url: "/t/1" });
    const catalog = await h.json(`${API}/channels.json`);
    expect(all.body.channels).toEqual(catalog.body.channels.map((c: any) => c.id));
  });

  test("use_short=1 issues an unsigned short link with the default expiry; shares carry the short URL", async () => {
    h = await audioApp();
    const r = await build(h, { track_url: "https://allowed.example/t/9", use_short: 1, channels: "telegram", title: "T9" });
    expect(r.status).toBe(200);
    expect(r.body.short_code).toMatch(/^[a-z2-7]{16}$/);
    expect(r.body).toMatchObject({
      short_url: `http://localhost:3000/s/audio/${r.body.short_code}`,
      signed: false,
      token: null,
      expires_at: "2026-01-08T00:00:00.000Z",
    });
    expect(r.body.share_urls.telegram).toContain(encodeURIComponent(r.body.short_url));
    expect(await links()).toEqual([
      {
        code: r.body.short_code,
        destination_url: "https://allowed.example/t/9",
        source: "track",
        channel: "telegram",
        title: "T9",
        signed: 0,
        signature: null,
        created_at: "2026-01-01T00:00:00.000Z",
        expires_at: "2026-01-08T00:00:00.000Z",
      },
    ]);
  });

  test("HEAD is safe: it answers as GET does but issues no short link", async () => {
    h = await audioApp();
    const head = await h.request("/api/public/audio-share-links?track_url=/t/1&use_short=1", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await links()).toEqual([]);
    expect((await build(h, { track_url: "/t/1", use_short: 1 })).status).toBe(200);
    expect(await links()).toHaveLength(1);
  });

  test("use_short is a boolean flag: 1, true and the bare flag issue a short link; 0 and false do not", async () => {
    h = await audioApp();
    const made: Array<[string, boolean]> = [];
    for (const flag of ["use_short=1", "use_short=true", "use_short", "use_short=0", "use_short=false"]) {
      const r = await h.json(`/api/public/audio-share-links?track_url=/t/1&${flag}`);
      expect([flag, r.status]).toEqual([flag, 200]);
      made.push([flag, typeof r.body.short_code === "string"]);
    }
    expect(made).toEqual([
      ["use_short=1", true],
      ["use_short=true", true],
      ["use_short", true],
      ["use_short=0", false],
      ["use_short=false", false],
    ]);
    expect(await links()).toHaveLength(3);
  });

  test("token_mode=signed signs code + expiry + destination; each build gets a new unguessable code", async () => {
    h = await audioApp();
    const a = await build(h, { track_url: "/tracks/1", token_mode: "signed", use_short: 1, expires_in: 900 });
    const b = await build(h, { track_url: "/tracks/1", token_mode: "signed", use_short: 1, expires_in: 900 });
    expect(a.body).toMatchObject({ signed: true, expires_at: "2026-01-01T00:15:00.000Z" });
    expect(a.body.token).toBe(`${a.body.short_code}.1767226500.${(await links())[0].signature}`);
    expect(a.body.short_code).not.toBe(b.body.short_code);
    expect((await links())[0].signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test("token_mode=signed without use_short still builds a short link, with a warning; expires_in alone is ignored with one", async () => {
    h = await audioApp();
    const signed = await build(h, { track_url: "/tracks/1", token_mode: "signed" });
    expect(signed.body.signed).toBe(true);
    expect(signed.body.warnings.map((w: any) => w.code)).toEqual(["signed_implies_short"]);
    const plain = await build(h, { track_url: "/tracks/1", expires_in: 600 });
    expect(plain.body.short_url).toBeNull();
    expect(plain.body.warnings.map((w: any) => w.code)).toEqual(["expires_in_ignored"]);
  });

  test("prefer=file shares file_url; the choice is warned about when it is not obvious", async () => {
    h = await audioApp();
    const file = await build(h, { track_url: "/tracks/1", file_url: "https://media.cdn.example/1.mp3", prefer: "file", channels: "x" });
    expect(file.body).toMatchObject({ destination_url: "https://media.cdn.example/1.mp3", source: "file", warnings: [] });
    const both = await build(h, { track_url: "/tracks/1", file_url: "https://media.cdn.example/1.mp3", channels: "x" });
    expect(both.body).toMatchObject({ source: "track", warnings: [{ code: "file_url_ignored" }] });
    const noFile = await build(h, { track_url: "/tracks/1", prefer: "file", channels: "x" });
    expect(noFile.body).toMatchObject({ source: "track", warnings: [{ code: "prefer_file_without_file_url" }] });
    const onlyFile = await build(h, { file_url: "/media/1.mp3", channels: "x" });
    expect(onlyFile.body).toMatchObject({ source: "file", destination_url: "http://localhost:3000/media/1.mp3" });
  });

  test("text is cut on a word to fit the microblog's 280 (links count 23); channels that take no text say so", async () => {
    h = await audioApp();
    const text = "word ".repeat(80).trim();
    const r = await build(h, { track_url: "/tracks/1", text, channels: "x,facebook,telegram" });
    const x = r.body.shares.find((s: any) => s.channel === "x");
    expect(x.truncated).toBe(true);
    expect(x.length).toBeLessThanOrEqual(280);
    expect(x.message.endsWith("… http://localhost:3000/tracks/1")).toBe(true);
    expect(r.body.shares.find((s: any) => s.channel === "telegram").truncated).toBe(false);
    expect(r.body.warnings).toEqual([
      { code: "text_truncated", message: "The text was shortened to fit X (microblog) (280 characters)", channel: "x" },
      { code: "text_not_supported", message: "Facebook takes only the link; text is not sent", channel: "facebook" },
    ]);
  });

  test("include_meta adds meta and the checksum covers it", async () => {
    h = await audioApp();
    const res = await h.request(`${API}?${q({ track_url: "/tracks/1", channels: "x", include_meta: 1 })}`);
    const body = await expectChecksum(res);
    expect(body.meta).toEqual({ request_id: res.headers.get("x-request-id")!, generated_at_utc: "2026-01-01T00:00:00.000Z" });
  });

  test.each([
    [{}, 400, "destination_invalid"],
    [{ track_url: "" }, 400, "destination_invalid"],
    [{ track_url: "/t/1", channels: "x,myspace" }, 400, "channel_unknown"],
    [{ track_url: "/t/1", expires_in: 59, use_short: 1 }, 400, "invalid_query"],
    [{ track_url: "/t/1", expires_in: 2_592_001, use_short: 1 }, 400, "invalid_query"],
    [{ track_url: "/t/1", expires_in: "90.5", use_short: 1 }, 400, "invalid_query"],
    [{ track_url: "/t/1", expires_in: "soon", use_short: 1 }, 400, "invalid_query"],
    [{ track_url: "/t/1", use_short: "yes" }, 400, "invalid_query"],
    [{ track_url: "/t/1", token_mode: "hmac" }, 400, "invalid_query"],
    [{ track_url: "/t/1", prefer: "video" }, 400, "invalid_query"],
    [{ track_url: "/t/1", title: "x".repeat(301) }, 400, "invalid_query"],
    [{ track_url: "/t/" + "a".repeat(2100) }, 400, "destination_invalid"],
  ])("%j → %i %s, nothing written", async (params, status, code) => {
    h = await audioApp();
    const r = await build(h, params as Record<string, string>);
    expect([r.status, r.body.error]).toEqual([status, code]);
    expect(r.body.request_id).toBeString();
    expect(await links()).toEqual([]);
  });

  test("expires_in bounds are inclusive: 60 and 2592000", async () => {
    h = await audioApp();
    expect((await build(h, { track_url: "/t/1", use_short: 1, expires_in: 60 })).body.expires_at).toBe("2026-01-01T00:01:00.000Z");
    expect((await build(h, { track_url: "/t/1", use_short: 1, expires_in: 2_592_000 })).body.expires_at).toBe("2026-01-31T00:00:00.000Z");
  });

  test("channel_unknown names the unknown channels", async () => {
    h = await audioApp();
    const r = await build(h, { track_url: "/t/1", channels: "x,myspace,orkut" });
    expect(r.body.message).toContain("myspace, orkut");
    expect(r.body.details.field).toBe("channels");
  });

  test("the public per-IP rate limit applies, with the standard headers", async () => {
    h = await audioApp({ RATE_LIMIT_PUBLIC_API_PER_MIN: "2" });
    await build(h, { track_url: "/t/1" });
    const second = await build(h, { track_url: "/t/1" });
    expect(second.headers.get("x-ratelimit-remaining")).toBe("0");
    const third = await build(h, { track_url: "/t/1" });
    expect([third.status, third.body.error]).toEqual([429, "rate_limited"]);
    expect(third.headers.get("retry-after")).toBeString();
  });
});

describe("GET /validate and POST /validate/batch", () => {
  test("valid destination: findings lists, normalised URL, host", async () => {
    h = await audioApp();
    const res = await h.request(`${API}/validate?${q({ track_url: "HTTPS://Allowed.Example/login?next=https://allowed.example/t/2", channels: "x,slack" })}`);
    const body = await expectChecksum(res);
    expect(body).toEqual({
      success: true,
      valid: true,
      destination_url: "https://allowed.example/login?next=https://allowed.example/t/2",
      host: "allowed.example",
      source: "track",
      channels: ["x", "slack"],
      errors: [],
      warnings: [
        {
          code: "redirect_param_present",
          message: 'Parameter "next" carries a redirect (to an allowed host); readers land on a second page',
          field: "track_url",
          param: "next",
        },
      ],
      request_id: res.headers.get("x-request-id"),
    });
  });

  test("every problem is reported at once, with 200", async () => {
    h = await audioApp();
    const r = await h.json(`${API}/validate?${q({ track_url: "https://evil.test/", channels: "x,nope" })}`);
    expect(r.status).toBe(200);
    expect(r.body.valid).toBe(false);
    expect(r.body.errors.map((e: any) => e.code)).toEqual(["channel_unknown", "destination_host_denied"]);
    // The denied host is named, and the payload carries its request_id (as the spec says of destination_host_denied).
    expect(r.body.host).toBe("evil.test");
    expect(r.body.request_id).toBe(r.headers.get("x-request-id"));
    expect(r.body.request_id).toMatch(/^req_/);
    const missing = await h.json(`${API}/validate`);
    expect(missing.body.errors.map((e: any) => e.code)).toEqual(["destination_invalid"]);
  });

  test("batch with mixed items reports each on its own; defaults apply where an item says nothing", async () => {
    h = await audioApp();
    const res = await h.request(
      `${API}/validate/batch`,
      jsonPost({
        defaults: { channels: "x,telegram" },
        items: [
          { track_url: "/tracks/1", title: "One" },
          { track_url: "https://allowed.example@evil.test/" },
          { file_url: "https://media.cdn.example/2.mp3", prefer: "file", channels: "email" },
          { track_url: "javascript:alert(1)" },
          { track_url: "/tracks/5", channels: "x,myspace" },
          {},
        ],
      }),
    );
    const body = await expectChecksum(res);
    expect(body).toMatchObject({ success: true, count: 6, valid_count: 2, invalid_count: 4 });
    expect(body.results.map((r: any) => [r.index, r.valid, r.errors.map((e: any) => e.code)])).toEqual([
      [0, true, []],
      [1, false, ["destination_host_denied"]],
      [2, true, []],
      [3, false, ["destination_host_denied"]],
      [4, false, ["channel_unknown"]],
      [5, false, ["destination_invalid"]],
    ]);
    expect(body.results[0].channels).toEqual(["x", "telegram"]);
    expect(body.results[2]).toMatchObject({ source: "file", channels: ["email"], destination_url: "https://media.cdn.example/2.mp3" });
    expect(body.results[1].errors[0]).toMatchObject({ host: "evil.test", reason: "userinfo" });
  });

  test("in a batch body, channels may also be an array of the same names", async () => {
    h = await audioApp();
    const r = await h.json(
      `${API}/validate/batch`,
      jsonPost({ defaults: { channels: ["x", "telegram"] }, items: [{ track_url: "/tracks/1" }, { track_url: "/tracks/2", channels: ["email", "myspace"] }] }),
    );
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: any) => [x.channels, x.errors.map((e: any) => e.code)])).toEqual([
      [["x", "telegram"], []],
      [["email"], ["channel_unknown"]],
    ]);
    const tooMany = await h.json(`${API}/validate/batch`, jsonPost({ items: [{ track_url: "/t/1", channels: Array.from({ length: 51 }, () => "x") }] }));
    expect([tooMany.status, tooMany.body.error]).toEqual([400, "invalid_payload"]);
  });

  test.each([
    [{ items: [] }, "items"],
    [{ items: Array.from({ length: 101 }, () => ({ track_url: "/t/1" })) }, "items"],
    [{ items: [{ track_url: "/t/1", colour: "red" }] }, "items.0.colour"],
    [{ items: [{ track_url: 42 }] }, "items.0.track_url"],
    [{ items: [{ track_url: "/t/1" }], defaults: { channels: "x", use_short: 1 } }, "defaults.use_short"],
    [{ items: "all" }, "items"],
  ])("bad batch %# → 400 invalid_payload naming %s", async (body, field) => {
    h = await audioApp();
    const r = await h.json(`${API}/validate/batch`, jsonPost(body));
    expect([r.status, r.body.error]).toEqual([400, "invalid_payload"]);
    expect(r.body.details.map((d: any) => d.field)).toContain(field);
  });

  test("malformed JSON and a non-JSON body are refused", async () => {
    h = await audioApp();
    const bad = await h.json(`${API}/validate/batch`, jsonPost("{items:"));
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_payload"]);
    const form = await h.json(`${API}/validate/batch`, { method: "POST", headers: { "content-type": "text/plain" }, body: "items" });
    expect([form.status, form.body.error]).toEqual([415, "unsupported_media_type"]);
  });
});

describe("GET /preview", () => {
  test("per-channel messages and a card; nothing is issued", async () => {
    h = await audioApp();
    const res = await h.request(`${API}/preview?${q({ track_url: "/tracks/7", title: "Seven", text: "Track seven", channels: "x,email" })}`);
    const body = await expectChecksum(res);
    expect(body).toMatchObject({
      success: true,
      destination_url: "http://localhost:3000/tracks/7",
      card: { url: "http://localhost:3000/tracks/7", host: "localhost", title: "Seven", description: "Track seven" },
      warnings: [],
    });
    expect(body.shares.map((s: any) => [s.channel, s.message])).toEqual([
      ["x", "Track seven http://localhost:3000/tracks/7"],
      ["email", "Track seven http://localhost:3000/tracks/7"],
    ]);
    expect(await links()).toEqual([]);
  });

  test("errors are the build's: denied host, unknown channel, missing destination", async () => {
    h = await audioApp();
    expect((await h.json(`${API}/preview?${q({ track_url: "https://evil.test/" })}`)).body).toMatchObject({
      error: "destination_host_denied",
      host: "evil.test",
    });
    expect((await h.json(`${API}/preview?${q({ track_url: "/t", channels: "zz" })}`)).body.error).toBe("channel_unknown");
    expect((await h.json(`${API}/preview`)).body.error).toBe("destination_invalid");
  });
});
