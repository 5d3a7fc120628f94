import { describe, expect, test } from "bun:test";
import { canonicalString, EMPTY_BODY_SHA256, newIdempotencyKey, newNonce, signRequest, verifyWebhookSignature, webhookSignature } from "../../src/client";

// docs/design.md §3 vectors, hard-coded (computed independently of this code).
const SECRET = "hsk_test_secret_0123456789abcdef";
const TS = 1767225600;
const CREDIT_BODY = `{"user_id":"42","amount":12.5,"reason":"quest","source":"partner-app"}`;
const CREDIT_BODY_SHA256 = "340fda328740cf5bbcb79450da17a286a33abc5c03d2fb52dcca4986620472c5";
const CREDIT_SIG = "36cd6fd54abb4f70c1226b2e3bb58415b950ca152f9d6da0e1f575793266947d";
const BALANCE_SIG = "95695bf61005c23b37fd3e3af288b164df2355cbeb6b3d975d5308608f6687e4";

const WH_SECRET = "whsec_test_0123456789";
const WH_BODY = `{"event_id":"evt_01","event_type":"salutes.credit","data":{"user_id":"42","delta":12.5}}`;
const WH_SIG = "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81";

describe("partner signing vectors (docs/design.md §3)", () => {
  test("POST /api/salutes/credit with nonce and body", () => {
    const signed = signRequest({
      keyId: "hpk_test",
      secret: SECRET,
      method: "POST",
      target: "/api/salutes/credit",
      timestamp: TS,
      nonce: "9f86d081884c7d659a2feaa0c55ad015",
      body: CREDIT_BODY,
    });
    expect(signed.canonical).toBe(`POST\n/api/salutes/credit\n1767225600\n9f86d081884c7d659a2feaa0c55ad015\n${CREDIT_BODY_SHA256}`);
    expect(signed.signature).toBe(CREDIT_SIG);
    expect(signed.headers).toEqual({
      "X-Partner-Key": "hpk_test",
      "X-Partner-Timestamp": "1767225600",
      "X-Partner-Signature": CREDIT_SIG,
      "X-Partner-Nonce": "9f86d081884c7d659a2feaa0c55ad015",
    });
  });

  test("GET /api/salutes/balance?user_id=42, no nonce, empty body", () => {
    const signed = signRequest({
      keyId: "hpk_test",
      secret: SECRET,
      method: "GET",
      target: "/api/salutes/balance?user_id=42",
      timestamp: TS,
    });
    expect(signed.canonical).toBe(`GET\n/api/salutes/balance?user_id=42\n1767225600\n\n${EMPTY_BODY_SHA256}`);
    expect(signed.signature).toBe(BALANCE_SIG);
    expect(signed.headers).toEqual({
      "X-Partner-Key": "hpk_test",
      "X-Partner-Timestamp": "1767225600",
      "X-Partner-Signature": BALANCE_SIG,
    });
    expect("X-Partner-Nonce" in signed.headers).toBe(false);
  });

  test("a Uint8Array body signs the same as its UTF-8 string", () => {
    const bytes = new TextEncoder().encode(CREDIT_BODY);
    const signed = signRequest({
      keyId: "k",
      secret: SECRET,
      method: "post",
      target: "/api/salutes/credit",
      timestamp: String(TS),
      nonce: "9f86d081884c7d659a2feaa0c55ad015",
      body: bytes,
    });
    expect(signed.signature).toBe(CREDIT_SIG);
  });

  test("timestamp defaults to the current unix second", () => {
    const before = Math.floor(Date.now() / 1000);
    const signed = signRequest({ keyId: "k", secret: SECRET, method: "GET", target: "/x" });
    const ts = Number(signed.headers["X-Partner-Timestamp"]);
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThanOrEqual(before + 5);
  });
});

describe("canonical string shape", () => {
  test("method is upper-cased; five lines; last is sha256 of the body", () => {
    const c = canonicalString({ method: "patch", target: "/api/partner/users/7", timestamp: 5, nonce: "ab", body: "{}" });
    const lines = c.split("\n");
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe("PATCH");
    expect(lines[1]).toBe("/api/partner/users/7");
    expect(lines[2]).toBe("5");
    expect(lines[3]).toBe("ab");
    expect(lines[4]).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  });

  test("absent, null and empty nonce all give an empty line", () => {
    const base = { method: "GET", target: "/a?b=1", timestamp: 1 };
    const expected = `GET\n/a?b=1\n1\n\n${EMPTY_BODY_SHA256}`;
    expect(canonicalString(base)).toBe(expected);
    expect(canonicalString({ ...base, nonce: null })).toBe(expected);
    expect(canonicalString({ ...base, nonce: "" })).toBe(expected);
  });

  test("no body, null body, empty string and empty bytes all hash to e3b0c442…b855", () => {
    expect(EMPTY_BODY_SHA256).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const base = { method: "DELETE", target: "/x", timestamp: 1, nonce: "n" };
    for (const body of [undefined, null, "", new Uint8Array(0)]) {
      expect(canonicalString({ ...base, body }).split("\n")[4]).toBe(EMPTY_BODY_SHA256);
    }
  });

  test("the target is signed verbatim (query order and encoding matter)", () => {
    const a = canonicalString({ method: "GET", target: "/x?a=1&b=2", timestamp: 1 });
    const b = canonicalString({ method: "GET", target: "/x?b=2&a=1", timestamp: 1 });
    expect(a).not.toBe(b);
  });
});

describe("nonces and idempotency keys", () => {
  test("newNonce is 32 lowercase hex chars and unique", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const n = newNonce();
      expect(n).toMatch(/^[0-9a-f]{32}$/);
      seen.add(n);
    }
    expect(seen.size).toBe(100);
  });

  test("newIdempotencyKey is a UUID v4 and unique", () => {
    const a = newIdempotencyKey();
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(newIdempotencyKey()).not.toBe(a);
  });
});

describe("outgoing webhook signature", () => {
  test("reproduces the docs/design.md §3 vector (string and bytes)", () => {
    expect(webhookSignature(WH_SECRET, TS, WH_BODY)).toBe(WH_SIG);
    expect(webhookSignature(WH_SECRET, "1767225600", new TextEncoder().encode(WH_BODY))).toBe(WH_SIG);
  });

  test("accepts a valid signature within the window (inclusive 300 s either side)", () => {
    expect(verifyWebhookSignature(WH_SECRET, TS, WH_BODY, WH_SIG, { now: TS })).toEqual({ valid: true, reason: "ok" });
    expect(verifyWebhookSignature(WH_SECRET, "1767225600", WH_BODY, WH_SIG, { now: TS + 300 }).valid).toBe(true);
    expect(verifyWebhookSignature(WH_SECRET, TS, WH_BODY, WH_SIG, { now: TS - 300 }).valid).toBe(true);
  });

  test("rejects a tampered body", () => {
    const tampered = WH_BODY.replace("12.5", "125");
    expect(verifyWebhookSignature(WH_SECRET, TS, tampered, WH_SIG, { now: TS })).toEqual({
      valid: false,
      reason: "signature_mismatch",
    });
  });

  test("rejects a wrong secret", () => {
    expect(verifyWebhookSignature("whsec_other", TS, WH_BODY, WH_SIG, { now: TS })).toEqual({
      valid: false,
      reason: "signature_mismatch",
    });
  });

  test("rejects a stale timestamp (301 s old or 301 s ahead)", () => {
    expect(verifyWebhookSignature(WH_SECRET, TS, WH_BODY, WH_SIG, { now: TS + 301 })).toEqual({
      valid: false,
      reason: "stale_timestamp",
    });
    expect(verifyWebhookSignature(WH_SECRET, TS, WH_BODY, WH_SIG, { now: TS - 301 }).reason).toBe("stale_timestamp");
    // a custom tolerance
    expect(verifyWebhookSignature(WH_SECRET, TS, WH_BODY, WH_SIG, { now: TS + 61, toleranceSeconds: 60 }).valid).toBe(false);
  });

  test("a signature for another timestamp does not verify", () => {
    const sigAt = webhookSignature(WH_SECRET, TS + 1, WH_BODY);
    expect(verifyWebhookSignature(WH_SECRET, TS, WH_BODY, sigAt, { now: TS }).reason).toBe("signature_mismatch");
  });

  test("hex case: compared lowercase-normalised, so upper/mixed-case hex of the right digest is accepted", () => {
    expect(verifyWebhookSignature(WH_SECRET, TS, WH_BODY, WH_SIG.toUpperCase(), { now: TS })).toEqual({
      valid: true,
      reason: "ok",
    });
    const mixed = WH_SIG.slice(0, 32).toUpperCase() + WH_SIG.slice(32);
    expect(verifyWebhookSignature(WH_SECRET, TS, WH_BODY, ` ${mixed} `, { now: TS }).valid).toBe(true);
    // ...but case-normalisation never makes a wrong digest right
    const wrong = WH_SIG.slice(0, 63) + (WH_SIG.endsWith("1") ? "2" : "1");
    expect(verifyWebhookSignature(WH_SECRET, TS, WH_BODY, wrong.toUpperCase(), { now: TS }).valid).toBe(false);
  });

  test("malformed inputs are rejected with a reason, never thrown", () => {
    const v = (sig: string | null | undefined, ts: string | number | null | undefined = TS) => verifyWebhookSignature(WH_SECRET, ts, WH_BODY, sig, { now: TS });
    expect(v(undefined)).toEqual({ valid: false, reason: "missing_signature" });
    expect(v("")).toEqual({ valid: false, reason: "missing_signature" });
    expect(v(WH_SIG.slice(0, 62))).toEqual({ valid: false, reason: "malformed_signature" });
    expect(v(WH_SIG + "00")).toEqual({ valid: false, reason: "malformed_signature" });
    expect(v("zz" + WH_SIG.slice(2))).toEqual({ valid: false, reason: "malformed_signature" });
    expect(v(`sha256=${WH_SIG}`)).toEqual({ valid: false, reason: "malformed_signature" });
    expect(v(WH_SIG, "not-a-number")).toEqual({ valid: false, reason: "invalid_timestamp" });
    expect(v(WH_SIG, null)).toEqual({ valid: false, reason: "invalid_timestamp" });
    expect(v(WH_SIG, "-1")).toEqual({ valid: false, reason: "invalid_timestamp" });
  });
});
