// Issue 28 (PostgreSQL mode, part 2), re-verified: "The preview gate removed: DATABASE_URL=postgres://… alone runs the
// full service; startup prints the engine and its version." A real `herald serve` (the source, as npm start runs it)
// on the run's engine: its "herald listening" line names the engine and version, and it serves a signed route.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { testEngine } from "../support/engine";
import { createKey, signedInit } from "../support/partner";
import { startTarget, type TargetApp } from "../support/target";

let h: TargetApp;
beforeAll(async () => {
  h = await startTarget({ target: { kind: "source", binary: null, label: "bun src/main.ts serve" }, env: { LOG_LEVEL: "info" } });
}, 60_000);
afterAll(() => h?.stop());

test("the startup line names the engine and its version; the service answers a signed read", async () => {
  const listening = h
    .output()
    .split("\n")
    .filter((l) => l.includes("herald listening"))
    .map((l) => JSON.parse(l.slice(l.indexOf("{"))) as { engine?: string });
  expect(listening).toHaveLength(1);
  expect(listening[0]!.engine).toMatch(testEngine() === "postgres" ? /^PostgreSQL \d+(\.\d+)?$/ : /^SQLite 3\.\d+\.\d+$/);
  const key = await createKey(h);
  const res = await h.request("/api/partner/users?limit=1", signedInit(h, key, "GET", "/api/partner/users?limit=1"));
  expect(res.status).toBe(200);
}, 60_000);

// "U+0000 in text → 400 invalid_payload/invalid_query (never 500)" — PostgreSQL's text cannot hold it; SQLite refuses
// it too since (parity probe). Both, on the run's engine, through a signed write and a signed read.
test("text holding U+0000: a body is 400 invalid_payload, a query value 400 invalid_query, never 5xx", async () => {
  const key = await createKey(h);
  const body = { external_id: "nul-\u0000-user", username: "nul" };
  const write = await h.request("/api/partner/users", signedInit(h, key, "POST", "/api/partner/users", { body }));
  expect([write.status, ((await write.json()) as { error: string }).error]).toEqual([400, "invalid_payload"]);
  const path = "/api/partner/user-lookup?q=a%00b";
  const read = await h.request(path, signedInit(h, key, "GET", path));
  expect([read.status, ((await read.json()) as { error: string }).error]).toEqual([400, "invalid_query"]);
});
