// Recon grid (issue 18): a hidden layout, reveals paid with missiles, and the layout recomputed from the
// revealed seed by an independent implementation once the grid ends.
import { afterEach, describe, expect, test } from "bun:test";
import { GRID_CELLS } from "../../src/messenger/catalog";
import { applyAction } from "../../src/messenger/ledger";
import type { TestApp } from "../support/app";
import { createMessengerApp, initDataFor, tmaPost } from "./support";

let h: TestApp;
afterEach(() => h?.close());
const PLAYER = 777;
const post = (path: string, body: Record<string, unknown> = {}) => h.json(path, tmaPost(initDataFor(h, { id: PLAYER }), body));
let seq = 0;
const rid = () => `grid-${++seq}-req`;

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
    h = createMessengerApp();
    const started = await post("/api/messenger/games/recon-grid/start", { client_seed: "grid-seed" });
    expect(started.status).toBe(200);
    const grid = started.body.grid;
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
    applyAction(h.ctx, { telegramUserId: PLAYER, requestId: "seed-points-1", action: "test.credit", inputs: {}, gameKey: null }, () => ({
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
    expect(layout).toEqual(await recomputeLayout(server_seed, "grid-seed"));
    for (const s of seen) expect(s.reward).toEqual(GRID_CELLS[layout[s.cell]]);
    const dup = await post("/api/messenger/games/recon-grid/reveal", { request_id: rid(), grid_id: grid.grid_id, cell: 0 });
    expect(dup.status).toBe(409);
    const status = await post("/api/messenger/games/recon-grid/status");
    expect(status.body.active_grid).toBeNull();
    expect(status.body.last_grid.fairness.server_seed).toBe(server_seed);
  });

  test("abandoning a grid reveals its seed", async () => {
    h = createMessengerApp();
    const first = (await post("/api/messenger/games/recon-grid/start")).body.grid;
    const second = await post("/api/messenger/games/recon-grid/start", { abandon_active: true });
    expect(second.status).toBe(200);
    expect(second.body.abandoned_grid).toMatchObject({ grid_id: first.grid_id, status: "abandoned" });
    expect(second.body.abandoned_grid.fairness.server_seed).toMatch(/^[0-9a-f]{64}$/);
    expect(second.body.grid.grid_id).not.toBe(first.grid_id);
  });
});
