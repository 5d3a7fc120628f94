import { afterEach, describe, expect, test } from "bun:test";
import jsQR from "jsqr";
import { PNG } from "pngjs";
import type { TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { audioApp, jsonPost, shortLink } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

/** Decodes a PNG with a real QR decoder (jsQR over pngjs pixels); null when no code is found. */
function decode(png: Uint8Array): { text: string | null; width: number } {
  const image = PNG.sync.read(Buffer.from(png));
  const found = jsQR(new Uint8ClampedArray(image.data), image.width, image.height);
  return { text: found?.data ?? null, width: image.width };
}

describe("GET /s/audio/{code}/qr.png and qr.svg", () => {
  test("the PNG decodes back to the short URL, at the default and at a custom size", async () => {
    h = await audioApp();
    const link = await shortLink(h, { token_mode: "signed" });
    const res = await h.request(`/s/audio/${link.short_code}/qr.png`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    const png = new Uint8Array(await res.arrayBuffer());
    expect(decode(png)).toEqual({ text: link.short_url, width: 256 });
    const big = new Uint8Array(await (await h.request(`/s/audio/${link.short_code}/qr.png?size=512`)).arrayBuffer());
    expect(decode(big)).toEqual({ text: link.short_url, width: 512 });
    expect(link.short_url).toBe(`http://localhost:3000/s/audio/${link.short_code}`);
  });

  test("the SVG is a QR symbol of the same URL (rendered path, viewBox)", async () => {
    h = await audioApp();
    const link = await shortLink(h);
    const res = await h.request(`/s/audio/${link.short_code}/qr.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("image/svg+xml");
    const svg = await res.text();
    expect(svg).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"');
    expect(svg).toMatch(/viewBox="0 0 \d+ \d+"/);
    expect(svg).toContain("<path");
  });

  test("no QR code for unknown, expired or revoked links", async () => {
    h = await audioApp();
    expect((await h.json("/s/audio/aaaaaaaaaaaaaaaa/qr.png")).body.error).toBe("short_link_not_found");
    const link = await shortLink(h, { expires_in: 60 });
    const other = await shortLink(h);
    await h.json(
      "/admin/ops/audio-share-revocations/revoke",
      jsonPost({ short_code: other.short_code, reason: "test" }, { authorization: `Bearer ${await createAdminToken(h)}` }),
    );
    h.clock.advanceSeconds(60);
    for (const [code, err] of [
      [link.short_code, "short_link_expired"],
      [other.short_code, "short_link_revoked"],
    ] as const) {
      for (const ext of ["png", "svg"]) {
        const r = await h.json(`/s/audio/${code}/qr.${ext}`);
        expect([r.status, r.body.error]).toEqual([410, err]);
      }
    }
  });

  test("size is bounded 64 … 1024", async () => {
    h = await audioApp();
    const link = await shortLink(h);
    for (const size of ["63", "1025", "big", "100.5"]) {
      const r = await h.json(`/s/audio/${link.short_code}/qr.png?size=${size}`);
      expect([r.status, r.body.error]).toEqual([400, "invalid_query"]);
    }
  });
});
