import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/app";
import { checkValueOf } from "../../src/auth/master-key-check";
import { SecretBox } from "../../src/auth/secret-box";
import { openContext } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/log";
import { FakeClock, seededRng } from "../support/clock";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";
import type { TestApp } from "../support/app";
import { describeOn } from "../support/skipped";

// The database remembers which master key it was made with (a check value and a public fingerprint), so a
// server started with another key — a restore without its key — says so at start instead of answering every
// partner call with a 500: /readyz 503 naming both fingerprints, 503 master_key_mismatch for the partner.
//
// SQLite only: each case closes an app and opens another over the same file (a restore), which the throwaway
// PostgreSQL databases of openTestApp do not model; the PostgreSQL run would only repeat these on SQLite.

const KEY_A = "a1".repeat(32);
const KEY_B = "b2".repeat(32);
const fingerprint = (hex: string) => new SecretBox(Buffer.from(hex, "hex")).fingerprint;

const dirs: string[] = [];
const apps: TestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A real app over the database in `dir` (kept between apps), with the given master key (none: the dev key file). */
function appOver(dir: string, masterKey: string | null): TestApp {
  const config = loadConfig({
    NODE_ENV: "test",
    HERALD_DB_PATH: join(dir, "herald.db"),
    LOG_LEVEL: "silent",
    JOBS_ENABLED: "0",
    PUBLIC_BASE_URL: "http://localhost:3000",
    ...(masterKey ? { HERALD_MASTER_KEY: masterKey } : {}),
  });
  const clock = new FakeClock();
  const ctx = openContext(config, { clock, rng: seededRng(), log: createLogger("silent") });
  const app = buildApp(ctx);
  const request = (path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init));
  const h: TestApp = {
    ctx,
    app,
    clock,
    dir,
    request,
    async json(path, init) {
      const res = await request(path, init);
      return { status: res.status, body: (await res.json()) as any, headers: res.headers };
    },
    async close() {
      ctx.requestLog.stop();
      await ctx.store.close();
    },
  };
  apps.push(h);
  return h;
}

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), "herald-mk-"));
  dirs.push(d);
  return d;
}

const row = (h: TestApp) => h.ctx.store.all("SELECT id, fingerprint, check_value FROM master_key_check");

/** A database made under KEY_A with a partner key, a webhook and a status subscriber in it; the app is closed. */
async function databaseUnderKeyA(): Promise<{ dir: string; key: TestKey }> {
  const dir = freshDir();
  const h = appOver(dir, KEY_A);
  const key = await createKey(h, { partner: "Acme" });
  const hook = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: "https://hooks.example.com/x" } });
  expect(hook.status).toBe(201);
  const auth = { authorization: `Bearer ${await createAdminToken(h)}`, "content-type": "application/json" };
  const sub = await h.json("/admin/status/subscribers", { method: "POST", headers: auth, body: JSON.stringify({ url: "https://status-hooks.example.com/x" }) });
  expect(sub.status).toBe(201);
  await h.close();
  apps.splice(apps.indexOf(h), 1);
  return { dir, key };
}

describeOn("sqlite", "test/auth/master-key.test.ts")("the check value", () => {
  test("a new database records its key's check value and fingerprint; /readyz names the fingerprint", async () => {
    const h = appOver(freshDir(), KEY_A);
    const box = new SecretBox(Buffer.from(KEY_A, "hex"));
    expect(await row(h)).toEqual([{ id: 1, fingerprint: box.fingerprint, check_value: checkValueOf(box) }]);
    expect(box.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(checkValueOf(box)).not.toContain(KEY_A);
    const ready = await h.json("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body.checks.master_key).toEqual({ ok: true, detail: `fingerprint ${fingerprint(KEY_A)} opens the stored secrets` });
  });

  test("another key: /readyz 503 naming both fingerprints, signed partner calls 503 master_key_mismatch (was 500), nothing sealed", async () => {
    const { dir, key } = await databaseUnderKeyA();
    const h = appOver(dir, KEY_B);
    const ready = await h.json("/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body.ready).toBe(false);
    expect(ready.body.checks.master_key.ok).toBe(false);
    expect(ready.body.checks.master_key.detail).toContain("master_key_mismatch");
    expect(ready.body.checks.master_key.detail).toContain(`fingerprint ${fingerprint(KEY_B)}`);
    expect(ready.body.checks.master_key.detail).toContain(`(fingerprint ${fingerprint(KEY_A)})`);
    expect(JSON.stringify(ready.body)).not.toContain(KEY_A);

    const status = await signedJson(h, key, "GET", "/api/partner/status");
    expect(status.status).toBe(503);
    expect(status.body).toMatchObject({ success: false, error: "master_key_mismatch" });
    expect(status.body.message).not.toContain(fingerprint(KEY_A)); // partners get no operator detail
    const catalog = (await h.json("/api/partner/errors.json")).body.entries.find((e: any) => e.error_code === "master_key_mismatch");
    expect(catalog).toMatchObject({ http_status: 503, retry_class: "fail_fast", category: "server" });

    // Sealing under the wrong key is refused: a new partner key would be unreadable once the right key is back.
    const auth = { authorization: `Bearer ${await createAdminToken(h)}`, "content-type": "application/json" };
    const created = await h.json("/admin/partners/keys", {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ partner: "Beta", mode: "live", scopes: ["read"] }),
    });
    expect([created.status, created.body.error]).toEqual([503, "master_key_mismatch"]);
    // The recorded key is untouched; with the right key again, everything works.
    expect(await row(h)).toEqual([expect.objectContaining({ fingerprint: fingerprint(KEY_A) })]);
    await h.close();
    apps.splice(apps.indexOf(h), 1);
    const back = appOver(dir, KEY_A);
    expect((await back.json("/readyz")).status).toBe(200);
    expect((await signedJson(back, key, "GET", "/api/partner/status")).status).toBe(200);
  });

  test("a database from before key checks gets its row at the first start with a key that opens every kind of secret", async () => {
    const { dir } = await databaseUnderKeyA();
    const strip = appOver(dir, KEY_A);
    expect((await strip.ctx.store.run("DELETE FROM master_key_check")).changes).toBe(1);
    await strip.close();
    apps.splice(apps.indexOf(strip), 1);

    // The wrong key first: it opens nothing, so no row is written and the mismatch names no expected fingerprint.
    const wrong = appOver(dir, KEY_B);
    expect(await row(wrong)).toEqual([]);
    expect(wrong.ctx.secrets.mismatch).toMatchObject({ expected: null });
    expect((await wrong.json("/readyz")).body.checks.master_key.detail).toContain("predates key checks");
    await wrong.close();
    apps.splice(apps.indexOf(wrong), 1);

    // The right key opens the partner key, webhook and subscriber secrets (sealed with each module's own AAD).
    const right = appOver(dir, KEY_A);
    expect(right.ctx.secrets.mismatch).toBeNull();
    expect(await row(right)).toEqual([expect.objectContaining({ fingerprint: fingerprint(KEY_A) })]);
  });

  test("a database with no secrets and no row records whatever key it starts with", async () => {
    const dir = freshDir();
    const first = appOver(dir, KEY_A);
    expect((await first.ctx.store.run("DELETE FROM master_key_check")).changes).toBe(1);
    await first.close();
    apps.splice(apps.indexOf(first), 1);
    const h = appOver(dir, KEY_B);
    expect(await row(h)).toEqual([expect.objectContaining({ fingerprint: fingerprint(KEY_B) })]);
  });
});
