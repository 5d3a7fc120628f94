// redirect: GET /s/audio/{code} on a real `herald serve` vs a raw Bun.serve redirect (a Map lookup and a 302),
// both as child processes, measured one after the other. The link is created first through the public API,
// then wrk hammers that one code with a browser User-Agent, so every request takes the click path (hash of
// IP + User-Agent, in-memory dedupe, buffered hit counters). After the run the link's stats must account for
// every request herald answered. On PostgreSQL (--engine postgres) --instances herald processes share one database
// (hits are buffered per instance and added up in the database; "seen" dedupe lives there too) and wrk's load is
// spread over them (bench/engines.ts).
import { join } from "node:path";
import { measureOn, openEngine, spreadNote, startHeralds, stopAll } from "./engines";
import {
  heraldLaunch,
  logLines,
  measure,
  progress,
  startChild,
  summariseLog,
  tempDir,
  freePort,
  withRatios,
  combine,
  median,
  ROOT,
  type Benchmark,
  type CaseResult,
  type RunningServer,
} from "./support";

const BASELINE = "raw Bun.serve redirect";
const HERALD = "herald GET /s/audio/{code}";
const UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

async function createLink(baseUrl: string): Promise<{ code: string; destination: string }> {
  const res = await fetch(`${baseUrl}/api/public/audio-share-links?track_url=/tracks/1&use_short=1&token_mode=signed&expires_in=86400&channels=copy-link`);
  const body = (await res.json()) as { short_code?: string; destination_url?: string; error?: string };
  if (res.status !== 200 || !body.short_code || !body.destination_url) throw new Error(`creating the link answered ${res.status}: ${JSON.stringify(body)}`);
  return { code: body.short_code, destination: body.destination_url };
}

async function stats(baseUrl: string, code: string): Promise<{ clicks: number; unique_clicks: number; bot_hits: number; head_hits: number } | null> {
  const res = await fetch(`${baseUrl}/api/public/audio-share-links/stats?code=${code}`);
  if (res.status !== 200) return null;
  return ((await res.json()) as { totals: { clicks: number; unique_clicks: number; bot_hits: number; head_hits: number } }).totals;
}

const redirect: Benchmark = {
  name: "redirect",
  description: "GET /s/audio/{code} on herald vs a raw Bun.serve redirect",
  async run(opts) {
    const rounds = opts.rounds ?? 1;
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [
      `herald ran from ${launch.mode}`,
      "RATE_LIMIT_PUBLIC_API_PER_MIN=0 for herald (the per-IP limit would answer 429 to a one-IP load)",
    ];
    if (rounds > 1)
      notes.push(
        `${rounds} rounds, each raw then herald (each after its warmup); the table shows each figure's median over the rounds, the ratio is the median of the per-round ratios`,
      );
    if (launch.warning) notes.push(launch.warning);
    const errors: string[] = [];
    const dir = tempDir("redirect");
    const engine = await openEngine(opts);
    const heraldRuns: CaseResult[] = [];
    const rawRuns: CaseResult[] = [];
    try {
      // Both servers are started up front and measured in turn; the one not being measured sits idle.
      const db = await engine.database(join(dir.path, "herald"));
      progress(`starting ${engine.instances} herald instance(s) from ${launch.mode} on ${engine.kind}`);
      const heralds = await startHeralds(db, launch, engine.instances, { RATE_LIMIT_PUBLIC_API_PER_MIN: "0", METRICS_PUBLIC: "1" });
      let baseline: RunningServer | undefined;
      try {
        const link = await createLink(heralds[0]!.baseUrl);
        notes.push(`link ${link.code} (signed) → ${link.destination}`);
        progress("starting the baseline redirect server");
        const port = await freePort();
        const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: String(port), CODE: link.code, DESTINATION: link.destination };
        baseline = await startChild(
          "baseline",
          [process.execPath, join(ROOT, "bench", "redirect-baseline-server.ts")],
          env,
          "/",
          join(dir.path, "baseline.log"),
          port,
        );
        for (let round = 1; round <= rounds; round++) {
          if (rounds > 1) progress(`round ${round} of ${rounds}`);
          rawRuns.push(await measure(BASELINE, `${baseline.baseUrl}/s/audio/${link.code}`, opts, () => ({ "User-Agent": UA })));
          heraldRuns.push(await measureOn(HERALD, heralds, `/s/audio/${link.code}`, opts, () => ({ "User-Agent": UA })));
        }
        const measured = heraldRuns.reduce((n, r) => n + r.requests, 0);
        // Each instance writes only its own buffered hits, and the stats route flushes its own instance's buffer
        // first: asked of every instance in turn, the last answer counts them all.
        let totals: Awaited<ReturnType<typeof stats>> = null;
        for (const h of heralds) totals = await stats(h.baseUrl, link.code);
        if (!totals) errors.push("the stats route did not answer after the run");
        else {
          notes.push(
            `link stats after the run: ${totals.clicks.toLocaleString("en-US")} clicks (warmup + measured), ${totals.unique_clicks} unique per client-hour, ${totals.bot_hits} bot, ${totals.head_hits} HEAD`,
          );
          if (totals.clicks < measured) errors.push(`stats counted ${totals.clicks} clicks but the measured runs alone completed ${measured}`);
          if (totals.unique_clicks !== 1) errors.push(`one client should count as 1 unique click, got ${totals.unique_clicks}`);
        }
      } finally {
        notes.push(...(await stopAll(heralds)));
        await baseline?.stop();
      }
      for (const h of heralds) {
        const logged = await logLines(h.logPath);
        if (logged.length) notes.push(`herald wrote ${logged.length} lines at LOG_LEVEL=warn: ${summariseLog(logged)}`);
      }
      for (const r of [...rawRuns, ...heraldRuns])
        if (r.non_2xx > 0 || r.errors > 0) errors.push(`${r.case}: ${r.non_2xx} responses ≥ 400, ${r.errors} socket errors`);
    } finally {
      await engine.close();
      dir.remove();
    }
    const perRound = heraldRuns.map((r, i) => r.requests_per_sec / rawRuns[i]!.requests_per_sec);
    const ratio = perRound.length ? Number(median(perRound).toFixed(4)) : null;
    const results = [combine(BASELINE, rawRuns), combine(HERALD, heraldRuns)];
    const withR = withRatios(results, results[0]!.case);
    if (rounds > 1 && ratio !== null) withR[1]!.ratio_vs_baseline = ratio;
    const spread = perRound.length > 1 ? ` (rounds: ${perRound.map((x) => x.toFixed(2)).join(", ")})` : "";
    const summary = ratio !== null ? [`herald redirect / raw redirect = ${ratio.toFixed(2)}×${spread} (target ≥ 0.85×, issue 29)`] : [];
    return {
      benchmark: "redirect",
      description: redirect.description,
      topology: engine.topology(`${spreadNote(engine.instances, opts)}; the raw redirect is one process`),
      results: withR,
      notes,
      summary,
      ratios: { herald_vs_raw: ratio },
      errors,
    };
  },
};

export default redirect;
