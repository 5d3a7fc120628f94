// A backup's deadline (issue 71): a worker that never answers would hold the instance's one backup slot for good,
// every later run answered 409 backup_in_progress. Past its deadline (60 s plus BACKUP_DEADLINE_MINUTES_PER_GB a GB of
// the database; a test passes a short one) the worker is stopped, its temp copy removed, its job_runs row and the
// status say it failed and why, the log says so at error level, and the next backup runs. SQLite only: backups copy
// the SQLite file. The hang is the worker's test fault (BackupFault.hangIn), a thread blocked for good.
import { afterEach, expect } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { AppError } from "../../../src/http/errors/errors";
import { createLogger } from "../../../src/log";
import { backupDeadlineMs, runBackup, startBackup } from "../../../src/ops/backups/backup";
import { openTestApp, type TestApp } from "../../support/app";
import { createAdminToken } from "../../support/partner";
import { testOn } from "../../support/skipped";

const FILE = "test/ops/backups/deadline.test.ts";
const sqliteOnly = testOn("sqlite", FILE);

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const actor = { kind: "cli", user: "test" } as const;
/** Long enough for a worker to start and copy the test's small database; short enough for a test to wait out. */
const DEADLINE_MS = 1_500;

sqliteOnly("the deadline: 60 s, plus BACKUP_DEADLINE_MINUTES_PER_GB for each GB of the database", () => {
  expect(backupDeadlineMs(0, 2)).toBe(60_000);
  expect(backupDeadlineMs(2 ** 30, 2)).toBe(180_000);
  expect(backupDeadlineMs(2.5 * 2 ** 30, 4)).toBe(660_000);
});

sqliteOnly(
  "a worker stuck past its deadline is stopped: its temp copy removed, the run failed and why, the slot free for the next backup",
  async () => {
    const lines: string[] = [];
    h = await openTestApp({ log: createLogger("info", (line) => lines.push(line)) });
    const app = h;
    const auth = { authorization: `Bearer ${await createAdminToken(app)}` };
    const status = async () => (await app.json("/admin/backup/status", { headers: auth })).body;
    const dir = join(app.dir, "backups");

    // The copy is made, then the worker blocks as its integrity check begins, for good.
    const started = startBackup(app.ctx, { actor, testFault: { hangIn: "integrity_check" }, testDeadlineMs: DEADLINE_MS });
    const outcome = started.done.then(
      () => null,
      (e: unknown) => e,
    );
    let during = await status();
    while (during.running?.phase !== "integrity_check") {
      expect(during.running).not.toBeNull(); // ended before it reached the hang: the deadline is too short here
      await Bun.sleep(20);
      during = await status();
    }
    expect(during.running.id).toBe(started.id);
    const partial = ".herald-2026-01-01T00-00-00-000Z.db.partial";
    expect(readdirSync(dir)).toContain(partial);
    // Meanwhile the slot is taken.
    const second = await app.json("/admin/backup/run", { method: "POST", headers: auth });
    expect([second.status, second.body.error]).toEqual([409, "backup_in_progress"]);

    const error = await outcome;
    expect(error).toBeInstanceOf(AppError);
    const refusal = error as AppError;
    expect([refusal.code, refusal.status]).toEqual(["service_unavailable", 503]);
    const why = `The backup took longer than its deadline (${DEADLINE_MS / 1000} s for this database, stopped in integrity_check) and was stopped; no backup was made; see the server log`;
    expect(refusal.message).toBe(why);
    // Its temp copy is gone, and no backup was named.
    expect(existsSync(join(dir, partial))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
    // The status says it failed and why; nothing runs.
    const after = await status();
    expect(after.running).toBeNull();
    expect(after.last).toMatchObject({ id: started.id, outcome: "failed", name: null, error: why });
    expect(after.last.duration_ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    // Its job_runs row ended failed, with the same message.
    const rows = await app.ctx.store.all<{ ok: number; error: string; finished_at: string | null }>(
      "SELECT ok, error, finished_at FROM job_runs WHERE name = 'backup'",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ok: 0, error: why });
    expect(rows[0]!.finished_at).not.toBeNull();
    // Logged at error level, with the deadline and the phase it stopped in.
    const failed = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "backup failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: "error", id: started.id, error: why, deadline_ms: DEADLINE_MS, phase: "integrity_check" });

    // The slot is free: the next backup is made.
    app.clock.advanceSeconds(1);
    const made = await runBackup(app.ctx, { actor });
    expect(made.backup.integrity).toBe("ok");
    expect(readdirSync(dir).sort()).toEqual([made.backup.name, `${made.backup.name}.json`]);
  },
  // Without the deadline the backup never ends: the test fails here, in seconds.
  15_000,
);
