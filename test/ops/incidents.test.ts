import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import type { Heading, Root, RootContent, Table } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { toString as mdString } from "mdast-util-to-string";
import { gfm } from "micromark-extension-gfm";
import { afterResponses, openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { iso, operator } from "../status/support";

// Incident drafts and the incidents exports (docs/ops-incidents.md), over real data: incidents and updates
// written through the admin status routes, failed requests that went through the HTTP core into request_log,
// and a job run that threw, recorded by the job registry. Time moves only with the fake clock.
//
// Markdown is checked with a real CommonMark + GFM parser (micromark via mdast-util-from-markdown, already in
// node_modules as a dependency of remark): headings, tables and text, and that no user text became markup.

const T0 = "2026-03-10T12:00:00.000Z";
const A_START = iso(T0, -180);
const TRICKY = "Deploy *broke* <b>auth</b> | keys_[1] & ~co~ _em_ SQLITE_BUSY #2 ![x](y) &amp;";

let h: TestApp;
let admin: ReturnType<typeof operator>;
let token: string;
let aId: number;
let bId: number;

/** The request log records a request after its response is sent (a later tick): let it, before the clock moves. */
const settle = () => afterResponses();
const get = (path: string) => h.json(path, { headers: { authorization: `Bearer ${token}` } });
const raw = (path: string) => h.request(path, { headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  h = await openTestApp({ clock: new FakeClock(A_START) });
  token = await createAdminToken(h);
  admin = operator(h, token);
  // Incident A: warn, then bad, resolved after 40 minutes.
  const a = await admin.post("/admin/status/incidents", {
    title: "Webhook deliveries delayed",
    message: "Deliveries are late.",
    severity: "warn",
    components: ["webhooks"],
  });
  expect(a.status).toBe(201);
  aId = a.body.incident.id;
  // Failed requests ten minutes in: a refused admin read, a bad query, an unknown route.
  h.clock.set(iso(T0, -170));
  expect((await h.request("/admin/status/incidents")).status).toBe(403);
  expect((await h.request("/admin/status/incidents", { headers: { authorization: "Bearer nope" } })).status).toBe(403);
  expect((await h.request("/api/public/system-status/incidents?hours=0")).status).toBe(400);
  await settle();
  h.clock.set(iso(T0, -168));
  expect((await h.request("/no/such/route")).status).toBe(404);
  await settle();
  expect(await h.ctx.requestLog.flush()).toBeGreaterThanOrEqual(4);
  // A job that throws, run through the registry: job_runs records the failure.
  h.clock.set(iso(T0, -165));
  h.ctx.jobs.register({
    name: "test-incident-export",
    pattern: "0 0 * * * *",
    description: "throws, for the incident draft tests",
    run: () => {
      throw new Error("disk full while exporting");
    },
  });
  expect((await h.ctx.jobs.runNow("test-incident-export")).ok).toBe(false);
  h.clock.set(iso(T0, -160));
  expect(
    (await admin.post(`/admin/status/incidents/${aId}/updates`, { state: "identified", message: "A receiver holds the queue.", severity: "bad" })).status,
  ).toBe(201);
  h.clock.set(iso(T0, -140));
  expect((await admin.post(`/admin/status/incidents/${aId}/updates`, { state: "resolved", message: "Backlog drained." })).status).toBe(201);
  // Incident B: an outage, still open, with a title full of Markdown.
  h.clock.set(iso(T0, -60));
  const b = await admin.post("/admin/status/incidents", { title: TRICKY, message: "Keys | fail `here`\nsecond line", severity: "bad", components: ["api"] });
  expect(b.status).toBe(201);
  bId = b.body.incident.id;
  h.clock.set(T0);
});
afterAll(async () => {
  await h.close();
});

const md = (text: string): Root => fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
const headings = (root: Root, depth: number) => root.children.filter((n): n is Heading => n.type === "heading" && n.depth === depth).map((n) => mdString(n));
/** The table right after the heading with this text (skipping paragraphs). */
function tableAfter(root: Root, heading: string): string[][] {
  const i = root.children.findIndex((n) => n.type === "heading" && mdString(n) === heading);
  expect(i).toBeGreaterThanOrEqual(0);
  const t = root.children.slice(i + 1).find((n: RootContent) => n.type === "table" || n.type === "heading") as Table | undefined;
  expect(t?.type).toBe("table");
  return t!.children.slice(1).map((row) => row.children.map((cell) => mdString(cell)));
}
const collapse = (s: string) => s.replace(/\s+/g, " ").trim();
const pct = (share: number) => `${(share * 100).toFixed(1)}%`;
const HTML_NODE = (root: Root) => JSON.stringify(root).includes('"type":"html"');

describe("GET /admin/ops/incidents/draft.json", () => {
  test("defaults: the last 24 h, the newest incident, every section, top errors and the failed job", async () => {
    const r = await get("/admin/ops/incidents/draft.json");
    expect(r.status).toBe(200);
    const d = r.body;
    expect(d.window).toEqual({ since: iso(T0, -24 * 60), until: T0, hours: 24, basis: "hours" });
    expect(d.incidents.map((i: any) => i.id)).toEqual([bId, aId]);
    expect(d.incident.id).toBe(bId);
    expect(d.title).toBe(`Incident report: ${TRICKY}`);
    expect(d.impact).toMatchObject({ severity: "bad", severity_label: "outage", status: "open", components: ["api"], ended_at: null });
    expect(d.sections).toEqual(["summary", "impact", "timeline", "incidents", "top_errors", "job_failures", "preflight", "next_steps"]);
    // No snapshot of yesterday in this database: the section says so.
    expect(d.preflight).toMatchObject({
      available: false,
      day_offset: 1,
      changes: [],
      changes_truncated: false,
      note: expect.stringContaining("Not available"),
    });
    expect(d.next_steps.placeholder).toBe(true);
    expect(d.job_failures).toEqual([expect.objectContaining({ job: "test-incident-export", error: "disk full while exporting", started_at: iso(T0, -165) })]);
    // Top errors: the incident is open, so they end at the window's end and look 24 h back.
    const codes = Object.fromEntries(d.top_errors.codes.map((c: any) => [`${c.error_code}/${c.status}`, c.count]));
    expect(codes).toEqual({ "forbidden/403": 2, "invalid_query/400": 1, "not_found/404": 1 });
    expect(d.top_errors).toMatchObject({ error_requests: 4, server_errors: 0, truncated: false, rows_limit: 50_000 });
    expect(d.top_errors.codes[0]).toMatchObject({ error_code: "forbidden", count: 2, share: 0.5 });
    expect(d.top_errors.first_error.at).toBe(iso(T0, -170));
    expect(d.top_errors.last_error.at).toBe(iso(T0, -168));
    const meta = await get("/admin/ops/incidents/draft.json?include_meta=1");
    expect(meta.body.meta).toEqual({ request_id: expect.stringMatching(/^req_/), generated_at_utc: T0 });
  });

  test("index 1 picks the older incident; brief context adds the errors and job failure of its span, full adds the other incident", async () => {
    const brief = (await get("/admin/ops/incidents/draft.json?index=1")).body;
    expect(brief.incident.id).toBe(aId);
    expect(brief.timeline.map((e: any) => [e.at, e.kind])).toEqual([
      [A_START, "incident_started"],
      [A_START, "incident_update"],
      [iso(T0, -170), "first_error"],
      [iso(T0, -168), "last_error"],
      [iso(T0, -165), "job_failure"],
      [iso(T0, -160), "incident_update"],
      [iso(T0, -140), "incident_update"],
      [iso(T0, -140), "incident_resolved"],
    ]);
    expect(brief.timeline[4].text).toContain("disk full while exporting");
    // A resolved incident: the top errors end at its end.
    expect(brief.top_errors.window).toEqual({ since: iso(T0, -140 - 24 * 60), until: iso(T0, -140), hours: 24 });

    const none = (await get("/admin/ops/incidents/draft.json?index=1&context=none")).body;
    expect(none.timeline.map((e: any) => e.kind)).toEqual(["incident_started", "incident_update", "incident_update", "incident_update", "incident_resolved"]);

    const full = (await get("/admin/ops/incidents/draft.json?index=1&context=full")).body;
    expect(full.timeline.filter((e: any) => e.kind === "other_incident").map((e: any) => e.text)).toEqual([expect.stringContaining(`#${bId} started`)]);
    // Brief context around B (opened an hour ago) holds none of A's errors.
    const b = (await get("/admin/ops/incidents/draft.json")).body;
    expect(b.timeline.map((e: any) => e.kind)).toEqual(["incident_started", "incident_update"]);
  });

  test("source, severity, limit, since/until and the minimal template", async () => {
    const status = (await get("/admin/ops/incidents/draft.json?source=status")).body;
    expect(status.top_errors).toBeNull();
    expect(status.job_failures).toBeNull();
    expect(status.omitted).toMatchObject({ top_errors: "source=status reads no request_log" });
    const errors = (await get("/admin/ops/incidents/draft.json?source=errors&context=full")).body;
    expect(errors.incident).toBeNull();
    expect(errors.incidents).toEqual([]);
    expect(errors.sections).toEqual(["summary", "impact", "timeline", "top_errors", "preflight", "next_steps"]);
    expect(errors.timeline.map((e: any) => e.kind)).toEqual(["first_error", "last_error"]);
    const jobs = (await get("/admin/ops/incidents/draft.json?source=jobs")).body;
    expect(jobs.sections).toEqual(["summary", "impact", "timeline", "job_failures", "preflight", "next_steps"]);
    expect(jobs.timeline.map((e: any) => e.kind)).toEqual(["job_failure"]);

    // The filter is on the peak severity: A began as warn but was raised to bad.
    expect((await get("/admin/ops/incidents/draft.json?severity=bad")).body.incidents.map((i: any) => i.id)).toEqual([bId, aId]);
    const warn = await get("/admin/ops/incidents/draft.json?severity=warn");
    expect([warn.status, warn.body.incidents, warn.body.incident]).toEqual([200, [], null]);
    const one = (await get("/admin/ops/incidents/draft.json?limit=1")).body;
    expect([one.incidents.length, one.incidents_total]).toEqual([1, 2]);
    const hour = (await get("/admin/ops/incidents/draft.json?hours=2")).body;
    expect(hour.incidents.map((i: any) => i.id)).toEqual([bId]);
    expect(hour.job_failures).toEqual([]);
    const between = (await get(`/admin/ops/incidents/draft.json?since=${iso(T0, -200)}&until=${iso(T0, -150)}`)).body;
    expect(between.window).toEqual({ since: iso(T0, -200), until: iso(T0, -150), hours: 0.833, basis: "since_until" });
    expect(between.incidents.map((i: any) => i.id)).toEqual([aId]);
    const small = (await get("/admin/ops/incidents/draft.json?index=1&top_errors_limit=3&top_errors_top_n=1&top_errors_hours=1&preflight_day_offset=30")).body;
    expect(small.top_errors.codes).toHaveLength(1);
    expect(small.preflight.day_offset).toBe(30);
    expect(small.top_errors.window.hours).toBe(1);

    const minimal = (await get("/admin/ops/incidents/draft.json?template=minimal")).body;
    expect(minimal.sections).toEqual(["summary", "impact", "timeline", "next_steps"]);
    expect([minimal.top_errors, minimal.job_failures, minimal.preflight]).toEqual([null, null, null]);
    expect(minimal.incidents).toEqual([]);
  });

  test("an empty window drafts the window itself at index 0; any other index is 404", async () => {
    const empty = await get(`/admin/ops/incidents/draft.json?since=${iso(T0, -3000)}&until=${iso(T0, -2900)}`);
    expect(empty.status).toBe(200);
    expect(empty.body.incident).toBeNull();
    expect(empty.body.title).toBe(`Incident report: ${iso(T0, -3000)} to ${iso(T0, -2900)}`);
    const beyond = await get("/admin/ops/incidents/draft.json?index=2");
    expect(beyond.status).toBe(404);
    expect(beyond.body.error).toBe("not_found");
  });
});

describe("the three formats agree", () => {
  for (const template of ["v1", "minimal"] as const) {
    for (const index of [0, 1]) {
      test(`template=${template} index=${index}: Markdown renders the JSON, text has it in ≤ 80 columns`, async () => {
        const q = `?template=${template}&index=${index}&context=full`;
        const d = (await get(`/admin/ops/incidents/draft.json${q}`)).body;
        const mdRes = await raw(`/admin/ops/incidents/draft.md${q}`);
        expect(mdRes.status).toBe(200);
        expect(mdRes.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
        const root = md(await mdRes.text());
        expect(headings(root, 1)).toEqual([d.title]);
        const titles: Record<string, string> = {
          summary: "Summary",
          impact: "Impact",
          timeline: "Timeline",
          incidents: "Incidents in the window",
          top_errors: "Top errors",
          job_failures: "Job failures",
          preflight: "Preflight",
          next_steps: "What we are doing",
        };
        expect(headings(root, 2)).toEqual(d.sections.map((s: string) => titles[s]));
        expect(HTML_NODE(root)).toBe(false); // the tricky title is text, not markup
        const h1 = root.children.find((n) => n.type === "heading" && n.depth === 1) as Heading;
        expect(h1.children.map((c) => c.type)).toEqual(["text"]);
        expect(collapse(mdString(root))).toContain(collapse(d.summary));
        // A line break typed into a message is a space in a table cell.
        expect(tableAfter(root, "Timeline")).toEqual(d.timeline.map((e: any) => [e.at, e.text.replace(/\n/g, " ")]));
        expect(mdString(root)).toContain(d.next_steps.text);
        if (template === "v1") {
          expect(tableAfter(root, "Error codes")).toEqual(d.top_errors.codes.map((c: any) => [c.error_code, String(c.status), String(c.count), pct(c.share)]));
          expect(tableAfter(root, "Routes")).toEqual(
            d.top_errors.routes.map((r: any) => [r.method, r.route, String(r.count), String(r.server_errors), pct(r.share)]),
          );
          expect(tableAfter(root, "Job failures")).toEqual(d.job_failures.map((f: any) => [f.job, String(f.run_id), f.started_at, f.error]));
          expect(tableAfter(root, "Incidents in the window").map((r) => [r[1], r[6]])).toEqual(d.incidents.map((i: any) => [String(i.id), i.title]));
        }

        const txtRes = await raw(`/admin/ops/incidents/draft.txt${q}`);
        expect(txtRes.headers.get("content-type")).toBe("text/plain; charset=utf-8");
        const txt = await txtRes.text();
        for (const line of txt.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
        const flat = collapse(txt);
        expect(flat).toContain(collapse(d.title));
        expect(flat).toContain(collapse(d.summary));
        for (const s of d.sections) expect(txt).toContain(`\n${titles[s]!.toUpperCase()}\n`);
        for (const e of d.timeline) expect(flat).toContain(collapse(`${e.at} ${e.text}`));
        expect(flat).toContain(collapse(d.next_steps.text));
        if (template === "v1") {
          for (const c of d.top_errors.codes) expect(flat).toContain(`${c.count} ${pct(c.share)} ${c.status} ${c.error_code}`);
          for (const f of d.job_failures) expect(flat).toContain(collapse(`${f.started_at} ${f.job} (run ${f.run_id}): ${f.error}`));
          expect(flat).toContain(d.preflight.note);
        }
      });
    }
  }
});

describe("bad input", () => {
  const draftBounds: Array<[string, string]> = [
    ["hours", "0"],
    ["hours", "721"],
    ["hours", "1.5"],
    ["limit", "0"],
    ["limit", "51"],
    ["index", "-1"],
    ["index", "50"],
    ["preflight_day_offset", "0"],
    ["preflight_day_offset", "31"],
    ["top_errors_hours", "0"],
    ["top_errors_hours", "169"],
    ["top_errors_limit", "0"],
    ["top_errors_limit", "200001"],
    ["top_errors_top_n", "0"],
    ["top_errors_top_n", "51"],
    ["source", "everything"],
    ["severity", "critical"],
    ["context", "2"],
    ["template", "v2"],
    ["since", "yesterday"],
    ["until", "2026-03-10"],
  ];
  for (const format of ["json", "md", "txt"]) {
    test(`draft.${format}: every parameter out of its bounds is 400 invalid_query naming it`, async () => {
      for (const [name, value] of draftBounds) {
        const r = await get(`/admin/ops/incidents/draft.${format}?${name}=${encodeURIComponent(value)}`);
        expect([name, value, r.status, r.body.error]).toEqual([name, value, 400, "invalid_query"]);
        expect(JSON.stringify(r.body.details)).toContain(`query.${name}`);
      }
    });
  }

  test("since/until inverted or too far apart is 400 naming the parameter", async () => {
    const inverted = await get(`/admin/ops/incidents/draft.json?since=${iso(T0, -10)}&until=${iso(T0, -20)}`);
    expect([inverted.status, inverted.body.error, inverted.body.details[0].field]).toEqual([400, "invalid_query", "query.until"]);
    const equal = await get(`/admin/ops/incidents/draft.md?since=${iso(T0, -10)}&until=${iso(T0, -10)}`);
    expect(equal.status).toBe(400);
    const wide = await get(`/admin/ops/incidents/draft.txt?since=${iso(T0, -721 * 60)}&until=${T0}`);
    expect([wide.status, wide.body.details[0].field]).toEqual([400, "query.since"]);
    const future = await get(`/admin/ops/incidents/draft.json?since=${iso(T0, 10)}`);
    expect([future.status, future.body.details[0].field]).toEqual([400, "query.until"]);
  });

  test("the list, the exports and the detail refuse their own bad parameters", async () => {
    const cases: Array<[string, string]> = [
      ["/admin/ops/incidents?limit=0", "query.limit"],
      ["/admin/ops/incidents?limit=201", "query.limit"],
      ["/admin/ops/incidents?offset=-1", "query.offset"],
      ["/admin/ops/incidents?status=closed", "query.status"],
      ["/admin/ops/incidents?severity=critical", "query.severity"],
      ["/admin/ops/incidents?since=now", "query.since"],
      ["/admin/ops/incidents/export?limit=1001", "query.limit"],
      ["/admin/ops/incidents/export.json?since=2026", "query.since"],
      ["/admin/ops/incidents/detail.json?id=0", "query.id"],
      ["/admin/ops/incidents/detail.json?index=1000", "query.index"],
      ["/admin/ops/incidents/detail.json?id=1&index=0", "query.index"],
    ];
    for (const [path, field] of cases) {
      const r = await get(path);
      expect([path, r.status, r.body.error]).toEqual([path, 400, "invalid_query"]);
      expect(JSON.stringify(r.body.details)).toContain(field);
    }
  });
});

describe("GET /admin/ops/incidents and its exports", () => {
  test("the list: both incidents with their updates, paged and filtered", async () => {
    const all = await get("/admin/ops/incidents");
    expect(all.status).toBe(200);
    expect(all.body.incidents.map((i: any) => [i.id, i.updates.length])).toEqual([
      [bId, 1],
      [aId, 3],
    ]);
    expect(all.body).toMatchObject({ count: 2, total: 2, pagination: { has_more: false, next_offset: null } });
    const first = (await get("/admin/ops/incidents?limit=1")).body;
    expect(first.pagination).toEqual({ has_more: true, next_offset: 1, next_cursor: null });
    expect((await get("/admin/ops/incidents?limit=1&offset=1")).body.incidents[0].id).toBe(aId);
    expect((await get("/admin/ops/incidents?status=open")).body.incidents.map((i: any) => i.id)).toEqual([bId]);
    expect((await get("/admin/ops/incidents?status=resolved&severity=bad")).body.incidents.map((i: any) => i.id)).toEqual([aId]);
    expect((await get("/admin/ops/incidents?severity=warn")).body.count).toBe(0);
    expect((await get(`/admin/ops/incidents?since=${iso(T0, -100)}`)).body.incidents.map((i: any) => i.id)).toEqual([bId]);
  });

  test("export is a CSV attachment that parses into export.json's rows", async () => {
    const res = await raw("/admin/ops/incidents/export");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="herald-incidents-2026-03-10.csv"');
    const csv = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
    const json = (await get("/admin/ops/incidents/export.json")).body;
    expect(json.count).toBe(2);
    expect(Object.keys(csv[0]!)).toEqual(json.columns);
    expect(csv).toEqual(
      json.rows.map((r: Record<string, unknown>) => Object.fromEntries(json.columns.map((c: string) => [c, r[c] === null ? "" : String(r[c])]))),
    );
    const a = json.rows.find((r: any) => r.id === aId);
    expect(a).toMatchObject({
      severity: "bad",
      status: "resolved",
      update_count: 3,
      last_update_state: "resolved",
      last_update_message: "Backlog drained.",
      components: "webhooks",
    });
    const b = csv.find((r) => r.id === String(bId))!;
    expect(b.title).toBe(TRICKY);
    expect(b.last_update_message).toBe("Keys | fail `here`\nsecond line");
    const filtered = parse(await (await raw("/admin/ops/incidents/export?status=open")).text(), { columns: true });
    expect(filtered.map((r: any) => r.id)).toEqual([String(bId)]);
  });

  test("detail.json: by id or index, the timeline and the errors and job failures of its span; unknown is 404", async () => {
    const byId = await get(`/admin/ops/incidents/detail.json?id=${aId}`);
    expect(byId.status).toBe(200);
    expect(byId.body.incident.id).toBe(aId);
    expect(byId.body.window).toEqual({ since: iso(T0, -195), until: iso(T0, -125) });
    expect(byId.body.timeline.map((e: any) => e.kind)).toContain("job_failure");
    expect(byId.body.related.job_failures).toHaveLength(1);
    expect(byId.body.related.errors.error_requests).toBe(4);
    expect((await get("/admin/ops/incidents/detail.json")).body.incident.id).toBe(bId);
    expect((await get("/admin/ops/incidents/detail.json?index=1")).body.incident.id).toBe(aId);
    for (const path of ["/admin/ops/incidents/detail.json?id=999", "/admin/ops/incidents/detail.json?index=2"]) {
      const r = await get(path);
      expect([r.status, r.body.error]).toEqual([404, "not_found"]);
    }
  });
});

test("the preflight section compares today's guards with an earlier snapshot, in all three formats", async () => {
  const { takePreflightSnapshot } = await import("../../src/ops/preflight/service");
  const d0 = h.clock.now().toISOString().slice(0, 10);
  await takePreflightSnapshot(h.ctx);
  await h.ctx.store.run("UPDATE ops_preflight_snapshots SET value = 'an older value', fingerprint = 'f0' WHERE day = ? AND field = 'version'", [d0]);
  h.clock.advance(24 * 3_600_000);
  try {
    const d = (await get("/admin/ops/incidents/draft.json?preflight_day_offset=1")).body;
    expect(d.preflight).toMatchObject({ available: true, day_offset: 1, compare_day: d0, counts: { changed: 1, added: 0, removed: 0 } });
    expect(d.preflight.changes).toEqual([expect.objectContaining({ field: "version", change: "changed", before: "an older value" })]);
    expect(d.preflight.note).toContain("1 preflight guard field differs from the snapshot of");
    const md = await (await h.request("/admin/ops/incidents/draft.md?preflight_day_offset=1", { headers: { authorization: `Bearer ${token}` } })).text();
    const txt = await (await h.request("/admin/ops/incidents/draft.txt?preflight_day_offset=1", { headers: { authorization: `Bearer ${token}` } })).text();
    for (const body of [md, txt]) expect(body).toContain("artifact.version: changed (an older value ");
  } finally {
    h.clock.advance(-24 * 3_600_000);
  }
});

test("every route is 403 without the admin token", async () => {
  const paths = [
    "/admin/ops/incidents/draft.json",
    "/admin/ops/incidents/draft.md",
    "/admin/ops/incidents/draft.txt",
    "/admin/ops/incidents",
    "/admin/ops/incidents/export",
    "/admin/ops/incidents/export.json",
    "/admin/ops/incidents/detail.json",
  ];
  for (const path of paths) {
    for (const headers of [{}, { authorization: "Bearer not-a-token" }] as Array<Record<string, string>>) {
      const r = await h.json(path, { headers });
      expect([path, r.status, r.body.error]).toEqual([path, 403, "forbidden"]);
    }
  }
});
