import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { count, createUser, expectPartnerAuth, linkWallet, sol, userEvents } from "./user-fixtures";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("POST /api/partner/users", () => {
  test("creates the user with a primary wallet, 201, and emits users.updated ['created'] in the same commit", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const r = await createUser(h, key, {
      external_id: "u-1@app",
      username: "Alice_01",
      display_name: " Alice ",
      email: "Alice@Example.COM",
      wallet_address: sol(1),
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      success: true,
      external_id: "u-1@app",
      user: {
        id: expect.any(Number),
        external_id: "u-1@app",
        username: "alice_01",
        display_name: "Alice",
        email: "alice@example.com",
        status: "active",
        is_verified: false,
        wallet_address: sol(1),
        wallets: [
          { blockchain: "solana", wallet_address: sol(1), label: "", is_primary: 1, verified: 0, verified_at: null, is_hidden: 0, session_connected_at: null },
        ],
        created_at: "2026-01-01T00:00:00.000Z",
        updated_at: "2026-01-01T00:00:00.000Z",
      },
    });
    expect(await userEvents(h)).toEqual([{ user_id: String(r.body.user.id), external_id: "u-1@app", changes: ["created"] }]);
    const row = await h.ctx.store.get("SELECT partner, mode, username FROM partner_users");
    expect(row).toEqual({ partner: "Acme", mode: "live", username: "alice_01" });
  });

  test("only external_id is required; the same Idempotency-Key replays instead of creating twice", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const first = await createUser(h, key, { external_id: "only" }, { idempotencyKey: "create-only" });
    expect(first.status).toBe(201);
    // Text fields never set answer "" (the spec types them as strings), never null.
    expect(first.body.user).toMatchObject({ username: "", display_name: "", email: "", wallet_address: "", wallets: [] });
    const again = await createUser(h, key, { external_id: "only" }, { idempotencyKey: "create-only" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: "idempotency_replay", original_status: 201, original_response: { external_id: "only" } });
    expect(await count(h, "partner_users")).toBe(1);
    expect(await userEvents(h)).toHaveLength(1);
  });

  test("status and is_verified may be set at creation, as PATCH sets them; defaults active and false", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const made = await createUser(h, key, { external_id: "vip", status: "suspended", is_verified: true });
    expect(made.status).toBe(201);
    expect(made.body.user).toMatchObject({ external_id: "vip", status: "suspended", is_verified: true });
    expect((await createUser(h, key, { external_id: "plain" })).body.user).toMatchObject({ status: "active", is_verified: false });
    for (const body of [
      { external_id: "x1", status: "banned" },
      { external_id: "x2", is_verified: 1 },
    ]) {
      expect((await createUser(h, key, body)).status).toBe(400);
    }
  });

  test.each([
    [{}, "external_id"],
    [{ external_id: "" }, "external_id"],
    [{ external_id: "has space" }, "external_id"],
    [{ external_id: "x".repeat(129) }, "external_id"],
    [{ external_id: 42 }, "external_id"],
    [{ external_id: "a", username: "ab" }, "username"],
    [{ external_id: "a", username: "bad-name" }, "username"],
    [{ external_id: "a", username: "x".repeat(33) }, "username"],
    [{ external_id: "a", display_name: "x".repeat(101) }, "display_name"],
    [{ external_id: "a", display_name: "   " }, "display_name"],
    [{ external_id: "a", display_name: "tab\there" }, "display_name"],
    [{ external_id: "a", email: "not-an-email" }, "email"],
    [{ external_id: "a", email: "a@b" }, "email"],
    [{ external_id: "a", email: `${"x".repeat(250)}@example.com` }, "email"],
    [{ external_id: "a", wallet_address: "0OIl" + "1".repeat(40) }, "wallet_address"],
    [{ external_id: "a", wallet_address: "tVojvhToWjQ8Xvo4UPx2Xz9eRy7auyYMmZBjc2XfN" }, "wallet_address"], // base58 of 31 bytes
    [{ external_id: "a", wallet_address: "JJEfe6DcPM2ziB2vfUWDV6aHVerXRGkv3TcyvJUNGHZz" }, "wallet_address"], // base58 of 33 bytes
    [{ external_id: "a", blockchain: "solana" }, "blockchain"],
    [{ external_id: "a", wallet_address: sol(1), blockchain: "Not A Chain!" }, "blockchain"],
    [{ external_id: "a", nickname: "x" }, "nickname"],
  ])("bad body %j is 400 naming %s, and stores nothing", async (body, field) => {
    h = await openTestApp();
    const r = await createUser(h, await createKey(h), body);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    expect(r.body.details.map((d: { field: string }) => d.field)).toContain(field);
    expect(await count(h, "partner_users")).toBe(0);
    expect(await count(h, "events")).toBe(0);
  });

  test("malformed JSON and a missing body are 400", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    expect((await signedJson(h, key, "POST", "/api/partner/users", { body: "{nope" })).body.error).toBe("invalid_payload");
    expect((await signedJson(h, key, "POST", "/api/partner/users")).status).toBe(400);
  });

  test("external_id, username (case-insensitively) and wallet are unique per partner: 409 with their own codes", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    await createUser(h, key, { external_id: "one", username: "alice", wallet_address: sol(1) });
    const dupExternal = await createUser(h, key, { external_id: "one" });
    expect(dupExternal.status).toBe(409);
    expect(dupExternal.body.error).toBe("external_id_taken");
    const dupName = await createUser(h, key, { external_id: "two", username: "ALICE" });
    expect(dupName.status).toBe(409);
    expect(dupName.body.error).toBe("username_taken");
    const dupWallet = await createUser(h, key, { external_id: "three", wallet_address: sol(1) });
    expect(dupWallet.status).toBe(409);
    expect(dupWallet.body.error).toBe("wallet_already_linked");
    expect(await count(h, "partner_users")).toBe(1);
    // Another partner may use all three.
    const other = await createUser(h, await createKey(h, { partner: "Beta" }), { external_id: "one", username: "alice", wallet_address: sol(1) });
    expect(other.status).toBe(201);
    const catalog = await h.json("/api/partner/errors.json");
    const codes = JSON.stringify(catalog.body);
    for (const code of ["external_id_taken", "username_taken", "wallet_already_linked"]) expect(codes).toContain(code);
  });

  test("auth: unsigned 401, users scope needed, live keys only", async () => {
    h = await openTestApp();
    await expectPartnerAuth(h, { method: "POST", path: "/api/partner/users", body: { external_id: "x" }, scope: "users" });
    expect(await count(h, "partner_users")).toBe(0);
  });
});

async function seed(key: Awaited<ReturnType<typeof createKey>>) {
  const ids: number[] = [];
  const people = [
    { external_id: "ext-a", username: "ann", display_name: "Ann 100% real", email: "ann@example.com", wallet_address: sol(1) },
    { external_id: "ext-b", username: "bob_x", display_name: "Bob", email: "bob@example.org" },
    { external_id: "ext-c", username: "carl", display_name: "Carl", email: "carl@example.com" },
  ];
  for (const p of people) ids.push((await createUser(h, key, p)).body.user.id);
  return ids;
}

describe("GET /api/partner/users", () => {
  test("lists newest first with links, filters by status and q (wildcards are literal), include_wallets", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const [a, b, c] = await seed(key);
    await signedJson(h, key, "PATCH", `/api/partner/users/${b}`, { body: { status: "suspended" } });

    const all = await signedJson(h, key, "GET", "/api/partner/users?include_meta=1");
    expect(all.status).toBe(200);
    expect(all.body.users.map((u: { id: number }) => u.id)).toEqual([c, b, a]);
    expect(all.body.users[2].wallet_address).toBe(sol(1));
    expect(all.body.users[2].wallets).toBeUndefined();
    expect(all.body.links.self).toBe("/api/partner/users/USER_ID");
    expect(all.body.links.wallet_verification).toBe("/api/partner/wallet-verification/WALLET_ADDRESS");
    expect(all.body.docs_links).toMatchObject({ users: "/api/docs#/partner", errors: "/api/partner/errors.json" });
    expect(all.body.query).toEqual({ limit: 50, offset: 0, cursor: null, status: null, q: null, include_wallets: false });
    expect(all.body.meta.request_id).toBeString();

    const suspended = await signedJson(h, key, "GET", "/api/partner/users?status=suspended");
    expect(suspended.body.users.map((u: { id: number }) => u.id)).toEqual([b]);
    const byQ = await signedJson(h, key, "GET", "/api/partner/users?q=EXAMPLE.COM");
    expect(byQ.body.users.map((u: { id: number }) => u.id)).toEqual([c, a]);
    expect((await signedJson(h, key, "GET", "/api/partner/users?q=%25")).body.users.map((u: { id: number }) => u.id)).toEqual([a]);
    expect((await signedJson(h, key, "GET", "/api/partner/users?q=_")).body.users.map((u: { id: number }) => u.id)).toEqual([b]);
    const withWallets = await signedJson(h, key, "GET", "/api/partner/users?include_wallets=true&q=ext-a");
    expect(withWallets.body.users[0].wallets).toEqual([expect.objectContaining({ wallet_address: sol(1), is_primary: 1 })]);
    expect(withWallets.body.query.include_wallets).toBe(true);
  });

  test("cursor pagination walks every user once; bad limits, statuses and cursors are 400", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    for (let i = 0; i < 5; i++) await createUser(h, key, { external_id: `p${i}` });
    const seen: number[] = [];
    let path = "/api/partner/users?limit=2";
    for (let i = 0; i < 5; i++) {
      const page = await signedJson(h, key, "GET", path);
      seen.push(...page.body.users.map((u: { id: number }) => u.id));
      if (!page.body.pagination.next_cursor) break;
      path = `/api/partner/users?limit=2&cursor=${page.body.pagination.next_cursor}`;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    const offset = await signedJson(h, key, "GET", "/api/partner/users?limit=2&offset=4");
    expect(offset.body.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
    for (const bad of [
      "limit=0",
      "limit=201",
      "offset=-1",
      "status=deleted",
      "include_wallets=yes",
      "cursor=zzz",
      `cursor=${Buffer.from('{"a":"x"}').toString("base64url")}`,
      `q=${"x".repeat(201)}`,
    ]) {
      const r = await signedJson(h, key, "GET", `/api/partner/users?${bad}`);
      expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 400, error: "invalid_query" });
    }
  });

  test("auth: read scope, live keys", async () => {
    h = await openTestApp();
    await expectPartnerAuth(h, { method: "GET", path: "/api/partner/users", scope: "read" });
  });
});

describe("GET /api/partner/user-lookup", () => {
  test("finds by email and username (case-insensitive, exact), by any linked wallet, and by q", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const [a, b] = await seed(key);
    await linkWallet(h, key, b!, { wallet_address: sol(9) });
    await linkWallet(h, key, b!, { wallet_address: sol(10) });
    const ids = async (qs: string) => (await signedJson(h, key, "GET", `/api/partner/user-lookup?${qs}`)).body.users.map((u: { id: number }) => u.id);
    expect(await ids("email=ANN%40example.com")).toEqual([a]);
    expect(await ids("email=ann%40example")).toEqual([]);
    expect(await ids("username=BOB_X")).toEqual([b]);
    expect(await ids(`wallet=${sol(10)}`)).toEqual([b]); // not the primary: any linked wallet
    expect(await ids(`wallet=${sol(1)}&status=suspended`)).toEqual([]);
    expect(await ids("q=ext-")).toHaveLength(3);
    const full = await signedJson(h, key, "GET", `/api/partner/user-lookup?wallet=${sol(9)}&include_wallets=1&limit=10`);
    expect(full.body).toMatchObject({ success: true, count: 1, pagination: { has_more: false } });
    expect(full.body.users[0].wallets.map((w: { wallet_address: string }) => w.wallet_address)).toEqual([sol(9), sol(10)]);
    expect(full.body.query).toEqual({
      limit: 10,
      offset: 0,
      cursor: null,
      status: null,
      q: null,
      email: null,
      username: null,
      wallet: sol(9),
      include_wallets: true,
    });
    expect(full.body.links.self).toBe("/api/partner/users/USER_ID");
    expect((await signedJson(h, key, "GET", "/api/partner/user-lookup?status=gone")).status).toBe(400);
    expect((await signedJson(h, key, "GET", `/api/partner/user-lookup?username=${"x".repeat(33)}`)).status).toBe(400);
  });

  test("auth: read scope, live keys", async () => {
    h = await openTestApp();
    await expectPartnerAuth(h, { method: "GET", path: "/api/partner/user-lookup?q=x", scope: "read" });
  });
});

describe("GET /api/partner/users/{user_id}", () => {
  test("answers the user, wallets only with include_wallets; malformed, unknown and foreign ids are 404", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const [a] = await seed(key);
    const plain = await signedJson(h, key, "GET", `/api/partner/users/${a}`);
    expect(plain.status).toBe(200);
    expect(plain.body.user).toMatchObject({ id: a, external_id: "ext-a", wallet_address: sol(1) });
    expect(plain.body.user.wallets).toBeUndefined();
    expect(plain.body.links.wallets).toBe("/api/partner/users/USER_ID/wallets");
    const full = await signedJson(h, key, "GET", `/api/partner/users/${a}?include_wallets=1`);
    expect(full.body.user.wallets).toHaveLength(1);
    for (const bad of ["abc", "0", "-1", "1.5", "99999", "1e3", "9".repeat(40)]) {
      const r = await signedJson(h, key, "GET", `/api/partner/users/${bad}`);
      expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 404, error: "not_found" });
    }
    expect((await signedJson(h, key, "GET", `/api/partner/users/${a}?include_wallets=maybe`)).status).toBe(400);
  });

  test("auth: read scope, live keys", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = (await createUser(h, key, { external_id: "x" })).body.user.id;
    await expectPartnerAuth(h, { method: "GET", path: `/api/partner/users/${id}`, scope: "read" });
  });
});

describe("PATCH /api/partner/users/{user_id}", () => {
  test("changes only the fields sent; users.updated names the fields that changed", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const [a] = await seed(key);
    h.clock.advanceSeconds(60);
    const r = await signedJson(h, key, "PATCH", `/api/partner/users/${a}`, {
      body: { display_name: "Ann B.", email: null, is_verified: true, username: "ann" },
    });
    expect(r.status).toBe(200);
    expect(r.body.user).toMatchObject({
      id: a,
      display_name: "Ann B.",
      email: "", // cleared with null; read back as the empty string
      is_verified: true,
      username: "ann",
      status: "active",
      updated_at: "2026-01-01T00:01:00.000Z",
    });
    expect(r.body.user.wallets).toHaveLength(1);
    const events = (await userEvents(h)).filter((e) => e.user_id === String(a));
    expect(events.at(-1)!.changes.sort()).toEqual(["display_name", "email", "is_verified"]);
    const suspend = await signedJson(h, key, "PATCH", `/api/partner/users/${a}`, { body: { status: "suspended" } });
    expect(suspend.body.user.status).toBe("suspended");
    expect((await userEvents(h)).at(-1)!.changes).toEqual(["status"]);
  });

  test("a PATCH that changes nothing writes nothing and emits nothing", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const [a] = await seed(key);
    const before = (await userEvents(h)).length;
    h.clock.advanceSeconds(60);
    const r = await signedJson(h, key, "PATCH", `/api/partner/users/${a}`, { body: { display_name: "Ann 100% real", username: "ANN" } });
    expect(r.status).toBe(200);
    expect(r.body.user.updated_at).toBe("2026-01-01T00:00:00.000Z");
    expect(await userEvents(h)).toHaveLength(before);
  });

  test("empty body, unknown fields, bad values and a taken username are refused; nothing changes", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const [a] = await seed(key);
    const patch = (body: unknown) => signedJson(h, key, "PATCH", `/api/partner/users/${a}`, { body });
    const empty = await patch({});
    expect(empty.status).toBe(400);
    expect(empty.body.message).toContain("at least one field");
    const unknown = await patch({ display_name: "X", dispaly_name: "typo" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual([{ field: "dispaly_name", problem: "is not a known field" }]);
    for (const body of [
      { status: "deleted" },
      { is_verified: "yes" },
      { username: "no spaces" },
      { email: "nope" },
      { display_name: "" },
      { external_id: "new" },
      [],
      "x",
    ]) {
      const r = await patch(body);
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
    }
    expect((await signedJson(h, key, "PATCH", `/api/partner/users/${a}`)).status).toBe(400);
    const taken = await patch({ username: "Bob_X" });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe("username_taken");
    const row = await h.ctx.store.get("SELECT username, display_name, status FROM partner_users WHERE id = ?", [Number(a)]);
    expect(row).toEqual({ username: "ann", display_name: "Ann 100% real", status: "active" });
    expect((await signedJson(h, key, "PATCH", "/api/partner/users/abc", { body: { status: "active" } })).status).toBe(404);
  });

  test("auth: users scope, live keys", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = (await createUser(h, key, { external_id: "x" })).body.user.id;
    await expectPartnerAuth(h, { method: "PATCH", path: `/api/partner/users/${id}`, body: { display_name: "y" }, scope: "users" });
  });
});

describe("partner isolation", () => {
  test("partner B never sees or changes A's users, by list, lookup, id or patch", async () => {
    h = await openTestApp();
    const a = await createKey(h, { partner: "Alpha" });
    const b = await createKey(h, { partner: "Beta" });
    const [id] = await seed(a);
    expect((await signedJson(h, b, "GET", "/api/partner/users")).body.count).toBe(0);
    expect((await signedJson(h, b, "GET", "/api/partner/user-lookup?q=ext")).body.count).toBe(0);
    expect((await signedJson(h, b, "GET", `/api/partner/user-lookup?wallet=${sol(1)}`)).body.count).toBe(0);
    expect((await signedJson(h, b, "GET", "/api/partner/user-lookup?email=ann%40example.com")).body.count).toBe(0);
    const get = await signedJson(h, b, "GET", `/api/partner/users/${id}`);
    expect(get.status).toBe(404);
    // Exactly the answer for an id that does not exist: nothing reveals that the id is taken.
    const missing = await signedJson(h, b, "GET", "/api/partner/users/999999");
    expect(get.body.message.replace(String(id), "N")).toBe(missing.body.message.replace("999999", "N"));
    expect((await signedJson(h, b, "PATCH", `/api/partner/users/${id}`, { body: { status: "suspended" } })).status).toBe(404);
    expect(await h.ctx.store.get("SELECT status FROM partner_users WHERE id = ?", [Number(id)])).toEqual({ status: "active" });
    // Another key of the same partner shares the users.
    expect((await signedJson(h, await createKey(h, { partner: "Alpha" }), "GET", "/api/partner/users")).body.count).toBe(3);
    expect(await userEvents(h, "Beta")).toHaveLength(0);
  });
});
