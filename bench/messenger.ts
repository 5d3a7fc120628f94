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
import { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import {
  combine,
  findWrk,
  median,
  heraldLaunch,
  ROOT,
  startHeraldLike,
  measure,
  parseWrk,
  progress,
  startHerald,
  tempDir,
  withRatios,
  type Benchmark,
  type BenchOptions,
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
const TARGET_RATIO = 0.9;
/** The comparison server's unverified copy of the catalog route (bench/messenger-unverified-server.ts). */
const UNVERIFIED_PATH = "/bench/messenger/games/catalog";
const TARGET_PLAYS = 2000;

function initData(): string {
  const fields: Record<string, string> = {
    auth_date: String(Math.floor(Date.now() / 1000)),
    user: JSON.stringify({ id: PLAYER, first_name: "Bench", username: "bench" }),
  };
  const dcs = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join("\n");
  const secret = createHmac("sha256", "WebAppData").update(BOT_TOKEN).digest();
  return new URLSearchParams({ ...fields, hash: createHmac("sha256", secret).update(dcs).digest("hex") }).toString();
}

/** A wrk Lua script: POST with the init data header and a request_id unique per thread and request. */
function playScript(init: string): string {
  return `
local counter = 0
local thread_id = 0
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
function init(args) thread_id = tid or 0 end
function request()
  counter = counter + 1
  local body = '{"request_id":"bench-' .. thread_id .. '-' .. os.time() .. '-' .. counter .. '"}'
  return wrk.format("POST", "/api/messenger/games/spin-wheel/play", { ["Content-Type"] = "application/json", ["Authorization"] = "tma ${init}" }, body)
end
`;
}

async function runScript(label: string, url: string, script: string, opts: BenchOptions, durationSeconds: number): Promise<CaseResult> {
  const proc = Bun.spawn(
    [
      findWrk(),
      "--latency",
      "-t",
      String(Math.max(1, Math.min(opts.threads, opts.connections))),
      "-c",
      String(opts.connections),
      "-d",
      `${durationSeconds}s`,
      "-s",
      script,
      url,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const killer = setTimeout(() => proc.kill("SIGKILL"), (durationSeconds + 15) * 1000);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  if (code !== 0) throw new Error(`wrk exited with ${code}: ${err || out}`);
  return { case: label, url, ...parseWrk(out), ratio_vs_baseline: null };
}

/** Gives the bench player spins enough for the whole run, through SQLite directly (the server is idle then). */
function grantSpins(dbPath: string, spins: number): void {
  const db = new Database(dbPath);
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.query("UPDATE messenger_players SET free_spin_balance = ? WHERE telegram_user_id = ?").run(spins, PLAYER);
  } finally {
    db.close();
  }
}

const messenger: Benchmark = {
  name: "messenger",
  description: "Telegram init-data verification vs an unauthenticated route, and init data + a spin-wheel play",
  async run(opts) {
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [
      `herald ran from ${launch.mode}`,
      "one player: every play serialises on one SQLite writer and one balance row (the worst case for contention)",
    ];
    if (launch.warning) notes.push(launch.warning);
    const errors: string[] = [];
    const dir = tempDir("messenger");
    let server: RunningServer | undefined;
    let unverified: RunningServer | undefined;
    const results: CaseResult[] = [];
    const rounds = opts.rounds ?? 1;
    const verifiedRuns: CaseResult[] = [];
    const unverifiedRuns: CaseResult[] = [];
    if (rounds > 1)
      notes.push(
        `${rounds} rounds of verified then unverified (each after its warmup); the table shows medians, the ratio is the median of the per-round ratios`,
      );
    try {
      const heraldDir = join(dir.path, "herald");
      const unverifiedDir = join(dir.path, "unverified");
      await Bun.write(join(heraldDir, ".keep"), "");
      await Bun.write(join(unverifiedDir, ".keep"), "");
      // The messenger abuse limits off, as the public one: one player at full load would otherwise measure 429s.
      const limitsOff = { MESSENGER_RATE_LIMIT_PLAYER_PER_MIN: "0", MESSENGER_RATE_LIMIT_IP_PER_MIN: "0" };
      server = await startHerald(heraldDir, launch, { MESSENGER_BOT_TOKEN: BOT_TOKEN, RATE_LIMIT_PUBLIC_API_PER_MIN: "0", ...limitsOff });
      const headers = () => ({ authorization: `tma ${initData()}` });
      const probe = await fetch(`${server.baseUrl}/api/messenger/games/catalog`, { headers: headers() });
      if (probe.status !== 200) throw new Error(`the verified probe answered ${probe.status}: ${(await probe.text()).slice(0, 200)}`);
      grantSpins(join(heraldDir, "herald.db"), 1_000_000_000);
      const verifiedBody = await probe.text();
      results.push(await measure(PROBE, `${server.baseUrl}/healthz`, opts));
      results.push(await measure(UNAUTH, `${server.baseUrl}/api/public/system-status/policy`, opts));
      progress("starting the comparison server (bench/messenger-unverified-server.ts: herald plus one unverified route)");
      unverified = await startHeraldLike("unverified", join(ROOT, "bench", "messenger-unverified-server.ts"), unverifiedDir, UNVERIFIED_PATH, {
        MESSENGER_BOT_TOKEN: BOT_TOKEN,
        BENCH_PLAYER_ID: String(PLAYER),
        RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
        ...limitsOff,
      });
      const same = await (await fetch(`${unverified.baseUrl}${UNVERIFIED_PATH}`)).text();
      const shape = (t: string) => JSON.stringify(Object.keys(JSON.parse(t)).sort());
      if (shape(same) !== shape(verifiedBody))
        errors.push("the unverified route's catalog differs in shape from herald's: the two cases do not do the same work");
      // Both cases on the comparison server, alternately, round after round: the same process, database, request
      // log and jobs, so the difference between them is the verification alone.
      for (let round = 1; round <= rounds; round++) {
        if (rounds > 1) progress(`round ${round} of ${rounds}`);
        verifiedRuns.push(await measure(VERIFIED, `${unverified.baseUrl}/api/messenger/games/catalog`, opts, headers));
        unverifiedRuns.push(await measure(UNVERIFIED, `${unverified.baseUrl}${UNVERIFIED_PATH}`, opts, headers));
      }
      results.push(combine(VERIFIED, verifiedRuns), combine(UNVERIFIED, unverifiedRuns));
      await unverified.stop();
      unverified = undefined;
      const script = join(dir.path, "play.lua");
      await Bun.write(script, playScript(initData()));
      if (opts.warmupSeconds > 0) {
        progress(`${PLAY}: warmup ${opts.warmupSeconds}s`);
        await runScript(PLAY, `${server.baseUrl}/api/messenger/games/spin-wheel/play`, script, opts, opts.warmupSeconds);
      }
      progress(`${PLAY}: measuring ${opts.durationSeconds}s`);
      results.push(await runScript(PLAY, `${server.baseUrl}/api/messenger/games/spin-wheel/play`, script, opts, opts.durationSeconds));
      for (const r of results) if (r.non_2xx > 0) errors.push(`${r.case}: ${r.non_2xx} answers were not 2xx`);
      const db = new Database(join(heraldDir, "herald.db"), { readonly: true });
      try {
        const spins = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM messenger_spins").get()!.n;
        const ledger = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM messenger_ledger").get()!.n;
        notes.push(`${spins} spins and ${ledger} ledger rows committed (warmup included)`);
      } finally {
        db.close();
      }
    } finally {
      await unverified?.stop();
      await server?.stop();
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
    const summary = [
      `verified / same route unverified = ${alone ?? "n/a"} (verification alone, req/s; target ≥ ${TARGET_RATIO}); by server CPU per request: ${aloneByCpu ?? "n/a"}`,
      `verified / unauthenticated policy route = ${verified?.ratio_vs_baseline ?? "n/a"}`,
      `plays/s = ${play ? Math.round(play.requests_per_sec) : "n/a"} (target ≥ ${TARGET_PLAYS})`,
    ];
    return {
      benchmark: "messenger",
      description: messenger.description,
      results: withRatio,
      notes,
      summary,
      ratios: {
        verified_vs_unverified: alone,
        verified_vs_unverified_by_cpu: aloneByCpu,
        verified_vs_unauthenticated: verified?.ratio_vs_baseline ?? null,
        plays_per_sec: play ? Math.round(play.requests_per_sec) : null,
      },
      errors,
    };
  },
};

export default messenger;
