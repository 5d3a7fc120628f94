// Spec conformance (second audit): "Signed short link" (States and transitions) and the expires_in bounds the
// project documents (docs/audio-share.md: 60 … 2592000 s) — a link expires, is revoked, and never resolves after.
import { afterEach, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const B = "/api/public/audio-share-links";

test("expires_in bounds; expiry → 410 on resolve and redirect, expand reports state; revoke is idempotent (already_revoked)", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
  const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
  const build = (e: string) => h.request(`${B}?track_url=/tracks/a&token_mode=signed&use_short=1&expires_in=${e}`);
  for (const [e, want] of [
    ["59", 400],
    ["60", 200],
    ["2592000", 200],
    ["2592001", 400],
    ["900.5", 400],
  ] as const)
    expect((await build(e)).status).toBe(want);
  const link = (await (await build("60")).json()) as any;
  expect((await h.request(`/s/audio/${link.short_code}`)).status).toBe(302);
  const expand = async () => (await h.json(`${B}/expand?short_url=${encodeURIComponent(link.short_url)}`)).body;
  expect((await expand()).state).toBe("active");
  h.clock.advance(60_000);
  const r = await h.json(`${B}/short/resolve`, jsonInit("POST", { code: link.short_code }));
  expect([r.status, r.body.error]).toEqual([410, "short_link_expired"]);
  expect((await h.request(`/s/audio/${link.short_code}`)).status).toBe(410);
  expect((await expand()).state).toBe("expired");
  const revoke = () => h.json("/admin/ops/audio-share-revocations/revoke", jsonInit("POST", { short_code: link.short_code, reason: "audit" }, admin));
  expect((await revoke()).body).toMatchObject({ revoked: true, already_revoked: false });
  expect((await revoke()).body).toMatchObject({ revoked: true, already_revoked: true });
  expect((await h.json(`${B}/short/resolve`, jsonInit("POST", { code: link.short_code }))).body.error).toBe("short_link_revoked");
  expect((await expand()).state).toBe("revoked");
  expect((await h.json(`${B}/short/resolve`, jsonInit("POST", { code: "zzzzzzzzzzzzzzzz" }))).status).toBe(404);
  expect((await h.json("/admin/ops/audio-share-revocations/revoke", jsonInit("POST", { short_code: link.short_code, reason: "x" }))).status).toBe(403);
});
