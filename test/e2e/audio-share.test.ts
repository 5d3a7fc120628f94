import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import jsQR from "jsqr";
import { PNG } from "pngjs";
import { TARGET } from "../support/target";
import { adminInit, expectRefusal, row, startE2E, type E2E } from "./support";

// Audio-share links as a fan's page and a listener's browser use them (docs/audio-share.md): build share URLs with
// a signed short link, follow it (302, counted as a click; HEAD and bots counted apart), scan its QR code, count a
// share event once, and see an operator's revoke stop the redirect. When served, `herald serve` answers
// /s/audio/{code} with its native Bun route in front of Elysia; in process the Elysia route answers — same rules.

const API = "/api/public/audio-share-links";
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";
let e: E2E;
let base: string;
beforeAll(async () => {
  e = await startE2E({ AUDIO_SHARE_ALLOWED_HOSTS: "cdn.example.com", AUDIO_SHARE_DENIED_HOSTS: "evil.test" });
  base = e.h.ctx.config.publicBaseUrl.replace(/\/$/, "");
});
afterAll(() => e?.stop());

/**
 * A JSON answer whose X-Audio-Share-Checksum is the SHA-256 of the exact bytes received (asked uncompressed; the
 * compressed case has its own test below).
 */
async function checked(path: string, init: RequestInit = {}) {
  const res = await e.h.request(path, { ...init, headers: { "accept-encoding": "identity", ...(init.headers as Record<string, string>) } });
  const text = await res.text();
  expect(res.headers.get("x-audio-share-checksum")).toBe(createHash("sha256").update(text).digest("hex"));
  return { status: res.status, body: JSON.parse(text) };
}

function decodeQr(png: Uint8Array): { text: string | null; width: number } {
  const image = PNG.sync.read(Buffer.from(png));
  return { text: jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data ?? null, width: image.width };
}

describe(`audio-share over HTTP (${TARGET.label})`, () => {
  let link: { short_code: string; short_url: string; token: string; destination_url: string };

  test("build: share URLs per channel carrying a signed short link; a foreign host is refused, naming it", async () => {
    const channels = await checked(`${API}/channels.json`);
    expect(channels.body.channels.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining(["x", "telegram", "email", "copy-link"]));

    const built = await checked(
      `${API}?track_url=/tracks/42&title=Night%20Drive&text=Listen&channels=x,telegram&use_short=1&token_mode=signed&expires_in=3600`,
    );
    expect(built.status).toBe(200);
    link = built.body;
    expect(built.body).toMatchObject({ success: true, destination_url: `${base}/tracks/42`, source: "track", channels: ["x", "telegram"], signed: true });
    expect(link.short_code).toMatch(/^[a-z2-7]{16}$/);
    expect(link.short_url).toBe(`${base}/s/audio/${link.short_code}`);
    expect(link.token).toStartWith(`${link.short_code}.`);
    expect(built.body.share_urls.telegram).toBe(`https://t.me/share/url?url=${encodeURIComponent(link.short_url)}&text=Listen`);
    expect(await row(e.h, "SELECT destination_url FROM audio_share_links WHERE code = ?", link.short_code)).toEqual({ destination_url: `${base}/tracks/42` });

    const denied = await e.h.json(`${API}?track_url=${encodeURIComponent("https://cdn.example.com@evil.test/")}`);
    expectRefusal(denied, 400, "destination_host_denied");
    expect(denied.body).toMatchObject({ host: "evil.test", reason: "userinfo" });
  });

  test("the short link: a browser gets a 302 and is counted; HEAD and a bot are counted apart", async () => {
    const click = await e.h.request(`/s/audio/${link.short_code}`, { headers: { "user-agent": BROWSER } });
    expect(click.status).toBe(302);
    expect(click.headers.get("location")).toBe(link.destination_url);
    expect(click.headers.get("cache-control")).toBe("private, no-store");
    expect(click.headers.get("x-request-id")).toMatch(/\S/);
    // The same client again within the hour: a click, not a unique one; then a HEAD and a link-preview bot.
    expect((await e.h.request(`/s/audio/${link.short_code.toUpperCase()}`, { headers: { "user-agent": BROWSER } })).status).toBe(302);
    expect((await e.h.request(`/s/audio/${link.short_code}`, { method: "HEAD", headers: { "user-agent": BROWSER } })).status).toBe(302);
    expect((await e.h.request(`/s/audio/${link.short_code}`, { headers: { "user-agent": "TelegramBot (like TwitterBot)" } })).status).toBe(302);
    const unknown = await e.h.json("/s/audio/aaaaaaaaaaaaaaaa", { headers: { "user-agent": BROWSER } });
    expectRefusal(unknown, 404, "short_link_not_found");

    const stats = await checked(`${API}/stats?code=${link.short_code}`);
    expect(stats.body).toMatchObject({ short_code: link.short_code, state: "active", totals: { clicks: 2, unique_clicks: 1, bot_hits: 1, head_hits: 1 } });
    expect(stats.body.hourly).toHaveLength(1);
  });

  test("resolve checks the signed token; expand reports the link", async () => {
    const resolved = await checked(`${API}/short/resolve`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: link.token }),
    });
    expect(resolved.body).toMatchObject({ short_code: link.short_code, signed: true, signature_valid: true, token_verified: true, state: "active" });
    const tampered = `${link.token.slice(0, -1)}${link.token.endsWith("A") ? "B" : "A"}`;
    const bad = await e.h.json(`${API}/short/resolve`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: tampered }),
    });
    expectRefusal(bad, 403, "short_link_signature_invalid");
    const expanded = await checked(`${API}/expand?short_url=${encodeURIComponent(link.short_url)}`);
    expect(expanded.body).toMatchObject({ short_code: link.short_code, destination_url: link.destination_url, title: "Night Drive" });
  });

  test("the QR PNG decodes back to the short URL; the SVG is a QR symbol", async () => {
    const png = await e.h.request(`/s/audio/${link.short_code}/qr.png?size=320`);
    expect(png.status).toBe(200);
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(png.headers.get("cache-control")).toBe("public, max-age=300");
    expect(decodeQr(new Uint8Array(await png.arrayBuffer()))).toEqual({ text: link.short_url, width: 320 });
    const svg = await e.h.request(`/s/audio/${link.short_code}/qr.svg`);
    expect(svg.headers.get("content-type")).toContain("image/svg+xml");
    expect(await svg.text()).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"');
    expectRefusal(await e.h.json(`/s/audio/${link.short_code}/qr.png?size=20`), 400, "invalid_query");
  });

  test("a share event counts once per client_event_id", async () => {
    const event = { event_type: "copy", destination_url: link.short_url, client_event_id: "e2e-copy-0001", channel: "x" };
    const post = () => checked(`${API}/track`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(event) });
    const first = await post();
    expect(first.body).toMatchObject({ recorded: true, duplicate: false, replay_reason: null, event_type: "copy", authenticated: false });
    const again = await post();
    expect(again.body).toMatchObject({ recorded: false, duplicate: true, replay_reason: "in_window_duplicate", event_id: first.body.event_id });
    const stats = await checked(`${API}/stats?code=${link.short_code}`);
    expect(stats.body.track_events).toEqual({ count: 1, by_type: { copy: 1 } });
  });

  // fetch (Bun, Node, browsers) sends Accept-Encoding; docs/audio-share.md promises the checksum on every
  // successful JSON answer, compressed or not: it is the SHA-256 of the body the client reads after decoding.
  test("a compressed answer still carries X-Audio-Share-Checksum, the hash of the decoded body", async () => {
    const res = await e.h.request(`${API}/channels.json`, { headers: { "accept-encoding": "gzip" } });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    // In process the body is still gzip; over a socket fetch has already decoded it.
    const raw = new Uint8Array(await res.arrayBuffer());
    const text = new TextDecoder().decode(raw[0] === 0x1f && raw[1] === 0x8b ? Bun.gunzipSync(raw) : raw);
    expect(res.headers.get("x-audio-share-checksum")).toBe(createHash("sha256").update(text).digest("hex"));
    expect(JSON.parse(text).success).toBe(true);
  });

  test("an operator's revoke: 410 from then on, no QR code; the admin route refuses anyone else", async () => {
    const body = { short_code: link.short_code, reason: "reported as spam" };
    const anon = await e.h.json("/admin/ops/audio-share-revocations/revoke", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expectRefusal(anon, 403, "forbidden");
    const revoked = await e.h.json("/admin/ops/audio-share-revocations/revoke", adminInit(e, "POST", body));
    expect(revoked.body).toMatchObject({ success: true, short_code: link.short_code, revoked: true, already_revoked: false });
    const gone = await e.h.json(`/s/audio/${link.short_code}`, { headers: { "user-agent": BROWSER } });
    expectRefusal(gone, 410, "short_link_revoked");
    expect(gone.body.details.revoked_at).toBe(revoked.body.revoked_at);
    expectRefusal(await e.h.json(`/s/audio/${link.short_code}/qr.png`), 410, "short_link_revoked");
    expect(await row(e.h, "SELECT count(*) AS n FROM admin_audit WHERE action = 'audio_share_link.revoke'")).toEqual({ n: 1 });
  });
});
