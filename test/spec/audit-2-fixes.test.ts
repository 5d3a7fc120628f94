// Second audit: behaviour that contradicted the service interface, each test failing before its fix (the public limit on
// unauthenticated partner catalogs and /developers, include_meta on the sandbox replay, promo and mission salutes the
// ledger can pay).
import { afterEach, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";
import { createAdminToken, createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const hammer = async (path: string, n: number) => {
  const statuses: number[] = [];
  let limitHeader: string | null = null;
  for (let i = 0; i < n; i++) {
    const r = await h.request(path);
    limitHeader ??= r.headers.get("x-ratelimit-limit");
    statuses.push(r.status);
    await r.arrayBuffer();
  }
  return { limitHeader, refused: statuses.filter((s) => s === 429).length };
};

// Spec "Limits": "Public API endpoints | 90 per minute | RATE_LIMIT_PUBLIC_API_PER_MIN" and "Partner webhook
// endpoints | 120 per minute"; "Rate-limit headers: X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset;
// Retry-After on 429". Herald serves GET /api/partner/errors.json and GET /api/partner/webhooks/event-types without
// any credential (docs/partner-auth.md "The error catalog is public"; docs/webhooks.md "Public: no key needed"),
// yet neither is in any rate-limit group: an anonymous client may call them without bound, while the very same
// catalog at /developers/api-errors.json is limited at 90 per minute. The same holds for the portal's home page
// GET /developers (docs/developers-portal.md: "as every /developers/ route").
test("unauthenticated partner catalogs (errors.json, webhooks/event-types) and /developers are under the public per-IP limit", async () => {
  h = await openTestApp();
  const reference = await hammer("/developers/api-errors.json", 91);
  expect(reference).toEqual({ limitHeader: "90", refused: 1 });
  for (const p of ["/api/partner/errors.json", "/api/partner/webhooks/event-types", "/developers"]) {
    h.clock.advance(61_000);
    const got = await hammer(p, 91);
    expect(`${p} ${got.limitHeader} ${got.refused}`).toBe(`${p} 90 1`);
  }
});

// Spec "Sandbox operations": "POST | /api/partner/sandbox/webhook-events/replay | include_meta; returns count, …".
// Herald honours ?include_meta=1 there at run time, but the served OpenAPI document (GET /api/openapi.json) does
// not declare the parameter, so a client generated from it cannot send it; the sandbox's other spec-listed
// mutations (donation-claim, salutes credit/debit) do declare it.
test("the served OpenAPI document declares include_meta on POST /api/partner/sandbox/webhook-events/replay", async () => {
  h = await openTestApp();
  const doc = (await h.json("/api/openapi.json")).body;
  const names = (p: string) => (doc.paths[p].post.parameters ?? []).filter((x: any) => x.in === "query").map((x: any) => x.name);
  expect(names("/api/partner/sandbox/donation-claim")).toContain("include_meta");
  expect(names("/api/partner/sandbox/salutes/credit")).toContain("include_meta");
  expect(names("/api/partner/sandbox/webhook-events/replay")).toContain("include_meta");
});

// docs/design.md §5 "Money and points": salutes are exact integers in minor units (SALUTES_DECIMALS, default 2); "More
// decimals than allowed, non-finite, zero or negative amounts → 400." An operator's promo (and server mission)
// reward.salutes is checked only against a pattern of up to 13 digits and 6 decimals, so "2.555" or
// "1000000000.01" (past SALUTES_MAX_AMOUNT) is created with 200; every claim then answers salutes.paid=false ("the
// salutes service refused: invalid_payload …") — the promised salutes can never be paid, and nothing said so when
// the promo was made.
test("a promo's reward.salutes the salutes ledger cannot hold (too many decimals, over the maximum) is refused at creation", async () => {
  h = await openMessengerApp({ env: { MESSENGER_SALUTES_PARTNER: "Acme" } });
  const A = { authorization: `Bearer ${await createAdminToken(h)}` };
  const k = await createKey(h, { partner: "Acme" });
  const uid = String((await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "p1" } })).body.user.id);
  const promo = (code: string, salutes: string) =>
    h.json(
      "/api/messenger/admin/games/promos",
      jsonInit("POST", { code, reward: { points: 1, salutes }, max_claims: 10, audience_group: "all", expires_at: "2026-04-01T00:00:00Z" }, A),
    );
  // What the ledger can pay is accepted and paid exactly.
  expect((await promo("GOOD1", "2.55")).status).toBe(200);
  await h.json("/api/messenger/init/verify", tmaPost(initDataFor(h, { id: 501 })));
  await h.json("/api/messenger/admin/players/501/link", jsonInit("POST", { user_id: uid, reason: "audit" }, A));
  const paid = await h.json("/api/messenger/games/promos/claim", tmaPost(initDataFor(h, { id: 501 }), { request_id: "c1", code: "GOOD1" }));
  expect(paid.body.salutes).toMatchObject({ amount: "2.55", paid: true });
  const bad: Array<[string, string]> = [
    ["BAD01", "2.555"],
    ["BAD02", "1000000000.01"],
  ];
  for (const [code, salutes] of bad) {
    const r = await promo(code, salutes);
    expect(`${salutes} ${r.status} ${r.body.error}`).toBe(`${salutes} 400 invalid_payload`);
  }
  // The same rule on a server mission's reward (src/messenger/admin/missions-model.ts).
  const m = await h.json(
    "/api/messenger/admin/missions",
    jsonInit(
      "POST",
      { mission_key: "spin-1", title: "Spin", event_type: "spin_wheel.play", target: 1, reward: { salutes: "1.234" }, daily_cap: 3, per_minute_cap: 1 },
      A,
    ),
  );
  expect(`mission ${m.status}`).toBe("mission 400");
});
