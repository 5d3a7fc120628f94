import { afterEach, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { EXAMPLE_SCHEMAS } from "../../src/http/openapi/examples";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

// The document tells the truth about real answers: bodies the app sends are validated with a JSON Schema 2020-12
// validator (ajv) against the served document's schemas for that operation and status, $refs into
// components.schemas and components.responses followed. Integer ids, nullable enums and narrowed error codes
// are checked this way against what the server actually sends.

let h: TestApp;
afterEach(() => h?.close());

type Doc = { paths: Record<string, Record<string, any>>; components: Record<string, Record<string, any>> };

function validatorFor(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return (path: string, method: string, status: number, body: unknown): string[] => {
    let response = doc.paths[path]?.[method]?.responses?.[String(status)];
    if (!response) return [`${method.toUpperCase()} ${path} documents no ${status}`];
    if (response.$ref) response = doc.components.responses![String(response.$ref).split("/").pop()!];
    const schema = response.content?.["application/json"]?.schema;
    if (!schema) return [`${method.toUpperCase()} ${path} ${status} has no JSON schema`];
    // The components ride along in the root, so "#/components/…" resolves.
    const validate = ajv.compile({ ...schema, components: doc.components });
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${method.toUpperCase()} ${path} ${status}: ${e.instancePath} ${e.message}`);
  };
}

test("real answers of users, salutes, capabilities, status and errors validate against the documented schemas", async () => {
  h = await openTestApp();
  const doc = (await h.json("/api/openapi.json")).body as Doc;
  const check = validatorFor(doc);
  const key = await createKey(h, { mode: "live" });
  const problems: string[] = [];
  const expectValid = (path: string, method: string, res: { status: number; body: unknown }, status: number) => {
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(status);
    problems.push(...check(path, method, status, res.body));
  };

  const created = await signedJson(h, key, "POST", "/api/partner/users", {
    body: { external_id: "player-1", username: "ada", wallet_address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T" },
  });
  expectValid("/api/partner/users", "post", created, 201);
  const id = created.body.user.id;
  expect(typeof id).toBe("number");
  expectValid("/api/partner/users/{user_id}", "get", await signedJson(h, key, "GET", `/api/partner/users/${id}?include_wallets=1&include_meta=1`), 200);
  expectValid("/api/partner/users", "get", await signedJson(h, key, "GET", "/api/partner/users?limit=5"), 200);
  expectValid(
    "/api/salutes/credit",
    "post",
    await signedJson(h, key, "POST", "/api/salutes/credit", { body: { user_id: String(id), amount: 12.5, reason: "quest_reward", source: "game.arena" } }),
    200,
  );
  expectValid("/api/salutes/ledger", "get", await signedJson(h, key, "GET", `/api/salutes/ledger?user_id=${id}`), 200);
  expectValid("/api/salutes/balance", "get", await signedJson(h, key, "GET", `/api/salutes/balance?user_id=${id}`), 200);
  expectValid("/api/partner/capabilities", "get", await signedJson(h, key, "GET", "/api/partner/capabilities"), 200);
  expectValid("/api/partner/webhooks", "get", await signedJson(h, key, "GET", "/api/partner/webhooks"), 200);
  expectValid("/api/public/system-status", "get", await h.json("/api/public/system-status"), 200);
  expectValid("/transparency/audit-anomalies/schema-registry.json", "get", await h.json("/transparency/audit-anomalies/schema-registry.json"), 200);
  // A first track event: replay_reason is null, which the document allows (a nullable constant is an enum with null).
  const track = await h.json("/api/public/audio-share-links/track", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ event_type: "copy", channel: "x", destination_url: "/tracks/1", client_event_id: "evt-0001-abcd" }),
  });
  expectValid("/api/public/audio-share-links/track", "post", track, 200);
  // Failures: the Error body, its code within the status's narrowed enum.
  expectValid("/api/partner/users/{user_id}", "get", await signedJson(h, key, "GET", "/api/partner/users/999999"), 404);
  expectValid("/api/partner/users", "post", await signedJson(h, key, "POST", "/api/partner/users", { body: { external_id: "player-1" } }), 409);
  expectValid("/api/partner/users", "post", await signedJson(h, key, "POST", "/api/partner/users", { body: { external_id: "" } }), 400);
  expect(problems).toEqual([]);
});

test("the validator is not vacuous: a string id, an unknown code and a 409 code on a 404 are refused", async () => {
  h = await openTestApp();
  const doc = (await h.json("/api/openapi.json")).body as Doc;
  const check = validatorFor(doc);
  const user = {
    id: "1",
    external_id: "x",
    username: null,
    display_name: null,
    email: null,
    status: "active",
    is_verified: false,
    wallet_address: null,
    created_at: "t",
    updated_at: "t",
  };
  expect(check("/api/partner/users/{user_id}", "get", 200, { success: true, user, docs_links: {}, links: {} }).join()).toContain("/user/id must be integer");
  const failure = { success: false, message: "m", request_id: "r" };
  expect(check("/api/partner/users/{user_id}", "get", 404, { ...failure, error: "no_such_code" })).not.toEqual([]);
  expect(check("/api/partner/users/{user_id}", "get", 404, { ...failure, error: "conflict" })).not.toEqual([]);
  expect(check("/api/partner/users/{user_id}", "get", 404, { ...failure, error: "not_found" })).toEqual([]);
});

test("the example values the reference shows for named schemas are valid instances of them", async () => {
  h = await openTestApp();
  const doc = (await h.json("/api/openapi.json")).body as Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const [name, example] of Object.entries(EXAMPLE_SCHEMAS)) {
    expect(doc.components.schemas![name]?.examples, name).toEqual([example]);
    const validate = ajv.compile({ $ref: `#/components/schemas/${name}`, components: doc.components });
    expect(validate(example) ? [] : validate.errors, name).toEqual([]);
  }
});

test("a refusal the route describes keeps its words beside the shared response; one it does not, the shared words alone", async () => {
  h = await openTestApp();
  const doc = (await h.json("/api/openapi.json")).body as Doc;
  expect(doc.paths["/admin/sign-out"]!.post.responses["403"]).toEqual({
    $ref: "#/components/responses/ForbiddenOrPage",
    description: "Missing or wrong CSRF token",
  });
  // Generic entries (`HTTP 413`, the Error body's own "Every failure") never shadow the shared description.
  expect(doc.paths["/admin/sign-out"]!.post.responses["413"]).toEqual({ $ref: "#/components/responses/PayloadTooLargeOrPage" });
  const described = Object.values(doc.paths)
    .flatMap((item) => Object.values(item).flatMap((op: any) => Object.values(op.responses ?? {})))
    .filter((r: any) => r.$ref && r.description);
  expect(described.length).toBeGreaterThan(50);
  for (const r of described as Array<{ description: string }>) expect(r.description).not.toMatch(/^(HTTP \d{3}|Every failure)$/);
});
