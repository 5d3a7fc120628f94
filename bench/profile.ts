// profile: where a request's CPU time goes on the hot routes, measured INSIDE the running server under load
// (wave 1 found loop figures 3–4× off). For each route, a fresh `bun src/main.ts serve` runs with Bun's sampling
// CPU profiler (--cpu-prof-md, one sample every 50 µs); wrk loads the one route; on SIGTERM Bun writes the profile,
// and each function's self time ÷ the requests served is its CPU µs per request. Herald's named hooks
// (src/http/core.ts, src/auth/partner-plugin.ts, src/audio-share/redirect.ts) are summed by name; the rest is
// grouped by where it runs: Elysia's compiled handler and its library code, Bun's runtime (native code), and
// the other parts of Herald. The routes:
//   - GET /healthz: the cheapest route (a probe: no request-log row);
//   - GET /s/audio/{code}: the short-link redirect (Bun's native route in front of Elysia, counting the click);
//   - GET /api/partner/capabilities, signed: the partner guard's cost (compare with `signed`);
//   - GET /api/public/system-status/policy: an ordinary request-logged JSON route (compare with `http`).
// The sampling profiler adds its own cost, so absolute figures run higher than `http`'s; compare the shares, and
// the same table before and after a change. Rate limits stay ON (a limit of 1,000,000 a minute, so nothing is
// refused): their cost is part of every request.
import { join } from "node:path";
import { readdirSync, readFileSync } from "node:fs";
import { signRequest } from "../src/client/sign";
import { heraldEnv, progress, ROOT, runWrk, startChild, tempDir, UsageError, freePort, type Benchmark, type CaseResult } from "./support";

const ADMIN = "hat_bench_profile_admin_0123456789abcdefghijklmn";
const UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";
const INTERVAL_US = 50;

/** Herald's own hook functions, by the name they are declared with: each is one row of the table. */
const NAMED_HOOKS = [
  "requestStarted",
  "queryGivenOnce",
  "bodyParsed",
  "parseErrorReported",
  "includeMetaAdded",
  "requestFinished",
  "errorAnswered",
  "probeCounted",
  "compressionMapped",
  "partnerVerified",
  "nativeRedirect",
  "followLink",
  "newRequestState",
  "observe",
];

interface Row {
  fn: string;
  location: string;
  selfMs: number;
  totalMs: number;
}

/** The "Call Tree (Total Time)" table of Bun's markdown profile: every function with its self and total time. */
export function parseProfile(md: string): Row[] {
  const ms = (t: string) => (t.endsWith("us") ? Number(t.slice(0, -2)) / 1000 : t.endsWith("ms") ? Number(t.slice(0, -2)) : Number(t.slice(0, -1)) * 1000);
  const start = md.indexOf("## Call Tree (Total Time)");
  const end = md.indexOf("\n## ", start + 5);
  const rows: Row[] = [];
  for (const line of md.slice(start, end === -1 ? undefined : end).split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 8 || !/^[\d.]+%$/.test(cells[1]!)) continue;
    rows.push({ totalMs: ms(cells[2]!), selfMs: ms(cells[4]!), fn: cells[5]!.replaceAll("`", ""), location: cells[6]!.replaceAll("`", "") });
  }
  return rows;
}

/** Where a function runs, for the grouped part of the table. */
function groupOf(r: Row): string {
  if (r.location === "[native code]") return "Bun runtime (native code)";
  if (r.location.includes("node_modules/elysia")) return "Elysia (library)";
  if (r.location.includes("node_modules/"))
    return `library: ${r.location
      .split("node_modules/")[1]!
      .split("/")
      .slice(0, r.location.includes("/@") ? 2 : 1)
      .join("/")}`;
  if (r.location.startsWith("/") || r.location.includes("src/")) return "Herald (other code)";
  return "Elysia's compiled handler";
}

interface RouteCase {
  label: string;
  path: (base: string) => Promise<{ path: string; headers: () => Record<string, string> }>;
}

async function createLink(base: string): Promise<string> {
  const res = await fetch(`${base}/api/public/audio-share-links?track_url=/tracks/1&use_short=1&token_mode=signed&expires_in=86400&channels=copy-link`);
  const body = (await res.json()) as { short_code?: string };
  if (res.status !== 200 || !body.short_code) throw new Error(`creating the link answered ${res.status}: ${JSON.stringify(body)}`);
  return body.short_code;
}

async function createKey(base: string): Promise<{ keyId: string; secret: string }> {
  const res = await fetch(`${base}/admin/partners/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ partner: "Bench", mode: "live", scopes: ["read"] }),
  });
  const body = (await res.json()) as { key?: { key_id: string }; secret?: string };
  if (res.status !== 201 || !body.key || !body.secret) throw new Error(`creating the key answered ${res.status}: ${JSON.stringify(body)}`);
  return { keyId: body.key.key_id, secret: body.secret };
}

const CASES: RouteCase[] = [
  { label: "GET /healthz", path: async () => ({ path: "/healthz", headers: () => ({}) }) },
  {
    label: "GET /s/audio/{code}",
    path: async (base) => ({ path: `/s/audio/${await createLink(base)}`, headers: () => ({ "User-Agent": UA }) }),
  },
  {
    label: "GET /api/partner/capabilities, signed",
    path: async (base) => {
      const key = await createKey(base);
      const target = "/api/partner/capabilities";
      return {
        path: target,
        headers: () => signRequest({ keyId: key.keyId, secret: key.secret, method: "GET", target, body: "" }).headers as unknown as Record<string, string>,
      };
    },
  },
  { label: "GET /api/public/system-status/policy (request-logged)", path: async () => ({ path: "/api/public/system-status/policy", headers: () => ({}) }) },
];

const profile: Benchmark = {
  name: "profile",
  description:
    "CPU µs per request by hook and by layer on /healthz, the redirect, a signed GET and a request-logged route, from Bun's profiler in the running server",
  async run(opts) {
    if (opts.herald === "binary") throw new UsageError("profile: runs herald from source (the profiler flags are Bun's), not --binary");
    const notes: string[] = [
      `Bun's sampling profiler in the server, one sample every ${INTERVAL_US} µs; µs/request = the function's self time ÷ every request the server answered (warmup included)`,
      "RATE_LIMIT_PUBLIC_API_PER_MIN=1000000 and RATE_LIMIT_PARTNER_PER_MIN=10000000: the limiters run on every request and refuse none",
    ];
    const results: CaseResult[] = [];
    const tables: string[] = [];
    for (const c of CASES) {
      const dir = tempDir("profile");
      try {
        const port = await freePort();
        const env = heraldEnv(dir.path, port, {
          ADMIN_TOKEN: ADMIN,
          HERALD_MASTER_KEY: "ab".repeat(32),
          BOOTSTRAP_CREDENTIALS: "0",
          RATE_LIMIT_PUBLIC_API_PER_MIN: "1000000",
          RATE_LIMIT_PARTNER_PER_MIN: "10000000",
        });
        const cmd = [
          process.execPath,
          "--cpu-prof-md",
          `--cpu-prof-dir=${dir.path}/prof`,
          `--cpu-prof-interval=${INTERVAL_US}`,
          join(ROOT, "src", "main.ts"),
          "serve",
        ];
        const server = await startChild("herald", cmd, env, "/readyz", join(dir.path, "herald.log"), port);
        let served = 0;
        let result: CaseResult;
        try {
          const { path, headers } = await c.path(server.baseUrl);
          if (opts.warmupSeconds > 0)
            served += (await runWrk(`${server.baseUrl}${path}`, { ...opts, durationSeconds: opts.warmupSeconds }, headers())).requests;
          progress(`${c.label}: profiling ${opts.durationSeconds}s`);
          const r = await runWrk(`${server.baseUrl}${path}`, opts, headers());
          served += r.requests;
          if (r.non_2xx > 0 && !path.startsWith("/s/")) throw new Error(`${c.label}: ${r.non_2xx} answers were not 2xx`);
          result = { case: `herald ${c.label} (profiled)`, url: path, ...r, ratio_vs_baseline: null };
        } finally {
          await server.stop();
        }
        results.push(result);
        const files = readdirSync(join(dir.path, "prof")).filter((f) => f.endsWith(".md"));
        if (!files.length) throw new Error(`${c.label}: Bun wrote no profile in ${dir.path}/prof`);
        const rows = parseProfile(readFileSync(join(dir.path, "prof", files[0]!), "utf8"));
        const per = (msTotal: number) => ((msTotal * 1000) / served).toFixed(2);
        const hooks = NAMED_HOOKS.map((name) => ({ name, rows: rows.filter((r) => r.fn === name || r.fn === `async ${name}`) }))
          .filter((h) => h.rows.length)
          .map((h) => `${h.name} ${per(Math.max(...h.rows.map((r) => r.totalMs)))}`);
        const groups = new Map<string, number>();
        for (const r of rows) groups.set(groupOf(r), (groups.get(groupOf(r)) ?? 0) + r.selfMs);
        const top = [...rows]
          .sort((a, b) => b.selfMs - a.selfMs)
          .slice(0, 8)
          .map((r) => `${r.fn} ${per(r.selfMs)}`);
        tables.push(
          `${c.label} — ${served.toLocaleString("en-US")} requests; by layer (self µs/request): ${[...groups]
            .sort((a, b) => b[1] - a[1])
            .map(([g, t]) => `${g} ${per(t)}`)
            .join(", ")}; herald's hooks (total µs/request, callees included): ${hooks.join(", ") || "none seen"}; top functions (self): ${top.join(", ")}`,
        );
      } finally {
        dir.remove();
      }
    }
    return { benchmark: "profile", description: profile.description, results, notes: [...notes, ...tables] };
  },
};

export default profile;
