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
//       script); target ≥ 2,000 plays/s.
// The init data is signed here with node:crypto, as Telegram does; it stays valid for 24 h.
// On PostgreSQL (--engine postgres) the herald child and the comparison server each run as --instances processes
// over a database of their own on one cluster, and wrk's load is spread over the instances (bench/engines.ts).
import { createHmac } from "node:crypto";
import { join } from "node:path";
import type { Store } from "../src/db/port";
import { measureOn, openEngine, spreadNote, startHeraldLikes, startHeralds, stopAll } from "./engines";
import { combine, median, heraldLaunch, ROOT, progress, tempDir, withRatios, type Benchmark, type CaseResult, type RunningServer } from "./support";

const BOT_TOKEN = "7000000042:AAE_bench-token_0123456789abcdefghijk";
const PLAYER = 4242;
const PROBE = "probe GET /healthz (not request-logged)";
const UNAUTH = "unauthenticated GET /api/public/system-status/policy";
const VERIFIED = "init data + GET /api/messenger/games/catalog";
const UNVERIFIED = "same catalog route, no verification";
const PLAY = "init data + POST /api/messenger/games/spin-wheel/play";
const PLAY_MANY = "the same play, 50 players in turn";
/** The many-players case's players (PLAYER is the one-player case's). */
const MANY = Array.from({ length: 50 }, (_, i) => 5000 + i);
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

/** Gives every bench player spins enough for the whole run, through the storage port (the servers are idle then). */
async function grantSpins(store: Store, spins: number): Promise<void> {
  await store.run("UPDATE messenger_players SET free_spin_balance = ?", [spins]);
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
      notes.push(...(await stopAll(servers)));
      servers = [];
      const store = await heraldDb.store();
      const spins = (await store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_spins"))!.n;
      const ledger = (await store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_ledger"))!.n;
      await heraldDb.close();
      notes.push(`${spins} spins and ${ledger} ledger rows committed (warmup included)`);
    } finally {
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
    const summary = [
      `verified / same route unverified = ${alone ?? "n/a"} (verification alone, req/s; target ≥ ${TARGET_RATIO}); by server CPU per request: ${aloneByCpu ?? "n/a"}`,
      `verified / unauthenticated policy route = ${verified?.ratio_vs_baseline ?? "n/a"}`,
      `plays/s = ${play ? Math.round(play.requests_per_sec) : "n/a"} one player (target ≥ ${TARGET_PLAYS}), ${playMany ? Math.round(playMany.requests_per_sec) : "n/a"} for ${MANY.length} players in turn`,
    ];
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
      },
      errors,
    };
  },
};

export default messenger;
