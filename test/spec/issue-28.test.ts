// Issue 28 (PostgreSQL mode, part 2), re-verified: "The preview gate removed: DATABASE_URL=postgres://… alone runs the
// full service; startup prints the engine and its version." A real `herald serve` (the source, as npm start runs it)
// on the run's engine: its "herald listening" line names the engine and version, and it serves a signed route.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresStore } from "../../src/db/postgres-engine";
import { createTestApp } from "../support/app";
import { testEngine, withDatabase } from "../support/engine";
import { postgresPresent, startCluster } from "../support/postgres";
import { spawnHerald } from "../support/process";
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

// Item 5: "herald migrate-to-postgres --from data/herald.db --to postgres://… copies every table … in batches with a
// progress bar (rows/s, ETA)". test/cli/migrate-to-postgres.test.ts runs it with --json; this reads the text run.
const pgHere = postgresPresent("test/spec/issue-28.test.ts");
test.skipIf(!pgHere)(
  "migrate-to-postgres without --json: a progress line per table with rows/s and ETA on stderr, then the copy's summary",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-issue28-"));
    const cluster = await startCluster();
    try {
      const env = { NODE_ENV: "test", LOG_LEVEL: "warn", HERALD_MASTER_KEY: "cd".repeat(32) };
      const source = createTestApp({ env: { ...env, HERALD_DB_PATH: join(dir, "source.db") } });
      const key = await createKey(source);
      for (let i = 0; i < 3; i++)
        await source.json("/api/partner/users", signedInit(source, key, "POST", "/api/partner/users", { body: { external_id: `m${i}` } }));
      await source.close();
      const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
      await admin.run("CREATE DATABASE moved28");
      await admin.close();
      const p = spawnHerald(["migrate-to-postgres", "--from", join(dir, "source.db"), "--to", withDatabase(cluster.url, "moved28")], env);
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect(code).toBe(0);
      expect(err).toMatch(/^partner_users: 3 rows$/m);
      expect(err).toMatch(/\[#{20}\] 3\/3 rows {2}[\d,]+ rows\/s {2}ETA 0 s/);
      expect(out).toMatch(/copied [\d,]+ rows of \d+ tables in [\d.]+ s/);
    } finally {
      cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
  120_000,
);
