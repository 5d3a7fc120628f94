// The partner routes declared once and mounted twice (src/auth/partner-mount.ts): live at /api/partner (the
// salutes at /api/salutes) and sandbox at /api/partner/sandbox. The two mounts of a route must stay one contract —
// the same statuses, parameters and bodies, the sandbox's answer the live one plus its own fields — and every signed
// route that reads a body must say, and answer, what the core answers for a body it refuses.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { createKey, signedInit } from "../support/partner";
import { sandboxApp, sandboxKey } from "./support";

type Json = Record<string, any>;

/** Each route of both mounts: [method, live path, sandbox path]. */
const MOUNTED: Array<[string, string, string]> = [
  ["post", "/api/partner/users", "/api/partner/sandbox/users"],
  ["get", "/api/partner/users", "/api/partner/sandbox/users"],
  ["get", "/api/partner/users/{user_id}", "/api/partner/sandbox/users/{user_id}"],
  ["patch", "/api/partner/users/{user_id}", "/api/partner/sandbox/users/{user_id}"],
  ["post", "/api/partner/users/{user_id}/wallets", "/api/partner/sandbox/users/{user_id}/wallets"],
  ["get", "/api/salutes/balance", "/api/partner/sandbox/salutes/balance"],
  ["post", "/api/salutes/credit", "/api/partner/sandbox/salutes/credit"],
  ["post", "/api/salutes/debit", "/api/partner/sandbox/salutes/debit"],
  ["get", "/api/salutes/ledger", "/api/partner/sandbox/salutes/ledger"],
  ["get", "/api/partner/webhooks", "/api/partner/sandbox/webhooks"],
  ["post", "/api/partner/webhooks", "/api/partner/sandbox/webhooks"],
  ["delete", "/api/partner/webhooks/{webhook_id}", "/api/partner/sandbox/webhooks/{webhook_id}"],
  ["post", "/api/partner/webhooks/{webhook_id}/test", "/api/partner/sandbox/webhooks/{webhook_id}/test"],
  ["post", "/api/partner/webhook-events/replay", "/api/partner/sandbox/webhook-events/replay"],
];

let h: TestApp;
let doc: { paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> } };
beforeAll(async () => {
  h = await sandboxApp();
  doc = (await (await h.request("/api/openapi.json")).json()) as typeof doc;
});
afterAll(() => h?.close());

const deref = (s: Json): Json => (s.$ref ? deref(doc.components.schemas[String(s.$ref).split("/").pop()!]!) : s);
const success = (op: Json): Json => {
  const [status] = Object.keys(op.responses).filter((s) => /^2/.test(s));
  return deref(op.responses[status!].content["application/json"].schema);
};

describe("one declaration, two mounts", () => {
  test.each(MOUNTED)(
    "%s %s: the sandbox twin has the live statuses, parameters and body, and the live answer plus the sandbox fields",
    (method, live, sandbox) => {
      const l = doc.paths[live]?.[method];
      const s = doc.paths[sandbox]?.[method];
      expect(l).toBeDefined();
      expect(s).toBeDefined();
      expect(Object.keys(s!.responses).sort()).toEqual(Object.keys(l!.responses).sort());
      expect(s!.summary).toStartWith("Sandbox: ");
      expect(s!.description).toContain("sandbox keys");
      expect(l!.description).toContain("live keys");
      // The sandbox's GET of one user may also name its external_id; every other parameter is the live one.
      const names = (op: Json) => (op.parameters ?? []).map((p: Json) => `${p.in} ${p.name}`).sort();
      expect(names(s!).filter((n: string) => n !== "query external_id")).toEqual(names(l!));
      // The sandbox's credit and debit take every field as optional (the fixture fills what is left out).
      const body = (op: Json) => op.requestBody?.content?.["application/json"]?.schema;
      if (/salutes\/(credit|debit)$/.test(live)) expect(Object.keys(body(s!).properties).sort()).toEqual(Object.keys(body(l!).properties).sort());
      else expect(body(s!)).toEqual(body(l!));
      const liveFields = Object.keys(success(l!).properties);
      const sandboxFields = Object.keys(success(s!).properties);
      const added = method === "get" ? ["mode", "fixture_profile", "source"] : ["mode", "fixture_profile", "source", "live_side_effects_performed"];
      expect(sandboxFields.sort()).toEqual(
        [...new Set([...liveFields, ...added, ...(live.endsWith("/balance") ? ["currency"] : []), ...(live.endsWith("/test") ? ["simulation"] : [])])].sort(),
      );
    },
  );

  test("a signed read never claims an Idempotency-Key, so no read documents 422; every mutation does", () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!/^\/api\/(partner|salutes)\//.test(path)) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!(op.security ?? []).some((s: Json) => "PartnerKey" in s)) continue;
        const mutation = (op.parameters ?? []).some((p: Json) => p.in === "header" && p.name === "Idempotency-Key");
        expect([`${method} ${path}`, "422" in op.responses]).toEqual([`${method} ${path}`, mutation]);
      }
    }
  });
});

describe("refused bodies, on every signed partner route that reads one", () => {
  test("an oversize body is 413 and another content type 415, and the operation documents both", async () => {
    const live = await createKey(h);
    const sandbox = await sandboxKey(h);
    const checked: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!/^\/api\/(partner|salutes)\//.test(path)) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!op.requestBody || !(op.security ?? []).some((s: Json) => "PartnerKey" in s)) continue;
        const operation = `${method.toUpperCase()} ${path}`;
        expect([operation, "413" in op.responses, "415" in op.responses]).toEqual([operation, true, true]);
        const target = path.replace(/\{[^}]+\}/g, "1");
        const key = path.startsWith("/api/partner/sandbox/") ? sandbox : live;
        const oversize = await h.json(target, signedInit(h, key, method.toUpperCase(), target, { body: { x: "x".repeat(h.ctx.config.maxBodyBytes) } }));
        expect([operation, oversize.status, oversize.body.error]).toEqual([operation, 413, "payload_too_large"]);
        const text = signedInit(h, key, method.toUpperCase(), target, { body: {}, headers: { "Content-Type": "text/plain" } });
        const wrongType = await h.json(target, text);
        expect([operation, wrongType.status, wrongType.body.error]).toEqual([operation, 415, "unsupported_media_type"]);
        checked.push(operation);
      }
    }
    expect(checked).toContain("POST /api/salutes/credit");
    expect(checked).toContain("POST /api/partner/sandbox/salutes/credit");
    expect(checked.length).toBeGreaterThan(20);
  });
});
