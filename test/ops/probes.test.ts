import { afterEach, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { ownUrl } from "../../src/cli/serve";
import { SYNTHETIC_PROBES_JOB } from "../../src/ops/jobs";
import { PROBES, runSyntheticProbes } from "../../src/ops/readiness/probes";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";

// The synthetic probes against a real Herald listening on 127.0.0.1 (an ephemeral port, in process), against a
// stopped server (connection refused) and against a server that never answers (the time limit).

const HISTORY = "/admin/ops/readiness/synthetic-zero-history.csv";
let h: TestApp | undefined;
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
  await h?.close();
  h = undefined;
});

/** A fresh Herald listening on an ephemeral loopback port; returns its base URL. */
async function listening(env: Record<string, string> = {}) {
  h = await openTestApp({ env, clock: new FakeClock("2026-04-01T12:00:00.000Z") });
  h.app.listen({ port: 0, hostname: "127.0.0.1", reusePort: false });
  const app = h.app;
  cleanups.push(async () => {
    await app.stop(true);
  });
  const baseUrl = `http://127.0.0.1:${app.server!.port}`;
  const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  return { h, baseUrl, auth };
}

/** A loopback port nothing listens on: bound once, then released. */
function stoppedServerUrl(): string {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const url = `http://127.0.0.1:${s.port}`;
  s.stop(true);
  return url;
}

const rows = (t: TestApp) => t.ctx.store.all<Record<string, any>>("SELECT * FROM ops_probe_runs ORDER BY id");

describe("synthetic probes", () => {
  test("each probe calls the real endpoint over HTTP and records status, latency and whether it had data", async () => {
    const { h, baseUrl } = await listening();
    const run = await runSyntheticProbes(h.ctx, baseUrl);
    expect(run.base_url).toBe(baseUrl);
    expect(run.run_id).toMatch(/^pr_[0-9a-f]{16}$/);
    const stored = await rows(h);
    expect(stored.map((r) => r.probe)).toEqual(PROBES.map((p) => p.name));
    for (const r of stored) {
      expect(r).toMatchObject({ run_id: run.run_id, at: "2026-04-01T12:00:00.000Z", status: 200, ok: 1, error: null });
      expect(r.url.startsWith(`${baseUrl}/`)).toBe(true);
      expect(Number.isInteger(r.latency_ms) && r.latency_ms >= 0).toBe(true);
    }
    // A fresh service without TOKEN_MINT: status and the share-link check have data; public stats and the
    // holders proof answer 200 with nothing in them yet — "empty", not failing.
    expect(Object.fromEntries(stored.map((r) => [r.probe, r.had_data]))).toEqual({
      system_status: 1,
      public_stats: 0,
      holder_cache_proof: 0,
      share_link_validate: 1,
    });
    expect(stored.find((r) => r.probe === "share_link_validate")!.url).toBe(
      `${baseUrl}/api/public/audio-share-links/validate?track_url=%2Fherald-synthetic-probe`,
    );
  });

  test("the job probes the address serve listens on; without one it records nothing; it prunes old rows", async () => {
    const { h, baseUrl } = await listening({ SYNTHETIC_PROBE_RETENTION_DAYS: "30" });
    const probeRow = (runId: string, at: string) =>
      h.ctx.store.run(
        "INSERT INTO ops_probe_runs (run_id, at, probe, url, status, latency_ms, had_data, ok, error) VALUES (?, ?, 'system_status', 'u', 200, 1, 1, 1, NULL)",
        [runId, at],
      );
    await probeRow("pr_old", "2026-03-01T11:59:59.000Z"); // 31 days old
    await probeRow("pr_recent", "2026-03-03T00:00:00.000Z");
    expect((await h.ctx.jobs.list()).find((j) => j.name === SYNTHETIC_PROBES_JOB)).toMatchObject({ pattern: "20 */5 * * * *" });

    const idle = await h.ctx.jobs.runNow(SYNTHETIC_PROBES_JOB);
    expect(idle.ok).toBe(true);
    expect((await rows(h)).map((r) => r.run_id)).toEqual(["pr_recent"]);

    h.ctx.listenUrl = ownUrl("0.0.0.0", Number(new URL(baseUrl).port));
    expect(h.ctx.listenUrl).toBe(baseUrl);
    expect((await h.ctx.jobs.runNow(SYNTHETIC_PROBES_JOB)).ok).toBe(true);
    const probed = (await rows(h)).filter((r) => r.run_id !== "pr_recent");
    expect(probed).toHaveLength(PROBES.length);
    expect(probed.every((r) => r.status === 200 && r.ok === 1)).toBe(true);
  });

  test("a stopped server and a server that never answers are failing probes with the reason", async () => {
    const { h } = await listening({ SYNTHETIC_PROBE_TIMEOUT_MS: "100" });
    const refused = await runSyntheticProbes(h.ctx, stoppedServerUrl());
    for (const r of refused.results) {
      expect(r).toMatchObject({ status: null, ok: false, had_data: false });
      expect(r.error).toMatch(/ECONNREFUSED|refused|connect/i);
    }
    // Never answers: the request is held until the test ends; the probe's time limit ends it.
    const held: Array<() => void> = [];
    const hung = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>((resolve) => held.push(() => resolve(new Response("")))) });
    cleanups.push(() => {
      for (const release of held) release();
      hung.stop(true);
    });
    const timedOut = await runSyntheticProbes(h.ctx, `http://127.0.0.1:${hung.port}`, [PROBES[0]!]);
    expect(timedOut.results[0]).toMatchObject({ status: null, latency_ms: null, ok: false, error: "timed out after 100 ms" });
  });

  test("synthetic-zero-history.csv lists the empty and failing runs, newest first, bounded by limit and days", async () => {
    const { h, baseUrl, auth } = await listening();
    await runSyntheticProbes(h.ctx, baseUrl); // 12:00 — two empty
    h.clock.advance(3 * 86_400_000);
    const notFound = [{ name: "missing_incident", path: "/api/public/system-status/incidents/999999", hasData: () => true, hasDataRule: "-" }];
    const failed = await runSyntheticProbes(h.ctx, baseUrl, notFound); // +3 d — one failing (404)
    h.clock.advance(60_000);
    const refused = await runSyntheticProbes(h.ctx, stoppedServerUrl(), [PROBES[0]!]); // +3 d 1 min — connection refused

    const res = await h.request(HISTORY, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="herald-synthetic-zero-history.csv"');
    const text = await res.text();
    expect(text.split("\r\n")[0]).toBe("at,run_id,probe,url,outcome,status,latency_ms,had_data,ok,error");
    const all = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(all.map((r) => [r.probe, r.outcome, r.status, r.ok, r.had_data])).toEqual([
      ["system_status", "failed", "", "false", "false"],
      ["missing_incident", "failed", "404", "false", "false"],
      ["holder_cache_proof", "empty", "200", "true", "false"],
      ["public_stats", "empty", "200", "true", "false"],
    ]);
    expect(all[0]).toMatchObject({ run_id: refused.run_id, at: "2026-04-04T12:01:00.000Z" });
    expect(all[1]).toMatchObject({ run_id: failed.run_id, error: "HTTP 404 not_found" });
    expect(all[3]!.error).toBe("");
    // Every row the CSV lists is stored with ok = 0 or had_data = 0; the healthy probes are not listed.
    expect(all.some((r) => r.probe === "system_status" && r.outcome === "empty")).toBe(false);

    const limited = parse(await (await h.request(`${HISTORY}?limit=2`, { headers: auth })).text(), { columns: true }) as Array<Record<string, string>>;
    expect(limited.map((r) => r.probe)).toEqual(["system_status", "missing_incident"]);
    const recent = parse(await (await h.request(`${HISTORY}?days=1`, { headers: auth })).text(), { columns: true }) as Array<Record<string, string>>;
    expect(recent.map((r) => r.probe)).toEqual(["system_status", "missing_incident"]);
    h.clock.advance(30 * 86_400_000);
    const none = await (await h.request(HISTORY, { headers: auth })).text();
    expect(none).toBe("at,run_id,probe,url,outcome,status,latency_ms,had_data,ok,error\r\n");
  });
});
