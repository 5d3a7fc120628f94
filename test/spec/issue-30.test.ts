// Issue 30, item 2 (provably fair, strictly): "the hash of the next server seed is always published before the
// player sets or changes a client seed; rotating reveals the current seed and activates the pre-committed one; a
// grid's layout uses a server seed committed before start", checked over HTTP with the verifier of
// docs/messenger.md ("Provably fair") reimplemented here from published answers only.
import { afterEach, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import type { TestApp } from "../support/app";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const fairInt = (seed: string, client: string, nonce: number, cursor: number, n: number) => {
  const d = createHmac("sha256", seed).update(`${client}:${nonce}:${cursor}`).digest("hex");
  return Number((BigInt(`0x${d.slice(0, 13)}`) * BigInt(n)) >> 52n);
};
const segment = (seed: string, client: string, nonce: number, weights: number[]) => {
  const r = fairInt(
    seed,
    client,
    nonce,
    0,
    weights.reduce((a, b) => a + b, 0),
  );
  let acc = 0;
  return weights.findIndex((w) => r < (acc += w));
};
const layout = (seed: string, client: string) => {
  const cells = Array.from({ length: 25 }, (_, i) => i);
  for (let i = 24; i > 0; i--) {
    const j = fairInt(seed, client, 0, i, i + 1);
    [cells[i], cells[j]] = [cells[j]!, cells[i]!];
  }
  return cells;
};

test("issue 30 item 2: a wheel's client seed goes onto a server seed committed in an earlier answer, and the spin recomputes", async () => {
  h = await openMessengerApp();
  const init = initDataFor(h, { id: 3001 });
  const answers: any[] = [];
  const call = async (path: string, body: unknown = {}) => {
    const r = await h.json(`/api/messenger/games/spin-wheel/${path}`, tmaPost(init, body));
    expect(r.status).toBe(200);
    answers.push(r.body);
    return r.body;
  };
  const first = await call("status");
  const committed = first.fairness.next_server_seed_hash as string;
  expect(committed).toMatch(/^[0-9a-f]{64}$/);
  h.clock.advance(30_000);
  const rotated = await call("status", { client_seed: "my-lucky-seed", next_server_seed_hash: committed });
  expect(rotated.fairness.server_seed_hash).toBe(committed);
  expect(rotated.fairness.client_seed).toBe("my-lucky-seed");
  expect(rotated.fairness.committed_at <= rotated.fairness.client_seed_set_at).toBe(true);
  expect(rotated.fairness.next_server_seed_hash).not.toBe(committed);
  const weights = (rotated.campaign.segments as Array<{ weight: number }>).map((s) => s.weight);
  const play = await call("play", { request_id: "spin-issue30-1" });
  expect(play.spin.fairness.server_seed_hash).toBe(committed);
  const again = await call("status", { client_seed: "second-seed", next_server_seed_hash: rotated.fairness.next_server_seed_hash });
  const revealed = again.revealed_seed;
  expect(revealed.server_seed_hash).toBe(committed);
  expect(sha256(revealed.server_seed)).toBe(committed);
  expect(revealed.committed_at <= revealed.client_seed_set_at).toBe(true);
  expect(answers.findIndex((a) => a.fairness?.next_server_seed_hash === committed)).toBeLessThan(
    answers.findIndex((a) => a.fairness?.server_seed_hash === committed),
  );
  expect(segment(revealed.server_seed, play.spin.fairness.client_seed, play.spin.fairness.nonce, weights)).toBe(play.spin.segment_index);
});

test("issue 30 item 2: a rotation onto another hash than the pending one is refused", async () => {
  h = await openMessengerApp();
  const init = initDataFor(h, { id: 3002 });
  const status = (await h.json("/api/messenger/games/spin-wheel/status", tmaPost(init, {}))).body;
  const r = await h.json("/api/messenger/games/spin-wheel/status", tmaPost(init, { client_seed: "x", next_server_seed_hash: "0".repeat(64) }));
  expect(r.status).toBe(409);
  expect(r.body.error).toBe("game_state_conflict");
  expect(r.body.details.next_server_seed_hash).toBe(status.fairness.next_server_seed_hash);
});

test("issue 30 item 2: a grid is laid out with the server seed its status committed before start", async () => {
  h = await openMessengerApp();
  const init = initDataFor(h, { id: 3003 });
  const status = await h.json("/api/messenger/games/recon-grid/status", tmaPost(init, {}));
  expect(status.status).toBe(200);
  const committed = status.body.next_server_seed_hash as string;
  expect(committed).toMatch(/^[0-9a-f]{64}$/);
  h.clock.advance(20_000);
  const start = await h.json("/api/messenger/games/recon-grid/start", tmaPost(init, { client_seed: "grid-seed", next_server_seed_hash: committed }));
  expect(start.status).toBe(200);
  expect(start.body.grid.fairness.server_seed_hash).toBe(committed);
  expect(start.body.next_server_seed_hash).not.toBe(committed);
  // Abandoning it ends it: its seed and layout are shown, and they recompute.
  const next = await h.json(
    "/api/messenger/games/recon-grid/start",
    tmaPost(init, { client_seed: "grid-seed-2", abandon_active: true, next_server_seed_hash: start.body.next_server_seed_hash }),
  );
  expect(next.status).toBe(200);
  const f = next.body.abandoned_grid.fairness;
  expect(sha256(f.server_seed)).toBe(committed);
  expect(f.committed_at <= f.client_seed_set_at).toBe(true);
  expect(layout(f.server_seed, f.client_seed)).toEqual(f.layout);
});
