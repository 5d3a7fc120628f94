// Docs audit: README.md's command line, route table, list conventions and quick-start answer against the real app.
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { exitWithin, spawnHerald } from "../support/process";
import { servedDatabase } from "../support/served-database";

setDefaultTimeout(60_000);

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("command line", () => {
  const dir = mkdtempSync(join(tmpdir(), "herald-docsa-readme-"));
  const database = servedDatabase(dir);
  afterAll(async () => {
    await (await database).drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const run = async (args: string[]) => {
    const p = spawnHerald(args, { ...(await database).env, NODE_ENV: "test", LOG_LEVEL: "warn" });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), exitWithin(p, 50_000)]);
    return { stdout, stderr, code };
  };

  // README.md:93-96, :114 — version and help exit 0; an unknown command or option: usage on stderr, exit 2;
  // every command that prints data takes --json
  test("version, help, unknown command and option; --json", async () => {
    for (const args of [["version"], ["--version"], ["-v"], ["help"], ["--help"], ["-h"]]) {
      const r = await run(args);
      expect([args[0], r.code, r.stdout.length > 0]).toEqual([args[0], 0, true]);
    }
    for (const args of [["bogus"], ["keys", "list", "--bogus"]]) {
      const r = await run(args);
      expect([args.join(" "), r.code, r.stdout, r.stderr.includes("Usage: herald")]).toEqual([args.join(" "), 2, "", true]);
    }
    const version = JSON.parse((await run(["version", "--json"])).stdout);
    expect(version.success).toBe(true);
    const jobs = JSON.parse((await run(["jobs", "list", "--json"])).stdout);
    expect(jobs.jobs.map((j: { name: string }) => j.name)).toContain("webhook-dispatch");
    // admin-token list never shows a token
    const made = JSON.parse((await run(["admin-token", "create", "--name", "ops", "--json"])).stdout);
    expect(made.token).toMatch(/^hat_/);
    const listed = await run(["admin-token", "list", "--json"]);
    expect(JSON.parse(listed.stdout).tokens.map((t: { name: string }) => t.name)).toContain("ops");
    expect(listed.stdout).not.toContain(made.token);
  });
});

describe("HTTP", () => {
  // README.md:386-398 — the public routes of the area table answer (none is a missing route)
  test("the public routes the area table names exist", async () => {
    h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
    const paths = [
      "/api/public/quickstart/verify-key?api_key=x",
      "/api/partner/errors.json",
      "/developers/sdk-manifest.json",
      "/developers",
      "/developers/signing",
      "/developers/downloads/herald_sign.py",
      "/api/public-stats",
      "/api/transactions/latest",
      "/api/public/holder-cache-freshness.json",
      "/transparency/wallet-concentration.csv",
      "/status",
      "/status/feed.rss",
      "/status/feed.json",
      "/api/public/system-status",
      "/api/public/system-status/trend",
      "/api/public/system-status/uptime",
      "/api/public/system-status/incidents",
      "/api/public/system-status/policy",
      "/api/public/latency-percentiles",
      "/trust.json",
      "/transparency/trust-dashboard.json",
      "/developers/deprecations.json",
      "/developers/deprecations.rss",
      "/developers/deprecations-playbook.md",
      "/developers/deprecations-playbook.json",
      "/developers/migration-status.json",
      "/api/public/deprecations/header-simulator",
      "/api/openapi-transparency.yaml",
      "/transparency/audit-anomalies/runs.json",
      "/transparency/audit-anomalies/glossary.json",
      "/transparency/audit-anomalies/schema-registry.json",
      "/app/fairness",
      "/api/openapi/partners.json",
      "/api/docs",
    ];
    const failed: Array<[string, number]> = [];
    for (const p of paths) {
      const r = await h.request(p);
      await r.arrayBuffer();
      if (r.status !== 200) failed.push([p, r.status]);
    }
    expect(failed).toEqual([]);
  });

  // README.md:262-265 — lists: limit 1–200 default 50, query and pagination; offset above 10,000 on a list that
  // issues cursors is 400 offset_too_large
  test("partner and operator lists: limit bounds, default, echo and the offset bound", async () => {
    h = await openTestApp();
    const live = await createKey(h);
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    const call = (p: string) => (p.startsWith("/admin") ? h.json(p, { headers: admin }) : signedJson(h, live, "GET", p));
    for (const list of ["/api/partner/users", "/api/partner/user-lookup", "/api/partner/webhooks", "/api/partner/webhook-events", "/admin/partners/keys"]) {
      const plain = await call(list);
      expect([list, plain.status, plain.body.query.limit, Object.keys(plain.body.pagination).sort()]).toEqual([
        list,
        200,
        50,
        ["has_more", "next_cursor", "next_offset"],
      ]);
      expect([list, (await call(`${list}?limit=200`)).status, (await call(`${list}?limit=201`)).status, (await call(`${list}?limit=0`)).status]).toEqual([
        list,
        200,
        400,
        400,
      ]);
      expect([list, (await call(`${list}?offset=10001`)).body.error]).toEqual([list, "offset_too_large"]);
    }
  });

  // README.md:332-333 — the credit's answer in the quick start
  test("the quick start's credit answers the documented fields", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const u = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "u-42", username: "ada" } })).body.user;
    const r = await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: String(u.id), amount: 12.5, reason: "quest", source: "app" } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, user_id: String(u.id), balance: 12.5, delta: 12.5 });
    expect(Number.isInteger(r.body.ledger_entry_id)).toBe(true);
    expect(typeof r.body.idempotency_key).toBe("string");
    const lookup = await signedJson(h, k, "GET", "/api/partner/user-lookup?q=u-42");
    expect(lookup.body.users[0].id).toBe(u.id);
  });
});
