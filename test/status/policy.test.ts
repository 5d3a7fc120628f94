import { afterEach, describe, expect, test } from "bun:test";
import { DEFAULT_POLICY, loadPolicy, parsePolicy } from "../../src/status/checks/policy";
import { openTestApp, type TestApp } from "../support/app";
import { policyFile } from "./support";

// The status policy: built-in default, a YAML or JSON file merged over it, and a bad file that never stops
// the service (loaded=false with the error, the default in force).

let h: TestApp | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  while (cleanups.length) cleanups.pop()!();
});

async function appWithPolicy(name: string, text: string) {
  const f = policyFile(name, text);
  cleanups.push(f.remove);
  h = await openTestApp({ env: { STATUS_POLICY_PATH: f.path } });
  return { h, f };
}

describe("GET /api/public/system-status/policy", () => {
  test("without STATUS_POLICY_PATH: the built-in default, loaded=false, no error", async () => {
    h = await openTestApp();
    const r = await h.json("/api/public/system-status/policy");
    expect(r.status).toBe(200);
    expect(r.body.policy).toEqual({
      source: "builtin_default",
      file: null,
      loaded: false,
      error: null,
      version: "builtin-1",
      exclude_maintenance_default: true,
      audit_anomalies_warn_degrades: false,
      checks: DEFAULT_POLICY.checks,
    });
    expect(r.headers.get("cache-control")).toBe("public, max-age=30");
  });

  test("a YAML file overrides only what it names; the rest stays default", async () => {
    const { h } = await appWithPolicy(
      "status-policy.yaml",
      `version: ops-2026-01
exclude_maintenance_default: false
checks:
  webhooks:
    backlog_warn: 5
  freshness:
    stale: bad
`,
    );
    const { body } = await h.json("/api/public/system-status/policy");
    expect(body.policy).toMatchObject({
      source: "file",
      file: "status-policy.yaml",
      loaded: true,
      error: null,
      version: "ops-2026-01",
      exclude_maintenance_default: false,
    });
    expect(body.policy.checks.webhooks).toEqual({ ...DEFAULT_POLICY.checks.webhooks, backlog_warn: 5 });
    expect(body.policy.checks.freshness).toEqual({ ...DEFAULT_POLICY.checks.freshness, stale: "bad" });
    expect(body.policy.checks.reliability).toEqual(DEFAULT_POLICY.checks.reliability);
    // The live status says which policy judged it.
    expect((await h.json("/api/public/system-status")).body.policy_version).toBe("ops-2026-01");
  });

  test("a JSON file is read by the same parser", async () => {
    const { h } = await appWithPolicy(
      "policy.json",
      JSON.stringify({ version: "json-1", audit_anomalies_warn_degrades: true, checks: { request_errors: { min_requests: 1 } } }),
    );
    const { body } = await h.json("/api/public/system-status/policy");
    expect(body.policy).toMatchObject({ source: "file", loaded: true, version: "json-1", audit_anomalies_warn_degrades: true });
    expect(body.policy.checks.request_errors.min_requests).toBe(1);
  });

  const BAD: Array<[string, string, RegExp]> = [
    ["unknown setting (a typo)", "checks:\n  webhooks:\n    backlog_wran: 5\n", /checks\.webhooks\.backlog_wran is not a known setting/],
    ["unknown check", "checks:\n  mystery: {}\n", /mystery.*not a known setting/],
    ["wrong type", "checks:\n  reliability:\n    window_days: seven\n", /window_days/],
    ["out of range", "checks:\n  reliability:\n    window_days: 0\n", /window_days/],
    ["not_configured may not be bad", "checks:\n  freshness:\n    not_configured: bad\n", /checks\.freshness\.not_configured must be one of: ok, warn/],
    ["bad below warn", "checks:\n  webhooks:\n    backlog_warn: 100\n    backlog_bad: 10\n", /webhooks\.backlog.*below the warn/],
    ["not a mapping", "- just\n- a list\n", /mapping/],
    ["not YAML at all", "checks: [unclosed\n", /not valid YAML or JSON/],
  ];
  for (const [name, text, error] of BAD) {
    test(`a bad file (${name}): the service starts, loaded=false with the error, the default applies`, async () => {
      const { h } = await appWithPolicy("bad.yaml", text);
      const { status, body } = await h.json("/api/public/system-status/policy");
      expect(status).toBe(200);
      expect(body.policy).toMatchObject({ source: "builtin_default", file: "bad.yaml", loaded: false, version: "builtin-1" });
      expect(body.policy.error).toMatch(error);
      expect(body.policy.error).not.toContain("/"); // the base name only: no host paths in public
      expect(body.policy.checks).toEqual(DEFAULT_POLICY.checks);
      // Everything keeps working on the default.
      expect((await h.json("/api/public/system-status")).status).toBe(200);
      expect((await h.ctx.jobs.runNow("status-snapshot")).ok).toBe(true);
    });
  }

  test("an unreadable path: loaded=false with the reason", async () => {
    h = await openTestApp({ env: { STATUS_POLICY_PATH: "/nonexistent/dir/policy.yaml" } });
    const { body } = await h.json("/api/public/system-status/policy");
    expect(body.policy).toMatchObject({ source: "builtin_default", file: "policy.yaml", loaded: false });
    expect(body.policy.error).toBe("cannot read policy.yaml: ENOENT");
  });

  test("the file is re-read: an edit applies without a restart, a broken edit falls back to the default", async () => {
    const { h, f } = await appWithPolicy("live.yaml", "version: one\n");
    expect((await h.json("/api/public/system-status/policy")).body.policy.version).toBe("one");
    f.write("version: two\n");
    expect((await h.json("/api/public/system-status/policy")).body.policy.version).toBe("two");
    f.write("version: [\n");
    const broken = (await h.json("/api/public/system-status/policy")).body.policy;
    expect(broken).toMatchObject({ loaded: false, version: "builtin-1" });
  });
});

describe("the policy's answer and its file", () => {
  test("the OpenAPI document names every check's settings, exactly (not a map of anything)", async () => {
    h = await openTestApp();
    const doc = (await h.json("/api/openapi.json")).body;
    const answer = doc.paths["/api/public/system-status/policy"].get.responses["200"].content["application/json"].schema;
    const ref = (s: { $ref?: string }) => (s.$ref ? doc.components.schemas[s.$ref.split("/").pop()!] : s);
    const checks = ref(ref(ref(answer).properties.policy).properties.checks);
    expect(Object.keys(checks.properties).sort()).toEqual(Object.keys(DEFAULT_POLICY.checks).sort());
    expect(checks.additionalProperties).toBe(false);
    for (const [name, settings] of Object.entries(DEFAULT_POLICY.checks)) {
      const schema = ref(checks.properties[name]);
      expect([name, Object.keys(schema.properties).sort()]).toEqual([name, Object.keys(settings).sort()]);
      expect(schema.additionalProperties).toBe(false);
    }
  });

  test("the file is parsed again only when its text changed", async () => {
    const f = policyFile("cached.yaml", "version: one\n");
    cleanups.push(f.remove);
    const ctx = { config: { status: { policyPath: f.path } } } as Parameters<typeof loadPolicy>[0];
    const first = loadPolicy(ctx);
    expect(loadPolicy(ctx).policy).toBe(first.policy);
    f.write("version: two\n");
    const edited = loadPolicy(ctx);
    expect([edited.policy.version, edited.policy === first.policy]).toEqual(["two", false]);
    f.write("version: [\n");
    expect(loadPolicy(ctx)).toMatchObject({ loaded: false, source: "builtin_default" });
    f.write("version: two\n");
    expect(loadPolicy(ctx)).toMatchObject({ loaded: true, policy: { version: "two" } });
  });
});

describe("parsePolicy", () => {
  test("an empty mapping is the default", () => {
    expect(parsePolicy("{}")).toEqual(DEFAULT_POLICY);
  });
  test("the documented example in docs/status.md parses", async () => {
    const md = await Bun.file(new URL("../../docs/status.md", import.meta.url)).text();
    const block = /```yaml\n(# status-policy\.yaml[\s\S]*?)```/.exec(md);
    expect(block).not.toBeNull();
    const p = parsePolicy(block![1]!);
    expect(p.version).not.toBe(DEFAULT_POLICY.version);
  });
});
