import { createHash } from "node:crypto";
import { expect } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";

export const API = "/api/public/audio-share-links";
export const BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

/** A test app whose policy allows allowed.example (and *.cdn.example for files) besides the base host. */
export function audioApp(env: Record<string, string> = {}): TestApp {
  return createTestApp({ env: { AUDIO_SHARE_ALLOWED_HOSTS: "allowed.example,*.cdn.example", AUDIO_SHARE_DENIED_HOSTS: "evil.test", ...env } });
}

export const q = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** GET the builder; asserts nothing. */
export const build = (h: TestApp, params: Record<string, string | number>) => h.json(`${API}?${q(params)}`);

/** A short link through the public API; returns the build body. */
export async function shortLink(h: TestApp, params: Record<string, string | number> = {}) {
  const r = await build(h, { track_url: "/tracks/42", use_short: 1, ...params });
  expect(r.status).toBe(200);
  return r.body as { short_code: string; short_url: string; token: string | null; expires_at: string; destination_url: string };
}

/** The checksum header must be the SHA-256 of the exact bytes received. */
export async function expectChecksum(res: Response): Promise<any> {
  const text = await res.text();
  expect(res.headers.get("x-audio-share-checksum")).toBe(createHash("sha256").update(text).digest("hex"));
  return JSON.parse(text);
}

export const jsonPost = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});
