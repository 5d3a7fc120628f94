// compression: what large compressed answers cost everyone else. wrk loads GET /healthz on a real `herald serve`,
// first alone, then while 8 clients download a large JSON document (/api/partner/errors.json, ~95 KB, no ETag:
// compressed afresh for each request) with Accept-Encoding: br. A server that compresses on its event loop answers
// nothing else meanwhile; herald compresses bodies of 64 KiB or more on Bun's thread pool (src/http/compression.ts).
// The ratio is /healthz with the downloads ÷ /healthz alone, in the same run; the downloads per second are printed
// beside it. The downloading clients run in the harness's process, on the same cores.
import { join } from "node:path";
import { measureOn, openEngine, spreadNote, startHeralds, stopAll } from "./engines";
import { heraldLaunch, progress, tempDir, withRatios, type Benchmark, type CaseResult } from "./support";

const ALONE = "herald GET /healthz alone";
const BESIDE = "herald GET /healthz, 8 clients downloading the error catalog (br)";
const DOCUMENT = "/api/partner/errors.json";
const DOWNLOADERS = 8;

const compression: Benchmark = {
  name: "compression",
  description: "GET /healthz alone vs while clients download a large br-compressed document",
  async run(opts) {
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [`herald ran from ${launch.mode}`];
    if (launch.warning) notes.push(launch.warning);
    const errors: string[] = [];
    const dir = tempDir("compression");
    const engine = await openEngine(opts);
    const results: CaseResult[] = [];
    let downloads = 0;
    let downloadMs = 0;
    let documentBytes = 0;
    let wireBytes = 0;
    try {
      const db = await engine.database(join(dir.path, "herald"));
      progress(`starting herald from ${launch.mode} on ${engine.kind}`);
      const heralds = await startHeralds(db, launch, 1, { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" });
      const base = heralds[0]!.baseUrl;
      try {
        const plain = await fetch(`${base}${DOCUMENT}`);
        documentBytes = (await plain.arrayBuffer()).byteLength;
        results.push(await measureOn(ALONE, heralds, "/healthz", opts));
        let stop = false;
        const started = performance.now();
        const loaders = Array.from({ length: DOWNLOADERS }, async () => {
          // Bounded in count and time, whatever wrk does.
          for (let i = 0; i < 1_000_000 && !stop && performance.now() - started < 120_000; i++) {
            const res = await fetch(`${base}${DOCUMENT}`, { headers: { "accept-encoding": "br" }, decompress: false } as RequestInit);
            const body = await res.arrayBuffer();
            if (res.status !== 200 || res.headers.get("content-encoding") !== "br") {
              errors.push(`${DOCUMENT} answered ${res.status} with Content-Encoding ${res.headers.get("content-encoding")}`);
              return;
            }
            wireBytes = body.byteLength;
            downloads++;
          }
        });
        try {
          results.push(await measureOn(BESIDE, heralds, "/healthz", opts));
        } finally {
          stop = true;
          downloadMs = performance.now() - started;
          await Promise.all(loaders);
        }
      } finally {
        notes.push(...(await stopAll(heralds)));
      }
      for (const r of results) if (r.non_2xx > 0 || r.errors > 0) errors.push(`${r.case}: ${r.non_2xx} responses ≥ 400, ${r.errors} socket errors`);
    } finally {
      await engine.close();
      dir.remove();
    }
    const perSec = downloadMs > 0 ? downloads / (downloadMs / 1000) : 0;
    notes.push(
      `${DOCUMENT}: ${documentBytes.toLocaleString("en-US")} bytes, ${wireBytes.toLocaleString("en-US")} on the wire with br; ${downloads.toLocaleString("en-US")} downloads by ${DOWNLOADERS} clients during the second case and its warmup (${Math.round(perSec).toLocaleString("en-US")}/s)`,
    );
    const withR = withRatios(results, ALONE);
    const ratio = withR[1]?.ratio_vs_baseline ?? null;
    const p = (r: CaseResult | undefined) => (r ? `p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms` : "n/a");
    const summary =
      ratio !== null
        ? [
            `/healthz beside the downloads ÷ alone = ${ratio.toFixed(2)}× (${p(withR[1])} against ${p(withR[0])}); ${Math.round(perSec).toLocaleString("en-US")} compressed downloads/s meanwhile`,
          ]
        : [];
    return {
      benchmark: "compression",
      description: compression.description,
      topology: engine.topology(`${spreadNote(1, opts)}; the downloading clients in the harness's process`),
      results: withR,
      notes,
      summary,
      ratios: { beside_vs_alone: ratio },
      errors,
    };
  },
};

export default compression;
