// Docs audit (partner-auth, partner-users, partner-status, getting-started, README): the four places Herald did
// not do what these documents say, each test failing before its fix and naming the document line it checks.
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { exitWithin, spawnHerald } from "../support/process";
import { startReceiver } from "../support/receiver";
import { servedDatabase } from "../support/served-database";

setDefaultTimeout(60_000);

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/partner-users.md", () => {
  // docs/partner-users.md:70-71 — "`q` — a substring of external_id, username, display_name or email
  // (case-insensitive ...)". display_name may hold any non-control character (docs/partner-users.md:42).
  // On SQLite, q was lower-cased in JS but the column with SQL lower(), which folds ASCII only (now: anyCaseContains
  // in src/partner/store/users.ts): a non-ASCII capital in the name was never matched, not
  // even by q written exactly as stored. PostgreSQL folds them and passes.
  test("q finds a display_name with non-ASCII letters, as written and in another case, on /users and /user-lookup", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const made = await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "u-uni", display_name: "Ädam Éclair" } });
    expect(made.status).toBe(201);
    const found: Array<[string, string, number]> = [];
    for (const q of ["Ädam", "ädam", "ÉCLAIR", "éclair"]) {
      for (const route of ["/api/partner/users", "/api/partner/user-lookup"]) {
        const r = await signedJson(h, k, "GET", `${route}?q=${encodeURIComponent(q)}`);
        found.push([route, q, r.body.count]);
      }
    }
    expect(found.filter(([, , count]) => count !== 1)).toEqual([]);
  });

  // docs/partner-users.md:70-71 — q is a substring: its characters are literal, never wildcards (GLOB's * ? [ on
  // SQLite, a regular expression's on PostgreSQL, LIKE's % _ before), and a capital Cyrillic name is found too.
  test("q's characters are literal on both engines, and any script's capitals match", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const names = ["a_b", "a%b", "a*b", "a?b", "a[b]", "a.b+c", "Иван Петров", "Ä*[x].", "Äzx"];
    for (const [i, display_name] of names.entries()) {
      expect((await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: `u-${i}`, display_name } })).status).toBe(201);
    }
    const hits = async (q: string) =>
      ((await signedJson(h, k, "GET", `/api/partner/users?q=${encodeURIComponent(q)}`)).body.users as Array<{ display_name: string }>).map(
        (u) => u.display_name,
      );
    for (const q of ["_", "%", "*", "?", "[b]", ".b+"]) expect([q, (await hits(q)).sort()]).toEqual([q, names.filter((n) => n.includes(q)).sort()]);
    expect(await hits("ИВАН")).toEqual(["Иван Петров"]);
    expect(await hits("петров")).toEqual(["Иван Петров"]);
    expect(await hits("a.b")).toEqual(["a.b+c"]);
    // A term with a non-ASCII letter takes the other path (GLOB, a regular expression): its * [ ] . are literal too.
    expect(await hits("ä*[X].")).toEqual(["Ä*[x]."]);
    expect(await hits("ä*")).toEqual(["Ä*[x]."]);
  });
});

describe("docs/partner-status.md", () => {
  // docs/partner-status.md:43-44 — delivered_events counts "those delivered in the window (since start_utc)", and
  // the usage window includes its first instant (docs/partner-status.md:78). The count compares
  // `d.updated_at > start_utc` (src/webhooks/deliveries-store.ts), so a delivery at start_utc itself
  // is left out. (A boundary of one millisecond; the fake clock makes it exact.)
  test("a delivery made at the window's first instant counts as delivered in the window", async () => {
    const ok = startReceiver({ status: 204 });
    try {
      h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" } }); // the clock stands at 00:00:00.000
      const k = await createKey(h);
      const w = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: ok.url() } });
      expect((await signedJson(h, k, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`)).status).toBe(200);
      const health = async () => (await signedJson(h, k, "GET", "/api/partner/status")).body;
      let body = await health();
      for (let i = 0; i < 100 && body.webhook_delivery_health.delivered_events < 1; i++) {
        await h.ctx.dispatcher.runOnce();
        await Bun.sleep(20);
        body = await health();
      }
      expect(body.webhook_delivery_health.delivered_events).toBe(1);
      h.clock.advanceSeconds(80 * 60); // 01:20: the window starts at 00:00:00.000, when the delivery was made
      body = await health();
      expect([body.window.start_utc, body.webhook_delivery_health.delivered_events]).toEqual(["2026-01-01T00:00:00.000Z", 1]);
    } finally {
      ok.stop();
    }
  });
});

describe("docs/partner-status.md: overall_status", () => {
  // docs/partner-status.md:33-36 — `degraded` when one of your deliveries was dead-lettered "in the last hour";
  // "it recovers by itself an hour after the last one". The look-back was the status window, from the start of the
  // previous UTC hour: a dead letter at 00:10 kept the status degraded, "dead-lettered in the last hour", until 02:00.
  test("a dead letter 95 minutes old no longer makes the status degraded", async () => {
    const failing = startReceiver({ status: 500 });
    try {
      h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_MAX_ATTEMPTS: "1" } });
      const k = await createKey(h);
      h.clock.advanceSeconds(10 * 60); // 00:10
      const w = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: failing.url() } });
      expect((await signedJson(h, k, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`)).status).toBe(200);
      const status = async () => (await signedJson(h, k, "GET", "/api/partner/status")).body;
      let body = await status();
      // Until the dead letter is recorded (the /test route nudged a pass that may record it between two of the status's reads).
      for (let i = 0; i < 100 && body.overall_status !== "degraded"; i++) {
        await h.ctx.dispatcher.runOnce();
        await Bun.sleep(20);
        body = await status();
      }
      expect([body.webhook_delivery_health.dead_letter_events, body.overall_status]).toEqual([1, "degraded"]);
      h.clock.advanceSeconds(95 * 60); // 01:45, 95 minutes after the dead letter
      body = await status();
      expect([body.overall_status, body.status_reasons]).toEqual(["ok", []]);
    } finally {
      failing.stop();
    }
  });
});

describe("docs/partner-auth.md §13 (CLI)", () => {
  const dir = mkdtempSync(join(tmpdir(), "herald-docsa-cli-"));
  const database = servedDatabase(dir);
  afterAll(async () => {
    await (await database).drop();
    rmSync(dir, { recursive: true, force: true });
  });

  // docs/partner-auth.md:450 "Bad input exits with status 2 and a message on stderr" and :454
  // `herald keys list [--partner NAME] [--mode sandbox|live]`. `keys create --mode sideways` exits 2, and
  // GET /admin/partners/keys?mode=bogus is 400 invalid_query, but `keys list` passes --mode on unchecked
  // (src/cli/keys.ts): a typo listed nothing and exited 0.
  test("keys list --mode with a value other than sandbox or live exits 2 with a message", async () => {
    const db = await database;
    const p = spawnHerald(["keys", "list", "--mode", "lvie", "--json"], { ...db.env, NODE_ENV: "test", LOG_LEVEL: "warn" });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), exitWithin(p, 50_000)]);
    expect({ code, stdout: stdout.trim(), mentionsMode: stderr.includes("--mode") }).toEqual({ code: 2, stdout: "", mentionsMode: true });
  });
});
