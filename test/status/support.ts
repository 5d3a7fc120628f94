import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Level } from "../../src/status/checks/types";
import { CHECK_NAMES } from "../../src/status/checks/engine";
import type { TestApp } from "../support/app";

/** A policy file in its own temp dir (the app's dir does not exist before the app). */
export function policyFile(name: string, text: string): { path: string; write(text: string): void; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "herald-policy-"));
  const path = join(dir, name);
  writeFileSync(path, text);
  return { path, write: (t) => writeFileSync(path, t), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A stored snapshot as the job would write it: degraded lists the checks that were not ok. The check set is
 * written in full each time (the job writes "=" when unchanged; both read the same).
 */
export async function insertSnapshot(
  h: TestApp,
  at: string,
  overall: Level,
  degraded: Record<string, Level> = {},
  checks: readonly string[] = CHECK_NAMES,
): Promise<number> {
  const row = await h.ctx.store.get<{ id: number }>(
    "INSERT INTO status_snapshots (generated_at, overall, degraded, checks, policy_version) VALUES (?, ?, ?, ?, 'test') RETURNING id",
    [at, overall, JSON.stringify(degraded), checks.join(",")],
  );
  return row!.id;
}

/** Inserts finished job runs; `ok` null = still running. */
export async function insertRun(
  h: TestApp,
  name: string,
  startedAt: string,
  finishedAt: string | null,
  ok: boolean | null,
  error: string | null = null,
): Promise<void> {
  await h.ctx.store.run("INSERT INTO job_runs (name, started_at, finished_at, ok, error, duration_ms, trigger) VALUES (?, ?, ?, ?, ?, ?, 'schedule')", [
    name,
    startedAt,
    finishedAt,
    ok === null ? null : ok ? 1 : 0,
    error,
    finishedAt ? Date.parse(finishedAt) - Date.parse(startedAt) : null,
  ]);
}

/** A request as the HTTP core logs it: through the request log's buffer and flush (its row and its summaries). */
export async function insertRequest(h: TestApp, at: string, status: number, latencyUs = 1000, route = "/api/public/system-status"): Promise<void> {
  h.ctx.requestLog.record({
    at,
    method: "GET",
    route,
    status,
    latencyUs,
    partnerKeyId: null,
    clientIp: "127.0.0.1",
    requestId: `req_${Math.random().toString(16).slice(2)}`,
    errorCode: null,
  });
  await h.ctx.requestLog.flush();
}

export const iso = (base: string, plusMinutes: number) => new Date(Date.parse(base) + plusMinutes * 60_000).toISOString();

/** An operator's client for the admin status routes: JSON in, JSON out, with a fresh admin token. */
export function operator(h: TestApp, token: string) {
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    h.json(path, { method, headers: { ...auth, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return {
    get: (path: string) => send("GET", path),
    post: (path: string, body: unknown, headers?: Record<string, string>) => send("POST", path, body, headers),
    patch: (path: string, body: unknown) => send("PATCH", path, body),
    del: (path: string) => send("DELETE", path),
  };
}

/** A snapshot every `stepMinutes` from `from` (inclusive) to `to` (exclusive); `degradedAt` marks the bad ones. */
export async function insertSnapshots(
  h: TestApp,
  from: string,
  to: string,
  stepMinutes: number,
  degradedAt: (at: string) => Record<string, Level> | null = () => null,
): Promise<number> {
  const rows: Array<[string, Level, string, string]> = [];
  for (let t = Date.parse(from); t < Date.parse(to) && rows.length < 1_000_000; t += stepMinutes * 60_000) {
    const at = new Date(t).toISOString();
    const degraded = degradedAt(at);
    rows.push([at, degraded ? (Object.values(degraded).includes("bad") ? "bad" : "warn") : "ok", JSON.stringify(degraded ?? {}), CHECK_NAMES.join(",")]);
  }
  // In one transaction, 100 rows a statement: a week of minutely snapshots is 10,080 rows.
  await h.ctx.store.tx(async (t) => {
    for (let i = 0; i < rows.length; i += 100) {
      const chunk = rows.slice(i, i + 100);
      await t.run(
        `INSERT INTO status_snapshots (generated_at, overall, degraded, checks, policy_version) VALUES ${chunk.map(() => "(?, ?, ?, ?, 'test')").join(", ")}`,
        chunk.flat(),
      );
    }
  });
  return rows.length;
}
