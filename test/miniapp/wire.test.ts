import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TSchema } from "elysia";
import { MissionModel, PromoModel } from "../../src/messenger/games/promos-model";
import { EngagementModel, GamesModel, GridModel, InitOnlyBody, WalletModel } from "../../src/messenger/model";
import type { TestApp } from "../support/app";
import { openMessengerApp } from "../messenger/support";

// The mini-app's route table (src/miniapp/browser/wire.ts) pairs each path the page calls with a body schema and an
// answer schema, by name, and the page's types are taken from them. Here each pair is held to the route the server
// mounts at that path: its body is that schema and its 200 is that schema, the same objects, so the types the page
// compiles against are the route's own.

const BROWSER = join(import.meta.dir, "../../src/miniapp/browser");
const SCHEMAS: Record<string, unknown> = { GamesModel, GridModel, EngagementModel, WalletModel, InitOnlyBody, MissionModel, PromoModel };
const schemaNamed = (name: string) => name.split(".").reduce<any>((o, key) => o?.[key], SCHEMAS) as TSchema | undefined;

interface Line {
  path: string;
  body: string | null;
  answer: string;
}
/** The table's lines: `"<path>": Call<typeof <body>, typeof <answer>>`, a GET's path a template with its query. */
const table: Line[] = [
  ...readFileSync(join(BROWSER, "wire.ts"), "utf8").matchAll(
    /^\s*(?:"([^"]+)"|\[\w+: `([^`?]+)\?[^`]*`\]): Call<(?:null|typeof ([\w.]+)), typeof ([\w.]+)>;$/gm,
  ),
].map((m) => ({ path: (m[1] ?? m[2])!, body: m[3] ?? null, answer: m[4]! }));

let h: TestApp;
beforeAll(async () => {
  h = await openMessengerApp();
});
afterAll(() => h.close());

test("every path the page calls is in its route table, once", () => {
  const called = readdirSync(BROWSER)
    .filter((f) => f.endsWith(".ts"))
    .flatMap((f) => [...readFileSync(join(BROWSER, f), "utf8").matchAll(/api\(\s*"(\/api\/messenger\/[^"?]+)/g)].map((m) => m[1]!));
  expect(table.length).toBeGreaterThanOrEqual(15);
  expect(new Set(table.map((l) => l.path)).size).toBe(table.length);
  expect([...new Set(called)].sort()).toEqual(table.map((l) => l.path).sort());
});

test("each line names the schemas the route at its path is mounted with: its body (a GET: none) and its 200", () => {
  const wrong: string[] = [];
  for (const line of table) {
    const route = h.app.routes.find((r) => r.path === line.path && r.method === (line.body ? "POST" : "GET"));
    const hooks = route?.hooks as { body?: unknown; response?: Record<number, unknown> } | undefined;
    const body = line.body ? schemaNamed(line.body) : undefined;
    const answer = schemaNamed(line.answer);
    if (!route || !answer || (line.body && !body)) wrong.push(`${line.path}: no route or no schema ${line.body} / ${line.answer}`);
    else if (hooks?.body !== body || hooks?.response?.[200] !== answer)
      wrong.push(`${line.path}: mounted with other schemas than ${line.body} / ${line.answer}`);
  }
  expect(wrong).toEqual([]);
});
