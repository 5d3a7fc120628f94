// POST /api/messenger/admin/missions: the rule "an event type the server observes, or any type with progress_source
// self_reported" (and a self-reported mission's tighter limits) is in the document's schema, not only in words
// (issue 74, item 7). For each body, Ajv over the served document and the server agree: valid under the schema
// exactly when the server creates the mission; a body it refuses keeps its refusal (400 invalid_payload naming the
// field, as before). Runs on either engine (HERALD_TEST_ENGINE).
import { afterAll, beforeAll, expect, test } from "bun:test";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { SERVER_OBSERVED_EVENTS } from "../../src/messenger/games/mission-sources";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { openMessengerApp } from "./support";

let h: TestApp;
let admin: string;
let validate: ValidateFunction;
beforeAll(async () => {
  h = await openMessengerApp();
  admin = await createAdminToken(h);
  const doc = (await h.json("/api/openapi.json")).body;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, "doc");
  validate = ajv.compile({ $ref: "doc#/paths/~1api~1messenger~1admin~1missions/post/requestBody/content/application~1json/schema" });
});
afterAll(() => h?.close());

let n = 0;
const body = (fields: Record<string, unknown>) => ({
  mission_key: `m-${++n}`,
  title: "A mission",
  target: 3,
  reward: { points: 10 },
  daily_cap: 10,
  per_minute_cap: 2,
  ...fields,
});
const self = (fields: Record<string, unknown> = {}) => body({ event_type: "quiz.answer", progress_source: "self_reported", ...fields });

/** [what, body, the field the server names when it refuses (null: it creates the mission)] */
const CASES: Array<[string, Record<string, unknown>, string | null]> = [
  ...Object.keys(SERVER_OBSERVED_EVENTS).map((e): [string, Record<string, unknown>, null] => [
    `observed ${e}, no progress_source`,
    body({ event_type: e }),
    null,
  ]),
  ["observed, progress_source server", body({ event_type: "spin_wheel.play", progress_source: "server" }), null],
  [
    "observed, server limits and salutes",
    body({ event_type: "promo.claim", daily_cap: 1000, per_minute_cap: 100, reward: { points: 5000, salutes: "2.5" } }),
    null,
  ],
  ["not observed, no progress_source (the outside run's case)", body({ event_type: "quiz.answer" }), "body.event_type"],
  ["not observed, progress_source server", body({ event_type: "quiz.answer", progress_source: "server" }), "body.event_type"],
  ["self_reported, not observed", self(), null],
  ["self_reported at its limits", self({ daily_cap: 20, per_minute_cap: 5, reward: { free_spins: 5, missiles: 20, points: 1000, salutes: "0.000" } }), null],
  ["self_reported, observed", self({ event_type: "spin_wheel.play" }), "body.progress_source"],
  ["self_reported, daily_cap 21", self({ daily_cap: 21 }), "body.daily_cap"],
  ["self_reported, per_minute_cap 6", self({ per_minute_cap: 6 }), "body.per_minute_cap"],
  ["self_reported, 6 free spins", self({ reward: { free_spins: 6 } }), "body.reward.free_spins"],
  ["self_reported, 21 missiles", self({ reward: { missiles: 21 } }), "body.reward.missiles"],
  ["self_reported, 1001 points", self({ reward: { points: 1001 } }), "body.reward.points"],
  ["self_reported, salutes", self({ reward: { salutes: "0.5" } }), "body.reward.salutes"],
  // Refused by the route's schema itself, which names the field without the `body.` of the verb's own checks (as before).
  ["an event type outside the pattern", body({ event_type: "Quiz Answer", progress_source: "self_reported" }), "event_type"],
];

test("the document's body schema and the server agree on every body: valid exactly when the mission is created", async () => {
  for (const [what, b, field] of CASES) {
    const valid = validate(b);
    const res = await h.json("/api/messenger/admin/missions", jsonInit("POST", b, { authorization: `Bearer ${admin}` }));
    expect({ what, status: res.status, valid }).toEqual({ what, status: field === null ? 200 : 400, valid: field === null });
    if (field !== null) expect({ what, error: res.body.error, field: res.body.details?.[0]?.field }).toEqual({ what, error: "invalid_payload", field });
  }
});

test("the rule is two shapes of the body: observed types (progress_source absent or server), or self_reported with its limits", async () => {
  const schema = (await h.json("/api/openapi.json")).body.paths["/api/messenger/admin/missions"].post.requestBody.content["application/json"].schema;
  expect(schema.anyOf.map((s: { title: string }) => s.title)).toEqual(["server", "self_reported"]);
  const [server, reported] = schema.anyOf;
  expect(server.properties.event_type.anyOf.map((b: { const: string }) => b.const)).toEqual(Object.keys(SERVER_OBSERVED_EVENTS));
  expect(server.required).toEqual(["event_type"]);
  expect(reported.required).toContain("progress_source");
  expect(reported.properties.event_type.not).toEqual({ enum: Object.keys(SERVER_OBSERVED_EVENTS) });
  // The object itself is unchanged: every field, closed, for the fuzz suite and the generated types.
  expect(schema.additionalProperties).toBe(false);
  expect(schema.required).toEqual(["mission_key", "title", "event_type", "target", "reward", "daily_cap", "per_minute_cap"]);
});
