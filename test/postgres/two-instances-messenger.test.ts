// The proof of issue 28 for the mini-app: two `herald serve` processes on ONE PostgreSQL behind one address (a
// round-robin proxy that, like a load balancer, sends a request the other way when an instance does not answer),
// a fake Telegram Bot API, and players doing what players do. Promo claims, operator grants, purchases, wheel
// plays and grid reveals go through the shared address; one in eight is sent to BOTH instances at the same moment
// with the same request_id; every bot update is delivered to both; instance B is SIGKILLed midway and restarted.
// Afterwards, in SQL: every player's balances = Σ its ledger and never negative, one ledger row per request_id,
// each grid cell revealed once, promo caps held, each bot update handled once and each reply sent once, the daily
// aggregates folded from every ledger row exactly once, and no two runs of a singleton job in one period. Never a 500.
import { afterAll, expect, test } from "bun:test";
import { PostgresStore } from "../../src/db/postgres-engine";
import { withDatabase } from "../support/engine";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { freePort, spawnHerald, waitForHttp } from "../support/process";
import { BOT_TOKEN, signInitData, startFakeBotApi, textUpdate, WEBHOOK_SECRET } from "../messenger/support";

const pg = postgresPresent("test/postgres/two-instances-messenger.test.ts");
const PLAYERS = 24;
const OPS_PER_PLAYER = 30;
const UPDATES = 60;
const IN_FLIGHT = 16;
const ADMIN = "hat_proof_messenger_admin_0123456789abcdefghijkl";
const MASTER_KEY = "cd".repeat(32);
/** A promo whose cap is below the number of players: exactly this many claims may win, across both instances. */
const SCARCE_CLAIMS = 5;

let cluster: TestCluster | undefined;
const children: Array<{ kill(signal?: number | NodeJS.Signals): void }> = [];
const closers: Array<() => void> = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  for (const c of closers) c();
  cluster?.stop();
});

interface Instance {
  name: "A" | "B";
  url: string;
  proc: ReturnType<typeof spawnHerald>;
}

async function startInstance(name: "A" | "B", env: Record<string, string>): Promise<Instance> {
  const port = freePort();
  const proc = spawnHerald(["serve"], { ...env, PORT: String(port), HERALD_INSTANCE_ID: name });
  children.push(proc);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, 30_000);
  return { name, url, proc };
}

/**
 * One address in front of both instances: round robin, and a request that gets no answer from one (it died, or
 * is not back yet) is sent to the other, as a load balancer with passive health checks does. Request bodies are
 * read once and replayed, so the retry is the same request.
 */
function proxy(instances: { a: Instance; b: Instance | null }) {
  let turn = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const url = new URL(req.url);
      const body = req.method === "GET" ? undefined : await req.arrayBuffer();
      const order = [instances.a, instances.b].filter((i): i is Instance => i !== null);
      if (turn++ % 2 === 1) order.reverse();
      for (const target of order) {
        try {
          const res = await fetch(`${target.url}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body });
          // fetch decoded a compressed body: pass it on decoded, without the encoding and length it no longer has.
          const headers = new Headers(res.headers);
          headers.delete("content-encoding");
          headers.delete("content-length");
          return new Response(await res.arrayBuffer(), { status: res.status, headers });
        } catch {
          // This instance did not answer: the next one gets the same request.
        }
      }
      return new Response("no instance answered", { status: 502 });
    },
  });
  closers.push(() => server.stop(true));
  return `http://127.0.0.1:${server.port}`;
}

const initData = (id: number) =>
  signInitData({ auth_date: String(Math.floor(Date.now() / 1000)), query_id: `AAH${id}`, user: JSON.stringify({ id, first_name: `P${id}` }) });

interface Answer {
  status: number;
  body: Record<string, any>;
}

async function post(base: string, path: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  try {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return { status: res.status, body: text.startsWith("{") ? (JSON.parse(text) as Record<string, any>) : { error: text.slice(0, 80) } };
  } catch (err) {
    return { status: 0, body: { error: `connection: ${(err as Error).message}` } };
  }
}

/** The refusals the game rules give; anything else (a lost race, an instance gone) is retried with the same request_id. */
const RULE_REFUSALS = new Set(["game_cooldown", "game_balance_insufficient", "game_state_conflict", "promo_exhausted", "promo_already_claimed"]);

test.skipIf(!pg)(
  "two instances behind one address: mini-app balances never overspent, each request, update and reply once, singleton jobs once per period",
  async () => {
    cluster = await startCluster();
    const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
    await admin.run("CREATE DATABASE proof_messenger");
    await admin.close();
    const dbUrl = withDatabase(cluster.url, "proof_messenger");
    const db = new PostgresStore({ url: dbUrl, poolMax: 2 });
    const botApi = startFakeBotApi();
    closers.push(() => botApi.stop());
    const env = {
      DATABASE_URL: dbUrl,
      HOST: "127.0.0.1",
      LOG_LEVEL: "error",
      NODE_ENV: "development",
      BOOTSTRAP_CREDENTIALS: "0",
      ADMIN_TOKEN: ADMIN,
      HERALD_MASTER_KEY: MASTER_KEY,
      MESSENGER_BOT_TOKEN: BOT_TOKEN,
      MESSENGER_WEBHOOK_SECRET: WEBHOOK_SECRET,
      MESSENGER_BOT_API_BASE: botApi.url,
      MESSENGER_RATE_LIMIT_PLAYER_PER_MIN: "0",
      MESSENGER_RATE_LIMIT_IP_PER_MIN: "0",
      DATABASE_POOL_MAX: "6",
      // Singleton jobs ticking every 2 s (the stats fold already does), so "once per period" shows within the test.
      JOB_SCHEDULES: "auth-prune=*/2 * * * * *",
    };
    const a = await startInstance("A", env);
    const instances: { a: Instance; b: Instance | null } = { a, b: await startInstance("B", env) };
    const shared = proxy(instances);
    const statuses = new Map<number, number>();
    const seen = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
    const bearer = { authorization: `Bearer ${ADMIN}` };

    // Two promos: one every player may claim, one with fewer claims than players.
    for (const promo of [
      { code: "PROOFPOINTS", reward: { points: 400 }, max_claims: PLAYERS },
      { code: "SCARCE", reward: { points: 7 }, max_claims: SCARCE_CLAIMS },
    ]) {
      const r = await post(shared, "/api/messenger/admin/games/promos", promo, bearer);
      expect([r.status, r.body.error]).toEqual([200, undefined]);
    }

    /** One player's request: retried with the SAME request_id until it has a final answer (200 or a rule's refusal). */
    const final = new Map<string, { status: number; error?: string; ledger?: number; path: string; player: number }>();
    let retries = 0;
    async function settle(player: number, path: string, body: Record<string, unknown>, doubled: boolean) {
      const requestId = String(body.request_id);
      for (let attempt = 0; attempt < 100; attempt++) {
        const auth = { authorization: `tma ${initData(player)}` };
        const answers =
          doubled && attempt === 0 && instances.b
            ? await Promise.all([instances.a.url, instances.b.url].map((u) => post(u, path, body, auth)))
            : [await post(shared, path, body, auth)];
        for (const r of answers) seen(r.status);
        const done = answers.find((r) => r.status === 200) ?? answers.find((r) => r.status !== 200 && RULE_REFUSALS.has(String(r.body.error)));
        if (done) {
          final.set(requestId, { status: done.status, error: done.body.error, ledger: done.body.ledger_entry_id, path, player });
          return;
        }
        retries++;
        await Bun.sleep(attempt < 3 ? 20 : 200);
      }
      throw new Error(`${path} ${requestId} never got a final answer`);
    }

    // Each player: the points promo (claimed twice, once on each instance), the scarce promo, an operator's missile
    // grant (the same request id posted to both instances), then a mix of purchases, spins and grid reveals.
    const players = Array.from({ length: PLAYERS }, (_, i) => 9_100_000 + i);
    const work: Array<() => Promise<void>> = [];
    for (const [n, p] of players.entries()) {
      work.push(async () => {
        await settle(p, "/api/messenger/games/promos/claim", { request_id: `claim-${p}-a`, code: "PROOFPOINTS" }, true);
        await settle(p, "/api/messenger/games/promos/claim", { request_id: `claim-${p}-b`, code: "PROOFPOINTS" }, false);
        await settle(p, "/api/messenger/games/promos/claim", { request_id: `claim-${p}-s`, code: "SCARCE" }, n % 2 === 0);
        const grant = { telegram_user_id: p, missiles: 6, reason: "proof", request_id: `grant-${p}` };
        const granted = await Promise.all(
          [instances.a.url, (instances.b ?? instances.a).url].map((u) => post(u, "/api/messenger/admin/games/recon-grid/manual-grant", grant, bearer)),
        );
        for (const g of granted) seen(g.status);
        expect(granted.some((g) => g.status === 200)).toBe(true);
        for (let k = 0; k < OPS_PER_PLAYER; k++) {
          const id = `op-${p}-${k}`;
          const doubled = k % 8 === 3;
          const auth = { authorization: `tma ${initData(p)}` };
          if (k % 10 === 0) {
            // A grid: publish the commitment, start on it, then reveals follow.
            const st = await post(shared, "/api/messenger/games/recon-grid/status", {}, auth);
            seen(st.status);
            const started = await post(shared, "/api/messenger/games/recon-grid/start", { abandon_active: true }, auth);
            seen(started.status);
            continue;
          }
          if (k % 5 === 1) await settle(p, "/api/messenger/games/items/purchase", { request_id: id, item_key: "spin_play", quantity: 1 }, doubled);
          else if (k % 5 === 2 || k % 5 === 4) await settle(p, "/api/messenger/games/spin-wheel/play", { request_id: id }, doubled);
          else {
            const grid = (await db.get<{ id: number }>("SELECT id FROM messenger_grids WHERE telegram_user_id = ? AND status = 'active' ORDER BY id DESC", [p]))
              ?.id;
            if (grid) await settle(p, "/api/messenger/games/recon-grid/reveal", { request_id: id, grid_id: grid, cell: (k * 7) % 25 }, doubled);
          }
        }
      });
    }

    // Bot updates, each delivered to both instances at the same moment (Telegram's retry racing the first delivery).
    const updateAnswers: Array<{ id: number; answers: Answer[] }> = [];
    for (let u = 0; u < UPDATES; u++) {
      work.push(async () => {
        const update = textUpdate(u % 2 ? "/help" : "/start", { id: 9_200_000 + (u % 20), first_name: "Bo", username: `bo${u % 20}` }, 5_000_000 + u);
        const init = { "x-telegram-bot-api-secret-token": WEBHOOK_SECRET };
        const answers = await Promise.all(
          [instances.a.url, (instances.b ?? instances.a).url].map((base) => post(base, "/api/messenger/webhook", update, init)),
        );
        // A delivery that got no answer (its instance died) is delivered again, as Telegram retries until a 200.
        for (
          let retry = 0;
          retry < 50 && answers.some((r) => r.status !== 200) && !answers.some((r) => r.status === 200 && r.body.duplicate === false);
          retry++
        ) {
          answers.push(await post(shared, "/api/messenger/webhook", update, init));
          if (answers.at(-1)!.status !== 200) await Bun.sleep(100);
        }
        for (const r of answers) seen(r.status);
        updateAnswers.push({ id: update.update_id, answers });
      });
    }

    // The load, with B killed once half of it is done and started again a few seconds later.
    let next = 0;
    let killed = false;
    let killedAt = "";
    const worker = async () => {
      for (let i = next++; i < work.length; i = next++) {
        if (!killed && i >= work.length / 2 && instances.b) {
          killed = true;
          const dying = instances.b;
          instances.b = null;
          killedAt = new Date().toISOString();
          dying.proc.kill("SIGKILL");
          await dying.proc.exited;
          setTimeout(async () => {
            instances.b = await startInstance("B", env);
          }, 3_000);
        }
        await work[i]!();
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    for (let i = 0; i < 300 && !instances.b; i++) await Bun.sleep(100);
    expect(instances.b).not.toBeNull();

    // 1. Never a 500 (a dead instance is no answer, retried; the proxy's 502 would be a failure too).
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);

    // 2. Every player's balances are the running sum of the ledger, never negative, and equal to the player row.
    for (const p of players) {
      const rows = await db.all<Record<string, number>>(
        `SELECT free_spin_delta AS fd, missile_delta AS md, points_delta AS pd, free_spin_after AS fa, missile_after AS ma, points_after AS pa
         FROM messenger_ledger WHERE telegram_user_id = ? ORDER BY id`,
        [p],
      );
      let [f, m, pts] = [0, 0, 0];
      for (const r of rows) {
        [f, m, pts] = [f + r.fd!, m + r.md!, pts + r.pd!];
        expect({ p, after: [r.fa, r.ma, r.pa] }).toEqual({ p, after: [f, m, pts] });
        expect(f >= 0 && m >= 0 && pts >= 0).toBe(true);
      }
      const row = await db.get("SELECT free_spin_balance AS f, missile_balance AS m, points_balance AS p FROM messenger_players WHERE telegram_user_id = ?", [
        p,
      ]);
      expect({ p, row }).toEqual({ p, row: { f, m, p: pts } });
    }

    // 3. One ledger row per request_id, and it is the one the player was answered with.
    const ledger = await db.all<{ id: number; telegram_user_id: number; request_id: string; action: string }>(
      "SELECT id, telegram_user_id, request_id, action FROM messenger_ledger",
    );
    const byRequest = new Map(ledger.map((r) => [`${r.telegram_user_id}/${r.request_id}`, r.id]));
    expect(byRequest.size).toBe(ledger.length);
    const accepted = [...final.entries()].filter(([, o]) => o.status === 200 && o.ledger !== undefined);
    for (const [requestId, o] of accepted) expect({ requestId, id: byRequest.get(`${o.player}/${requestId}`) }).toEqual({ requestId, id: o.ledger });
    expect(accepted.length).toBeGreaterThan(PLAYERS * 8);
    // Refused requests wrote nothing.
    for (const [requestId, o] of final) if (o.status !== 200) expect(byRequest.has(`${o.player}/${requestId}`)).toBe(false);

    // 4. Each grid cell revealed at most once, and each revealed cell paid for by exactly one reveal row.
    const grids = await db.all<{ id: number; revealed: string }>("SELECT id, revealed FROM messenger_grids");
    const revealRows = await db.all<{ result: string }>("SELECT result FROM messenger_ledger WHERE action = 'recon_grid.reveal'");
    const revealsOf = new Map<number, number[]>();
    for (const r of revealRows) {
      const { cell, grid } = JSON.parse(r.result) as { cell: number; grid: { grid_id: number } };
      revealsOf.set(grid.grid_id, [...(revealsOf.get(grid.grid_id) ?? []), cell]);
    }
    for (const g of grids) {
      const cells = (JSON.parse(g.revealed) as number[]).sort((x, y) => x - y);
      expect(new Set(cells).size).toBe(cells.length);
      expect({ grid: g.id, paid: (revealsOf.get(g.id) ?? []).sort((x, y) => x - y) }).toEqual({ grid: g.id, paid: cells });
    }

    // 5. Promo caps across instances: every player got the points promo once; the scarce one exactly its cap.
    expect(await db.all("SELECT code, claims FROM messenger_promos ORDER BY code")).toEqual([
      { code: "PROOFPOINTS", claims: PLAYERS },
      { code: "SCARCE", claims: SCARCE_CLAIMS },
    ]);

    // 6. Each bot update handled once (one of its two deliveries says duplicate), its replies sent once each.
    expect(updateAnswers).toHaveLength(UPDATES);
    for (const { id, answers } of updateAnswers) {
      expect(answers.some((r) => r.status === 200)).toBe(true);
      // Handled by at most one delivery; none when the instance that handled it died before answering (then
      // every later delivery is a duplicate, and the update's row below shows it was handled).
      const handled = answers.filter((r) => r.status === 200 && r.body.duplicate === false);
      expect({ id, handled: handled.length <= 1 }).toEqual({ id, handled: true });
    }
    expect((await db.get<{ n: number }>("SELECT count(DISTINCT update_id) AS n FROM messenger_updates WHERE update_id >= 5000000"))!.n).toBe(UPDATES);
    // A reply B had leased when it was killed comes back when its lease passes (60 s, src/messenger/bot/outbox.ts)
    // and is sent by A then: wait past that, bounded.
    for (let i = 0; i < 900; i++) {
      const open = await db.get<{ n: number }>("SELECT count(*) AS n FROM messenger_bot_outbox WHERE status NOT IN ('sent', 'dead')");
      if (open!.n === 0) break;
      await Bun.sleep(100);
    }
    const outbox = await db.all<{ status: string; n: number }>("SELECT status, count(*) AS n FROM messenger_bot_outbox GROUP BY status");
    const queued = outbox.reduce((s, r) => s + r.n, 0);
    expect(outbox).toEqual([{ status: "sent", n: queued }]);
    // A reply whose sender was killed after Telegram answered may be sent again (at-least-once); nothing more.
    expect(botApi.calls.length).toBeGreaterThanOrEqual(queued);
    expect(botApi.calls.length - queued).toBeLessThanOrEqual(2);

    // 7. The stats fold (a singleton) counted every ledger row exactly once.
    for (let i = 0; i < 100; i++) {
      if ((await db.get<{ n: number }>("SELECT count(*) AS n FROM messenger_ledger WHERE folded = 0"))!.n === 0) break;
      await Bun.sleep(200);
    }
    const folded = await db.all(
      "SELECT day, action, game_key, entries, free_spins_granted, free_spins_spent, points_granted FROM messenger_daily_stats ORDER BY day, action, game_key",
    );
    const expected = await db.all(
      `SELECT substr(created_at, 1, 10) AS day, action, coalesce(game_key, '') AS game_key, count(*) AS entries,
         sum(CASE WHEN free_spin_delta > 0 THEN free_spin_delta ELSE 0 END) AS free_spins_granted,
         sum(CASE WHEN free_spin_delta < 0 THEN -free_spin_delta ELSE 0 END) AS free_spins_spent,
         sum(CASE WHEN points_delta > 0 THEN points_delta ELSE 0 END) AS points_granted
       FROM messenger_ledger GROUP BY substr(created_at, 1, 10), action, coalesce(game_key, '')
       ORDER BY substr(created_at, 1, 10), action, coalesce(game_key, '')`,
    );
    expect(folded).toEqual(expected);

    // 8. Singleton jobs, whichever instance ran them: runs never overlap; no two start together (two instances
    // firing on one tick start within milliseconds of each other — ticks are 2 s apart); and there are no more runs
    // than periods (were both instances running each tick, there would be about twice as many).
    for (let i = 0; i < 100; i++) {
      if ((await db.get<{ n: number }>("SELECT count(*) AS n FROM job_runs WHERE name = 'auth-prune'"))!.n >= 6) break;
      await Bun.sleep(200);
    }
    for (const job of ["auth-prune", "messenger-stats-fold"]) {
      const runs = await db.all<{ instance_id: string; started_at: string; finished_at: string | null }>(
        "SELECT instance_id, started_at, finished_at FROM job_runs WHERE name = ? ORDER BY started_at, id",
        [job],
      );
      expect({ job, runs: runs.length >= (job === "auth-prune" ? 6 : 1) }).toEqual({ job, runs: true });
      // A run B was in when it was SIGKILLed stays unfinished until A takes the job's lease over and ends it as
      // interrupted (src/jobs/store.ts closeAbandonedRuns): at most one, B's, started before the kill. Every other run but the last (which may be running now) finished before the next
      // began.
      const cutShort = runs.slice(0, -1).filter((r) => r.finished_at === null);
      expect({ job, cutShort: cutShort.every((r) => r.instance_id === "B" && r.started_at <= killedAt) && cutShort.length <= 1 }).toEqual({
        job,
        cutShort: true,
      });
      for (let i = 1; i < runs.length; i++) {
        const [prev, run] = [runs[i - 1]!, runs[i]!];
        if (prev.finished_at === null) continue;
        expect({ job, overlap: prev.finished_at > run.started_at }).toEqual({ job, overlap: false });
        expect({ job, together: Date.parse(run.started_at) - Date.parse(prev.started_at) < 250 }).toEqual({ job, together: false });
      }
      const spanMs = Date.parse(runs.at(-1)!.started_at) - Date.parse(runs[0]!.started_at);
      expect({ job, tooMany: runs.length > Math.floor(spanMs / 2000) + 2 }).toEqual({ job, tooMany: false });
    }

    console.log(
      `messenger on two instances: ${PLAYERS} players, ${final.size} requests (${accepted.length} accepted), ${retries} retries, ` +
        `statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${UPDATES} updates, ${queued} replies, ${botApi.calls.length} Bot API calls`,
    );
    await db.close();
  },
  300_000,
);
