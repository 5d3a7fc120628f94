import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedInit, signedJson, type TestKey } from "../support/partner";
import { JSON_LIMITS, scanJson } from "../../src/http/body/json-body";
import { MAX_TARGET_CHARS } from "../../src/http/core";

/** The body and request-target policy of docs/http-conventions.md, over the real app. */
let h: TestApp;
let key: TestKey;
beforeAll(async () => {
  h = await openTestApp();
  key = await createKey(h);
});
afterAll(() => h.close());

const echo = (body: string | Uint8Array, headers: Record<string, string> = { "content-type": "application/json" }) =>
  h.json("/api/canary/echo", { method: "POST", headers, body });

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("JSON structure limits", () => {
  test('the outside fuzzer\'s bodies: 200 KB of [ and 20,000 {"a": are 400 invalid_payload, naming the limit', async () => {
    for (const body of [nested(100_000), '{"a":'.repeat(20_000) + "1" + "}".repeat(20_000)]) {
      const r = await echo(body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ success: false, error: "invalid_payload" });
      expect(r.body.message).toContain(`nesting deeper than ${JSON_LIMITS.maxDepth} levels`);
      expect(r.body.message.length).toBeLessThan(300); // the refused value is never echoed
      expect(r.headers.get("x-request-id")).toBeTruthy();
    }
  });

  test("exactly the limit parses; one level more does not", () => {
    expect(scanJson(nested(JSON_LIMITS.maxDepth))).toBeNull();
    expect(scanJson(nested(JSON_LIMITS.maxDepth + 1))).toContain("nesting deeper");
    expect(scanJson(`[${"0,".repeat(JSON_LIMITS.maxMembers - 1)}0]`)).toBeNull();
    expect(scanJson(`[${"0,".repeat(JSON_LIMITS.maxMembers)}0]`)).toContain(`more than ${JSON_LIMITS.maxMembers} keys and array items`);
    const manyKeys = `{${Array.from({ length: JSON_LIMITS.maxMembers + 1 }, (_, i) => `"k${i}":0`).join(",")}}`;
    expect(scanJson(manyKeys)).toContain("keys and array items");
  });

  test("duplicate keys, __proto__, comments, trailing commas and invalid UTF-8 are refused", async () => {
    const cases: Array<[string | Uint8Array, string]> = [
      ['{"message":"a","message":"b"}', 'the key "message" appears twice'],
      ['{"a":{"b":1,"b":2}}', 'the key "b" appears twice'],
      ['{"__proto__":{"admin":true}}', "__proto__"],
      ['{"message":"a" /* c */}', "must be valid JSON"],
      ['{"message":"a",}', "must be valid JSON"],
      [new Uint8Array([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), "not valid UTF-8"],
      ["NaN", "must be valid JSON"],
    ];
    for (const [body, problem] of cases) {
      const r = await echo(body);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(r.body.details[0].problem).toContain(problem);
    }
    // The same key in sibling objects is fine.
    expect(scanJson('[{"a":1},{"a":2}]')).toBeNull();
  });

  test("a large body that fails its schema is refused without its value in the answer", async () => {
    const big = JSON.stringify({ message: "x".repeat(900_000) });
    const r = await echo(big);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    expect(JSON.stringify(r.body).length).toBeLessThan(1000);
  });

  test("the 413 limit still holds, before any parsing", async () => {
    const r = await echo(JSON.stringify({ message: "x".repeat(h.ctx.config.maxBodyBytes) }));
    expect(r.status).toBe(413);
    expect(r.body.error).toBe("payload_too_large");
  });
});

describe("content types", () => {
  test("a body needs application/json with UTF-8 or no charset; anything else is 415", async () => {
    const body = JSON.stringify({ message: "hi", request_id: "probe-1" });
    for (const type of [null, "text/plain", "application/json; charset=latin1", "application/x-www-form-urlencoded", "application/json; charset=utf-16"]) {
      const r = await echo(body, type === null ? {} : { "content-type": type });
      expect(r.status).toBe(415);
      expect(r.body.error).toBe("unsupported_media_type");
    }
    for (const type of ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "application/problem+json"]) {
      const r = await echo(body, { "content-type": type });
      expect(r.status).toBe(200);
    }
  });

  test("a request without a body needs no Content-Type", async () => {
    const r = await h.json("/api/canary/echo", { method: "POST" });
    expect(r.status).not.toBe(415);
  });
});

describe("bodies of the wrong shape", () => {
  test("rotate-secret refuses [], 123, true and null (it takes an object)", async () => {
    for (const body of ["[]", "123", "true", "null", '"x"']) {
      const r = await signedJson(h, key, "POST", "/api/partner/webhooks/1/rotate-secret", { body });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: "invalid_payload", details: [{ field: "body", problem: "must be an object" }] });
    }
  });

  test("no body at all on a route that takes an object is {}: required fields are named, optional ones default", async () => {
    // canary/echo requires message and request_id: each is named, not "body must be an object".
    const echoed = await h.json("/api/canary/echo", { method: "POST" });
    expect([echoed.status, echoed.body.error, echoed.body.message]).toEqual([
      400,
      "invalid_payload",
      "Invalid request body: message is required; request_id is required",
    ]);
    // rotate-secret's only field (overlap_hours) is optional: no body reaches the handler (no such webhook).
    const rotate = await signedJson(h, key, "POST", "/api/partner/webhooks/987654/rotate-secret", { body: "" });
    expect([rotate.status, rotate.body.error]).toEqual([404, "not_found"]);
  });

  test("a route that takes no body refuses one (an empty object is tolerated)", async () => {
    const refused = await signedJson(h, key, "POST", "/api/partner/webhooks/1/test", { body: { replay: true } });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([{ field: "body", problem: "must be empty" }]);
    const tolerated = await signedJson(h, key, "POST", "/api/partner/webhooks/1/test", { body: {} });
    expect(tolerated.status).toBe(404); // reached the handler: no such webhook
  });

  test("authentication comes first: a hostile body with a bad signature is 401, never parsed into an answer", async () => {
    const init = signedInit(h, key, "POST", "/api/salutes/credit", { body: { user_id: "1", amount: 1, reason: "r", source: "s" } });
    const r = await h.json("/api/salutes/credit", { ...init, body: nested(100_000) });
    expect(r.status).toBe(401);
  });
});

describe("request target", () => {
  test(`a path and query longer than ${MAX_TARGET_CHARS} characters is a JSON 414 with a request id`, async () => {
    const r = await h.json(`/api/public/system-status?include_meta=${"x".repeat(20_000)}`);
    expect(r.status).toBe(414);
    expect(r.body).toMatchObject({ success: false, error: "uri_too_long" });
    expect(r.headers.get("x-request-id")).toBe(r.body.request_id);
    expect((await h.request(`/api/public/system-status?include_meta=${"x".repeat(MAX_TARGET_CHARS - 100)}`)).status).toBe(200);
  });
});

describe("U+0000 in text", () => {
  test("the canary refuses a message holding NUL, as the routes that store text do, and echoes other control characters", async () => {
    const r = await echo(JSON.stringify({ message: "a\u0000b", request_id: "probe-nul" }));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: "invalid_payload", details: [{ field: "message" }] });
    const ok = await echo(JSON.stringify({ message: "line one\nline two\ttab", request_id: "probe-ok" }));
    expect([ok.status, ok.body.message]).toEqual([200, "line one\nline two\ttab"]);
  });
});
