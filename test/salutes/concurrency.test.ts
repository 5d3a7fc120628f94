// The concurrency proof (issue 5, docs/design.md §5): 2,000 signed credits and debits through the real HTTP server,
// 64 in flight, over five users, with duplicated Idempotency-Keys and replayed nonces mixed in. Afterwards the
// ledger must balance, never have gone negative, and hold exactly one effect and one outbox event per accepted
// request. Requests are signed at the test clock's time, which the server also reads.
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedInit, type TestKey } from "../support/partner";
import { createUser, eventRows, expectLedgerConsistent, ledgerRows } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

type Kind = "original" | "idem-duplicate" | "nonce-replay";

interface Planned {
  path: "/api/salutes/credit" | "/api/salutes/debit";
  init: RequestInit;
  idempotencyKey: string;
  /** Requests that belong together: an original and its duplicate or replay share a group. */
  group: number;
  kind: Kind;
}

interface Outcome extends Planned {
  status: number;
  body: Record<string, any>;
}

const TOTAL = 2000;
const IN_FLIGHT = 64;
const USERS = 5;
const DUPLICATES = 120;
const NONCE_REPLAYS = 120;

/** A fixed permutation (xorshift), so a failure can be reproduced. */
function shuffle<T>(items: T[], seed = 0x9e3779b9): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    const j = Math.abs(s) % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function plan(key: TestKey, users: string[]): Planned[] {
  const originals = TOTAL - DUPLICATES - NONCE_REPLAYS;
  const out: Planned[] = [];
  for (let i = 0; i < originals; i++) {
    // Every third request is a debit. The last user's debits outweigh their credits, so many of them race for
    // a balance that is not there; the others' are small and mostly succeed.
    const isDebit = i % 3 === 2;
    const path = isDebit ? "/api/salutes/debit" : "/api/salutes/credit";
    const starved = i % users.length === users.length - 1;
    const amount = isDebit ? (starved ? 14.75 : (i % 4) + 0.75) : (i % 5) + 1.25;
    const body = { user_id: users[i % users.length]!, amount, reason: isDebit ? "shop.purchase" : "quest_reward", source: "concurrency-test" };
    const idempotencyKey = `conc-${i}`;
    out.push({ path, init: signedInit(h, key, "POST", path, { body, idempotencyKey }), idempotencyKey, group: i, kind: "original" });
  }
  // Duplicates and replays pick disjoint originals, so each pair's outcome is certain whatever the arrival order.
  const credits = out.filter((p) => p.path === "/api/salutes/credit");
  const duplicated = credits.filter((_, n) => n % 3 === 0).slice(0, DUPLICATES);
  const picked = new Set(duplicated);
  const replayed = out
    .filter((p) => !picked.has(p))
    .filter((_, n) => n % 7 === 1)
    .slice(0, NONCE_REPLAYS);
  expect([duplicated.length, replayed.length]).toEqual([DUPLICATES, NONCE_REPLAYS]);
  // Duplicates repeat a credit's payload and Idempotency-Key, freshly signed (new nonce): exactly one may take effect.
  for (const original of duplicated) {
    const body = original.init.body as string;
    out.push({ ...original, init: signedInit(h, key, "POST", original.path, { body, idempotencyKey: original.idempotencyKey }), kind: "idem-duplicate" });
  }
  // Nonce replays resend the exact signed headers (same nonce) under a new Idempotency-Key.
  for (const [r, original] of replayed.entries()) {
    const idempotencyKey = `replay-${r}`;
    const headers = { ...(original.init.headers as Record<string, string>), "Idempotency-Key": idempotencyKey };
    out.push({ ...original, init: { ...original.init, headers }, idempotencyKey, kind: "nonce-replay" });
  }
  return shuffle(out);
}

async function runAll(base: string, planned: Planned[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let next = 0;
  const worker = async () => {
    while (next < planned.length) {
      const p = planned[next++]!;
      const res = await fetch(base + p.path, p.init);
      outcomes.push({ ...p, status: res.status, body: (await res.json()) as Record<string, any> });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return outcomes;
}

test("2,000 concurrent signed credits and debits keep the ledger exact", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PARTNER_PER_MIN: "0" } });
  const key = await createKey(h, { partner: "Acme" });
  const users: string[] = [];
  for (let i = 0; i < USERS; i++) users.push(await createUser(h));
  const planned = plan(key, users);
  expect(planned).toHaveLength(TOTAL);

  const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  let outcomes: Outcome[];
  try {
    outcomes = await runAll(`http://127.0.0.1:${server.server!.port}`, planned);
  } finally {
    await server.stop(true);
  }
  expect(outcomes).toHaveLength(TOTAL);

  // Every answer is a success or one of the three expected refusals.
  const answers = new Map<string, number>();
  for (const o of outcomes) {
    const label = o.status === 200 ? "200" : `${o.status} ${o.body.error}`;
    answers.set(label, (answers.get(label) ?? 0) + 1);
  }
  for (const label of answers.keys()) expect(["200", "409 idempotency_replay", "409 replay_detected", "409 insufficient_balance"]).toContain(label);
  expect(answers.get("409 replay_detected")).toBe(NONCE_REPLAYS);
  expect(answers.get("409 idempotency_replay")).toBe(DUPLICATES);

  // Pairs: a duplicated credit took effect once, and the other answer is the stored original; one of each
  // nonce pair was refused as a replay.
  const byGroup = Map.groupBy(outcomes, (o) => `${o.group}`);
  for (const o of outcomes.filter((x) => x.kind === "idem-duplicate")) {
    const pair = byGroup.get(`${o.group}`)!.filter((x) => x.kind !== "nonce-replay");
    const ok = pair.filter((x) => x.status === 200);
    const replayed = pair.filter((x) => x.body.error === "idempotency_replay");
    expect({ ok: ok.length, replayed: replayed.length }).toEqual({ ok: 1, replayed: 1 });
    expect(replayed[0]!.body.original_response).toEqual(ok[0]!.body);
  }
  for (const o of outcomes.filter((x) => x.kind === "nonce-replay")) {
    const pair = byGroup.get(`${o.group}`)!.filter((x) => x.kind !== "idem-duplicate");
    expect(pair.filter((x) => x.body.error === "replay_detected")).toHaveLength(1);
  }

  // Effects: one ledger row per accepted request, none for refused ones, at most one per Idempotency-Key.
  const accepted = outcomes.filter((o) => o.status === 200);
  const rows = await ledgerRows(h);
  expect(rows).toHaveLength(accepted.length);
  expect(new Set(rows.map((r) => r.idempotency_key)).size).toBe(rows.length);
  const rowByKey = new Map(rows.map((r) => [r.idempotency_key, r]));
  for (const o of accepted) {
    const row = rowByKey.get(o.idempotencyKey)!;
    expect(row.id).toBe(o.body.ledger_entry_id);
    expect(row.balance_after_minor).toBe(Math.round(o.body.balance * 100));
  }
  for (const o of outcomes.filter((x) => x.status !== 200 && x.body.error !== "idempotency_replay")) {
    // A refused request left no row under its key — unless its twin (same key) was accepted.
    const twinAccepted = accepted.some((a) => a.idempotencyKey === o.idempotencyKey);
    expect(rowByKey.has(o.idempotencyKey)).toBe(twinAccepted);
  }

  // The invariant, and one outbox event per ledger row carrying that row.
  await expectLedgerConsistent(h);
  const events = await eventRows(h);
  expect(events).toHaveLength(rows.length);
  const eventFor = new Map(events.map((e) => [e.data.ledger_entry_id as number, e]));
  expect(eventFor.size).toBe(rows.length);
  for (const row of rows) {
    const e = eventFor.get(row.id)!;
    expect(e.event_type).toBe(row.delta_minor < 0 ? "salutes.debit" : "salutes.credit");
    expect(Math.round((e.data.balance as number) * 100)).toBe(row.balance_after_minor);
  }

  // The API agrees with the ledger for every user.
  for (const user of users) {
    const sum = (await ledgerRows(h, user)).reduce((s, r) => s + r.delta_minor, 0);
    const res = await h.json(`/api/salutes/balance?user_id=${user}`, signedInit(h, key, "GET", `/api/salutes/balance?user_id=${user}`));
    expect(Math.round(res.body.balance * 100)).toBe(sum);
  }
  // Debits both succeeded and met an empty balance, or the test would not be testing the guard.
  expect(accepted.some((o) => o.path === "/api/salutes/debit")).toBe(true);
  expect(answers.get("409 insufficient_balance") ?? 0).toBeGreaterThan(10);
}, 60_000);

test("a refused request and its nonce replay, sent together: exactly one of the two is refused as the replay", async () => {
  // Each debit meets an empty balance, so its transaction (with its nonce insert) rolls back; its replay, sent at
  // the same moment, may take the nonce meanwhile. Whichever records the nonce second is the replay.
  h = await openTestApp({ env: { RATE_LIMIT_PARTNER_PER_MIN: "0" } });
  const key = await createKey(h, { partner: "Acme" });
  const user = await createUser(h);
  const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  const base = `http://127.0.0.1:${server.server!.port}`;
  const PAIRS = 60;
  try {
    const pairs = await Promise.all(
      Array.from({ length: PAIRS }, async (_, i) => {
        const path = "/api/salutes/debit";
        const original = signedInit(h, key, "POST", path, {
          body: { user_id: user, amount: 5, reason: "shop.purchase", source: "concurrency-test" },
          idempotencyKey: `empty-${i}`,
        });
        const replay = { ...original, headers: { ...(original.headers as Record<string, string>), "Idempotency-Key": `empty-replay-${i}` } };
        const answers = await Promise.all(
          [original, replay].map((init) => fetch(base + path, init).then(async (r) => `${r.status} ${((await r.json()) as { error?: string }).error}`)),
        );
        return answers.sort();
      }),
    );
    for (const pair of pairs) expect(pair).toEqual(["409 insufficient_balance", "409 replay_detected"]);
  } finally {
    await server.stop(true);
  }
  expect(await ledgerRows(h)).toHaveLength(0);
}, 60_000);
