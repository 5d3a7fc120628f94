// Webhook verification in the SDK: the Standard Webhooks signature (vector computed with openssl, and checked
// against the standardwebhooks library itself) and verifyWebhook over both schemes.
import { describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import {
  standardWebhookSignature,
  standardWebhooksSecret,
  verifyStandardWebhook,
  verifyWebhook,
  verifyWebhookOrThrow,
  webhookSignature,
} from "../../src/client";

// docs/design.md §6's outgoing vector, plus the Standard Webhooks signature of the same delivery with id evt_01:
//   printf '%s' 'evt_01.1767225600.<body>' | openssl dgst -sha256 -hmac 'whsec_test_0123456789' -binary | base64
const SECRET = "whsec_test_0123456789";
const TS = 1767225600;
const ID = "evt_01";
const BODY = `{"event_id":"evt_01","event_type":"salutes.credit","data":{"user_id":"42","delta":12.5}}`;
const X_SIG = "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81";
const STD_SIG = "v1,Hppn63KfvXQ/Pl5LDgNRn0DiJ63kakGydo9sYx0X6QY=";

const headers = (extra: Record<string, string> = {}) => ({
  "webhook-id": ID,
  "webhook-timestamp": String(TS),
  "webhook-signature": STD_SIG,
  "x-webhook-id": ID,
  "x-webhook-timestamp": String(TS),
  "x-webhook-signature": X_SIG,
  ...extra,
});

describe("Standard Webhooks signature", () => {
  test("reproduces the openssl vector; the secret's standard form is base64 of its bytes", () => {
    expect(standardWebhookSignature(SECRET, ID, TS, BODY)).toBe(STD_SIG);
    expect(standardWebhookSignature(SECRET, ID, String(TS), new TextEncoder().encode(BODY))).toBe(STD_SIG);
    expect(standardWebhooksSecret(SECRET)).toBe("d2hzZWNfdGVzdF8wMTIzNDU2Nzg5");
    // The X-Webhook-Signature vector is untouched.
    expect(webhookSignature(SECRET, TS, BODY)).toBe(X_SIG);
  });

  test("the standardwebhooks library signs the same, given the secret base64-encoded or raw", () => {
    const at = new Date(TS * 1000);
    expect(new Webhook(standardWebhooksSecret(SECRET)).sign(ID, at, BODY)).toBe(STD_SIG);
    expect(new Webhook(`whsec_${standardWebhooksSecret(SECRET)}`).sign(ID, at, BODY)).toBe(STD_SIG);
    expect(new Webhook(SECRET, { format: "raw" }).sign(ID, at, BODY)).toBe(STD_SIG);
  });

  test("verifies against any held secret and any v1 entry; other versions are ignored", () => {
    const now = TS;
    expect(verifyStandardWebhook(SECRET, headers(), BODY, { now })).toEqual({ valid: true, reason: "ok", secretIndex: 0 });
    expect(verifyStandardWebhook(["whsec_new", SECRET], headers(), BODY, { now })).toEqual({ valid: true, reason: "ok", secretIndex: 1 });
    const rotated = headers({ "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")} ${STD_SIG}` });
    expect(verifyStandardWebhook(SECRET, rotated, BODY, { now }).valid).toBe(true);
    const v2Only = headers({ "webhook-signature": STD_SIG.replace("v1,", "v2,") });
    expect(verifyStandardWebhook(SECRET, v2Only, BODY, { now })).toEqual({ valid: false, reason: "signature_mismatch" });
    expect(verifyStandardWebhook(SECRET, new Headers(headers()), BODY, { now }).valid).toBe(true);
  });

  test("refuses a changed id, body or timestamp, a stale or future time, and missing headers", () => {
    const now = TS;
    expect(verifyStandardWebhook(SECRET, headers({ "webhook-id": "evt_02" }), BODY, { now }).reason).toBe("signature_mismatch");
    expect(verifyStandardWebhook(SECRET, headers(), BODY.replace("12.5", "12.50"), { now }).reason).toBe("signature_mismatch");
    expect(verifyStandardWebhook(SECRET, headers({ "webhook-timestamp": String(TS + 1) }), BODY, { now }).reason).toBe("signature_mismatch");
    expect(verifyStandardWebhook(SECRET, headers(), BODY, { now: TS + 300 }).valid).toBe(true);
    expect(verifyStandardWebhook(SECRET, headers(), BODY, { now: TS + 301 }).reason).toBe("stale_timestamp");
    expect(verifyStandardWebhook(SECRET, headers(), BODY, { now: TS - 301 }).reason).toBe("stale_timestamp");
    expect(verifyStandardWebhook(SECRET, headers({ "webhook-timestamp": "1e9" }), BODY, { now }).reason).toBe("invalid_timestamp");
    const { "webhook-id": _, ...noId } = headers();
    expect(verifyStandardWebhook(SECRET, noId, BODY, { now }).reason).toBe("missing_headers");
  });
});

describe("verifyWebhook (either scheme)", () => {
  test("prefers the Standard Webhooks headers and returns the parsed envelope", () => {
    const r = verifyWebhook({ rawBody: BODY, headers: headers(), secrets: SECRET, now: TS });
    expect(r).toEqual({ valid: true, scheme: "standard-webhooks", secretIndex: 0, event: JSON.parse(BODY) });
  });

  test("without them, X-Webhook-Signature or (during Herald's rotation) X-Webhook-Signature-Previous", () => {
    const legacy = { "x-webhook-timestamp": String(TS), "x-webhook-signature": X_SIG };
    expect(verifyWebhook({ rawBody: BODY, headers: legacy, secrets: ["whsec_other", SECRET], now: TS })).toMatchObject({
      valid: true,
      scheme: "x-webhook-signature",
      secretIndex: 1,
    });
    const rotating = { "x-webhook-timestamp": String(TS), "x-webhook-signature": "ab".repeat(32), "x-webhook-signature-previous": X_SIG };
    expect(verifyWebhook({ rawBody: BODY, headers: rotating, secrets: [SECRET], now: TS }).valid).toBe(true);
    expect(verifyWebhook({ rawBody: BODY, headers: legacy, secrets: [SECRET], now: TS + 301 })).toEqual({ valid: false, reason: "stale_timestamp" });
    expect(verifyWebhook({ rawBody: BODY, headers: legacy, secrets: ["whsec_other"], now: TS })).toEqual({ valid: false, reason: "signature_mismatch" });
    expect(verifyWebhook({ rawBody: BODY, headers: {}, secrets: [SECRET], now: TS })).toEqual({ valid: false, reason: "missing_headers" });
  });

  test("a correctly signed body that is not a Herald envelope is refused as invalid_body", () => {
    const body = "[1,2]";
    const h = { "webhook-id": ID, "webhook-timestamp": String(TS), "webhook-signature": standardWebhookSignature(SECRET, ID, TS, body) };
    expect(verifyWebhook({ rawBody: body, headers: h, secrets: SECRET, now: TS })).toEqual({ valid: false, reason: "invalid_body" });
    expect(() => verifyWebhookOrThrow({ rawBody: body, headers: h, secrets: SECRET, now: TS })).toThrow("invalid_body");
    expect(verifyWebhookOrThrow({ rawBody: BODY, headers: headers(), secrets: SECRET, now: TS }).event_id).toBe("evt_01");
  });
});
