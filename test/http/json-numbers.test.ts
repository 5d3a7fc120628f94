// Numbers in JSON bodies are JSON numbers (issue 30, item 5; docs/http-conventions.md): Elysia's t.Integer is a
// coercing union made for query text, and used in body schemas it let "2", "0x10" and "1e1" through as numbers.
// The HTTP core now checks every JSON body with the text branch removed; query and path parameters still coerce
// (with their bounds), and form bodies, whose fields are text, keep the schema as declared.
import { afterEach, describe, expect, test } from "bun:test";
import { t } from "elysia";
import { strictJsonNumbers } from "../../src/http/json-numbers";
import { RouteIndex } from "../../src/http/routes/route-index";
import { formRequestBody } from "../../src/http/body/form-body";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { openMessengerApp, initDataFor, tmaPost } from "../messenger/support";

let h: TestApp;
afterEach(() => h?.close());

const textProblem = "must be an integer written as a JSON number, not text";

describe("JSON bodies: a number field takes JSON numbers only", () => {
  test('the messenger: {"quantity":"2"} and "0x2" are 400 invalid_payload naming quantity; nothing is bought', async () => {
    h = await openMessengerApp();
    const post = (body: Record<string, unknown>) => h.json("/api/messenger/games/items/purchase", tmaPost(initDataFor(h, { id: 77 }), body));
    for (const quantity of ["2", "0x2", "1e0", " 2"]) {
      const r = await post({ request_id: `buy-${quantity.trim()}-0001`, item_key: "spin_play", quantity });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(r.body.details).toEqual([{ field: "quantity", problem: textProblem }]);
      expect(r.body.message).toContain("quantity");
    }
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_ledger")).toEqual({ n: 0 });
    // The same request with a JSON number reaches the verb (and is refused there for the balance, not the type).
    const real = await post({ request_id: "buy-real-0001", item_key: "spin_play", quantity: 2 });
    expect([real.status, real.body.error]).toEqual([409, "game_balance_insufficient"]);
  });

  test("messenger admin: target 1e1, reward.points 0x10 and reward.missiles 0x5 are refused by name, nested fields included", async () => {
    h = await openMessengerApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const base = { mission_key: "m-1", title: "Spin", event_type: "spin_wheel.play", target: 3, reward: { points: 1 }, daily_cap: 10, per_minute_cap: 5 };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, target: "1e1" }, "target"],
      [{ ...base, reward: { points: "0x10" } }, "reward.points"],
      [{ ...base, reward: { missiles: "0x5" } }, "reward.missiles"],
      [{ ...base, daily_cap: "10" }, "daily_cap"],
    ];
    for (const [body, field] of cases) {
      const r = await h.json("/api/messenger/admin/missions", jsonInit("POST", body, auth));
      expect([r.status, r.body.error]).toEqual([400, "invalid_payload"]);
      expect(r.body.details).toEqual([{ field, problem: textProblem }]);
    }
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_missions")).toEqual({ n: 0 });
    const ok = await h.json("/api/messenger/admin/missions", jsonInit("POST", base, auth));
    expect(ok.status).toBe(200);
    expect(ok.body.mission).toMatchObject({ target: 3, reward: { points: 1 } });
  });

  test("the rest of the API: an admin body and a signed partner body refuse numbers as text alike", async () => {
    h = await openMessengerApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const key = await createKey(h, { partner: "Acme", mode: "live" });
    const rotate = await h.json(`/admin/partners/keys/${key.keyId}/rotate`, jsonInit("POST", { overlap_hours: "1" }, auth));
    expect([rotate.status, rotate.body.error, rotate.body.details]).toEqual([400, "invalid_payload", [{ field: "overlap_hours", problem: textProblem }]]);
    // A replay id may be a delivery id or an evt_ event id, so "2" is named against both.
    const replay = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [1, "2"] } });
    expect([replay.status, replay.body.error]).toEqual([400, "invalid_payload"]);
    expect(replay.body.details[0]).toEqual({
      field: "event_ids.1",
      problem:
        "must be an integer (a delivery id: a record's id, the dead-letter summary's event_id) or a string matching ^evt_[0-9a-f]{24}$ (an event id: the X-Webhook-Id, as the test route answers it)",
    });
  });

  test("query and path parameters still arrive as text and are coerced within their bounds", async () => {
    h = await openMessengerApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const list = await h.json("/api/messenger/admin/missions?limit=2&offset=0", { headers: auth });
    expect([list.status, list.body.query.limit, list.body.query.offset]).toEqual([200, 2, 0]);
    const bad = await h.json("/api/messenger/admin/missions?limit=1.5", { headers: auth });
    expect([bad.status, bad.body.error, bad.body.details[0].field]).toEqual([400, "invalid_query", "query.limit"]);
  });
});

describe("strictJsonNumbers", () => {
  test("removes the text branch at every depth and keeps optional, nullable, bounds and the rest of the schema", () => {
    const schema = t.Object({
      n: t.Integer({ minimum: 1, maximum: 5 }),
      opt: t.Optional(t.Integer()),
      maybe: t.Union([t.Integer(), t.Null()]),
      list: t.Array(t.Object({ x: t.Integer() })),
      name: t.String(),
    });
    const index = new RouteIndex();
    index.load([{ method: "POST", path: "/x", hooks: { body: schema } }]);
    const check = index.bodyCheckOf("POST", "/x")!;
    const ok = { n: 2, maybe: null, list: [{ x: 1 }], name: "a" };
    expect(check.Check(ok)).toBe(true);
    expect(check.Check({ ...ok, opt: 3, maybe: 4 })).toBe(true);
    for (const bad of [
      { ...ok, n: "2" },
      { ...ok, n: 6 },
      { ...ok, opt: "3" },
      { ...ok, maybe: "4" },
      { ...ok, list: [{ x: "1" }] },
    ]) {
      expect(check.Check(bad)).toBe(false);
    }
    // The route's own schema is untouched: Elysia's validator and the OpenAPI document still read it as declared.
    expect(JSON.stringify(schema.properties.n)).toContain('"format":"integer"');
    expect(JSON.stringify(strictJsonNumbers(schema))).not.toContain('"format":"integer"');
  });

  test("a form route keeps the declared schema: its fields are text by nature", () => {
    const index = new RouteIndex();
    index.load([{ method: "POST", path: "/form", hooks: { body: t.Object({ n: t.Integer() }), detail: { requestBody: formRequestBody("n") } } }]);
    expect(index.bodyCheckOf("POST", "/form")!.Check({ n: "2" })).toBe(true);
  });
});
