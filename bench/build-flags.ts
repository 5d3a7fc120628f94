// build-flags: what each `bun build --compile` flag changes for Herald's binary, side by side in one run. Every
// variant is built from the current source into a temp dir, then measured the same way: size, build time, cold
// start (spawn → first 200 from /readyz), RSS after ready and after load, /healthz under wrk, and one request
// that only a build keeping TypeBox's class names answers right (src/http/build-check.ts: `--minify` renames
// TransformDecodeError, Elysia then swallows query-decode errors; such a build now refuses to start).
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { children } from "./children";
import { freePort, heraldEnv, HOST, measure, median, progress, ROOT, tempDir, withRatios, type Benchmark, type BenchReport, type CaseResult } from "./support";

// The variants, in the order of the table. The first is what `npm run build` shipped until the class-name fix;
// which one ships now is read from package.json, never written here.
const VARIANTS: string[][] = [
  ["--minify", "--bytecode"],
  ["--minify-syntax", "--minify-whitespace", "--bytecode"], // minify without renaming identifiers
  ["--bytecode"],
  ["--minify-syntax", "--minify-whitespace"],
  [],
];
// Every build has these; only the flags above vary.
const COMMON = ["--compile", "--compile-exec-argv=--max-http-header-size=65536"];
const ENTRY = "src/main.ts";
const PROBE = "/api/public/audio-share-links/stats?code=abc&hours=1e308";
const BUILD_TIMEOUT_MS = 180_000;
const READY_TIMEOUT_MS = 20_000;
const POLL_MS = 5; // fine enough to time a start of a few hundred ms without the polling eating a core

interface Variant {
  flags: string[];
  label: string;
  ships: boolean;
  binary: string;
  size_bytes: number | null;
  build_ms: number | null;
  /** Set when the binary exits before /readyz answers: the first line of its stderr. */
  refused: string | null;
  cold_start_ms: number[];
  rss_ready_kib: number[];
  rss_after_load_kib: number | null;
  /** Did PROBE answer 400 invalid_query? null if the binary never served. */
  decodes_query: boolean | null;
  probe_answer: string | null;
}

const key = (flags: string[]) => [...flags].sort().join(" ");

/** The flags of package.json's `bun build` (the `--x` and `--x=y` words, less COMMON and --outfile). */
function shippedFlags(): { flags: string[]; script: string } {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts?: Record<string, string> };
  const script = pkg.scripts?.build ?? "";
  const command = script
    .split("&&")
    .map((c) => c.trim())
    .find((c) => c.startsWith("bun build "));
  if (!command) throw new Error(`package.json's build script has no "bun build" command: ${script}`);
  const words = command.split(/\s+/).filter((w) => w.startsWith("--") && !w.startsWith("--outfile"));
  return { flags: words.filter((w) => !COMMON.includes(w)), script: command };
}

/** A child's stdout/stderr and exit code, killed after `timeoutMs`. */
async function runTracked(cmd: string[], timeoutMs: number): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  children.add(proc);
  const killer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  children.delete(proc);
  return { code, out: `${out}\n${err}`.trim() };
}

function rssKib(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

async function stop(proc: Subprocess): Promise<number | null> {
  proc.kill("SIGTERM");
  const timedOut = await Promise.race([proc.exited.then(() => false), Bun.sleep(15_000).then(() => true)]);
  if (timedOut) proc.kill("SIGKILL");
  await proc.exited;
  children.delete(proc);
  return timedOut ? null : proc.exitCode;
}

type Started = { ok: true; proc: Subprocess; baseUrl: string; ms: number; rss: number | null } | { ok: false; reason: string };

/**
 * Starts a binary in `dir` (cwd and data dir, empty) and times spawn → first 200 from /readyz, polling every
 * POLL_MS (bounded in time and count). Not processes.ts's startChild: that polls every 100 ms, from the repo.
 */
async function coldStart(binary: string, dir: string): Promise<Started> {
  const port = await freePort();
  const baseUrl = `http://${HOST}:${port}`;
  const log = join(dir, "herald.log");
  const t0 = performance.now();
  const proc = Bun.spawn([binary, "serve"], { cwd: dir, env: heraldEnv(dir, port), stdin: "ignore", stdout: Bun.file(log), stderr: Bun.file(`${log}.err`) });
  children.add(proc);
  let exited = false;
  void proc.exited.then(() => (exited = true));
  for (let i = 0; i < READY_TIMEOUT_MS / POLL_MS && performance.now() - t0 < READY_TIMEOUT_MS; i++) {
    if (exited) {
      children.delete(proc);
      // Only the "herald: Error: …" line: a first start in development prints secrets as plain text elsewhere.
      const err = await Bun.file(`${log}.err`)
        .text()
        .catch(() => "");
      const line = err.split("\n").find((l) => l.startsWith("herald:")) ?? "(no error line)";
      return { ok: false, reason: `exit ${proc.exitCode}: ${line.slice(0, 200)}` };
    }
    try {
      const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return { ok: true, proc, baseUrl, ms: performance.now() - t0, rss: rssKib(proc.pid) };
    } catch {
      // not listening yet
    }
    await Bun.sleep(POLL_MS);
  }
  await stop(proc);
  return { ok: false, reason: `/readyz not 200 after ${READY_TIMEOUT_MS} ms` };
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const ms = (xs: number[]) =>
  xs.length === 0 ? "-" : `${median(xs).toFixed(0)} ms${xs.length > 1 ? ` (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})` : ""}`;

/** The per-variant figures the wrk table has no columns for, as an aligned text table. */
function figuresTable(variants: Variant[], starts: number): string[] {
  const head = [
    "flags",
    "ships",
    "size",
    "build",
    starts > 1 ? `cold start, median of ${starts} (min–max)` : "cold start",
    "RSS ready",
    "RSS after load",
    "1e308 → 400",
  ];
  const rows = variants.map((v) => [
    v.label,
    v.ships ? "yes" : "",
    v.size_bytes === null ? "-" : `${v.size_bytes.toLocaleString("en-US")} B (${mib(v.size_bytes)} MiB)`,
    v.build_ms === null ? "-" : `${(v.build_ms / 1000).toFixed(1)} s`,
    v.refused ? "refuses to start" : ms(v.cold_start_ms),
    v.rss_ready_kib.length ? `${mib(median(v.rss_ready_kib) * 1024)} MiB` : "-",
    v.rss_after_load_kib === null ? "-" : `${mib(v.rss_after_load_kib * 1024)} MiB`,
    v.decodes_query === null ? `no (${v.refused ? "refuses to start" : "never served"})` : v.decodes_query ? "yes" : `NO (${v.probe_answer})`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

const buildFlags: Benchmark = {
  name: "build-flags",
  description: "what each `bun build --compile` flag changes for herald's binary (/healthz per variant)",
  async run(opts) {
    const starts = opts.starts ?? 5;
    const shipped = shippedFlags();
    const notes: string[] = [
      `every build: bun build ${COMMON.join(" ")} <flags> ${ENTRY}; shipped (package.json): ${shipped.script}`,
      `cold start = spawn → first 200 from /readyz (polled every ${POLL_MS} ms), a fresh empty data dir each start; the variants' starts alternate, round after round, so that noise is shared`,
      `RSS ready = VmRSS right after that 200 (median of the starts); RSS after load = VmRSS after the wrk run; "1e308 → 400" = GET ${PROBE} answers 400 invalid_query`,
    ];
    const errors: string[] = [];
    const list = VARIANTS.some((f) => key(f) === key(shipped.flags)) ? VARIANTS : [...VARIANTS, shipped.flags];
    if (list !== VARIANTS) notes.push(`the shipped flags are none of the listed variants: added as the last row`);
    const buildDir = tempDir("build-flags");
    const variants: Variant[] = list.map((flags, i) => ({
      flags,
      label: flags.length ? flags.join(" ") : "(no flags)",
      ships: key(flags) === key(shipped.flags),
      binary: join(buildDir.path, `v${i}`, "herald"),
      size_bytes: null,
      build_ms: null,
      refused: null,
      cold_start_ms: [],
      rss_ready_kib: [],
      rss_after_load_kib: null,
      decodes_query: null,
      probe_answer: null,
    }));
    const results: CaseResult[] = [];
    try {
      // The bundle embeds dist/sdk/ through a macro that builds it when missing or stale: build it once here
      // so that no variant's build time includes it.
      progress("building the SDK (npm run build:sdk) once, before the timed builds");
      const sdk = await runTracked([process.execPath, "run", "sdk/build.ts"], BUILD_TIMEOUT_MS);
      if (sdk.code !== 0) throw new Error(`the SDK build exited ${sdk.code}:\n${sdk.out}`);

      for (const v of variants) {
        progress(`building ${v.label}`);
        const t0 = performance.now();
        const built = await runTracked([process.execPath, "build", ...COMMON, ...v.flags, ENTRY, "--outfile", v.binary], BUILD_TIMEOUT_MS);
        if (built.code !== 0) {
          errors.push(`bun build ${v.label} exited ${built.code}: ${built.out.slice(-500)}`);
          v.refused = "build failed";
          continue;
        }
        v.build_ms = Math.round(performance.now() - t0);
        v.size_bytes = statSync(v.binary).size;
      }

      for (let round = 1; round <= starts; round++) {
        for (const v of variants.filter((x) => !x.refused)) {
          progress(`cold start ${round}/${starts}: ${v.label}`);
          const dir = tempDir("build-flags-start");
          try {
            const s = await coldStart(v.binary, dir.path);
            if (!s.ok) {
              v.refused = s.reason;
              continue;
            }
            v.cold_start_ms.push(Number(s.ms.toFixed(1)));
            if (s.rss !== null) v.rss_ready_kib.push(s.rss);
            const code = await stop(s.proc);
            if (code !== 0) notes.push(`${v.label}: a cold start's server exited ${code ?? "KILLED"} on SIGTERM`);
          } finally {
            dir.remove();
          }
        }
      }

      // Then the load, one variant after the other (never together: wrk and the server share the cores).
      for (const v of variants.filter((x) => !x.refused)) {
        progress(`load: ${v.label}`);
        const dir = tempDir("build-flags-load");
        try {
          const s = await coldStart(v.binary, dir.path);
          if (!s.ok) {
            v.refused = s.reason;
            continue;
          }
          try {
            const res = await fetch(s.baseUrl + PROBE, { signal: AbortSignal.timeout(5000) });
            const body = (await res.json().catch(() => ({}))) as { error?: unknown };
            v.decodes_query = res.status === 400 && body.error === "invalid_query";
            v.probe_answer = `${res.status}${typeof body.error === "string" ? ` ${body.error}` : ""}`;
            const r = await measure(`${v.label}${v.ships ? " (ships)" : ""}`, `${s.baseUrl}/healthz`, opts);
            results.push(r);
            v.rss_after_load_kib = rssKib(s.proc.pid);
            if (r.non_2xx > 0 || r.errors > 0) notes.push(`${v.label}: ${r.non_2xx} non-2xx responses, ${r.errors} socket errors`);
          } finally {
            const code = await stop(s.proc);
            if (code !== 0) notes.push(`${v.label}: exited ${code ?? "KILLED after grace"} on SIGTERM after the load`);
          }
        } finally {
          dir.remove();
        }
      }
    } finally {
      buildDir.remove();
    }

    for (const v of variants) if (v.refused) notes.push(`${v.label}: ${v.refused}`);
    const shippedRow = variants.find((v) => v.ships);
    if (shippedRow && shippedRow.decodes_query !== true) notes.push(`THE SHIPPED FLAGS (${shippedRow.label}) do not answer ${PROBE} with 400 invalid_query`);
    const baseline = results.find((r) => r.case.endsWith("(ships)"))?.case;
    const summary = ["per variant (the wrk table above: GET /healthz; vs baseline = req/s over the shipped variant's):", ...figuresTable(variants, starts)];
    // The figures for --json, beside the summary's text table (printReport writes every field of the report).
    const figures = variants.map(({ binary: _binary, ...v }) => ({
      ...v,
      cold_start_median_ms: v.cold_start_ms.length ? Number(median(v.cold_start_ms).toFixed(1)) : null,
      rss_ready_median_kib: v.rss_ready_kib.length ? median(v.rss_ready_kib) : null,
    }));
    const report: BenchReport & { variants: typeof figures } = {
      benchmark: "build-flags",
      description: buildFlags.description,
      results: baseline ? withRatios(results, baseline) : results,
      notes,
      summary,
      errors,
      variants: figures,
    };
    return report;
  },
};

export default buildFlags;
