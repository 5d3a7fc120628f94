// messenger: what Telegram init-data verification and a spin-wheel play cost (issue 18, Speed). Cases run one
// after the other (client and server share the cores):
//   (a) on a herald child: GET /api/public/system-status/policy — an unauthenticated route through the same core
//       (request log, metrics, envelope), the reference for (b); GET /healthz, a probe route the request log
//       skips, for scale;
//   (b) GET /api/messenger/games/catalog with `Authorization: tma <init data>` — verification, the player read and
//       the catalog — and (b') the same route's work without verification, both on ONE comparison server
//       (bench/messenger-unverified-server.ts: the whole app plus an unverified copy of the route), alternately
//       in rounds: b/b' is the cost of verification alone, the issue's target (≥ 0.9); b/a is shown too;
//   (c) on the herald child: POST /api/messenger/games/spin-wheel/play — verification plus a play (ledger row +
//       spin + seed + balances in one transaction), a fresh request_id per request (a wrk Lua
//       script); target ≥ 2,000 plays/s;
//   (d) on PostgreSQL only: the same plays, with the same wrk scripts, on the naive bare server
//       (bench/messenger-postgres-server.ts: Bun.serve + Bun's SQL client, one transaction per play with herald's
//       statements awaited one after another, no verification), over herald's database once herald has stopped —
//       what any implementation reaches on these cores, as the `credit` benchmark's naive bare server.
// The init data is signed here with node:crypto, as Telegram does; it stays valid for 24 h.
// On PostgreSQL (--engine postgres) the herald child and the comparison server each run as --instances processes
// over a database of their own on one cluster, and wrk's load is spread over the instances (bench/engines.ts).
import { createHmac } from "node:crypto";
import { join } from "node:path";
import type { Store } from "../src/db/port";
import { measureOn, openEngine, spreadNote, startHeraldLikes, startHeralds, stopAll } from "./engines";
import { PLAY_STATEMENTS, ROUND_TRIPS_PER_PLAY } from "./messenger-postgres-server";
import {
  combine,
  freePort,
  median,
  heraldLaunch,
  ROOT,
  progress,
  startChild,
  tempDir,
  withRatios,
  type Benchmark,
  type CaseResult,
  type RunningServer,
} from "./support";

const BOT_TOKEN = "7000000042:AAE_bench-token_0123456789abcdefghijk";
const PLAYER = 4242;
const PROBE = "probe GET /healthz (not request-logged)";
const UNAUTH = "unauthenticated GET /api/public/system-status/policy";
const VERIFIED = "init data + GET /api/messenger/games/catalog";
const UNVERIFIED = "same catalog route, no verification";
const PLAY = "init data + POST /api/messenger/games/spin-wheel/play";
const PLAY_MANY = "the same play, 50 players in turn";
const BARE_PLAY = "naive bare server: the play, one player";
const BARE_PLAY_MANY = "naive bare server: the play, 50 players in turn";
/** The many-players case's players (PLAYER is the one-player case's). */
const MANY = Array.from({ length: 50 }, (_, i) => 5000 + i);
/** The last case: the same plays with one player in ten out of spins (every such play refused with 409). */
const OUT_OF_SPINS = MANY.filter((_, i) => i % 10 === 0);
const PLAY_REFUSED = `the same play, ${MANY.length} players, ${OUT_OF_SPINS.length} of them out of spins`;
const TARGET_RATIO = 0.9;
/** The comparison server's unverified copy of the catalog route (bench/messenger-unverified-server.ts). */
const UNVERIFIED_PATH = "/bench/messenger/games/catalog";
const TARGET_PLAYS = 2000;

function initData(player = PLAYER): string {
  const fields: Record<string, string> = {
    auth_date: String(Math.floor(Date.now() / 1000)),
    user: JSON.stringify({ id: player, first_name: "Bench", username: `bench${player}` }),
  };
  const dcs = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join("\n");
  const secret = createHmac("sha256", "WebAppData").update(BOT_TOKEN).digest();
  return new URLSearchParams({ ...fields, hash: createHmac("sha256", secret).update(dcs).digest("hex") }).toString();
}

/**
 * The wrk Lua for a play (after bench/engines.ts's `setup`, which names each thread `tid`): POST with the init data
 * header and a request_id unique per thread and request; with several players' init data, each request is the next
 * player's in turn.
 */
function playScript(inits: string[]): string {
  return `
local inits = { ${inits.map((i) => JSON.stringify(`tma ${i}`)).join(", ")} }
local counter = 0
local thread_id = 0
function init(args) thread_id = tid or 0 end
function request()
  counter = counter + 1
  local body = '{"request_id":"bench-' .. thread_id .. '-' .. os.time() .. '-' .. counter .. '"}'
  return wrk.format("POST", "/api/messenger/games/spin-wheel/play", { ["Content-Type"] = "application/json", ["Authorization"] = inits[(counter % #inits) + 1] }, body)
end
`;
}

/** One play of PLAYER's on `server` (the init data valid); its answer, or an error with the server's. */
async function playOnce(server: RunningServer, requestId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.baseUrl}/api/messenger/games/spin-wheel/play`, {
    method: "POST",
    headers: { authorization: `tma ${initData()}`, "content-type": "application/json" },
    body: JSON.stringify({ request_id: requestId }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${server.name}'s play answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A play answer's keys, nested ones included (spin, its fairness and reward, balances), sorted: what must agree. */
function playShape(answer: unknown, prefix = ""): string {
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) return "";
  return Object.entries(answer)
    .map(([k, v]) => [`${prefix}${k}`, playShape(v, `${prefix}${k}.`)].filter(Boolean).join(","))
    .sort()
    .join(",");
}

/** Gives every bench player spins enough for the whole run, through the storage port (the servers are idle then). */
async function grantSpins(store: Store, spins: number): Promise<void> {
  await store.run("UPDATE messenger_players SET free_spin_balance = ?", [spins]);
}

/** Takes the players' spins away, the daily free one included (used just now): each of their plays is refused. */
async function takeSpins(store: Store, players: readonly number[]): Promise<void> {
  await store.run(
    `UPDATE messenger_players SET free_spin_balance = 0, last_free_spin_at = ? WHERE telegram_user_id IN (${players.map(() => "?").join(", ")})`,
    [new Date().toISOString(), ...players],
  );
}

const messenger: Benchmark = {
  name: "messenger",
  description: "Telegram init-data verification vs an unauthenticated route, and init data + a spin-wheel play",
  async run(opts) {
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [
      `herald ran from ${launch.mode}`,
      "one player: every play serialises on one balance row (the worst case for contention; on SQLite also on its one writer); 50 players: each request the next player's in turn",
    ];
    if (launch.warning) notes.push(launch.warning);
    const errors: string[] = [];
    const dir = tempDir("messenger");
    const engine = await openEngine(opts);
    let servers: RunningServer[] = [];
    let unverified: RunningServer[] = [];
    let bare: RunningServer | null = null;
    const results: CaseResult[] = [];
    const rounds = opts.rounds ?? 1;
    const verifiedRuns: CaseResult[] = [];
    const unverifiedRuns: CaseResult[] = [];
    if (rounds > 1)
      notes.push(
        `${rounds} rounds of verified then unverified (each after its warmup); the table shows medians, the ratio is the median of the per-round ratios`,
      );
    try {
      const heraldDb = await engine.database(join(dir.path, "herald"));
      const unverifiedDb = await engine.database(join(dir.path, "unverified"));
      await Bun.write(join(heraldDb.dir, ".keep"), "");
      await Bun.write(join(unverifiedDb.dir, ".keep"), "");
      // The messenger abuse limits off, as the public one: one player at full load would otherwise measure 429s.
      const limitsOff = { MESSENGER_RATE_LIMIT_PLAYER_PER_MIN: "0", MESSENGER_RATE_LIMIT_IP_PER_MIN: "0" };
      progress(`starting ${engine.instances} herald instance(s) from ${launch.mode} on ${engine.kind}`);
      servers = await startHeralds(heraldDb, launch, engine.instances, { MESSENGER_BOT_TOKEN: BOT_TOKEN, RATE_LIMIT_PUBLIC_API_PER_MIN: "0", ...limitsOff });
      const headers = () => ({ authorization: `tma ${initData()}` });
      // The first verified request makes the player (on one instance; the others then find it).
      let verifiedBody = "";
      for (const server of servers) {
        const probe = await fetch(`${server.baseUrl}/api/messenger/games/catalog`, { headers: headers() });
        if (probe.status !== 200) throw new Error(`the verified probe answered ${probe.status}: ${(await probe.text()).slice(0, 200)}`);
        const body = await probe.text();
        verifiedBody ||= body;
      }
      for (const player of MANY) {
        const made = await fetch(`${servers[0]!.baseUrl}/api/messenger/games/catalog`, { headers: { authorization: `tma ${initData(player)}` } });
        if (made.status !== 200) throw new Error(`making bench player ${player} answered ${made.status}`);
        await made.arrayBuffer();
      }
      await grantSpins(await heraldDb.store(), 1_000_000_000);
      await heraldDb.close();
      results.push(await measureOn(PROBE, servers, "/healthz", opts));
      results.push(await measureOn(UNAUTH, servers, "/api/public/system-status/policy", opts));
      progress("starting the comparison server (bench/messenger-unverified-server.ts: herald plus one unverified route)");
      unverified = await startHeraldLikes(
        "unverified",
        join(ROOT, "bench", "messenger-unverified-server.ts"),
        unverifiedDb,
        UNVERIFIED_PATH,
        engine.instances,
        {
          MESSENGER_BOT_TOKEN: BOT_TOKEN,
          BENCH_PLAYER_ID: String(PLAYER),
          RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
          ...limitsOff,
        },
      );
      const same = await (await fetch(`${unverified[0]!.baseUrl}${UNVERIFIED_PATH}`)).text();
      const shape = (t: string) => JSON.stringify(Object.keys(JSON.parse(t)).sort());
      if (shape(same) !== shape(verifiedBody))
        errors.push("the unverified route's catalog differs in shape from herald's: the two cases do not do the same work");
      // Both cases on the comparison server, alternately, round after round: the same process, database, request
      // log and jobs, so the difference between them is the verification alone.
      for (let round = 1; round <= rounds; round++) {
        if (rounds > 1) progress(`round ${round} of ${rounds}`);
        verifiedRuns.push(await measureOn(VERIFIED, unverified, "/api/messenger/games/catalog", opts, headers));
        unverifiedRuns.push(await measureOn(UNVERIFIED, unverified, UNVERIFIED_PATH, opts, headers));
      }
      results.push(combine(VERIFIED, verifiedRuns), combine(UNVERIFIED, unverifiedRuns));
      notes.push(...(await stopAll(unverified, "comparison server")));
      unverified = [];
      results.push(await measureOn(PLAY, servers, "/api/messenger/games/spin-wheel/play", opts, undefined, playScript([initData()])));
      results.push(await measureOn(PLAY_MANY, servers, "/api/messenger/games/spin-wheel/play", opts, undefined, playScript(MANY.map((p) => initData(p)))));
      for (const r of results) if (r.non_2xx > 0) errors.push(`${r.case}: ${r.non_2xx} answers were not 2xx`);
      // Refusals among the plays: on PostgreSQL a refused play rolls back the batch it ran in (together, or one
      // player's in a row) and runs it again one body at a time; its player is then kept apart (docs/postgres.md "Speed").
      await takeSpins(await heraldDb.store(), OUT_OF_SPINS);
      await heraldDb.close();
      const refused = await measureOn(PLAY_REFUSED, servers, "/api/messenger/games/spin-wheel/play", opts, undefined, playScript(MANY.map((p) => initData(p))));
      results.push(refused);
      // Spins again for everyone: the naive bare server's plays below (PostgreSQL) use the same players and database.
      await grantSpins(await heraldDb.store(), 1_000_000_000);
      await heraldDb.close();
      const share = refused.requests > 0 ? refused.non_2xx / refused.requests : 0;
      const expected = OUT_OF_SPINS.length / MANY.length;
      if (Math.abs(share - expected) > expected / 2)
        errors.push(`${PLAY_REFUSED}: ${(share * 100).toFixed(1)} % of the answers were refusals, not ~${(expected * 100).toFixed(0)} %`);
      // One play of herald's own, on PostgreSQL: the naive bare server's answer is checked against its shape.
      const heraldPlay = engine.kind === "postgres" ? await playOnce(servers[0]!, "bench-herald-shape") : null;
      notes.push(...(await stopAll(servers)));
      servers = [];
      const counts = async () => {
        const store = await heraldDb.store();
        const spins = (await store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_spins"))!.n;
        const ledger = (await store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_ledger"))!.n;
        await heraldDb.close();
        return { spins, ledger };
      };
      const herald = await counts();
      notes.push(`${herald.spins} spins and ${herald.ledger} ledger rows committed (warmup included)`);
      if (engine.kind === "postgres") {
        // The naive bare server over herald's own database, herald stopped: its players, their pairs and their spins in
        // hand are the ones herald's plays left.
        const pool = (engine.poolMax ?? 10) * engine.instances;
        const port = await freePort();
        progress(`starting the naive bare server (bench/messenger-postgres-server.ts) over herald's database, ${pool} connections`);
        bare = await startChild(
          "bare-server",
          [
            process.execPath,
            join(ROOT, "bench", "messenger-postgres-server.ts"),
            "--url",
            heraldDb.serviceUrl!,
            "--port",
            String(port),
            "--pool",
            String(pool),
          ],
          { PATH: process.env.PATH ?? "/usr/bin:/bin" },
          "/",
          join(dir.path, "bare-server.log"),
          port,
        );
        // One play first, to fail with the bare server's own message rather than a count of non-2xx, and to see that
        // it answers what herald answers.
        const barePlayed = await playOnce(bare, "bench-bare-probe");
        if (heraldPlay && playShape(barePlayed) !== playShape(heraldPlay))
          errors.push(`the naive bare server's play answer differs in shape from herald's: ${playShape(barePlayed)} vs ${playShape(heraldPlay)}`);
        const bareResults = [
          await measureOn(BARE_PLAY, [bare], "/api/messenger/games/spin-wheel/play", opts, undefined, playScript([initData()])),
          await measureOn(BARE_PLAY_MANY, [bare], "/api/messenger/games/spin-wheel/play", opts, undefined, playScript(MANY.map((p) => initData(p)))),
        ];
        notes.push(...(await stopAll([bare], "naive bare server")));
        bare = null;
        for (const r of bareResults) if (r.non_2xx > 0) errors.push(`${r.case}: ${r.non_2xx} answers were not 2xx`);
        results.push(...bareResults);
        const after = await counts();
        const plays = bareResults.reduce((n, r) => n + r.requests, 0);
        notes.push(
          `naive bare server (bench/messenger-postgres-server.ts: Bun.serve + Bun's SQL client over ${pool} connections, herald's pools together): per play ONE transaction — BEGIN, ${PLAY_STATEMENTS.length} statements (player lock, ledger claim, nonce, spin, mission progress, balances, ledger completion; +1 when the daily free spin is due, +2 when the player has no pair) each awaited before the next, COMMIT: ${ROUND_TRIPS_PER_PLAY} round trips, one commit per play; init data not verified, no hourly play counter, no request log`,
          `naive bare server committed ${after.spins - herald.spins} spins and ${after.ledger - herald.ledger} ledger rows (warmup included; wrk counted ${plays} measured answers)`,
        );
        const heraldPlays = [PLAY, PLAY_MANY].map((name) => results.find((r) => r.case === name));
        const cpu = (r: CaseResult | undefined) =>
          r?.server_cpu_us_per_request == null
            ? "n/a"
            : `${r.server_cpu_us_per_request} µs${r.database_cpu_us_per_request == null ? "" : ` (PostgreSQL's ${r.database_cpu_us_per_request} µs)`}`;
        notes.push(
          `server CPU per play (the server process(es) and PostgreSQL's, warmup excluded): one player herald ${cpu(heraldPlays[0])}, naive bare server ${cpu(bareResults[0])}; ${MANY.length} players herald ${cpu(heraldPlays[1])}, naive bare server ${cpu(bareResults[1])}`,
        );
        // The ceiling of the cores: PostgreSQL's CPU for a play, on the cores every process here shares. No server in
        // front of this database passes cores ÷ that, even one that costs nothing itself.
        const cores = navigator.hardwareConcurrency;
        const ceiling = (r: CaseResult | undefined) =>
          r?.database_cpu_us_per_request ? Math.round((cores * 1_000_000) / r.database_cpu_us_per_request).toLocaleString("en-US") : "n/a";
        notes.push(
          `PostgreSQL's CPU alone caps plays at ${cores} cores ÷ its CPU per play: one player ${ceiling(heraldPlays[0])}/s with herald's statements (${ceiling(bareResults[0])}/s with the bare server's), ${MANY.length} players ${ceiling(heraldPlays[1])}/s (${ceiling(bareResults[1])}/s) — before any CPU of the server in front of it or the load generator`,
        );
      }
    } finally {
      await bare?.stop();
      await stopAll(unverified);
      await stopAll(servers);
      await engine.close();
      dir.remove();
    }
    const withRatio = withRatios(results, UNAUTH);
    const verified = withRatio.find((r) => r.case.startsWith(VERIFIED));
    const pairs = verifiedRuns.map((v, i) => ({ v, u: unverifiedRuns[i]! })).filter((p) => p.u && p.u.requests_per_sec > 0);
    const alone = pairs.length ? Number(median(pairs.map((p) => p.v.requests_per_sec / p.u.requests_per_sec)).toFixed(3)) : null;
    const cpuPairs = pairs.filter((p) => p.v.server_cpu_us_per_request && p.u.server_cpu_us_per_request);
    const aloneByCpu = cpuPairs.length ? Number(median(cpuPairs.map((p) => p.u.server_cpu_us_per_request! / p.v.server_cpu_us_per_request!)).toFixed(3)) : null;
    if (pairs.length > 1)
      notes.push(`verified / unverified per round: ${pairs.map((p) => (p.v.requests_per_sec / p.u.requests_per_sec).toFixed(3)).join(", ")}`);
    if (cpuPairs.length)
      notes.push(
        `server CPU per request: verified ${median(cpuPairs.map((p) => p.v.server_cpu_us_per_request!)).toFixed(1)} µs, unverified ${median(cpuPairs.map((p) => p.u.server_cpu_us_per_request!)).toFixed(1)} µs → unverified ÷ verified CPU = ${aloneByCpu} (less sensitive than req/s to other work on the cores)`,
      );
    const play = withRatio.find((r) => r.case === PLAY);
    const playMany = withRatio.find((r) => r.case === PLAY_MANY);
    const playRefused = withRatio.find((r) => r.case === PLAY_REFUSED);
    const barePlay = withRatio.find((r) => r.case === BARE_PLAY);
    const barePlayMany = withRatio.find((r) => r.case === BARE_PLAY_MANY);
    const vsBare = (h: CaseResult | undefined, b: CaseResult | undefined) =>
      h && b && b.requests_per_sec > 0 ? Number((h.requests_per_sec / b.requests_per_sec).toFixed(3)) : null;
    const playsVsBare = vsBare(play, barePlay);
    const playsManyVsBare = vsBare(playMany, barePlayMany);
    const summary = [
      `verified / same route unverified = ${alone ?? "n/a"} (verification alone, req/s; target ≥ ${TARGET_RATIO}); by server CPU per request: ${aloneByCpu ?? "n/a"}`,
      `verified / unauthenticated policy route = ${verified?.ratio_vs_baseline ?? "n/a"}`,
      `plays/s = ${play ? Math.round(play.requests_per_sec) : "n/a"} one player (target ≥ ${TARGET_PLAYS}), ${playMany ? Math.round(playMany.requests_per_sec) : "n/a"} for ${MANY.length} players in turn`,
    ];
    if (playRefused && playMany)
      summary.push(
        `with ${OUT_OF_SPINS.length} of the ${MANY.length} players out of spins: ${Math.round(playRefused.requests_per_sec)} answers/s (${playRefused.non_2xx} refused, 409), ${(playRefused.requests_per_sec / playMany.requests_per_sec).toFixed(2)}× the plays/s without refusals`,
      );
    if (barePlay || barePlayMany)
      summary.push(
        `herald ÷ naive bare server: one player ${playsVsBare?.toFixed(2) ?? "n/a"}×, ${MANY.length} players ${playsManyVsBare?.toFixed(2) ?? "n/a"}× (bare ${barePlay ? Math.round(barePlay.requests_per_sec) : "n/a"} and ${barePlayMany ? Math.round(barePlayMany.requests_per_sec) : "n/a"} plays/s)`,
      );
    return {
      benchmark: "messenger",
      description: messenger.description,
      topology: engine.topology(
        `herald and the comparison server each over a database of their own, ${engine.instances === 1 ? "one process each" : `${engine.instances} processes each`}; ${spreadNote(engine.instances, opts)}`,
      ),
      results: withRatio,
      notes,
      summary,
      ratios: {
        verified_vs_unverified: alone,
        verified_vs_unverified_by_cpu: aloneByCpu,
        verified_vs_unauthenticated: verified?.ratio_vs_baseline ?? null,
        plays_per_sec: play ? Math.round(play.requests_per_sec) : null,
        plays_per_sec_many_players: playMany ? Math.round(playMany.requests_per_sec) : null,
        answers_per_sec_some_refused: playRefused ? Math.round(playRefused.requests_per_sec) : null,
        plays_vs_naive_bare: playsVsBare,
        plays_many_vs_naive_bare: playsManyVsBare,
      },
      errors,
    };
  },
};

export default messenger;
