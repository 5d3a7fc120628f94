// Docs audit: docs/sdk.md's manifest, tarball route, client calls and webhook verification against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { HeraldApiError, HeraldClient, OPERATIONS, standardWebhooksSecret, verifyWebhook } from "../../src/client";
import { openTestApp, type TestApp } from "../support/app";
import { createKey } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/sdk.md", () => {
  // docs/sdk.md:26-45 — the manifest's fields; sha256 and integrity of the served bytes
  test("sdk-manifest.json and the tarball route", async () => {
    h = await openTestApp();
    const m = await h.json("/developers/sdk-manifest.json");
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({
      success: true,
      name: "@herald/client",
      api_version: "v1",
      module_format: "esm",
      type_declarations: true,
      dependencies: 0,
      engines: { node: ">=20", bun: ">=1.1" },
      docs: "docs/sdk.md",
    });
    expect(m.body.file).toBe(`herald-client-${m.body.version}.tgz`);
    expect(m.body.download_path).toBe(`/developers/sdk/${m.body.file}`);
    expect(m.body.download_url).toBe(`http://localhost:3000${m.body.download_path}`);
    expect(m.body.install_command).toBe(`npm install ${m.body.download_url}`);
    const t = await h.request(m.body.download_path);
    expect(t.status).toBe(200);
    expect(t.headers.get("content-type")).toBe("application/gzip");
    expect(t.headers.get("content-disposition")).toContain("attachment");
    const bytes = new Uint8Array(await t.arrayBuffer());
    expect(bytes.length).toBe(m.body.size_bytes);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(m.body.sha256);
    expect(`sha512-${createHash("sha512").update(bytes).digest("base64")}`).toBe(m.body.integrity);
    expect(t.headers.get("etag")).toBe(`"${m.body.sha256}"`);
    expect((await h.request(m.body.download_path, { headers: { "if-none-match": `"${m.body.sha256}"` } })).status).toBe(304);
    const old = await h.json("/developers/sdk/herald-client-0.0.1.tgz");
    expect([old.status, old.body.error]).toEqual([404, "not_found"]);
  });

  // docs/sdk.md:90-123 — the client against the app: typed calls, own Idempotency-Key, HeraldApiError with code
  test("client calls: createUser, salutesCredit, errors as HeraldApiError with the catalog code", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const herald = new HeraldClient({
      baseUrl: "http://localhost",
      keyId: k.keyId,
      secret: k.secret,
      fetch: (input, init) => h.app.handle(new Request(input as string, init)),
      now: () => h.clock.now().getTime(),
      sleep: async () => {},
    });
    const { user } = await herald.api.createUser({ body: { external_id: "u-42", username: "ada_lovelace" } });
    const c = await herald.api.salutesCredit({
      body: { user_id: String(user.id), amount: 12.5, reason: "quest", source: "app" },
      idempotencyKey: "credit-u-42-quest-7",
    });
    expect(c.balance).toBe(12.5);
    const page = await herald.api.salutesLedger({ query: { user_id: String(user.id), limit: 50 } });
    expect(page.ledger.length).toBe(1);
    const b = await herald.call("GET /api/salutes/balance", { query: { user_id: String(user.id) } });
    expect(b.balance).toBe(12.5);
    const caps = await herald.get("/api/partner/capabilities");
    expect(caps.key_id).toBe(k.keyId);
    let err: unknown;
    try {
      await herald.api.salutesDebit({ body: { user_id: String(user.id), amount: 1000, reason: "shop", source: "app" } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HeraldApiError);
    expect((err as HeraldApiError).code).toBe("insufficient_balance");
    expect((err as HeraldApiError).requestId).toMatch(/^req_/);
    const dup = await herald.api
      .createUser({ body: { external_id: "u-42", username: "ada_lovelace" } })
      .then(() => null)
      .catch((e) => e);
    expect(dup).toBeInstanceOf(HeraldApiError);
    expect((dup as HeraldApiError).code).toBe("external_id_taken");
    // docs/sdk.md:126-134 — every method of the table is an operation of the package
    for (const n of [
      "capabilities",
      "errorCatalog",
      "partnerStatus",
      "usageAnalytics",
      "createUser",
      "listUsers",
      "lookupUser",
      "getUser",
      "updateUser",
      "addUserWallet",
      "walletVerification",
      "salutesBalance",
      "salutesCredit",
      "salutesDebit",
      "salutesLedger",
      "salutesConversionPolicy",
      "salutesConvert",
      "createDonationClaim",
      "getDonationClaim",
      "redeemDonationClaim",
      "tokenStatus",
      "walletInfo",
      "webhookEventTypes",
      "listWebhooks",
      "createWebhook",
      "deleteWebhook",
      "testWebhook",
      "rotateWebhookSecret",
      "recoverWebhook",
      "webhookDeadLetters",
      "checkWebhookSignature",
      "listWebhookEvents",
      "replayWebhookEvents",
      "sandboxVerify",
      "sandboxTokenStatus",
      "sandboxPromotionReport",
      "sandboxReset",
      "sandboxCreateDonationClaim",
      "sandboxListUsers",
      "sandboxCreateUser",
      "sandboxGetUser",
      "sandboxUpdateUser",
      "sandboxAddUserWallet",
      "sandboxSalutesBalance",
      "sandboxSalutesCredit",
      "sandboxSalutesDebit",
      "sandboxSalutesLedger",
      "sandboxListWebhooks",
      "sandboxCreateWebhook",
      "sandboxDeleteWebhook",
      "sandboxTestWebhook",
      "sandboxListWebhookEvents",
      "sandboxReplayWebhookEvents",
      "sandboxWebhookScenarios",
      "sandboxWebhookSimulatorInfo",
      "sandboxRunWebhookSimulator",
    ])
      expect(Object.keys(OPERATIONS)).toContain(n);
  });

  // docs/sdk.md:147-160 and docs/webhooks.md:118-122 — verifyWebhook with the documented vectors
  test("verifyWebhook accepts both documented vectors and refuses a stale timestamp", () => {
    const body = '{"event_id":"evt_01","event_type":"salutes.credit","data":{"user_id":"42","delta":12.5}}';
    const x = verifyWebhook({
      rawBody: body,
      headers: { "x-webhook-timestamp": "1767225600", "x-webhook-signature": "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81" },
      secrets: ["whsec_test_0123456789"],
      now: 1767225600,
    });
    expect(x.valid).toBe(true);
    const s = verifyWebhook({
      rawBody: body,
      headers: { "webhook-id": "evt_01", "webhook-timestamp": "1767225600", "webhook-signature": "v1,Hppn63KfvXQ/Pl5LDgNRn0DiJ63kakGydo9sYx0X6QY=" },
      secrets: "whsec_test_0123456789",
      now: 1767225600,
    });
    expect(s.valid).toBe(true);
    expect(standardWebhooksSecret("whsec_test_0123456789")).toBe("d2hzZWNfdGVzdF8wMTIzNDU2Nzg5");
    const stale = verifyWebhook({
      rawBody: body,
      headers: { "x-webhook-timestamp": "1767225600", "x-webhook-signature": "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81" },
      secrets: ["whsec_test_0123456789"],
      now: 1767225901,
    });
    expect(stale).toMatchObject({ valid: false, reason: "stale_timestamp" });
  });
});
