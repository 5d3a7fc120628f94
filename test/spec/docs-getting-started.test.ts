// Docs audit: docs/getting-started.md's first calls against the real app.
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

// docs/getting-started.md:21-26 — the public preview needs no signature and says exists, active and mode;
// :30-33 — capabilities answers with the key, its mode and its scopes, for either kind of key
test("verify-key preview, then capabilities with key, mode and scopes", async () => {
  h = await openTestApp();
  for (const mode of ["sandbox", "live"] as const) {
    const k = await createKey(h, { mode, scopes: ["read", "credit"] });
    const preview = await h.json(`/api/public/quickstart/verify-key?api_key=${k.keyId}`);
    expect([preview.status, preview.body.exists, preview.body.active, preview.body.key_mode]).toEqual([200, true, true, mode]);
    const caps = await signedJson(h, k, "GET", "/api/partner/capabilities");
    expect([caps.status, caps.body.key_id, caps.body.key_mode, caps.body.scopes]).toEqual([200, k.keyId, mode, ["credit", "read"]]);
  }
});

// docs/partner-auth.md (Onboarding preview) — "It never takes or returns a secret": a pasted secret is refused, not echoed
test("verify-key refuses a pasted secret without echoing it", async () => {
  h = await openTestApp();
  const k = await createKey(h, { mode: "sandbox" });
  const r = await h.json(`/api/public/quickstart/verify-key?api_key=${k.secret}`);
  expect([r.status, r.body.error, r.body.details?.[0]?.field]).toEqual([400, "invalid_query", "query.api_key"]);
  expect(JSON.stringify(r.body)).not.toContain(k.secret);
});

// docs/getting-started.md:74 — every refusal has {success: false, error, message, request_id}
test("refusals of the first calls carry error, message and request_id", async () => {
  h = await openTestApp();
  const k = await createKey(h, { mode: "sandbox" });
  const refusals = [
    await h.json("/api/partner/capabilities"), // unsigned: 401
    await signedJson(h, { ...k, secret: "hsk_test_wrong" }, "GET", "/api/partner/capabilities"), // 401
    await signedJson(h, k, "GET", "/api/partner/users"), // sandbox key on a live route: 403
    await signedJson(h, k, "GET", "/api/partner/sandbox/users/999999"), // 404
    await signedJson(h, k, "GET", "/api/partner/sandbox/users?limit=0"), // 400
    await h.json("/api/public/quickstart/verify-key"), // missing api_key: 400
  ];
  for (const r of refusals) {
    expect([r.status >= 400, r.body.success, typeof r.body.error, typeof r.body.message, r.body.request_id]).toEqual([
      true,
      false,
      "string",
      "string",
      r.headers.get("x-request-id"),
    ]);
  }
  expect(refusals.map((r) => r.status)).toEqual([401, 401, 403, 404, 400, 400]);
});
