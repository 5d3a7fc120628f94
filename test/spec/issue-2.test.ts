// Issue 2's conventions re-verified where an outside check meets them first: on the partner routes, signed or not.
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedInit, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

test("issue 2: an unknown path under /api/partner is a JSON 404 not_found, a wrong method 405 with Allow, both with a request id", async () => {
  h = await openTestApp();
  const missing = await h.json("/api/partner/no-such-route");
  expect({ status: missing.status, success: missing.body.success, error: missing.body.error }).toEqual({ status: 404, success: false, error: "not_found" });
  expect(missing.body.request_id).toBe(missing.headers.get("x-request-id"));
  const wrong = await h.json("/api/partner/webhooks", { method: "PUT" });
  expect({ status: wrong.status, error: wrong.body.error }).toEqual({ status: 405, error: "method_not_allowed" });
  expect(wrong.headers.get("allow")).toContain("GET");
});

test("issue 2: on a signed route, malformed JSON is 400 invalid_payload and a body over MAX_BODY_BYTES is 413 payload_too_large; a refusal echoes X-Request-ID", async () => {
  h = await openTestApp({ env: { MAX_BODY_BYTES: "2048" } });
  const k = await createKey(h);
  const bad = await h.json("/api/partner/users", signedInit(h, k, "POST", "/api/partner/users", { body: '{"external_id": "x",' }));
  expect({ status: bad.status, error: bad.body.error }).toEqual({ status: 400, error: "invalid_payload" });
  const big = await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "x", display_name: "y".repeat(4096) } });
  expect({ status: big.status, error: big.body.error }).toEqual({ status: 413, error: "payload_too_large" });
  const init = signedInit(h, k, "GET", "/api/partner/capabilities", { headers: { "x-request-id": "probe-abc-123" } });
  (init.headers as Record<string, string>)["X-Partner-Signature"] = "0".repeat(64);
  const refused = await h.json("/api/partner/capabilities", init);
  expect(refused.status).toBe(401);
  expect(refused.headers.get("x-request-id")).toBe("probe-abc-123");
  expect(refused.body.request_id).toBe("probe-abc-123");
});
