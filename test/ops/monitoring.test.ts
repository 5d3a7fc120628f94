import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { afterResponses, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { testEngine } from "../support/engine";
import { reportSkipped, testOn } from "../support/skipped";

// The monitoring operators already run (deploy/prometheus, deploy/grafana; docs/monitoring.md): the alerting rules
// pass `promtool check rules` and their own unit tests (series that fire each alert and series that must not), the
// example Prometheus configuration loads them, the dashboard is a well-formed Grafana dashboard whose queries parse,
// and every metric a rule or a panel reads is one a running Herald serves on /metrics. Each engine has series the
// other lacks (the backup age on SQLite, the connection pool on PostgreSQL): each pass of the suite (SQLite, then
// HERALD_TEST_ENGINE=postgres) checks its own engine's, and that the other's are exactly those listed here.

const FILE = "test/ops/monitoring.test.ts";
const ROOT = join(import.meta.dir, "../..");
const RULES = join(ROOT, "deploy/prometheus/herald-rules.yml");
const RULE_TESTS = join(ROOT, "deploy/prometheus/herald-rules.test.yml");
const PROMETHEUS_CONFIG = join(ROOT, "deploy/prometheus/prometheus.yml");
const DASHBOARD = join(ROOT, "deploy/grafana/herald-dashboard.json");
const UNIT = join(ROOT, "deploy/systemd/herald.service");
const DOC = join(ROOT, "docs/monitoring.md");

/** Debian's `prometheus` package puts promtool on PATH; CI installs it (a skip there is a failure). */
const promtool = Bun.which("promtool") ?? (existsSync("/usr/bin/promtool") ? "/usr/bin/promtool" : null);
if (!promtool) reportSkipped(FILE, "promtool is absent (apt-get install -y prometheus): the rules are not checked");

/** Series Prometheus makes itself for every target, not read from /metrics. */
const PROMETHEUS_OWN = new Set(["up"]);

/** Series only one engine serves: Herald makes backups of the SQLite file only; only PostgreSQL has a pool. */
const ENGINE_ONLY: Record<string, "sqlite" | "postgres"> = {
  herald_backup_age_seconds: "sqlite",
  herald_db_pool_busy: "postgres",
  herald_db_pool_max: "postgres",
};

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (parseYaml(readFileSync(RULES, "utf8")) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Array<{ expr: string; refId: string; datasource?: { uid: string } }>;
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: unknown }> };
};
const dashboardExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
/** The metric each query variable lists label values of (`label_values(metric{…}, label)`). */
const variableMetrics = dashboard.templating.list
  .filter((v) => v.type === "query")
  .map((v) => {
    const q = typeof v.query === "string" ? v.query : (v.query as { query: string }).query;
    const m = /label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(q);
    if (!m) throw new Error(`variable ${v.name}: not a label_values query: ${q}`);
    return m[1]!;
  });

function run(cmd: string, args: string[], cwd = ROOT): { status: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

// --- PromQL ------------------------------------------------------------------------------------------------------

const KEYWORDS = new Set(["and", "or", "unless", "bool", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "atan2", "inf", "nan"]);

/**
 * The metric names a PromQL expression reads. What is not a metric name is removed first: string literals (label
 * values, label_replace's arguments), label matchers `{…}`, ranges and subqueries `[…]`, the label lists of
 * by/without/on/ignoring/group_left/group_right and `offset` durations. Of what remains, an identifier followed by
 * `(` is a function, a keyword or number is neither, and every other identifier is a metric name.
 */
function metricNames(expr: string): string[] {
  let s = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  s = s.replace(/\{[^{}]*\}/g, " ");
  s = s.replace(/\[[^\]]*\]/g, " ");
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  s = s.replace(/\boffset\s+-?[0-9a-z]+/g, " ");
  const names = new Set<string>();
  for (const m of s.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = m[0];
    const before = s[m.index! - 1];
    if (before !== undefined && /[0-9.]/.test(before)) continue; // the exponent or suffix of a number (1e3, 26h)
    if (KEYWORDS.has(word.toLowerCase())) continue;
    if (/^\s*\(/.test(s.slice(m.index! + word.length))) continue;
    names.add(word);
  }
  return [...names];
}

/** Grafana's variables replaced by values PromQL accepts, to parse a panel's query. */
const withVariables = (expr: string) =>
  expr
    .replace(/\$__rate_interval|\$__interval|\$__range/g, "5m")
    .replace(/\$\{?instance\}?/g, ".*")
    .replace(/\$\{?job\}?/g, "herald");

// --- The exposition ----------------------------------------------------------------------------------------------

/**
 * The sample names /metrics serves, from its `# TYPE` lines: a histogram's family serves `_bucket`, `_sum` and
 * `_count` (not its bare name), a summary its bare name (the quantiles), `_sum` and `_count`, any other type its name.
 * Every sample line must belong to a declared family, so a series without its TYPE line is noticed too.
 */
function servedNames(exposition: string): Set<string> {
  const served = new Set<string>();
  for (const line of exposition.split("\n")) {
    const m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (!m) continue;
    const [, name, type] = m;
    if (type === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) served.add(name + suffix);
    else if (type === "summary") for (const suffix of ["", "_sum", "_count"]) served.add(name + suffix);
    else served.add(name!);
  }
  for (const line of exposition.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (!name || !served.has(name)) throw new Error(`/metrics serves a sample outside any declared family: ${line}`);
  }
  return served;
}

/** One scrape of /metrics with the admin token, after a few requests so that the per-request series exist. */
async function scrape(h: TestApp): Promise<string> {
  const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  // Answers of several status classes: 200, 404 and 429 (the public limit is 2 a minute in these apps).
  for (let i = 0; i < 3; i++) await h.request("/api/public/system-status");
  await h.request("/no-such-route");
  await afterResponses(); // requests are counted after their answer
  const res = await h.request("/metrics", { headers: auth });
  expect(res.status).toBe(200);
  return res.text();
}

// --- promtool ----------------------------------------------------------------------------------------------------

describe.skipIf(!promtool)("promtool", () => {
  test("the rules pass promtool check rules", () => {
    const r = run(promtool!, ["check", "rules", RULES]);
    expect(r.out).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(r.status).toBe(0);
  });

  test("the rules pass their unit tests (promtool test rules)", () => {
    const r = run(promtool!, ["test", "rules", RULE_TESTS]);
    if (r.status !== 0) console.error(r.out);
    expect(r.status).toBe(0);
    expect(r.out).toContain("SUCCESS");
  });

  test("the example Prometheus configuration loads the rules (promtool check config)", () => {
    // Copied beside the rules with its token file present, as promtool checks that the file exists.
    const dir = mkdtempSync(join(tmpdir(), "herald-prom-"));
    try {
      const token = join(dir, "herald-admin-token");
      writeFileSync(token, "a-token\n");
      copyFileSync(RULES, join(dir, "herald-rules.yml"));
      const config = readFileSync(PROMETHEUS_CONFIG, "utf8");
      expect(config).toContain("credentials_file: /etc/prometheus/herald-admin-token");
      writeFileSync(join(dir, "prometheus.yml"), config.replace("/etc/prometheus/herald-admin-token", token));
      const r = run(promtool!, ["check", "config", join(dir, "prometheus.yml")]);
      if (r.status !== 0) console.error(r.out);
      expect(r.status).toBe(0);
      expect(r.out).toContain(`SUCCESS: ${rules.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("every dashboard query is valid PromQL (checked as recording rules)", () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-grafana-"));
    try {
      const lines = ["groups:", "  - name: dashboard", "    rules:"];
      dashboardExprs.forEach((expr, i) => lines.push(`      - record: dashboard_query_${i}`, `        expr: ${JSON.stringify(withVariables(expr))}`));
      writeFileSync(join(dir, "queries.yml"), `${lines.join("\n")}\n`);
      const r = run(promtool!, ["check", "rules", join(dir, "queries.yml")]);
      if (r.status !== 0) console.error(r.out);
      expect(r.status).toBe(0);
      expect(r.out).toContain(`SUCCESS: ${dashboardExprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test("the systemd unit passes systemd-analyze verify (where systemd's tools are installed)", () => {
  const analyze = Bun.which("systemd-analyze");
  if (!analyze) return; // no systemd here: nothing to check the unit with
  const dir = mkdtempSync(join(tmpdir(), "herald-unit-"));
  try {
    // verify also checks that ExecStart's program exists: this machine has no /usr/local/bin/herald, but has bun.
    const unit = readFileSync(UNIT, "utf8");
    expect(unit).toContain("ExecStart=/usr/local/bin/herald serve");
    writeFileSync(join(dir, "herald.service"), unit.replace("ExecStart=/usr/local/bin/herald", `ExecStart=${process.execPath}`));
    const r = run(analyze, ["verify", join(dir, "herald.service")]);
    expect(r.out).not.toContain("herald.service:");
    expect(r.status).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("docs/postgres.md shows the systemd unit and the nginx configuration as the files have them", () => {
  const doc = readFileSync(join(ROOT, "docs/postgres.md"), "utf8");
  const block = (fence: string, first: string) => {
    const at = doc.indexOf(`\`\`\`${fence}\n${first}`);
    expect(at, `${fence} block starting ${first}`).toBeGreaterThan(-1);
    const body = doc.slice(at + fence.length + 4);
    return body.slice(0, body.indexOf("```")).split("\n");
  };
  // Directives without comments (nginx allows one at the end of a line, systemd does not), in order.
  const directives = (lines: string[]) => lines.map((l) => l.replace(/(^|\s)#.*$/, "").trim()).filter((l) => l !== "");
  const unit = readFileSync(UNIT, "utf8").split("\n");
  const shown = directives(block("ini", "# /etc/systemd/system/herald.service"));
  expect(shown.length).toBeGreaterThan(10);
  for (const line of shown) expect(unit, line).toContain(line);
  expect(directives(block("nginx", "upstream herald {"))).toEqual(directives(readFileSync(join(ROOT, "deploy/nginx/herald.conf"), "utf8").split("\n")));
});

// --- The files' shape --------------------------------------------------------------------------------------------

test("every alert has a for, a severity, a summary, a description and a runbook section that exists", () => {
  const doc = readFileSync(DOC, "utf8");
  // GitHub's anchors: the heading in lower case, punctuation dropped, spaces as hyphens.
  const anchors = new Set(
    [...doc.matchAll(/^#+ (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/[^\w\- ]/g, "")
        .replace(/ /g, "-"),
    ),
  );
  expect(rules.length).toBeGreaterThanOrEqual(10);
  for (const r of rules) {
    expect(r.for, r.alert).toMatch(/^\d+[smh]$/);
    expect(["warning", "critical"], r.alert).toContain(r.labels?.severity ?? "(none)");
    expect(r.annotations?.summary?.length, r.alert).toBeGreaterThan(10);
    expect(r.annotations?.description?.length, r.alert).toBeGreaterThan(40);
    const runbook = r.annotations?.runbook_url ?? "";
    expect(runbook, r.alert).toStartWith("docs/monitoring.md#");
    expect(anchors.has(runbook.split("#")[1]!), `${r.alert}: ${runbook}`).toBe(true);
  }
});

test("the unit tests fire every alert and also have cases where it must not fire", () => {
  const spec = parseYaml(readFileSync(RULE_TESTS, "utf8")) as {
    tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
  };
  const cases = spec.tests.flatMap((t) => t.alert_rule_test);
  for (const r of rules) {
    const mine = cases.filter((c) => c.alertname === r.alert);
    expect(
      mine.some((c) => c.exp_alerts.length > 0),
      `${r.alert} is never expected to fire`,
    ).toBe(true);
    expect(
      mine.some((c) => c.exp_alerts.length === 0),
      `${r.alert} has no case where it must stay quiet`,
    ).toBe(true);
  }
});

test("the dashboard is a Grafana dashboard: unique panel ids, laid out in 24 columns, every query on the chosen Prometheus", () => {
  expect(dashboard.uid).toBe("herald-overview");
  expect(dashboard.title).toBe("Herald");
  expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
  const ids = dashboard.panels.map((p) => p.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(dashboard.templating.list.map((v) => v.name)).toEqual(["datasource", "job", "instance"]);
  for (const p of dashboard.panels) {
    expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
    if (p.type === "row") continue;
    expect(p.datasource?.uid, p.title).toBe("${datasource}");
    expect(p.targets?.length, p.title).toBeGreaterThan(0);
    for (const t of p.targets ?? []) {
      expect(t.expr.length, p.title).toBeGreaterThan(0);
      expect(t.expr, p.title).toContain('job="$job"');
    }
  }
  // The panels the issue asks for, by the metric each reads.
  const read = new Set(dashboardExprs.flatMap(metricNames));
  for (const name of [
    "herald_http_requests_total",
    "herald_http_request_duration_seconds_bucket",
    "herald_db_unavailable",
    "herald_job_last_success_timestamp_seconds",
    "herald_webhook_dead_letters",
    "herald_backup_age_seconds",
    "herald_db_pool_busy",
    "herald_db_pool_max",
    "herald_event_loop_lag_seconds_bucket",
    "herald_event_loop_lag_seconds_count",
    "herald_event_loop_lag_max_seconds",
  ])
    expect(read.has(name), name).toBe(true);
});

test("metricNames finds metric names and nothing else", () => {
  expect(
    metricNames(
      'sum by (job, le) (rate(herald_http_request_duration_seconds_bucket{route!~"/healthz|/readyz"}[5m])) > 1 and on (job) increase(herald_http_requests_total[15m] offset 1h) >= 2e1',
    ).sort(),
  ).toEqual(["herald_http_request_duration_seconds_bucket", "herald_http_requests_total"]);
  expect(metricNames("(time() - herald_job_last_success_timestamp_seconds) > herald_job_stale_after_seconds")).toEqual([
    "herald_job_last_success_timestamp_seconds",
    "herald_job_stale_after_seconds",
  ]);
  expect(metricNames('sum by (class) (label_replace(rate(x_total{job="$job"}[$__rate_interval]), "class", "${1}xx", "status", "(.).."))')).toEqual(["x_total"]);
  expect(metricNames("herald_backup_age_seconds > 26 * 3600 < +Inf")).toEqual(["herald_backup_age_seconds"]);
  expect(metricNames("up == 0")).toEqual(["up"]);
});

// --- Against a running Herald ------------------------------------------------------------------------------------

describe("every metric the rules and the dashboard read is served by /metrics", () => {
  const engine = testEngine();
  let h: TestApp;
  let served = new Set<string>();
  let body = "";
  /** Served here, or a series of the other engine only. */
  const known = (name: string) => served.has(name) || (ENGINE_ONLY[name] !== undefined && ENGINE_ONLY[name] !== engine);

  beforeAll(async () => {
    // JOBS_ENABLED=1 publishes each job's stale limit (the app starts no job either way).
    h = await openTestApp({ env: { JOBS_ENABLED: "1", RATE_LIMIT_PUBLIC_API_PER_MIN: "2" } });
    body = await scrape(h);
    served = servedNames(body);
  });
  afterAll(() => h?.close());

  test("the scrape holds the labelled series the rules read, not only their TYPE lines", () => {
    expect(body).toMatch(/^herald_http_requests_total\{[^}]*status="200"\} [1-9]/m);
    // The public per-IP limit refuses before any route is matched: counted under a route of its own.
    expect(body).toContain('herald_http_requests_total{method="GET",route="(public rate limit)",status="429"} 1');
    expect(body).toMatch(/^herald_http_request_duration_seconds_bucket\{[^}]*le="\+Inf"\} [1-9]/m);
    expect(body).toMatch(/^herald_job_stale_after_seconds\{job="[a-z-]+"\} \d+/m);
    expect(body).toMatch(/^herald_db_unavailable 0$/m);
  });

  test("rules", () => {
    const used = new Set(rules.flatMap((r) => metricNames(r.expr)));
    expect(used.size).toBeGreaterThanOrEqual(10);
    expect([...used].filter((n) => !PROMETHEUS_OWN.has(n) && !known(n))).toEqual([]);
  });

  test("dashboard panels and variables", () => {
    const used = new Set([...dashboardExprs.flatMap(metricNames), ...variableMetrics]);
    expect([...used].filter((n) => !known(n))).toEqual([]);
  });

  test(`the series of one engine: ${engine} serves its own and not the other's`, () => {
    for (const [name, only] of Object.entries(ENGINE_ONLY)) expect(served.has(name), name).toBe(only === engine);
    expect(served.has("herald_db_pool_exhausted_total")).toBe(true);
  });
});

// --- The series this adds to /metrics ------------------------------------------------------------------------------

/** The value of one series (exact label text) in the exposition, or undefined when absent. */
function sample(body: string, name: string, labels = ""): string | undefined {
  const prefix = `${name}${labels ? `{${labels}}` : ""} `;
  return body
    .split("\n")
    .find((l) => l.startsWith(prefix))
    ?.slice(prefix.length);
}

test("herald_job_stale_after_seconds is the status policy's limit, only for jobs expected to run here", async () => {
  const h = await openTestApp({ env: { JOBS_ENABLED: "1", JOBS_DISABLED: "request-log-prune" } });
  try {
    const body = await scrape(h);
    // Every 15 minutes × stale_factor 3; a job every 5 s is held to min_stale_minutes (5).
    expect(sample(body, "herald_job_stale_after_seconds", 'job="alerts-monitor"')).toBe("2700");
    expect(sample(body, "herald_job_stale_after_seconds", 'job="synthetic-probes"')).toBe("900");
    // Quiet when idle (judged by its runs instead), or disabled: no limit, as the status page never calls them stale.
    expect(sample(body, "herald_job_stale_after_seconds", 'job="webhook-dispatch"')).toBeUndefined();
    expect(sample(body, "herald_job_stale_after_seconds", 'job="request-log-prune"')).toBeUndefined();
    // The status page's jobs check judges with the same limits.
    const status = await h.json("/api/public/system-status");
    const jobs = status.body.checks.jobs.jobs as Array<{ name: string; interval_seconds: number | null }>;
    expect(jobs.find((j) => j.name === "alerts-monitor")?.interval_seconds).toBe(900);
  } finally {
    await h.close();
  }
  const off = await openTestApp({ env: { JOBS_ENABLED: "0" } });
  try {
    const body = await scrape(off);
    expect(body).toContain("# TYPE herald_job_stale_after_seconds gauge");
    expect(body).not.toContain("herald_job_stale_after_seconds{");
  } finally {
    await off.close();
  }
});

// On the PostgreSQL pass only (HERALD_TEST_ENGINE=postgres): SQLite has no pool.
testOn("postgres", "test/ops/monitoring.test.ts")("the PostgreSQL pool's use and its exhaustion are counted as they happen", async () => {
  const h = await openTestApp({ env: { DATABASE_POOL_MAX: "3", DATABASE_ACQUIRE_TIMEOUT_MS: "200" } });
  const gauge = async (name: string) => (await h.ctx.metrics.registry.getSingleMetric(name)!.get()).values[0]?.value;
  try {
    expect(await gauge("herald_db_pool_max")).toBe(3);
    expect(await gauge("herald_db_pool_busy")).toBe(0);
    // Three transactions hold every connection until released.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const holders = [1, 2, 3].map(() =>
      h.ctx.store.tx(async (t) => {
        await t.get("SELECT 1 AS one");
        started++;
        await held;
      }),
    );
    while (started < 3) await Bun.sleep(5);
    expect(await gauge("herald_db_pool_busy")).toBe(3);
    // A fourth waits DATABASE_ACQUIRE_TIMEOUT_MS for a connection, gets none and is refused.
    await expect(h.ctx.store.tx((t) => t.get("SELECT 1 AS one"))).rejects.toThrow(/DATABASE_POOL_MAX connections were all busy/);
    expect(await gauge("herald_db_pool_exhausted_total")).toBe(1);
    release();
    await Promise.all(holders);
    expect(await gauge("herald_db_pool_busy")).toBe(0);
    // The scrape shows the same.
    const body = await scrape(h);
    expect(sample(body, "herald_db_pool_exhausted_total")).toBe("1");
    expect(sample(body, "herald_db_pool_max")).toBe("3");
    expect(sample(body, "herald_db_pool_busy")).toBe("0");
  } finally {
    await h.close();
  }
});
