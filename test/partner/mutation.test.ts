// partnerMutation (src/auth/partner-mutation.ts), the one way a signed partner mutation commits: the effect under
// its Idempotency-Key, then the dispatcher's nudge and the status — only once the effect has committed.
import { afterEach, expect, test } from "bun:test";
import { IdempotencyStore } from "../../src/auth/idempotency";
import type { PartnerRequest } from "../../src/auth/partner-request";
import { partnerMutation } from "../../src/auth/partner-mutation";
import { openTestApp, type TestApp } from "../support/app";

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const partner = (key: string | null): PartnerRequest => ({
  actor: { kind: "partner", keyId: "hk_test", partner: "Acme", mode: "live", scopes: [] },
  idempotency: key === null ? null : { keyId: "hk_test", key, fingerprint: `fp-${key}` },
  pendingNonce: null,
  requestId: "req_test",
  keyUpdatedAt: "2026-01-01T00:00:00.000Z",
});

async function setUp() {
  h = await openTestApp();
  const nudges: string[] = [];
  h.ctx.dispatcher.nudge = () => void nudges.push("nudge");
  return { mutation: partnerMutation(h.ctx, new IdempotencyStore(h.ctx)), nudges };
}

test("a creation answers 201 and stores 201 with its Idempotency-Key; the dispatcher is nudged once, after the commit", async () => {
  const { mutation, nudges } = await setUp();
  const set: { status?: number | string } = {};
  const out = await mutation(
    partner("k-1"),
    async () => {
      expect(nudges).toEqual([]);
      return { success: true as const, made: 1 };
    },
    { created: set },
  );
  expect(out).toEqual({ success: true, made: 1 });
  expect(set.status).toBe(201);
  expect(nudges).toEqual(["nudge"]);
  const stored = await h!.ctx.store.get<{ response_status: number }>("SELECT response_status FROM idempotency_records WHERE idempotency_key = ?", ["k-1"]);
  expect(stored?.response_status).toBe(201);
});

test("nudge: false never nudges; a function is read after the commit and nudges only when it says so", async () => {
  const { mutation, nudges } = await setUp();
  await mutation(partner(null), async () => ({ ok: 1 }), { nudge: false });
  expect(nudges).toEqual([]);
  let queued = 0;
  await mutation(partner(null), async () => ({ ok: 2 }), { nudge: () => queued });
  expect(nudges).toEqual([]);
  await mutation(
    partner(null),
    async () => {
      queued = 2;
      return { ok: 3 };
    },
    { nudge: () => Promise.resolve(queued) },
  );
  expect(nudges).toEqual(["nudge"]);
});

test("a failed effect nudges nothing and sets no status", async () => {
  const { mutation, nudges } = await setUp();
  const set: { status?: number | string } = {};
  const failed = await mutation(
    partner("k-2"),
    async () => {
      throw new Error("refused");
    },
    { created: set },
  ).catch((err: Error) => err.message);
  expect(failed).toBe("refused");
  expect(nudges).toEqual([]);
  expect(set.status).toBeUndefined();
});
