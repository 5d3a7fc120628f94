import { afterEach, expect, test } from "bun:test";
import { fixturePlan } from "../../src/sandbox/fixtures";
import type { TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { sandboxApp, sandboxKey, sb } from "./support";

const apps: TestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

const TIMESTAMP_FIELDS = new Set(["created_at", "updated_at", "verified_at", "seeded_at", "requested_at"]);

/** The answer's exact bytes with timestamps and request ids taken out (and nothing else). */
const stable = (body: unknown): string =>
  JSON.stringify(body, (k, v) => (TIMESTAMP_FIELDS.has(k) && typeof v === "string" ? "<time>" : k === "meta" ? undefined : v));

const FIXTURE_READS = (ids: number[]) => [
  "/verify",
  "/token-status",
  "/users?include_wallets=1",
  "/users?status=suspended",
  "/webhook-simulator/scenarios",
  ...ids.flatMap((id) => [`/users/${id}?include_wallets=1`, `/salutes/balance?user_id=${id}`, `/salutes/ledger?user_id=${id}&order=asc`]),
];

async function answers(h: TestApp, key: Awaited<ReturnType<typeof sandboxKey>>): Promise<string[]> {
  const verify = await sb(h, key, "GET", "/verify?include_meta=1");
  const ids = verify.body.fixtures.user_ids as number[];
  const out: string[] = [];
  for (const path of FIXTURE_READS(ids)) {
    const r = await sb(h, key, "GET", path);
    expect(r.status).toBe(200);
    out.push(stable(r.body));
  }
  return out;
}

test("two fresh databases, the same key: byte-identical fixture answers apart from timestamps and request ids", async () => {
  const a = await sandboxApp();
  const b = await sandboxApp();
  apps.push(a, b);
  const keyA = await sandboxKey(a);
  const keyB = await sandboxKey(b);
  expect(keyB).toEqual(keyA); // same key id and secret: the key rows were made from the same seeded rng

  // App B sees other traffic first, which draws from ctx.rng and writes other rows; a fixture generator fed by
  // ctx.rng would now produce other data. B's clock is also elsewhere.
  await createKey(b, { partner: "Someone Else" });
  await createAdminToken(b);
  await signedJson(b, await createKey(b, { partner: "Other" }), "GET", "/api/partner/capabilities");
  b.clock.advanceSeconds(86_400 * 3 + 17);

  const fromA = await answers(a, keyA);
  const fromB = await answers(b, keyB);
  expect(fromB).toEqual(fromA);
  // Every answer really carries fixture data (wallets, balances, ledger rows), not empty lists.
  expect(fromA.join("")).toContain("fx-alice");
  expect(fromA.join("")).toContain("welcome_bonus");
});

test("the fixture plan is a pure function of the key id: same id, same plan; another id, other wallets and amounts", () => {
  const one = fixturePlan("hk_test_aaaaaaaaaaaaaaaaaaaaaaaa");
  expect(fixturePlan("hk_test_aaaaaaaaaaaaaaaaaaaaaaaa")).toEqual(one);
  const two = fixturePlan("hk_test_bbbbbbbbbbbbbbbbbbbbbbbb");
  expect(two.users.map((u) => u.external_id)).toEqual(one.users.map((u) => u.external_id));
  expect(two.users[0]!.wallets[0]!.wallet_address).not.toBe(one.users[0]!.wallets[0]!.wallet_address);
  // Debits never exceed what was credited before them, whatever the seed.
  for (let i = 0; i < 50; i++) {
    for (const u of fixturePlan(`hk_test_${i}`).users) {
      let balance = 0;
      for (const e of u.entries) {
        balance += e.kind === "credit" ? e.amount : -e.amount;
        expect(balance).toBeGreaterThanOrEqual(0);
      }
    }
  }
});

test("a reset gives the same fixture answers again (ids aside)", async () => {
  const h = await sandboxApp();
  apps.push(h);
  const key = await sandboxKey(h);
  const before = await answers(h, key);
  await sb(h, key, "POST", "/users", { body: { external_id: "extra" } });
  await sb(h, key, "POST", "/reset");
  const after = await answers(h, key);
  const noIds = (s: string) =>
    s.replace(/"(id|user_id|ledger_entry_id|user_ids|reset_count)":(\[[\d,]*\]|"?\d+"?)/g, '"$1":"<id>"').replace(/\/users\/\d+/g, "/users/<id>");
  expect(after.map(noIds)).toEqual(before.map(noIds));
});
