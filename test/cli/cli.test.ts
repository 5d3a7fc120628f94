import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnHerald } from "../support/process";

const dir = mkdtempSync(join(tmpdir(), "herald-cli-"));
const env = { HERALD_DB_PATH: join(dir, "herald.db"), NODE_ENV: "test", LOG_LEVEL: "warn" };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(args: string[], extraEnv: Record<string, string> = {}) {
  const p = spawnHerald(args, { ...env, ...extraEnv });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

test("migrate creates the database and reports in JSON", async () => {
  const r = await run(["migrate", "--json"]);
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout);
  expect(out).toMatchObject({ success: true, db: env.HERALD_DB_PATH });
  expect(out.total).toBeGreaterThanOrEqual(1);
  const again = JSON.parse((await run(["migrate", "--json"])).stdout);
  expect(again.applied).toBe(0);
});

test("config prints the effective configuration, and a bad value stops with a clear message", async () => {
  const ok = await run(["config", "--json"], { PORT: "4321" });
  expect(ok.code).toBe(0);
  expect(JSON.parse(ok.stdout).config).toMatchObject({ PORT: "4321", HERALD_DB_PATH: env.HERALD_DB_PATH });
  const human = await run(["config"]);
  expect(human.stdout).toContain("MAX_BODY_BYTES");

  const bad = await run(["config"], { PORT: "not-a-port" });
  expect(bad.code).toBe(78);
  expect(bad.stderr).toContain('PORT="not-a-port" is not valid: expected an integer from 0 to 65535');
  const badServe = await run(["serve"], { LOG_LEVEL: "chatty" });
  expect(badServe.code).toBe(78);
  expect(badServe.stderr).toContain("LOG_LEVEL");
});

test("jobs list and jobs run work against the same database file", async () => {
  const list = await run(["jobs", "list", "--json"]);
  expect(list.code).toBe(0);
  const names = JSON.parse(list.stdout).jobs.map((j: { name: string }) => j.name);
  expect(names).toContain("request-log-prune");

  const ran = await run(["jobs", "run", "request-log-prune", "--json"]);
  expect(ran.code).toBe(0);
  expect(JSON.parse(ran.stdout).run).toMatchObject({ name: "request-log-prune", ok: true });
  const after = JSON.parse((await run(["jobs", "list", "--json"])).stdout).jobs.find((j: { name: string }) => j.name === "request-log-prune");
  expect(after.last_run.ok).toBe(true);

  const unknown = await run(["jobs", "run", "nope"]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("unknown job nope");
});

test("version, help and unknown commands", async () => {
  const v = await run(["version", "--json"]);
  expect(JSON.parse(v.stdout).version).toMatch(/^\d+\.\d+\.\d+/);
  const help = await run(["help"]);
  expect(help.stdout).toContain("Usage: herald <command>");
  const unknown = await run(["frobnicate"]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("unknown command: frobnicate");
});
