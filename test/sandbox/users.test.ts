import { afterEach, describe, expect, test } from "bun:test";
import bs58 from "bs58";
import type { TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { countWhere, expectSandboxFields, fixtureUsers, rows, sandboxApp, sandboxKey, sb } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const sol = (n: number) => bs58.encode(new Uint8Array(32).fill(n));

describe("GET /api/partner/sandbox/users", () => {
  test("lists the fixture users newest first with wallets, filters and paging, and sandbox links", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const r = await sb(h, key, "GET", "/users?include_wallets=1");
    expect(r.status).toBe(200);
    expectSandboxFields(r.body, "sandbox_state");
    expect(r.body.users.map((u: { external_id: string }) => u.external_id)).toEqual(["fx-carol", "fx-bob", "fx-alice"]);
    const alice = r.body.users[2];
    expect(alice).toMatchObject({
      username: "fx_alice",
      display_name: "Alice Fixture",
      email: "alice@sandbox.example.com",
      status: "active",
      is_verified: true,
    });
    expect(alice.wallets).toHaveLength(2);
    expect(alice.wallets[0]).toMatchObject({ is_primary: 1, label: "main", verified: 1 });
    expect(alice.wallets[1]).toMatchObject({ is_primary: 0, label: "savings", verified: 0 });
    for (const w of alice.wallets) expect(bs58.decode(w.wallet_address)).toHaveLength(32);
    expect(r.body.users[0]).toMatchObject({ external_id: "fx-carol", status: "suspended" });
    expect(r.body.links.self).toBe("/api/partner/sandbox/users/USER_ID");

    const suspended = await sb(h, key, "GET", "/users?status=suspended");
    expect(suspended.body.users.map((u: { external_id: string }) => u.external_id)).toEqual(["fx-carol"]);
    expect(suspended.body.users[0].wallets).toBeUndefined();
    const q = await sb(h, key, "GET", "/users?q=bob");
    expect(q.body.query).toMatchObject({ q: "bob", status: null, include_wallets: false });
    expect(q.body.count).toBe(1);
    const page = await sb(h, key, "GET", "/users?limit=2");
    expect(page.body.pagination).toMatchObject({ has_more: true, next_offset: 2 });
    const next = await sb(h, key, "GET", `/users?limit=2&cursor=${page.body.pagination.next_cursor}`);
    expect(next.body.users.map((u: { external_id: string }) => u.external_id)).toEqual(["fx-alice"]);
  });

  test.each(["?limit=0", "?limit=201", "?status=deleted", "?cursor=nope", "?include_wallets=yes"])("bad query %s is 400", async (qs) => {
    h = await sandboxApp();
    const r = await sb(h, await sandboxKey(h), "GET", `/users${qs}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_query");
  });
});

describe("POST /api/partner/sandbox/users", () => {
  test("creates a sandbox user with the live rules and emits users.updated in sandbox mode", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const r = await sb(h, key, "POST", "/users", { body: { external_id: "u-1", username: "Dora", email: "Dora@Example.com", wallet_address: sol(7) } });
    expect(r.status).toBe(201);
    expectSandboxFields(r.body, "sandbox_state", true);
    expect(r.body.user).toMatchObject({ external_id: "u-1", username: "dora", email: "dora@example.com", wallet_address: sol(7) });
    expect(await rows(h, "SELECT mode FROM partner_users WHERE external_id = 'u-1'")).toEqual([{ mode: "sandbox" }]);
    const events = await rows<{ data: string; mode: string }>(h, "SELECT data, mode FROM events WHERE event_type = 'users.updated' ORDER BY id DESC LIMIT 1");
    expect(events[0]!.mode).toBe("sandbox");
    expect(JSON.parse(events[0]!.data)).toMatchObject({ external_id: "u-1", changes: ["created"] });
  });

  test("conflicts with fixtures are the live 409s; bad bodies are 400; nothing is stored", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { alice } = await fixtureUsers(h, key);
    const taken = await sb(h, key, "POST", "/users", { body: { external_id: "fx-alice" } });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe("external_id_taken");
    expect((await sb(h, key, "POST", "/users", { body: { external_id: "n1", username: "FX_Bob" } })).body.error).toBe("username_taken");
    const wallet = await sb(h, key, "POST", "/users", { body: { external_id: "n2", wallet_address: alice.wallet_address } });
    expect(wallet.body.error).toBe("wallet_already_linked");
    for (const body of [{}, { external_id: 5 }, { external_id: "x", nickname: "y" }, { external_id: "x", email: "nope" }]) {
      expect((await sb(h, key, "POST", "/users", { body })).status).toBe(400);
    }
    expect(await countWhere(h, "partner_users")).toBe(3);
  });

  test("the same external_id may exist in live and sandbox of one partner: the two never meet", async () => {
    h = await sandboxApp();
    const live = await createKey(h, { partner: "Acme" });
    const mine = await signedJson(h, live, "POST", "/api/partner/users", { body: { external_id: "fx-alice" } });
    expect(mine.status).toBe(201);
    const key = await sandboxKey(h);
    const { alice } = await fixtureUsers(h, key);
    expect(alice.id).not.toBe(mine.body.user.id);
    expect((await signedJson(h, live, "GET", `/api/partner/users/${alice.id}`)).status).toBe(404);
    expect((await sb(h, key, "GET", `/users/${mine.body.user.id}`)).status).toBe(404);
  });
});

describe("GET /api/partner/sandbox/users/{user_id}", () => {
  test("one sandbox user; external_id must match when given; malformed, foreign and live ids are 404", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { bob } = await fixtureUsers(h, key);
    const r = await sb(h, key, "GET", `/users/${bob.id}?include_wallets=1&external_id=fx-bob`);
    expect(r.status).toBe(200);
    expectSandboxFields(r.body, "sandbox_state");
    expect(r.body.user).toMatchObject({ id: bob.id, external_id: "fx-bob" });
    expect(r.body.user.wallets).toHaveLength(1);
    expect((await sb(h, key, "GET", `/users/${bob.id}?external_id=fx-alice`)).status).toBe(404);
    for (const id of ["abc", "0", "-1", "99999"]) expect((await sb(h, key, "GET", `/users/${id}`)).status).toBe(404);
    const other = await sandboxKey(h, { partner: "Globex" });
    expect((await sb(h, other, "GET", `/users/${bob.id}`)).status).toBe(404);
  });
});

describe("PATCH /api/partner/sandbox/users/{user_id}", () => {
  test("changes fields, emits users.updated naming them; empty, bad and foreign are refused", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { carol } = await fixtureUsers(h, key);
    const r = await sb(h, key, "PATCH", `/users/${carol.id}`, { body: { status: "active", display_name: "Carol Renamed" } });
    expect(r.status).toBe(200);
    expectSandboxFields(r.body, "sandbox_state", true);
    expect(r.body.user).toMatchObject({ status: "active", display_name: "Carol Renamed" });
    const last = await rows<{ data: string }>(h, "SELECT data FROM events WHERE event_type = 'users.updated' AND mode = 'sandbox' ORDER BY id DESC LIMIT 1");
    expect(JSON.parse(last[0]!.data).changes.sort()).toEqual(["display_name", "status"]);
    expect((await sb(h, key, "PATCH", `/users/${carol.id}`, { body: {} })).status).toBe(400);
    expect((await sb(h, key, "PATCH", `/users/${carol.id}`, { body: { status: "gone" } })).status).toBe(400);
    expect((await sb(h, key, "PATCH", `/users/${carol.id}`, { body: { username: "fx_alice" } })).body.error).toBe("username_taken");
    expect((await sb(h, await sandboxKey(h, { partner: "Globex" }), "PATCH", `/users/${carol.id}`, { body: { status: "active" } })).status).toBe(404);
  });
});

describe("POST /api/partner/sandbox/users/{user_id}/wallets", () => {
  test("links a wallet and answers all wallets; a fixture's wallet on another user is 409", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { bob, alice } = await fixtureUsers(h, key);
    const r = await sb(h, key, "POST", `/users/${bob.id}/wallets`, { body: { wallet_address: sol(9), label: "hot", is_primary: true, verified: true } });
    expect(r.status).toBe(200);
    expectSandboxFields(r.body, "sandbox_state", true);
    expect(r.body.wallets[0]).toMatchObject({ wallet_address: sol(9), is_primary: 1, verified: 1, label: "hot" });
    expect(r.body.wallets).toHaveLength(2);
    expect(await rows(h, "SELECT DISTINCT mode FROM wallet_links")).toEqual([{ mode: "sandbox" }]);
    const conflict = await sb(h, key, "POST", `/users/${bob.id}/wallets`, { body: { wallet_address: alice.wallet_address } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toBe("wallet_already_linked");
    expect((await sb(h, key, "POST", `/users/${bob.id}/wallets`, { body: { wallet_address: "not-base58-0OIl" } })).status).toBe(400);
    expect((await sb(h, key, "POST", `/users/424242/wallets`, { body: { wallet_address: sol(10) } })).status).toBe(404);
  });
});
