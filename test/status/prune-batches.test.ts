import { afterEach, expect, test } from "bun:test";
import { pruneSnapshots, SAME_SET } from "../../src/status/store/snapshots";
import { openTestApp, type TestApp } from "../support/app";
import { CountingStore } from "../support/counting-store";

// The status-prune's snapshots go in bounded batches (src/status/store/snapshots.ts pruneSnapshots), oldest first.
// A snapshot whose check set is the previous one's stores "=", so each batch first gives the row that becomes the
// oldest the set in force: between batches, and between runs a time bound stopped, every row left still reads the
// check set it had. Both engines (HERALD_TEST_ENGINE=postgres).

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const at = (minute: number) => new Date(Date.UTC(2025, 0, 1) + minute * 60_000).toISOString();

/** The check set each snapshot stands for: its own list, or the latest list before it. */
async function setsById(): Promise<Map<number, string>> {
  const rows = await h.ctx.store.all<{ id: number; checks: string }>("SELECT id, checks FROM status_snapshots ORDER BY id");
  const out = new Map<number, string>();
  let inForce = "";
  for (const r of rows) {
    if (r.checks !== SAME_SET) inForce = r.checks;
    out.set(r.id, inForce);
  }
  return out;
}

test("snapshots go in batches; every row left keeps its check set, the oldest always holding a list", async () => {
  h = await openTestApp();
  // 40 snapshots a minute apart; the set changes at 0, 7 and 23, every other row is "=".
  const lists: Record<number, string> = { 0: "database", 7: "database,webhooks", 23: "database,webhooks,chain" };
  await h.ctx.store.tx(async (t) => {
    for (let m = 0; m < 40; m++) {
      await t.run("INSERT INTO status_snapshots (generated_at, overall, degraded, checks, policy_version, in_maintenance) VALUES (?, 'ok', '{}', ?, 'v1', 0)", [
        at(m),
        lists[m] ?? SAME_SET,
      ]);
    }
  });
  const before = await setsById();
  const store = new CountingStore(h.ctx.store);
  const cutoff = at(30); // 30 rows go, 10 stay

  // One batch of 4 a call (maxMs 0): each call leaves the rest, and the rows left read as before.
  let calls = 0;
  for (let done = false; !done; calls++) {
    const r = await pruneSnapshots(store, cutoff, { batchRows: 4, maxMs: 0 });
    done = r.done;
    const oldest = await h.ctx.store.get<{ checks: string }>("SELECT checks FROM status_snapshots ORDER BY generated_at, id LIMIT 1");
    expect(oldest!.checks).not.toBe(SAME_SET);
    for (const [id, set] of await setsById()) expect({ id, set }).toEqual({ id, set: before.get(id)! });
  }
  expect(calls).toBe(8); // 7 full batches and the last 2
  expect(store.transactions).toBe(8);
  expect(await h.ctx.store.get("SELECT count(*) AS n FROM status_snapshots")).toEqual({ n: 10 });
  expect(await h.ctx.store.get("SELECT min(generated_at) AS first FROM status_snapshots")).toEqual({ first: cutoff });
});

test("without a time bound one call deletes them all, over several statements", async () => {
  h = await openTestApp();
  await h.ctx.store.tx(async (t) => {
    for (let m = 0; m < 25; m++) {
      await t.run("INSERT INTO status_snapshots (generated_at, overall, degraded, checks, policy_version, in_maintenance) VALUES (?, 'ok', '{}', ?, 'v1', 0)", [
        at(m),
        m === 0 ? "database" : SAME_SET,
      ]);
    }
  });
  const store = new CountingStore(h.ctx.store);
  expect(await pruneSnapshots(store, at(20), { batchRows: 6 })).toMatchObject({ deleted: 20, done: true });
  expect(store.runs.filter((s) => s.sql.startsWith("DELETE")).length).toBe(4); // 6, 6, 6, 2
  expect(await h.ctx.store.all("SELECT generated_at, checks FROM status_snapshots ORDER BY id LIMIT 1")).toEqual([
    { generated_at: at(20), checks: "database" },
  ]);
});
