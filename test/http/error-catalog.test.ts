// Statuses outside the spec's HTTP status guide (issue 30, item 8): every catalog entry whose status the guide
// does not list (404, 405, 410, 414, 415, 422, 428 today) says why in `status_rationale`, served in both errors
// documents; entries the guide covers carry null. One idempotency rule across the API: a key (Idempotency-Key,
// or the messenger's request_id) reused with another payload is 422, a request still in flight is 409.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SPEC_GUIDE_STATUSES } from "../../src/http/errors/error-entry";
import { ERROR_CATALOG } from "../../src/http/errors/errors";
import type { TestApp } from "../support/app";
import { openMessengerApp, initDataFor, tmaPost } from "../messenger/support";

let h: TestApp;
beforeAll(async () => {
  h = await openMessengerApp();
});
afterAll(() => h.close());

const GUIDE = [400, 401, 403, 409, 413, 429, 500, 503];

describe("status_rationale", () => {
  test("the guide's statuses are the spec's eight", () => {
    expect([...SPEC_GUIDE_STATUSES].sort()).toEqual(GUIDE);
  });

  test("every entry with a status outside the guide explains it; entries inside the guide carry null", () => {
    const missing: string[] = [];
    for (const [code, e] of Object.entries(ERROR_CATALOG)) {
      if (GUIDE.includes(e.http_status)) {
        expect([code, e.status_rationale]).toEqual([code, null]);
      } else if (typeof e.status_rationale !== "string" || e.status_rationale.length < 40) {
        missing.push(`${code} (${e.http_status})`);
      }
    }
    expect(missing).toEqual([]);
    // The statuses the messenger answers outside the guide are among them.
    for (const code of ["not_found", "method_not_allowed", "promo_expired", "request_id_reused", "revision_required"] as const) {
      expect(ERROR_CATALOG[code].status_rationale).toEqual(expect.any(String));
    }
  });

  test("both documents serve the rationale for every entry", async () => {
    const partner = await h.json("/api/partner/errors.json");
    const developers = await h.json("/developers/api-errors.json");
    expect([partner.status, developers.status]).toEqual([200, 200]);
    for (const entry of partner.body.entries)
      expect(entry.status_rationale).toBe(ERROR_CATALOG[entry.error_code as keyof typeof ERROR_CATALOG].status_rationale);
    expect(developers.body.by_code.promo_expired.status_rationale).toContain("410 Gone");
    expect(developers.body.by_code.revision_required.status_rationale).toContain("428");
    expect(developers.body.by_code.invalid_payload.status_rationale).toBeNull();
  });

  test("both documents are the same catalog: count, entries, and keyed by_code with recovery_links (spec: Errors)", async () => {
    const partner = await h.json("/api/partner/errors.json");
    const developers = await h.json("/developers/api-errors.json");
    expect(partner.body).toEqual(developers.body);
    expect(Object.keys(partner.body).sort()).toEqual(["by_code", "count", "entries", "success"]);
    expect(Object.keys(partner.body.by_code).sort()).toEqual(partner.body.entries.map((e: { error_code: string }) => e.error_code).sort());
    expect(partner.body.count).toBe(partner.body.entries.length);
    expect(partner.body.by_code.rate_limited).toMatchObject({ error_code: "rate_limited", http_status: 429, recovery_links: expect.any(Object) });
  });

  test("the OpenAPI document declares the field", async () => {
    const doc = (await h.json("/api/openapi.json")).body;
    const entry = doc.components.schemas.ErrorCatalogEntry;
    expect(entry.properties.status_rationale).toBeDefined();
    expect(entry.required).toContain("status_rationale");
  });
});

describe("one idempotency rule across the API", () => {
  test("a reused key with another payload is 422 on both sides; in flight is 409", () => {
    expect(ERROR_CATALOG.idempotency_key_reused.http_status).toBe(422);
    expect(ERROR_CATALOG.request_id_reused.http_status).toBe(422);
    expect(ERROR_CATALOG.idempotency_in_progress.http_status).toBe(409);
    expect(ERROR_CATALOG.request_id_reused.status_rationale).toContain("idempotency_key_reused");
  });

  test("the messenger: the same request_id replays, another payload with it is 422 request_id_reused", async () => {
    const post = (body: Record<string, unknown>) => h.json("/api/messenger/games/spin-wheel/play", tmaPost(initDataFor(h, { id: 9001 }), body));
    const first = await post({ request_id: "spin-catalog-0001" });
    expect(first.status).toBe(200);
    const again = await post({ request_id: "spin-catalog-0001" });
    expect([again.status, again.body.replayed]).toEqual([200, true]);
    const other = await h.json(
      "/api/messenger/games/items/purchase",
      tmaPost(initDataFor(h, { id: 9001 }), { request_id: "spin-catalog-0001", item_key: "spin_play", quantity: 1 }),
    );
    expect([other.status, other.body.error]).toEqual([422, "request_id_reused"]);
  });
});
