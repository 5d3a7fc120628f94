// redirect: GET /s/audio/{code} on a real `herald serve` vs a raw Bun.serve redirect (a Map lookup and a 302),
// both as child processes, measured one after the other. The link is created first through the public API,
// then wrk hammers that one code with a browser User-Agent, so every request takes the click path (hash of
// IP + User-Agent, in-memory dedupe, buffered hit counters). After the run the link's stats must account for
// every request herald answered.
import { join } from "node:path";
import {
  heraldLaunch,
  logLines,
  measure,
  progress,
  startChild,
  startHerald,
  summariseLog,
  tempDir,
  freePort,
  withRatios,
  ROOT,
  type Benchmark,
  type CaseResult,
} from "./support";

const BASELINE = "raw Bun.serve redirect";
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
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [`herald ran from ${launch.mode}`, "RATE_LIMIT_PUBLIC_API_PER_MIN=0 for herald (the per-IP limit would answer 429 to a one-IP load)"];
    if (launch.warning) notes.push(launch.warning);
    const errors: string[] = [];
    const dir = tempDir("redirect");
    const results: CaseResult[] = [];
    try {
      progress(`starting herald from ${launch.mode}`);
      const herald = await startHerald(dir.path, launch, { RATE_LIMIT_PUBLIC_API_PER_MIN: "0", METRICS_PUBLIC: "1" });
      let link: { code: string; destination: string };
      try {
        link = await createLink(herald.baseUrl);
        notes.push(`link ${link.code} (signed) → ${link.destination}`);
        const result = await measure(`herald GET /s/audio/{code}`, `${herald.baseUrl}/s/audio/${link.code}`, opts, () => ({ "User-Agent": UA }));
        results.push(result);
        const totals = await stats(herald.baseUrl, link.code);
        if (!totals) errors.push("the stats route did not answer after the run");
        else {
          notes.push(`link stats after the run: ${totals.clicks.toLocaleString("en-US")} clicks (warmup + measured), ${totals.unique_clicks} unique per client-hour, ${totals.bot_hits} bot, ${totals.head_hits} HEAD`);
          if (totals.clicks < result.requests) errors.push(`stats counted ${totals.clicks} clicks but the measured run alone completed ${result.requests}`);
          if (totals.unique_clicks !== 1) errors.push(`one client should count as 1 unique click, got ${totals.unique_clicks}`);
        }
      } finally {
        const exit = await herald.stop();
        notes.push(`herald stopped on SIGTERM, exit ${exit === null ? "KILLED after grace" : exit}`);
      }
      const logged = await logLines(herald.logPath);
      if (logged.length) notes.push(`herald wrote ${logged.length} lines at LOG_LEVEL=warn: ${summariseLog(logged)}`);

      progress("starting the baseline redirect server");
      const port = await freePort();
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: String(port), CODE: link.code, DESTINATION: link.destination };
      const baseline = await startChild("baseline", [process.execPath, join(ROOT, "bench", "redirect-baseline-server.ts")], env, "/", join(dir.path, "baseline.log"), port);
      try {
        results.unshift(await measure(BASELINE, `${baseline.baseUrl}/s/audio/${link.code}`, opts, () => ({ "User-Agent": UA })));
      } finally {
        await baseline.stop();
      }
      for (const r of results) if (r.non_2xx > 0 || r.errors > 0) errors.push(`${r.case}: ${r.non_2xx} responses ≥ 400, ${r.errors} socket errors`);
    } finally {
      dir.remove();
    }
    const withR = withRatios(results, BASELINE);
    const herald = withR.find((r) => r.case !== BASELINE);
    const summary = herald?.ratio_vs_baseline != null ? [`herald redirect / raw redirect = ${herald.ratio_vs_baseline.toFixed(2)}× (target ≥ 0.70×)`] : [];
    return { benchmark: "redirect", description: redirect.description, results: withR, notes, summary, ratios: { herald_vs_raw: herald?.ratio_vs_baseline ?? null }, errors };
  },
};

export default redirect;
