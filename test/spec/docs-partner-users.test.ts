// Docs audit: docs/partner-users.md's field rules, answers, list parameters, wallet flags, verification texts and
// error table against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";

const W1 = "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi";
const W2 = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const create = (key: TestKey, body: Record<string, unknown>) => signedJson(h, key, "POST", "/api/partner/users", { body });

describe("field rules", () => {
  // docs/partner-users.md:38-48 — the bounds and normalisations of the field table, at their edges
  test("each rule at its bounds", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    let n = 0;
    const status = async (fields: Record<string, unknown>) => (await create(k, { external_id: `f-${n++}`, ...fields })).status;
    const cases: Array<[string, Record<string, unknown>, number]> = [
      ["external_id 128", { external_id: "x".repeat(128) }, 201],
      ["external_id 129", { external_id: "y".repeat(129) }, 400],
      ["external_id charset", { external_id: "a.b_c:d@e-f" }, 201],
      ["external_id space", { external_id: "a b" }, 400],
      ["username 3", { username: "abc" }, 201],
      ["username 2", { username: "ab" }, 400],
      ["username 32", { username: "u".repeat(32) }, 201],
      ["username 33", { username: "v".repeat(33) }, 400],
      ["username dash", { username: "a-b" }, 400],
      ["display_name blank", { display_name: "   " }, 400],
      ["display_name 101", { display_name: "d".repeat(101) }, 400],
      ["display_name control", { display_name: "a\u0007b" }, 400],
      ["email no tld", { email: "a@b" }, 400],
      ["status other", { status: "deleted" }, 400],
      ["is_verified 1", { is_verified: 1 }, 400],
      ["solana short", { wallet_address: "abc" }, 400],
      ["chain 1 char", { wallet_address: "a".repeat(20), blockchain: "a" }, 400],
      ["chain 33", { wallet_address: "a".repeat(20), blockchain: "b".repeat(33) }, 400],
      ["other chain 15", { wallet_address: "c".repeat(15), blockchain: "eth" }, 400],
      ["other chain 129", { wallet_address: "c".repeat(129), blockchain: "eth" }, 400],
    ];
    const got: Array<[string, number]> = [];
    for (const [name, fields] of cases) got.push([name, await status(fields)]);
    expect(got).toEqual(cases.map(([name, , s]) => [name, s]));
    const u = (await create(k, { external_id: "norm", username: "Up.Per_1", email: "Foo@Example.COM", wallet_address: "e".repeat(128), blockchain: "ETH-2" }))
      .body.user;
    expect([u.username, u.email, u.wallets[0].blockchain, u.wallets[0].label]).toEqual(["up.per_1", "foo@example.com", "eth-2", ""]);
    // 254 characters is the longest email
    const long = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(57)}.com`;
    expect(long.length).toBe(254);
    expect((await create(k, { external_id: "long-mail", email: long })).status).toBe(201);
  });

  // docs/partner-users.md:50-51 — unknown fields refused with details; a 400 names every bad field
  test("unknown fields and several bad fields are all named in details", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const r = await create(k, { external_id: "d-1", username: "a", email: "x", bogus: 1 });
    expect([r.status, r.body.error]).toEqual([400, "invalid_payload"]);
    expect(r.body.details.map((d: { field: string }) => d.field).sort()).toEqual(["bogus", "email", "username"]);
    expect(r.body.details.find((d: { field: string }) => d.field === "bogus").problem).toBe("is not a known field");
  });
});

describe("answers and lists", () => {
  // docs/partner-users.md:12-15, :22-34, :82-92 — create 201 with wallets, GET with links, list echo, id forms
  test("create, read and list answers; query echo; malformed ids; offset bound", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const made = await create(k, { external_id: "u-1@app", username: "alice_01", email: "Alice@Example.com", wallet_address: W1 });
    expect([made.status, Object.keys(made.body).sort()]).toEqual([201, ["external_id", "success", "user"]]);
    expect(made.body.user).toMatchObject({ display_name: "", wallet_address: W1, status: "active", is_verified: false });
    expect(made.body.user.wallets).toEqual([
      { blockchain: "solana", wallet_address: W1, label: "", is_primary: 1, verified: 0, verified_at: null, is_hidden: 0, session_connected_at: null },
    ]);
    const id = made.body.user.id;
    const one = await signedJson(h, k, "GET", `/api/partner/users/${id}`);
    expect(Object.keys(one.body).sort()).toEqual(["docs_links", "links", "success", "user"]);
    expect("wallets" in one.body.user).toBe(false);
    expect(one.body.links).toEqual({
      users: "/api/partner/users",
      self: "/api/partner/users/USER_ID",
      wallets: "/api/partner/users/USER_ID/wallets",
      lookup: "/api/partner/user-lookup",
      wallet_verification: "/api/partner/wallet-verification/WALLET_ADDRESS",
    });
    expect(one.body.docs_links).toEqual({ users: "/api/docs#/partner", errors: "/api/partner/errors.json" });
    expect((await signedJson(h, k, "GET", `/api/partner/users/${id}?include_wallets=true`)).body.user.wallets).toHaveLength(1);
    const lookup = await signedJson(h, k, "GET", "/api/partner/user-lookup?email=ALICE@example.com&username=ALICE_01");
    expect([lookup.body.count, lookup.body.query.email, lookup.body.query.username]).toEqual([1, "alice@example.com", "alice_01"]);
    for (const bad of ["abc", "0", "1.5", "-1"]) {
      expect([bad, (await signedJson(h, k, "GET", `/api/partner/users/${bad}`)).body.error]).toEqual([bad, "not_found"]);
    }
    for (const route of ["/api/partner/users", "/api/partner/user-lookup"]) {
      expect((await signedJson(h, k, "GET", `${route}?offset=10000`)).status).toBe(200);
      expect((await signedJson(h, k, "GET", `${route}?offset=10001`)).body.error).toBe("offset_too_large");
    }
  });

  // docs/partner-users.md:100-101 — PATCH: null clears to "", the answer carries wallets; external_id never changes
  test("PATCH null clears; external_id is not a PATCH field", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const id = (await create(k, { external_id: "p-1", username: "bob", display_name: "Bob", email: "bob@example.com" })).body.user.id;
    const r = await signedJson(h, k, "PATCH", `/api/partner/users/${id}`, { body: { username: null, display_name: null, email: null } });
    expect([r.status, r.body.user.username, r.body.user.display_name, r.body.user.email, r.body.user.wallets]).toEqual([200, "", "", "", []]);
    const ext = await signedJson(h, k, "PATCH", `/api/partner/users/${id}`, { body: { external_id: "other" } });
    expect([ext.status, ext.body.details]).toEqual([400, [{ field: "external_id", problem: "is not a known field" }]]);
  });

  // docs/partner-users.md:44 — suspended users can be read and edited, but not credited
  test("a suspended user is read and edited but not credited", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const id = (await create(k, { external_id: "s-1", status: "suspended" })).body.user.id;
    expect((await signedJson(h, k, "GET", `/api/partner/users/${id}`)).status).toBe(200);
    expect((await signedJson(h, k, "PATCH", `/api/partner/users/${id}`, { body: { display_name: "S" } })).status).toBe(200);
    const credit = await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: String(id), amount: 1, reason: "r", source: "s" } });
    expect([credit.status, credit.body.error]).toEqual([409, "conflict"]);
  });

  // docs/partner-users.md:40-41, :117-119 — unique per partner, also when the requests arrive together
  test("concurrent creates of one external_id, username or wallet: one 201, the rest their 409 code", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const outcomes = async (bodies: Array<Record<string, unknown>>) =>
      (await Promise.all(bodies.map((b) => create(k, b)))).map((r) => r.body.error ?? r.status).sort();
    const five = Array.from({ length: 5 }, (_, i) => i);
    const taken = (code: string) => [201, ...Array(4).fill(code)].sort();
    expect(await outcomes(five.map((i) => ({ external_id: "same", username: `name${i}x` })))).toEqual(taken("external_id_taken"));
    expect(await outcomes(five.map((i) => ({ external_id: `un-${i}`, username: "samename" })))).toEqual(taken("username_taken"));
    expect(await outcomes(five.map((i) => ({ external_id: `w-${i}`, wallet_address: W1 })))).toEqual(taken("wallet_already_linked"));
  });
});

describe("wallets and verification", () => {
  // docs/partner-users.md:110-112, :121-127 — the four flags take true/false or 1/0; primary first; label null → ""
  test("is_hidden and connected_session take 1 and 0; the answer lists the primary first", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const id = (await create(k, { external_id: "w-1", wallet_address: W1 })).body.user.id;
    const path = `/api/partner/users/${id}/wallets`;
    const promoted = await signedJson(h, k, "POST", path, { body: { wallet_address: W2, label: "hot", is_primary: true, verified: true } });
    expect(promoted.body.wallets.map((w: { wallet_address: string; is_primary: number }) => [w.wallet_address, w.is_primary])).toEqual([
      [W2, 1],
      [W1, 0],
    ]);
    const on = await signedJson(h, k, "POST", path, { body: { wallet_address: W1, is_hidden: 1, connected_session: 1, label: "x".repeat(64) } });
    expect(on.body.wallets[1]).toMatchObject({ wallet_address: W1, is_hidden: 1, session_connected_at: "2026-01-01T00:00:00.000Z" });
    const off = await signedJson(h, k, "POST", path, { body: { wallet_address: W1, is_hidden: 0, connected_session: 0, label: null } });
    expect(off.body.wallets[1]).toMatchObject({ wallet_address: W1, is_hidden: 0, session_connected_at: null, label: "" });
    expect((await signedJson(h, k, "POST", path, { body: { wallet_address: W1, label: "x".repeat(65) } })).status).toBe(400);
  });

  // docs/partner-users.md:138-156 — age in whole days, fresh through day N, stale from N+1, the texts; bad chain 400
  test("verification age, freshness and status_text across the policy boundary", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const id = (await create(k, { external_id: "v-1" })).body.user.id;
    await signedJson(h, k, "POST", `/api/partner/users/${id}/wallets`, { body: { wallet_address: W2, verified: true } });
    const seen: Array<[number, string, string, boolean]> = [];
    for (const day of [0, 1, 3, 30, 31, 45]) {
      h.clock.set(new Date(Date.parse("2026-01-01T00:00:00.000Z") + day * 86_400_000 + 3_600_000));
      const v = (await signedJson(h, k, "GET", `/api/partner/wallet-verification/${W2}`)).body;
      seen.push([v.verification.verification_age_days, v.verification.freshness, v.verification.status_text, v.wallet_states.stale_verification]);
    }
    expect(seen).toEqual([
      [0, "fresh", "Verified today (0 days ago)", false],
      [1, "fresh", "Verified 1 day ago", false],
      [3, "fresh", "Verified 3 days ago", false],
      [30, "fresh", "Verified 30 days ago", false],
      [31, "stale", "Verification is 31 days old; re-verify (policy 30 days)", true],
      [45, "stale", "Verification is 45 days old; re-verify (policy 30 days)", true],
    ]);
    expect((await signedJson(h, k, "GET", `/api/partner/wallet-verification/${"a".repeat(20)}?blockchain=x`)).body.error).toBe("invalid_query");
    expect((await signedJson(h, k, "GET", "/api/partner/wallet-verification/not-an-address")).body.error).toBe("invalid_query");
  });
});
