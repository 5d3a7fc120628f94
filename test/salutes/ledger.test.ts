import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { encodeCursor, MAX_OFFSET } from "../../src/http/pagination";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { body, createUser, credit, debit, fixture } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const get = (key: TestKey, path: string) => signedJson(h, key, "GET", path);

describe("GET /api/salutes/balance", () => {
  test("a never-credited user has 0; afterwards the balance; the answer names the key", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const empty = await get(key, `/api/salutes/balance?user_id=${user}`);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ success: true, user_id: user, balance: 0, partner_key_id: key.keyId });
    await credit(h, key, body(user, 10.1));
    await debit(h, key, body(user, 0.2));
    const after = await get(key, `/api/salutes/balance?user_id=${user}&include_meta=1`);
    expect(after.body).toMatchObject({ user_id: user, balance: 9.9, meta: { request_id: expect.any(String) } });
  });

  test("a suspended user's balance can still be read", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const user = await createUser(h, { status: "suspended" });
    expect((await get(key, `/api/salutes/balance?user_id=${user}`)).body.balance).toBe(0);
  });

  test("unknown, malformed, foreign and sandbox users are 404; a missing user_id is 400", async () => {
    h = await openTestApp();
    const { key } = await fixture(h);
    for (const id of ["424242", "x1", await createUser(h, { partner: "Beta" }), await createUser(h, { mode: "sandbox" })]) {
      const r = await get(key, `/api/salutes/balance?user_id=${encodeURIComponent(id)}`);
      expect({ id, status: r.status, error: r.body.error }).toEqual({ id, status: 404, error: "not_found" });
    }
    const missing = await get(key, "/api/salutes/balance");
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe("invalid_query");
  });

  test("auth: unsigned 401, no read scope 403, sandbox key 403, partner B 404 on A's user", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    await credit(h, key, body(user, 3));
    expect((await h.json(`/api/salutes/balance?user_id=${user}`)).status).toBe(401);
    expect((await get(await createKey(h, { scopes: ["ledger"] }), `/api/salutes/balance?user_id=${user}`)).status).toBe(403);
    expect((await get(await createKey(h, { mode: "sandbox" }), `/api/salutes/balance?user_id=${user}`)).status).toBe(403);
    const b = await get(await createKey(h, { partner: "Beta" }), `/api/salutes/balance?user_id=${user}`);
    expect(b.status).toBe(404);
    expect(JSON.stringify(b.body)).not.toContain('"balance"');
  });
});

describe("GET /api/salutes/ledger", () => {
  async function seed(): Promise<{ key: TestKey; user: string; ids: number[] }> {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const ids: number[] = [];
    for (const [call, amount, reason, source] of [
      [credit, 10, "quest_reward", "game.arena"],
      [credit, 5, "daily_bonus", "game.lobby"],
      [debit, 2.5, "shop.purchase", "shop"],
      [credit, 1, "quest_reward", "game.lobby"],
      [debit, 0.5, "shop.purchase", "shop"],
    ] as const) {
      ids.push((await call(h, key, body(user, amount, { reason, source }))).body.ledger_entry_id);
    }
    return { key, user, ids };
  }

  test("newest first by default, with the balance and every entry's running balance", async () => {
    const { key, user, ids } = await seed();
    const r = await get(key, `/api/salutes/ledger?user_id=${user}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, user_id: user, balance: 13, count: 5 });
    expect(r.body.ledger.map((e: { id: number }) => e.id)).toEqual([...ids].reverse());
    expect(r.body.ledger[0]).toEqual({
      id: ids[4],
      user_id: user,
      delta: -0.5,
      balance_after: 13,
      reason: "shop.purchase",
      source: "shop",
      created_at: "2026-01-01T00:00:00.000Z",
    });
    expect(r.body.ledger.map((e: { balance_after: number }) => e.balance_after)).toEqual([13, 13.5, 12.5, 15, 10]);
    expect(r.body.query).toEqual({ limit: 50, offset: 0, cursor: null, order: "desc", reason: null, source: null });
    expect(r.body.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
  });

  test("order=asc, and filters on reason and source", async () => {
    const { key, user, ids } = await seed();
    const asc = await get(key, `/api/salutes/ledger?user_id=${user}&order=asc`);
    expect(asc.body.ledger.map((e: { id: number }) => e.id)).toEqual(ids);
    expect(asc.body.query.order).toBe("asc");
    const byReason = await get(key, `/api/salutes/ledger?user_id=${user}&reason=shop.purchase`);
    expect(byReason.body.ledger.map((e: { delta: number }) => e.delta)).toEqual([-0.5, -2.5]);
    expect(byReason.body.query.reason).toBe("shop.purchase");
    const both = await get(key, `/api/salutes/ledger?user_id=${user}&reason=quest_reward&source=game.lobby`);
    expect(both.body.ledger.map((e: { id: number }) => e.id)).toEqual([ids[3]]);
    expect(both.body.query).toMatchObject({ reason: "quest_reward", source: "game.lobby" });
    const none = await get(key, `/api/salutes/ledger?user_id=${user}&source=nowhere`);
    expect(none.body).toMatchObject({ count: 0, ledger: [], balance: 13 });
  });

  test("a reason is text for people too: spaces, capitals and accents are kept and filtered on exactly", async () => {
    const { key, user } = await seed();
    const reason = "Daily quest: Level 3 — bonus";
    const r = await credit(h, key, body(user, 1, { reason, source: "Game Arena" }));
    expect(r.status).toBe(200);
    const found = await get(key, `/api/salutes/ledger?user_id=${user}&reason=${encodeURIComponent(reason)}`);
    expect(found.body.ledger).toEqual([expect.objectContaining({ id: r.body.ledger_entry_id, reason, source: "Game Arena" })]);
    expect((await get(key, `/api/salutes/ledger?user_id=${user}&reason=${encodeURIComponent("daily quest: level 3 — bonus")}`)).body.count).toBe(0);
  });

  test("offset pages and cursor pages both walk every entry once, in both orders", async () => {
    const { key, user, ids } = await seed();
    const first = await get(key, `/api/salutes/ledger?user_id=${user}&limit=2`);
    expect(first.body.pagination).toMatchObject({ has_more: true, next_offset: 2 });
    const second = await get(key, `/api/salutes/ledger?user_id=${user}&limit=2&offset=2`);
    expect(second.body.ledger.map((e: { id: number }) => e.id)).toEqual([ids[2], ids[1]]);
    for (const order of ["desc", "asc"] as const) {
      const seen: number[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 10; page++) {
        const r: { body: any } = await get(key, `/api/salutes/ledger?user_id=${user}&limit=2&order=${order}${cursor ? `&cursor=${cursor}` : ""}`);
        seen.push(...r.body.ledger.map((e: { id: number }) => e.id));
        cursor = r.body.pagination.next_cursor;
        if (!cursor) break;
      }
      expect(seen).toEqual(order === "desc" ? [...ids].reverse() : ids);
    }
  });

  test(`offset pages up to ${MAX_OFFSET}; deeper is 400 offset_too_large naming the cursor, which pages on`, async () => {
    const { key, user, ids } = await seed();
    const at = await get(key, `/api/salutes/ledger?user_id=${user}&reason=quest_reward&offset=${MAX_OFFSET}`);
    expect(at.status).toBe(200);
    expect(at.body).toMatchObject({ count: 0, ledger: [], query: { offset: MAX_OFFSET, reason: "quest_reward" } });
    const past = await get(key, `/api/salutes/ledger?user_id=${user}&offset=${MAX_OFFSET + 1}`);
    expect(past.status).toBe(400);
    expect(past.body).toMatchObject({
      success: false,
      error: "offset_too_large",
      details: [{ field: "query.offset", problem: expect.stringContaining("pagination.next_cursor") }],
    });
    expect(past.body.message).toBe(
      `Invalid request parameters: query.offset is ${MAX_OFFSET + 1}, past ${MAX_OFFSET}, the deepest offset this list pages to; page deeper with cursor: pass pagination.next_cursor of the previous page as cursor`,
    );
    // The way it names: a page's next_cursor, whatever its depth.
    const first = await get(key, `/api/salutes/ledger?user_id=${user}&limit=2`);
    const next = await get(key, `/api/salutes/ledger?user_id=${user}&limit=2&cursor=${first.body.pagination.next_cursor}`);
    expect(next.body.ledger.map((e: { id: number }) => e.id)).toEqual([ids[2], ids[1]]);
  });

  test.each([
    ["order=sideways", "query.order"],
    ["limit=0", "limit"],
    ["limit=201", "limit"],
    ["offset=-1", "offset"],
    ["reason=bad%07tag", "query.reason"],
    ["cursor=%%%", "cursor"],
    [`cursor=${Buffer.from(JSON.stringify({ a: "not-an-id" })).toString("base64url")}`, "cursor"],
    [`cursor=${encodeCursor(3)}&offset=2`, "offset"],
  ])("%s is 400 invalid_query", async (qs, field) => {
    const { key, user } = await seed();
    const r = await get(key, `/api/salutes/ledger?user_id=${user}&${qs}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_query");
    expect(JSON.stringify(r.body.details)).toContain(field);
  });

  test("auth and isolation: ledger scope needed; sandbox 403; partner B 404; unknown user 404", async () => {
    const { user } = await seed();
    expect((await h.json(`/api/salutes/ledger?user_id=${user}`)).status).toBe(401);
    expect((await get(await createKey(h, { scopes: ["read"] }), `/api/salutes/ledger?user_id=${user}`)).status).toBe(403);
    expect((await get(await createKey(h, { mode: "sandbox" }), `/api/salutes/ledger?user_id=${user}`)).status).toBe(403);
    const b = await get(await createKey(h, { partner: "Beta" }), `/api/salutes/ledger?user_id=${user}`);
    expect(b.status).toBe(404);
    expect(b.body).not.toHaveProperty("ledger");
    expect((await get(await createKey(h), "/api/salutes/ledger?user_id=777777")).status).toBe(404);
  });
});

describe("the ledger is append-only", () => {
  // The one exception: POST /api/partner/sandbox/reset deletes the SANDBOX practice ledger; its statement names
  // mode = 'sandbox' as a literal on the same line, so it can never reach a live entry.
  test("no code in src/ updates or deletes live ledger entries", () => {
    const root = join(import.meta.dir, "../../src");
    const offenders: string[] = [];
    const touchesLive = (line: string) => /(UPDATE\s+salutes_ledger|DELETE\s+FROM\s+salutes_ledger)/i.test(line) && !/mode = 'sandbox'/.test(line);
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.ts$/.test(e.name) && readFileSync(p, "utf8").split("\n").some(touchesLive)) offenders.push(p);
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
  });
});
