import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openContext } from "../../src/bootstrap";
import { ConfigError, loadConfig } from "../../src/config";
import { createLogger } from "../../src/log";
import { checkSalutesDecimals } from "../../src/salutes/decimals-check";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock, seededRng } from "../support/clock";
import { testOn } from "../support/skipped";

// Salutes amounts are integer minor units and SALUTES_DECIMALS says how many decimals a unit has. The database
// records the setting at its first start; a start with another one is refused (it would rescale every balance
// silently: 764.20 read as 76420 with 0 decimals).

let h: TestApp | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test("the first start records SALUTES_DECIMALS; the same setting passes, another is a ConfigError naming both", async () => {
  h = await openTestApp({ env: { SALUTES_DECIMALS: "2" } });
  expect(await h.ctx.store.get("SELECT id, decimals FROM salutes_settings")).toEqual({ id: 1, decimals: 2 });
  await checkSalutesDecimals(h.ctx.store, 2, h.clock.now().toISOString());
  const refused = await checkSalutesDecimals(h.ctx.store, 0, h.clock.now().toISOString()).then(
    () => null,
    (err: unknown) => err,
  );
  expect(refused).toBeInstanceOf(ConfigError);
  expect((refused as ConfigError).message).toContain("SALUTES_DECIMALS is 0, but this database's salutes amounts were written with 2 decimal places");
  expect((refused as ConfigError).message).toContain("Set SALUTES_DECIMALS=2");
  // The record is not moved by a refused start.
  expect(await h.ctx.store.get("SELECT decimals FROM salutes_settings WHERE id = 1")).toEqual({ decimals: 2 });
});

testOn("sqlite", "test/salutes/decimals-check.test.ts")("a SQLite file made with 2 decimals refuses to open with 0, and opens again with 2", async () => {
  const dir = mkdtempSync(join(tmpdir(), "herald-decimals-"));
  dirs.push(dir);
  const open = (decimals: string) =>
    openContext(loadConfig({ NODE_ENV: "test", HERALD_DB_PATH: join(dir, "herald.db"), LOG_LEVEL: "silent", JOBS_ENABLED: "0", SALUTES_DECIMALS: decimals }), {
      clock: new FakeClock(),
      rng: seededRng(),
      log: createLogger("silent"),
    });
  const first = open("2");
  await first.store.close();
  expect(() => open("0")).toThrow(ConfigError);
  expect(() => open("3")).toThrow(/written with 2 decimal places: every balance would read 10 times too large/);
  const again = open("2");
  await again.store.close();
});
