// Recon grid (issue 18): a hidden layout, reveals paid with missiles, and the layout recomputed from the
// revealed seed by an independent implementation once the grid ends — a seed committed (its hash published by an
// earlier answer) before the start that takes the client seed (issue 30, item 2).
import { afterEach, describe, expect, test } from "bun:test";
import { GRID_CELLS } from "../../src/messenger/catalog";
import { applyAction } from "../../src/messenger/ledger";
import type { TestApp } from "../support/app";
import { openMessengerApp, initDataFor, tmaPost } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});
const PLAYER = 777;
const post = (path: string, body: Record<string, unknown> = {}) => h.json(path, tmaPost(initDataFor(h, { id: PLAYER }), body));
let seq = 0;
const rid = () => `grid-${++seq}-req`;

async function sha256Hex(text: string) {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function hmacHex(key: string, msg: string) {
  const enc = new TextEncoder();
  const k = await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(msg)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** docs/messenger.md's grid algorithm, written again: Fisher–Yates from the top, j = floor(x·(i+1)/2^52). */
async function recomputeLayout(serverSeed: string, clientSeed: string): Promise<number[]> {
  const out = [...Array(25).keys()];
  for (let i = 24; i >= 1; i--) {
    const x = parseInt((await hmacHex(serverSeed, `${clientSeed}:0:${i}`)).slice(0, 13), 16);
    const j = Math.floor((x / 2 ** 52) * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("recon grid", () => {
  test("start, reveal for missiles until every prize is found, then recompute the layout", async () => {
    h = await openMessengerApp();
    // The status publishes the hash of the seed the next grid will use, before any client seed is sent.
    const before = await post("/api/messenger/games/recon-grid/status");
    const committed = before.body.next_server_seed_hash;
    expect(committed).toMatch(/^[0-9a-f]{64}$/);
    h.clock.advanceSeconds(20);
    const started = await post("/api/messenger/games/recon-grid/start", { client_seed: "grid-seed", next_server_seed_hash: committed });
    expect(started.status).toBe(200);
    const grid = started.body.grid;
    expect(grid.fairness).toMatchObject({ server_seed_hash: committed, client_seed: "grid-seed", committed_at: before.body.next_committed_at });
    expect(Date.parse(grid.fairness.committed_at)).toBeLessThan(Date.parse(grid.fairness.client_seed_set_at));
    expect(started.body.next_server_seed_hash).not.toBe(committed);
    expect(grid).toMatchObject({ status: "active", cells_total: 25, prizes_total: 10, prizes_found: 0, revealed_cells: [] });
    expect(grid.fairness.server_seed).toBeNull();
    expect(grid.fairness.layout).toBeNull();
    const again = await post("/api/messenger/games/recon-grid/start");
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("game_state_conflict");
    const noMissile = await post("/api/messenger/games/recon-grid/reveal", { request_id: rid(), grid_id: grid.grid_id, cell: 0 });
    expect(noMissile.status).toBe(409);
    expect(noMissile.body.error).toBe("game_balance_insufficient");
    // Points through the ledger, then missiles bought with them.
    await applyAction(h.ctx, { telegramUserId: PLAYER, requestId: "seed-points-1", action: "test.credit", inputs: {}, gameKey: null }, async () => ({
      deltas: { freeSpins: 0, missiles: 0, points: 500 },
      result: {},
    }));
    const bought = await post("/api/messenger/games/recon-grid/purchase", { request_id: rid(), quantity: 25 });
    expect(bought.status).toBe(200);
    expect(bought.body.balances).toEqual({ free_spin_balance: 0, missile_balance: 25, points_balance: 0 });
    const seen: Array<{ cell: number; reward: unknown }> = [];
    let last: any;
    for (let cell = 0; cell < 25; cell++) {
      last = await post("/api/messenger/games/recon-grid/reveal", { request_id: rid(), grid_id: grid.grid_id, cell });
      if (last.status !== 200) break;
      seen.push({ cell, reward: last.body.reward });
      if (last.body.grid.status === "completed") break;
    }
    expect(last.body.grid.status).toBe("completed");
    expect(last.body.grid.prizes_found).toBe(10);
    const { server_seed, layout } = last.body.grid.fairness;
    // From what was published only: the revealed seed is the one committed before the start, and gives the layout.
    expect(await sha256Hex(server_seed)).toBe(committed);
    expect(layout).toEqual(await recomputeLayout(server_seed, started.body.grid.fairness.client_seed));
    for (const s of seen) expect(s.reward).toEqual(GRID_CELLS[layout[s.cell]]);
    const dup = await post("/api/messenger/games/recon-grid/reveal", { request_id: rid(), grid_id: grid.grid_id, cell: 0 });
    expect(dup.status).toBe(409);
    const status = await post("/api/messenger/games/recon-grid/status");
    expect(status.body.active_grid).toBeNull();
    expect(status.body.last_grid.fairness.server_seed).toBe(server_seed);
  });

  test("abandoning a grid reveals its seed; each start uses the seed the answer before committed", async () => {
    h = await openMessengerApp();
    await post("/api/messenger/games/recon-grid/status");
    const firstStart = await post("/api/messenger/games/recon-grid/start");
    const first = firstStart.body.grid;
    const second = await post("/api/messenger/games/recon-grid/start", { abandon_active: true });
    expect(second.status).toBe(200);
    expect(second.body.abandoned_grid).toMatchObject({ grid_id: first.grid_id, status: "abandoned" });
    expect(second.body.abandoned_grid.fairness.server_seed).toMatch(/^[0-9a-f]{64}$/);
    expect(second.body.grid.grid_id).not.toBe(first.grid_id);
    expect(second.body.grid.fairness.server_seed_hash).toBe(firstStart.body.next_server_seed_hash);
  });

  test("a start without a seed committed in an earlier answer, or against another commitment, is refused", async () => {
    h = await openMessengerApp();
    const early = await post("/api/messenger/games/recon-grid/start", { client_seed: "chosen-first" });
    expect([early.status, early.body.error, early.body.details]).toEqual([409, "game_state_conflict", { next_server_seed_hash: null }]);
    expect(early.body.message).toContain("recon-grid/status");
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_grids")).toEqual({ n: 0 });
    const status = await post("/api/messenger/games/recon-grid/status");
    expect((await post("/api/messenger/games/recon-grid/status")).body.next_server_seed_hash).toBe(status.body.next_server_seed_hash);
    const other = await post("/api/messenger/games/recon-grid/start", { client_seed: "chosen", next_server_seed_hash: "f".repeat(64) });
    expect([other.status, other.body.error, other.body.details]).toEqual([
      409,
      "game_state_conflict",
      { next_server_seed_hash: status.body.next_server_seed_hash },
    ]);
    const ok = await post("/api/messenger/games/recon-grid/start", { client_seed: "chosen" });
    expect(ok.body.grid.fairness.server_seed_hash).toBe(status.body.next_server_seed_hash);
  });
});
