// floors: how close to raw Bun any implementation of herald's hot routes can come (issues 29's and 50's targets). Bare
// Bun.serve processes (bench/floors-server.ts), each a raw baseline or that baseline plus the least one of herald's
// features needs, measured in turn under the same wrk load, alternated --rounds times:
//   /healthz:  raw JSON → + the answer's request id and size guards ("door")
//   signed:    the door above → + reading the partner headers and verifying the HMAC (herald's own code): what a
//              signature adds to a route that already reads its headers, as herald's unsigned route does
//   logged:    raw JSON → + the policy route's answer and headers → + its request-log row written in batches into
//              SQLite on the serving thread (issue 50's 0.6×) → + the rest of the route's required work (the
//              metrics count, include_meta, the query and compression checks) → or the row by a worker thread
//   redirect:  raw redirect → + the client address → + the click's and the door's other needs
// A case's req/s over its baseline is the most herald's route could reach if herald did nothing else; its server
// CPU over the baseline's is what the feature costs at the least (a worker's CPU included). No herald process; the
// logged cases write a SQLite file of their own.
import { join } from "node:path";
import { signRequest } from "../src/client/sign";
import { combine, freePort, measure, median, progress, ROOT, startChild, tempDir, type Benchmark, type CaseResult, type RunningServer } from "./support";

const SECRET = "hsk_floors_secret_0123456789abcdef0123456789abcdef";
const SIGNED_PATH = "/api/partner/capabilities";
const LINK_PATH = "/s/audio/aaaaaaaaaaaaaaaa";
const UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

interface FloorCase {
  id: string;
  label: string;
  /** The case whose req/s and CPU this one is compared with. */
  base: string;
  path: string;
  headers?: () => Record<string, string>;
}

const signedHeaders = (): Record<string, string> => {
  const { headers } = signRequest({ keyId: "hpk_floors", secret: SECRET, method: "GET", target: SIGNED_PATH });
  return Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === "string"));
};

const CASES: FloorCase[] = [
  { id: "json", label: "raw JSON", base: "json", path: "/healthz" },
  { id: "json-door", label: "raw JSON + request id and size guards", base: "json", path: "/healthz" },
  { id: "json-signature", label: "raw JSON + request id, size guards, signature", base: "json-door", path: SIGNED_PATH, headers: signedHeaders },
  { id: "json-policy", label: "raw JSON + the logged route's answer and headers", base: "json", path: "/api/public/system-status/policy" },
  { id: "json-logged", label: "+ a request-log row, written on the serving thread", base: "json", path: "/api/public/system-status/policy" },
  {
    id: "json-logged-complete",
    label: "+ a request-log row, metrics, include_meta, query and compression checks",
    base: "json",
    path: "/api/public/system-status/policy",
  },
  { id: "json-logged-worker", label: "+ a request-log row, written by a worker", base: "json", path: "/api/public/system-status/policy" },
  { id: "json-logged-elysia", label: "+ a request-log row, through Elysia", base: "json", path: "/api/public/system-status/policy" },
  { id: "redirect", label: "raw redirect", base: "redirect", path: LINK_PATH, headers: () => ({ "User-Agent": UA }) },
  { id: "redirect-ip", label: "raw redirect + client address", base: "redirect", path: LINK_PATH, headers: () => ({ "User-Agent": UA }) },
  { id: "redirect-door", label: "raw redirect + client address, click, request id", base: "redirect", path: LINK_PATH, headers: () => ({ "User-Agent": UA }) },
];

/** Issue 29's targets, for the summary. */
const TARGETS: Record<string, number> = {
  "json-door": 0.7,
  "json-signature": 0.95,
  "redirect-ip": 0.85,
  "redirect-door": 0.85,
  "json-logged": 0.6,
  "json-logged-complete": 0.6,
};

const fixed = (x: number | null | undefined, digits = 2) => (typeof x === "number" ? x.toFixed(digits) : "?");
/** A difference with its sign: "+1.24", "−0.21". */
const signed = (x: number | null) => (x === null ? "?" : `${x < 0 ? "−" : "+"}${Math.abs(x).toFixed(2)}`);

const floors: Benchmark = {
  name: "floors",
  description: "issue 29's hot routes as bare Bun.serve processes: each raw baseline and the least herald's features add to it",
  async run(opts) {
    const rounds = opts.rounds ?? 1;
    const notes = [
      "no herald process: bench/floors-server.ts, one process per case, measured in turn (the others idle)",
      `${rounds} round(s) of every case; the table shows medians, each ratio is the median of its per-round ratios`,
      "a case's ratio is the most herald's route could reach on this machine today if herald did nothing more than that case",
    ];
    const errors: string[] = [];
    const dir = tempDir("floors");
    const runs = new Map<string, CaseResult[]>(CASES.map((c) => [c.id, []]));
    const servers = new Map<string, RunningServer>();
    try {
      for (const c of CASES) {
        const port = await freePort();
        const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: String(port), CASE: c.id, SECRET, DB: join(dir.path, `${c.id}.db`) };
        const cmd = [process.execPath, join(ROOT, "bench", "floors-server.ts")];
        servers.set(c.id, await startChild(c.id, cmd, env, "/floors-ready", join(dir.path, `${c.id}.log`), port));
      }
      for (let round = 1; round <= rounds; round++) {
        if (rounds > 1) progress(`round ${round} of ${rounds}`);
        for (const c of CASES) runs.get(c.id)!.push(await measure(c.label, servers.get(c.id)!.baseUrl + c.path, opts, c.headers));
      }
    } finally {
      for (const s of servers.values()) await s.stop();
      dir.remove();
    }
    for (const c of CASES) {
      for (const r of runs.get(c.id)!) {
        const expectedStatus = c.base === "redirect" ? "3xx" : "2xx";
        if (r.non_2xx > 0 || r.errors > 0)
          errors.push(`${c.label}: ${r.non_2xx} answers ≥ 400, ${r.errors} socket errors (every answer should be ${expectedStatus})`);
      }
    }

    const perRound = (c: FloorCase) => runs.get(c.id)!.map((r, i) => r.requests_per_sec / runs.get(c.base)![i]!.requests_per_sec);
    const cpuOf = (id: string) => combine(id, runs.get(id)!).server_cpu_us_per_request ?? null;
    const results = CASES.map((c) => ({ ...combine(c.label, runs.get(c.id)!), ratio_vs_baseline: Number(median(perRound(c)).toFixed(3)) }));
    const ratios: Record<string, number | null> = {};
    const summary: string[] = [];
    for (const c of CASES) {
      if (c.id === c.base) continue;
      const ratio = median(perRound(c));
      ratios[c.id.replace("-", "_")] = Number(ratio.toFixed(4));
      const baseCpu = cpuOf(c.base);
      const cpu = cpuOf(c.id);
      const delta = baseCpu !== null && cpu !== null ? cpu - baseCpu : null;
      const target = TARGETS[c.id];
      summary.push(
        `${c.label} / ${CASES.find((b) => b.id === c.base)!.label} = ${ratio.toFixed(2)}× (rounds ${perRound(c)
          .map((x) => x.toFixed(2))
          .join(
            ", ",
          )}); server CPU ${fixed(cpu)} vs ${fixed(baseCpu)} µs a request (${signed(delta)} µs)${target ? `; issue ${c.id.startsWith("json-logged") ? 50 : 29}'s target ${target.toFixed(2)}×` : ""}`,
      );
      if (c.id === "json-signature" && delta !== null && delta > 0) {
        // The same work added to a route of U µs: signed ÷ unsigned ≤ U / (U + delta).
        const needed = (0.95 * delta) / 0.05;
        summary.push(
          `  the signature's ${signed(delta)} µs on a route of 15 / 20 / 30 µs (unsigned) caps signed ÷ unsigned at ${[15, 20, 30]
            .map((u) => (u / (u + delta)).toFixed(2))
            .join(" / ")}; 0.95 needs an unsigned route of ≥ ${needed.toFixed(1)} µs of server CPU (bench signed prints herald's)`,
        );
      }
    }
    return { benchmark: "floors", description: floors.description, results, notes, summary, ratios, errors };
  },
};

export default floors;
