import { afterEach, describe, expect, test } from "bun:test";
import { absKey } from "../../src/transparency/audit/amounts";
import { exportRowOf } from "../../src/transparency/reports/exports";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { P, rows, T0 } from "./support";

// export.json's rows are written by the database (a JSON text per row built with ||, one string_agg per page of
// 1,000: src/transparency/store/exports.ts, the same SQL on both engines); they must be the same bytes as
// JSON.stringify(exportRowOf(row)), the reference the CSV export still uses: decimal formatting at 0, 6 and 9
// decimals, signs, zero, types, severities, triage, detail, quotes and backslashes — and the commas across pages
// and runs. Runs on SQLite and, with HERALD_TEST_ENGINE=postgres, on PostgreSQL.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const EXPECTED_SQL =
  "SELECT r.id, r.run_id, r.signature, r.kind, r.slot, r.block_time, r.delta_raw, r.types, r.severity_rank, r.declaration_id, r.detail, t.status AS triage FROM audit_rows r LEFT JOIN audit_triage t ON t.signature = r.signature WHERE r.run_id = ? ORDER BY r.id";

const DELTAS = [0n, 1n, -1n, 10n, -100n, 123_456n, -1_000_000n, 1_000_001n, -12_345_678_901n, 18_446_744_073_709_551_615n, -900_000_000_000_000_000n];
const TYPES = ["", "untracked_outflow", "untracked_outflow,large_transfer", "balance_mismatch", "duplicate_signature"];

describe("export.json rows written by the database", () => {
  test("byte for byte JSON.stringify(exportRowOf(row)) over three runs of different decimals, across page boundaries", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const perRun = [7, 2345, 1000]; // inside one page, across three pages, exactly one full page
    const decimals = [0, 6, 9];
    await h.ctx.store.tx(async (t) => {
      await t.run(
        "INSERT INTO audit_triage (signature, status, owner, eta_utc, note, updated_at, updated_by) VALUES ('sig-3', 'investigating', 'ops', NULL, NULL, ?, 'admin')",
        [T0],
      );
      for (const [k, count] of perRun.entries()) {
        const label = `2026-01-0${k + 1}T00:00:00Z`;
        await t.run(
          "INSERT INTO audit_runs (id, label, day, started_at, finished_at, mint, decimals, is_complete, rows_total, thresholds) VALUES (?, ?, ?, ?, ?, 'M', ?, 1, ?, '{}')",
          [k + 1, label, label.slice(0, 10), label, label, decimals[k]!, count],
        );
        for (let i = 0; i < count; i++) {
          const delta = DELTAS[i % DELTAS.length]!;
          const types = TYPES[i % TYPES.length]!;
          const detail = i % 4 === 0 ? JSON.stringify({ token_delta_raw: "0", lp_delta_raw: `${delta}`, n: i, ok: true, list: ["a", 'b"c'] }) : null;
          await t.run(
            "INSERT INTO audit_rows (run_id, kind, signature, slot, block_time, delta_raw, abs_key, types, severity_rank, declaration_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
              k + 1,
              i % 9 === 0 ? "token_snapshot" : "transaction",
              // A quote and a backslash in a few signatures: the SQL escapes them as JSON.stringify does.
              i % 13 === 0 ? `sig-${i}"q\\b` : `sig-${i}`,
              i % 5 === 0 ? null : 300_000_000 + i,
              i % 7 === 0 ? null : `2026-01-01T00:00:${String(i % 60).padStart(2, "0")}.000Z`,
              delta.toString(),
              absKey(delta),
              types,
              types ? (i % 4) + 1 : 0,
              i % 11 === 0 ? 3 : null,
              detail,
            ],
          );
        }
      }
    });
    const expected = async (runIds: number[]) => {
      const out: string[] = [];
      for (const id of runIds)
        for (const r of await rows(h!, EXPECTED_SQL, id)) out.push(JSON.stringify(exportRowOf(r as Parameters<typeof exportRowOf>[0], decimals[id - 1]!)));
      return out;
    };
    for (const [query, runIds] of [
      ["run=1", [1]],
      ["run=2", [2]],
      ["run=3", [3]],
      ["from=2026-01-01&to=2026-01-03", [1, 2, 3]],
    ] as const) {
      const res = await h.request(`${P}/export.json?${query}`);
      expect(res.status).toBe(200);
      const text = await res.text();
      const want = await expected([...runIds]);
      expect(text).toContain(`,"rows":[${want.join(",")}],"count":${want.length}}`);
      expect(JSON.parse(text).count).toBe(want.length);
    }
    // Filters go through the same SQL: the filtered rows are the same subset, the same bytes.
    const j = JSON.parse(await (await h.request(`${P}/export.json?run=2&severity=high&types=large_transfer`)).text());
    expect(j.rows.length).toBeGreaterThan(0);
    expect(j.rows.every((r: { severity: string; anomaly_types: string[] }) => r.severity === "high" && r.anomaly_types.includes("large_transfer"))).toBe(true);
  });

  test("a row holding a control character (no SQL escapes it): its page is written row by row, still valid and the same bytes", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    await h.ctx.store.run(
      "INSERT INTO audit_runs (id, label, day, started_at, finished_at, mint, decimals, is_complete, rows_total, thresholds) VALUES (1, '2026-01-01T00:00:00Z', '2026-01-01', ?, ?, 'M', 6, 1, 3, '{}')",
      [T0, T0],
    );
    for (const signature of ["plain", "tab\there", "line\nbreak"])
      await h.ctx.store.run(
        "INSERT INTO audit_rows (run_id, kind, signature, slot, block_time, delta_raw, abs_key, types, severity_rank) VALUES (1, 'transaction', ?, 1, NULL, '-5', ?, '', 0)",
        [signature, absKey(-5n)],
      );
    const text = await (await h.request(`${P}/export.json?run=1`)).text();
    const want = (await rows(h, EXPECTED_SQL, 1)).map((r) => JSON.stringify(exportRowOf(r as Parameters<typeof exportRowOf>[0], 6)));
    expect(text).toContain(`,"rows":[${want.join(",")}],"count":3}`);
    expect(JSON.parse(text).rows.map((r: { signature: string }) => r.signature)).toEqual(["plain", "tab\there", "line\nbreak"]);
  });
});
