import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Store } from "../../src/db/port";
import { PostgresStore } from "../../src/db/postgres-engine";
import { SqliteStore } from "../../src/db/sqlite-engine";
import { JobLeases } from "../../src/jobs/leases";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";

// Job leadership on both engines: the table as its migration creates it (drizzle/0024_job_leases.sql, whose DDL is
// portable), two instances racing for one lease — exactly one wins, every time — the holder renews, the other
// takes over only after expiry, and a release hands it over at once.

const pg = postgresPresent("test/db/job-leases.test.ts");
const DDL = readFileSync(resolve(import.meta.dir, "../../drizzle/0024_job_leases.sql"), "utf8").replaceAll("`", '"');
let cluster: TestCluster | undefined;
let dir = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "herald-leases-"));
  if (pg) cluster = await startCluster();
}, 120_000);
afterAll(() => {
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const engines: Array<[string, () => Store]> = [
  [
    "sqlite",
    () => {
      const path = join(dir, "leases.db");
      const w = new Database(path, { create: true, strict: true });
      w.exec("PRAGMA journal_mode = WAL");
      return new SqliteStore(w);
    },
  ],
];
if (pg) engines.push(["postgres", () => new PostgresStore({ url: cluster!.url, poolMax: 8 })]);

for (const [name, make] of engines) {
  describe(`job leases on ${name}`, () => {
    test("one winner per race; renewal by the holder; takeover only after expiry; release hands over", async () => {
      const s = make();
      await s.run("DROP TABLE IF EXISTS job_leases");
      await s.run(DDL);
      const leases = new JobLeases(s);
      // 20 rounds of 8 instances racing for a fresh lease: exactly one wins each time.
      for (let round = 0; round < 20; round++) {
        const job = `snapshot-${round}`;
        const won = await Promise.all(Array.from({ length: 8 }, (_, i) => leases.acquire(job, `instance-${i}`, 1_000, 60_000)));
        expect(won.filter(Boolean)).toHaveLength(1);
        expect((await leases.current(job))!.holder).toBe(`instance-${won.indexOf(true)}`);
      }
      expect(await leases.acquire("retention", "a", 0, 60_000)).toBe(true);
      expect(await leases.acquire("retention", "b", 30_000, 60_000)).toBe(false);
      expect(await leases.acquire("retention", "a", 50_000, 60_000)).toBe(true); // renewed: until 110 000
      expect(await leases.acquire("retention", "b", 100_000, 60_000)).toBe(false);
      expect(await leases.acquire("retention", "b", 110_000, 60_000)).toBe(true); // expired: taken over
      expect(await leases.acquire("retention", "a", 120_000, 60_000)).toBe(false);
      await leases.release("retention", "a"); // not the holder: nothing happens
      expect((await leases.current("retention"))!.holder).toBe("b");
      await leases.release("retention", "b");
      expect(await leases.acquire("retention", "a", 121_000, 60_000)).toBe(true);
      await s.close();
    });
  });
}
